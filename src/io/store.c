/* SQLite store of pfid (see include/io/pfi/store.h); the schema is
 * store_schema.c's. */
#include "pfi/store.h"

#include <errno.h>
#include <math.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "pfi/gpu_field.h"
#include "pfi/telemetry.h"
#include <jansson.h>
#include "store_schema.h"

enum {
    ST_SAMPLE,
    ST_JOB_ADD,
    ST_JOB_END,
    ST_JOBS_RUNNING,
    ST_TPUT_ADD,
    ST_TPUT_COUNT,
    ST_CAP_PUT,
    ST_CAP_DEL,
    ST_CAPS,
    ST_PRUNE_SAMPLES,
    ST_PRUNE_TPUT,
    ST_PRUNE_JOBS,
    ST_SAMPLES_SINCE,
    ST_TPUT_SINCE,
    ST_JOBS_ALL,
    ST_POINT_PUT,
    ST_POINTS_ALL,
    ST_POINTS_JOB,
    ST_BASIS_PUT,
    ST_BASIS_GET,
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_COUNT
};

/* ST_SAMPLE and ST_SAMPLES_SINCE are generated from the sample columns at
 * open (store_schema.h). */
static const char *stmt_sql[ST_COUNT] = {
    [ST_JOB_ADD] = "INSERT INTO jobs(id,gpus,arch,task,registered_at,ended_at,sla_floor,exempt) "
                   "VALUES(?,?,?,?,?,NULL,?,?)",
    [ST_JOB_END] = "UPDATE jobs SET ended_at=? WHERE id=? AND ended_at IS NULL",
    [ST_JOBS_RUNNING] = "SELECT id,gpus,arch,task,registered_at,sla_floor,exempt FROM jobs "
                        "WHERE ended_at IS NULL ORDER BY registered_at, rowid",
    [ST_JOBS_ALL] = "SELECT id,gpus,arch,task,registered_at,sla_floor,exempt,ended_at FROM jobs "
                    "ORDER BY registered_at, rowid",
    [ST_TPUT_ADD] = "INSERT INTO throughput VALUES(?,?,?)",
    [ST_TPUT_COUNT] = "SELECT count(*) FROM throughput WHERE job=?",
    [ST_CAP_PUT] = "INSERT OR REPLACE INTO caps(gpu,watts,set_at,expires_at,prior_w) "
                   "VALUES(?,?,?,?,?)",
    [ST_CAP_DEL] = "DELETE FROM caps WHERE gpu=?",
    [ST_CAPS] = "SELECT gpu,watts,set_at,expires_at,prior_w FROM caps ORDER BY gpu",
    [ST_PRUNE_SAMPLES] = "DELETE FROM samples WHERE t<?",
    [ST_PRUNE_TPUT] = "DELETE FROM throughput WHERE t<?",
    [ST_PRUNE_JOBS] = "DELETE FROM jobs WHERE ended_at IS NOT NULL AND ended_at<?",
    [ST_TPUT_SINCE] = "SELECT t, tokens_per_s FROM throughput WHERE job=? AND t>=? ORDER BY t",
#define POINT_COLS "job,cap_w,power_w,tokens_per_s,tokens_sd,n,t_first,t_last"
    [ST_POINT_PUT] = "INSERT OR REPLACE INTO job_points(" POINT_COLS ") VALUES(?,?,?,?,?,?,?,?)",
    [ST_POINTS_ALL] = "SELECT " POINT_COLS " FROM job_points ORDER BY job, cap_w",
    [ST_POINTS_JOB] = "SELECT " POINT_COLS " FROM job_points WHERE job=? ORDER BY cap_w",
#undef POINT_COLS
    [ST_BASIS_PUT] = "UPDATE jobs SET basis_t=?, basis=? WHERE id=? AND ended_at IS NULL",
    [ST_BASIS_GET] = "SELECT basis_t, basis FROM jobs WHERE id=? AND ended_at IS NULL",
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
};

struct pfi_store {
    sqlite3 *db;
    sqlite3_stmt *st[ST_COUNT];
    char *sql[ST_COUNT]; /* the generated statements, freed at close */
    pthread_mutex_t mu;
    char path[256];
    pfi_store_bad_row_fn bad_row;
    void *bad_row_ctx;
    int readonly; /* pfi_store_open_readonly: every write is refused */
    int snapshot; /* pfi_store_snapshot_begin: a read transaction is open */
};

void pfi_store_on_bad_row(pfi_store *s, pfi_store_bad_row_fn fn, void *ctx)
{
    pthread_mutex_lock(&s->mu);
    s->bad_row = fn;
    s->bad_row_ctx = ctx;
    pthread_mutex_unlock(&s->mu);
}

/* A row a read skips. Caller holds s->mu. */
static void bad_row(pfi_store *s, const char *table, const char *id, const char *why)
{
    if (s->bad_row)
        s->bad_row(table, id, why, s->bad_row_ctx);
    else
        fprintf(stderr, "warning: %s: %s row%s%s skipped: %s\n", s->path, table, id ? " " : "",
                id ? id : "", why);
}

/* PRAGMA quick_check (read-only: b-tree structure, page and record
 * formats, without the index cross-checks of integrity_check): a damaged
 * file is refused before anything is written to it. */
static int quick_check(pfi_store *s, pfi_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "PRAGMA quick_check(1)", -1, &st, NULL) != SQLITE_OK)
        return pfi_error_set(err, PFI_EPARSE, s->path, 0,
                             "cannot read the database (%s); left untouched",
                             sqlite3_errmsg(s->db));
    int step = sqlite3_step(st);
    const char *r = step == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    int rc = PFI_OK;
    if (!r || strcmp(r, "ok") != 0) {
        char why[256]; /* one line: the report's lines joined */
        snprintf(why, sizeof why, "%s", r ? r : sqlite3_errmsg(s->db));
        for (char *p = why; *p; p++)
            if (*p == '\n') *p = ' ';
        rc = pfi_error_set(err, PFI_EPARSE, s->path, 0,
                           "the database is damaged (quick_check: %s); left untouched: move "
                           "it aside (pfid then starts a new store) or restore a backup",
                           why);
    }
    sqlite3_finalize(st);
    return rc;
}

static int db_error(pfi_store *s, pfi_error *err, const char *what)
{
    return pfi_error_set(err, PFI_EIO, s->path, 0, "%s: %s", what, sqlite3_errmsg(s->db));
}

/* Every write function on a read-only handle ends here before touching
 * SQLite: its connection may be an in-memory copy (readonly_schema), which
 * would take the write silently. */
static int refuse_write(const pfi_store *s, pfi_error *err)
{
    return pfi_error_set(err, PFI_ESTATE, s->path, 0,
                         "the store is open read-only; nothing written");
}

/* Runs a prepared statement that returns no rows, then resets it. */
static int step_done(pfi_store *s, int which, pfi_error *err)
{
    sqlite3_stmt *st = s->st[which];
    int rc = sqlite3_step(st);
    int ok = rc == SQLITE_DONE;
    if (!ok) db_error(s, err, sqlite3_sql(st));
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return ok ? PFI_OK : PFI_EIO;
}

/* SQLite could not open path: a missing file is PFI_ENOTFOUND with the
 * system's words (what `pfi export` said before it opened the store), any
 * other failure SQLite's with the system's reason when there is one. */
static int open_error(pfi_store *s, pfi_error *err)
{
    int e = s->db ? sqlite3_system_errno(s->db) : 0;
    if (e == ENOENT) return pfi_error_set(err, PFI_ENOTFOUND, s->path, 0, "%s", strerror(e));
    return pfi_error_set(err, PFI_EIO, s->path, 0, "cannot open database: %s%s%s%s",
                         s->db ? sqlite3_errmsg(s->db) : "out of memory", e ? " (" : "",
                         e ? strerror(e) : "", e ? ")" : "");
}

/* The read-only handle's schema: a current file is read as it is; an older
 * one (schema 1, or 0: empty) is copied into memory with the backup API and
 * created or migrated there by the writer's own code, so its rows read as
 * schema 2's while the file keeps every byte. The copy's cost is the file's
 * size in memory, once per open. */
static int readonly_schema(pfi_store *s, pfi_error *err)
{
    long long v;
    int rc = store_schema_check(s->db, s->path, &v, err);
    if (rc != PFI_OK || v == PFI_STORE_SCHEMA_VERSION) return rc;
    sqlite3 *mem = NULL;
    if (sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        sqlite3_close(mem);
        return pfi_error_set(err, PFI_ENOMEM, s->path, 0, "out of memory");
    }
    sqlite3_backup *b = sqlite3_backup_init(mem, "main", s->db, "main");
    int step = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
    if (b) sqlite3_backup_finish(b); /* leaves a failed step's error in mem */
    if (step != SQLITE_DONE)
        rc = pfi_error_set(err, PFI_EIO, s->path, 0, "copying schema %lld into memory: %s", v,
                           sqlite3_errmsg(mem));
    else
        rc = store_schema_open(mem, s->path, err);
    if (rc != PFI_OK) {
        sqlite3_close(mem);
        return rc;
    }
    sqlite3_close(s->db);
    s->db = mem;
    return PFI_OK;
}

static int store_open(const char *path, int readonly, pfi_store **out, pfi_error *err)
{
    *out = NULL;
    pfi_store *s = calloc(1, sizeof *s);
    if (!s) return pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    snprintf(s->path, sizeof s->path, "%s", path);
    pthread_mutex_init(&s->mu, NULL);
    s->readonly = readonly;
    int rc;
    int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(path, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        rc = open_error(s, err);
        goto fail;
    }
    sqlite3_busy_timeout(s->db, 5000);
    /* Closing the last connection checkpoints a WAL into the database file:
     * a file that is refused below must not be written that way either, nor
     * ever by a read-only handle. */
    sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
    sqlite3_exec(s->db, "PRAGMA foreign_keys=ON;", NULL, NULL, NULL);
    if ((rc = quick_check(s, err)) != PFI_OK) goto fail;
    rc = readonly ? readonly_schema(s, err) : store_schema_open(s->db, path, err);
    if (rc != PFI_OK) goto fail;
    if (!readonly) sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);
    s->sql[ST_SAMPLE] = store_sample_insert_sql();
    s->sql[ST_SAMPLES_SINCE] = store_sample_select_sql();
    if (!s->sql[ST_SAMPLE] || !s->sql[ST_SAMPLES_SINCE]) {
        rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
        goto fail;
    }
    for (int i = 0; i < ST_COUNT; i++) {
        const char *sql = s->sql[i] ? s->sql[i] : stmt_sql[i];
        if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) !=
            SQLITE_OK) {
            rc = db_error(s, err, sql);
            goto fail;
        }
    }
    *out = s;
    return PFI_OK;
fail:
    pfi_store_close(s);
    return rc;
}

int pfi_store_open(const char *path, pfi_store **out, pfi_error *err)
{
    return store_open(path, 0, out, err);
}

int pfi_store_open_readonly(const char *path, pfi_store **out, pfi_error *err)
{
    return store_open(path, 1, out, err);
}

int pfi_store_snapshot_begin(pfi_store *s, pfi_error *err)
{
    if (!s->readonly || s->snapshot)
        return pfi_error_set(err, PFI_ESTATE, s->path, 0,
                             s->snapshot ? "a snapshot is already open"
                                         : "a snapshot needs a read-only handle");
    pthread_mutex_lock(&s->mu);
    /* BEGIN alone takes no snapshot: WAL pins one at the first read */
    int rc = sqlite3_exec(s->db, "BEGIN; SELECT count(*) FROM sqlite_schema;", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        s->snapshot = 1;
    else {
        db_error(s, err, "begin a snapshot");
        sqlite3_exec(s->db, "ROLLBACK;", NULL, NULL, NULL);
    }
    pthread_mutex_unlock(&s->mu);
    return s->snapshot ? PFI_OK : PFI_EIO;
}

void pfi_store_snapshot_end(pfi_store *s)
{
    if (!s || !s->snapshot) return;
    pthread_mutex_lock(&s->mu);
    sqlite3_exec(s->db, "COMMIT;", NULL, NULL, NULL);
    s->snapshot = 0;
    pthread_mutex_unlock(&s->mu);
}

void pfi_store_close(pfi_store *s)
{
    if (!s) return;
    pfi_store_snapshot_end(s);
    for (int i = 0; i < ST_COUNT; i++) {
        sqlite3_finalize(s->st[i]);
        free(s->sql[i]);
    }
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static int insert_sample(pfi_store *s, double t, unsigned gpu, const pfi_gpu_sample *x,
                         pfi_error *err)
{
    sqlite3_stmt *st = s->st[ST_SAMPLE];
    sqlite3_bind_double(st, 1, t);
    sqlite3_bind_int64(st, 2, gpu);
    sqlite3_bind_int64(st, 3, x->valid);
    for (int f = 0; f < PFI_GF_COUNT; f++) {
        int p = f + 4;
        if (!pfi_gpu_sample_has(x, (pfi_gpu_field)f))
            sqlite3_bind_null(st, p);
        else if (pfi_gpu_fields[f].store_integer)
            sqlite3_bind_int64(st, p, (sqlite3_int64)x->v[f]);
        else
            sqlite3_bind_double(st, p, x->v[f]);
    }
    return step_done(s, ST_SAMPLE, err);
}

int pfi_store_add_samples(pfi_store *s, double t, const pfi_gpu_sample *samples, unsigned n,
                          pfi_error *err)
{
    if (s->readonly) return refuse_write(s, err);
    pthread_mutex_lock(&s->mu);
    int rc = step_done(s, ST_BEGIN, err);
    for (unsigned g = 0; rc == PFI_OK && g < n; g++)
        rc = insert_sample(s, t, g, &samples[g], err);
    if (rc == PFI_OK)
        rc = step_done(s, ST_COMMIT, err);
    else
        step_done(s, ST_ROLLBACK, NULL);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static void gpus_to_text(const pfi_store_job *j, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < j->n_gpus && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%u", i ? "," : "", j->gpus[i]);
}

static int gpus_from_text(const char *txt, pfi_store_job *j)
{
    j->n_gpus = 0;
    const char *p = txt;
    while (*p) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || j->n_gpus == PFI_STORE_MAX_JOB_GPUS) return PFI_EPARSE;
        j->gpus[j->n_gpus++] = (unsigned)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return PFI_EPARSE;
    }
    return PFI_OK;
}

int pfi_store_job_add(pfi_store *s, const pfi_store_job *job, pfi_error *err)
{
    if (s->readonly) return refuse_write(s, err);
    if (!(job->sla_floor >= 0 && job->sla_floor <= 1))
        return pfi_error_set(err, PFI_EINVAL, s->path, 0,
                             "job '%s': sla_floor %g is outside [0, 1]", job->id, job->sla_floor);
    if (job->exempt != 0 && job->exempt != 1)
        return pfi_error_set(err, PFI_EINVAL, s->path, 0, "job '%s': exempt must be 0 or 1",
                             job->id);
    char gpus[PFI_STORE_MAX_JOB_GPUS * 12];
    gpus_to_text(job, gpus, sizeof gpus);
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_JOB_ADD];
    sqlite3_bind_text(st, 1, job->id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, gpus, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, job->arch, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, job->task, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 5, job->registered_at);
    if (job->sla_floor > 0)
        sqlite3_bind_double(st, 6, job->sla_floor);
    else
        sqlite3_bind_null(st, 6); /* no floor */
    sqlite3_bind_int(st, 7, job->exempt);
    int rc = sqlite3_step(st);
    int out = PFI_OK;
    if (rc == SQLITE_CONSTRAINT)
        out = pfi_error_set(err, PFI_ESTATE, s->path, 0, "job '%s' is already running", job->id);
    else if (rc != SQLITE_DONE)
        out = db_error(s, err, "adding a job");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    pthread_mutex_unlock(&s->mu);
    return out;
}

int pfi_store_job_end(pfi_store *s, const char *id, double t, pfi_error *err)
{
    if (s->readonly) return refuse_write(s, err);
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_JOB_END];
    sqlite3_bind_double(st, 1, t);
    sqlite3_bind_text(st, 2, id, -1, SQLITE_TRANSIENT);
    int rc = step_done(s, ST_JOB_END, err);
    if (rc == PFI_OK && sqlite3_changes(s->db) == 0)
        rc = pfi_error_set(err, PFI_ENOTFOUND, s->path, 0, "no running job '%s'", id);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* Reads every row of prepared statement `which` (its one parameter bound to
 * key when key is not NULL) into a grown array of
 * `elem`-byte items, one `row` call each; a row the reader refuses with
 * PFI_EPARSE (having reported it through bad_row) is skipped; on any other
 * failure nothing is returned. */
typedef int (*row_reader)(pfi_store *s, sqlite3_stmt *st, void *item, pfi_error *err);

static int collect(pfi_store *s, int which, const char *key, size_t elem, row_reader row,
                   const char *what, void **out, size_t *n, pfi_error *err)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    int rc = PFI_OK, step;
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[which];
    if (key) sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            void *p = realloc(*out, cap * elem);
            if (!p) {
                rc = pfi_error_set(err, PFI_ENOMEM, s->path, 0, "out of memory");
                break;
            }
            *out = p;
        }
        void *item = (char *)*out + *n * elem;
        memset(item, 0, elem);
        rc = row(s, st, item, err);
        if (rc == PFI_EPARSE) { /* one bad row: skipped (and said), not every row lost */
            rc = PFI_OK;
            continue;
        }
        if (rc != PFI_OK) break;
        (*n)++;
    }
    if (rc == PFI_OK && step != SQLITE_DONE) rc = db_error(s, err, what);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    pthread_mutex_unlock(&s->mu);
    if (rc != PFI_OK) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* A REAL or INTEGER column as a finite double; NaN for NULL, text, blobs. */
static double num_col(sqlite3_stmt *st, int i)
{
    int t = sqlite3_column_type(st, i);
    if (t != SQLITE_INTEGER && t != SQLITE_FLOAT) return NAN;
    double v = sqlite3_column_double(st, i);
    return isfinite(v) ? v : NAN;
}

/* A short TEXT column into buf; -1 when NULL, not text or too long. */
static int text_col(sqlite3_stmt *st, int i, char *buf, size_t len, int allow_null)
{
    int t = sqlite3_column_type(st, i);
    if (t == SQLITE_NULL && allow_null) {
        buf[0] = '\0';
        return 0;
    }
    if (t != SQLITE_TEXT) return -1;
    const char *v = (const char *)sqlite3_column_text(st, i);
    if (!v || strlen(v) >= len) return -1;
    memcpy(buf, v, strlen(v) + 1);
    return 0;
}

static int job_row(pfi_store *s, sqlite3_stmt *st, void *item, pfi_error *err)
{
    (void)err;
    pfi_store_job *j = item;
    char gpus[PFI_STORE_MAX_JOB_GPUS * 12];
    const char *why = NULL;
    if (text_col(st, 0, j->id, sizeof j->id, 0) != 0 || !j->id[0])
        why = "no usable id";
    else if (text_col(st, 1, gpus, sizeof gpus, 0) != 0 || gpus_from_text(gpus, j) != PFI_OK ||
             j->n_gpus == 0)
        why = "bad GPU list";
    else if (text_col(st, 2, j->arch, sizeof j->arch, 1) != 0 ||
             text_col(st, 3, j->task, sizeof j->task, 1) != 0)
        why = "bad arch or task";
    else if (isnan(j->registered_at = num_col(st, 4)))
        why = "bad registered_at";
    else if (sqlite3_column_type(st, 5) != SQLITE_NULL &&
             !((j->sla_floor = num_col(st, 5)) > 0 && j->sla_floor <= 1))
        why = "bad sla_floor";
    else if (sqlite3_column_type(st, 6) != SQLITE_INTEGER ||
             (j->exempt = sqlite3_column_int(st, 6)) < 0 || j->exempt > 1)
        why = "bad exempt";
    if (!why) {
        if (sqlite3_column_type(st, 5) == SQLITE_NULL) j->sla_floor = 0;
        /* ST_JOBS_ALL has ended_at; a running job's is NULL (0) */
        j->ended_at = sqlite3_column_count(st) > 7 ? sqlite3_column_double(st, 7) : 0;
        return PFI_OK;
    }
    bad_row(s, "jobs", j->id[0] ? j->id : NULL, why);
    return PFI_EPARSE;
}

int pfi_store_jobs_running(pfi_store *s, pfi_store_job **out, size_t *n, pfi_error *err)
{
    return collect(s, ST_JOBS_RUNNING, NULL, sizeof **out, job_row, "reading jobs", (void **)out, n,
                   err);
}

int pfi_store_jobs(pfi_store *s, pfi_store_job **out, size_t *n, pfi_error *err)
{
    return collect(s, ST_JOBS_ALL, NULL, sizeof **out, job_row, "reading jobs", (void **)out, n,
                   err);
}

int pfi_store_job_basis_put(pfi_store *s, const char *id, double t, const double *tm,
                            pfi_error *err)
{
    if (s->readonly) return refuse_write(s, err);
    /* By field name, so that a change of the field list cannot misread it. */
    json_t *o = json_object();
    for (int f = 0; o && f < PFI_TM_NFIELDS; f++)
        if (isfinite(tm[f])) json_object_set_new(o, pfi_tm_field_name(f), json_real(tm[f]));
    char *txt = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(o);
    if (!txt) return pfi_error_set(err, PFI_ENOMEM, s->path, 0, "out of memory");
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_BASIS_PUT];
    sqlite3_bind_double(st, 1, t);
    sqlite3_bind_text(st, 2, txt, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, id, -1, SQLITE_TRANSIENT);
    int rc = step_done(s, ST_BASIS_PUT, err);
    if (rc == PFI_OK && sqlite3_changes(s->db) == 0)
        rc = pfi_error_set(err, PFI_ENOTFOUND, s->path, 0, "no running job '%s'", id);
    pthread_mutex_unlock(&s->mu);
    free(txt);
    return rc;
}

int pfi_store_job_basis_get(pfi_store *s, const char *id, double *t, double *tm, pfi_error *err)
{
    for (int f = 0; f < PFI_TM_NFIELDS; f++)
        tm[f] = NAN;
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_BASIS_GET];
    sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
    int step = sqlite3_step(st), rc = PFI_ENODATA;
    json_t *o = NULL;
    if (step == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_FLOAT &&
        sqlite3_column_text(st, 1)) {
        *t = sqlite3_column_double(st, 0);
        o = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
    } else if (step != SQLITE_ROW && step != SQLITE_DONE) {
        rc = db_error(s, err, "reading a job's basis");
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    pthread_mutex_unlock(&s->mu);
    if (json_is_object(o) && isfinite(*t)) {
        rc = PFI_OK;
        for (int f = 0; f < PFI_TM_NFIELDS; f++) {
            json_t *v = json_object_get(o, pfi_tm_field_name(f));
            if (json_is_number(v)) tm[f] = json_number_value(v);
        }
    }
    json_decref(o);
    if (rc == PFI_ENODATA)
        pfi_error_set(err, PFI_ENODATA, s->path, 0, "no basis stored for job '%s'", id);
    return rc;
}

int pfi_store_add_throughput(pfi_store *s, const char *job, double t, double tokens_per_s,
                             pfi_error *err)
{
    if (s->readonly) return refuse_write(s, err);
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_TPUT_ADD];
    sqlite3_bind_text(st, 1, job, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 2, t);
    sqlite3_bind_double(st, 3, tokens_per_s);
    int rc = step_done(s, ST_TPUT_ADD, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_store_throughput_count(pfi_store *s, const char *job, long long *n, pfi_error *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_TPUT_COUNT];
    sqlite3_bind_text(st, 1, job, -1, SQLITE_TRANSIENT);
    int rc = PFI_OK;
    if (sqlite3_step(st) == SQLITE_ROW)
        *n = sqlite3_column_int64(st, 0);
    else
        rc = db_error(s, err, "counting throughput reports");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_store_samples_since(pfi_store *s, double t0,
                            int (*fn)(double t, unsigned gpu, const pfi_gpu_sample *x, void *ctx),
                            void *ctx, pfi_error *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_SAMPLES_SINCE];
    sqlite3_bind_double(st, 1, t0);
    int step, rc = PFI_OK;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        pfi_gpu_sample x;
        memset(&x, 0, sizeof x);
        x.valid = (uint32_t)sqlite3_column_int64(st, 2);
        for (int f = 0; f < PFI_GF_COUNT; f++) {
            int k = f + 3;
            if (sqlite3_column_type(st, k) == SQLITE_NULL) continue;
            x.v[f] = pfi_gpu_fields[f].store_integer ? (double)sqlite3_column_int64(st, k)
                                                     : sqlite3_column_double(st, k);
        }
        if (fn(sqlite3_column_double(st, 0), (unsigned)sqlite3_column_int64(st, 1), &x, ctx)) break;
    }
    if (step != SQLITE_ROW && step != SQLITE_DONE) rc = db_error(s, err, "reading samples");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_store_throughput_since(pfi_store *s, const char *job, double t0,
                               int (*fn)(double t, double tokens_per_s, void *ctx), void *ctx,
                               pfi_error *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_TPUT_SINCE];
    sqlite3_bind_text(st, 1, job, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 2, t0);
    int step, rc = PFI_OK;
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        if (fn(sqlite3_column_double(st, 0), sqlite3_column_double(st, 1), ctx)) break;
    if (step != SQLITE_ROW && step != SQLITE_DONE) rc = db_error(s, err, "reading reports");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_store_cap_put(pfi_store *s, const pfi_store_cap *cap, pfi_error *err)
{
    if (s->readonly) return refuse_write(s, err);
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_CAP_PUT];
    sqlite3_bind_int64(st, 1, cap->gpu);
    sqlite3_bind_double(st, 2, cap->watts);
    sqlite3_bind_double(st, 3, cap->set_at);
    sqlite3_bind_double(st, 4, cap->expires_at);
    sqlite3_bind_double(st, 5, cap->prior_w);
    int rc = step_done(s, ST_CAP_PUT, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_store_cap_delete(pfi_store *s, unsigned gpu, pfi_error *err)
{
    if (s->readonly) return refuse_write(s, err);
    pthread_mutex_lock(&s->mu);
    sqlite3_bind_int64(s->st[ST_CAP_DEL], 1, gpu);
    int rc = step_done(s, ST_CAP_DEL, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* A cap row whose GPU cannot be read is skipped; any other unusable value
 * comes back as NaN for the agent to act on safely (restore, never keep). */
static int cap_row(pfi_store *s, sqlite3_stmt *st, void *item, pfi_error *err)
{
    (void)err;
    pfi_store_cap *c = item;
    sqlite3_int64 g = sqlite3_column_int64(st, 0);
    if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || g < 0 || g > 1000000) {
        bad_row(s, "caps", NULL, "no usable GPU index");
        return PFI_EPARSE;
    }
    c->gpu = (unsigned)g;
    c->watts = num_col(st, 1);
    c->set_at = num_col(st, 2);
    c->expires_at = num_col(st, 3);
    c->prior_w = num_col(st, 4);
    return PFI_OK;
}

int pfi_store_caps(pfi_store *s, pfi_store_cap **out, size_t *n, pfi_error *err)
{
    return collect(s, ST_CAPS, NULL, sizeof **out, cap_row, "reading caps", (void **)out, n, err);
}

int pfi_store_point_put(pfi_store *s, const pfi_store_point *p, pfi_error *err)
{
    if (s->readonly) return refuse_write(s, err);
    size_t len = strnlen(p->job, sizeof p->job);
    if (len == 0 || len > PFI_STORE_JOB_ID_MAX)
        return pfi_error_set(err, PFI_EINVAL, s->path, 0,
                             "curve point: job id empty or longer than %d bytes",
                             PFI_STORE_JOB_ID_MAX);
    const double v[] = {p->cap_w, p->power_w, p->tokens_per_s, p->tokens_sd, p->t_first, p->t_last};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]))
            return pfi_error_set(err, PFI_EINVAL, s->path, 0,
                                 "curve point of job '%s': a value is not finite", p->job);
    if (p->n < 0)
        return pfi_error_set(err, PFI_EINVAL, s->path, 0, "curve point of job '%s': n < 0", p->job);
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_POINT_PUT];
    sqlite3_bind_text(st, 1, p->job, (int)len, SQLITE_TRANSIENT);
    for (size_t i = 0; i < 4; i++)
        sqlite3_bind_double(st, (int)i + 2, v[i]);
    sqlite3_bind_int64(st, 6, p->n);
    sqlite3_bind_double(st, 7, p->t_first);
    sqlite3_bind_double(st, 8, p->t_last);
    int rc = step_done(s, ST_POINT_PUT, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static int point_row(pfi_store *s, sqlite3_stmt *st, void *item, pfi_error *err)
{
    (void)s;
    (void)err;
    pfi_store_point *p = item;
    snprintf(p->job, sizeof p->job, "%s", (const char *)sqlite3_column_text(st, 0));
    p->cap_w = sqlite3_column_double(st, 1);
    p->power_w = sqlite3_column_double(st, 2);
    p->tokens_per_s = sqlite3_column_double(st, 3);
    p->tokens_sd = sqlite3_column_double(st, 4);
    p->n = (long)sqlite3_column_int64(st, 5);
    p->t_first = sqlite3_column_double(st, 6);
    p->t_last = sqlite3_column_double(st, 7);
    return PFI_OK;
}

int pfi_store_points(pfi_store *s, const char *job, pfi_store_point **out, size_t *n,
                     pfi_error *err)
{
    return collect(s, job ? ST_POINTS_JOB : ST_POINTS_ALL, job, sizeof **out, point_row,
                   "reading curve points", (void **)out, n, err);
}

int pfi_store_prune(pfi_store *s, double before, pfi_error *err)
{
    if (s->readonly) return refuse_write(s, err);
    static const int which[] = {ST_PRUNE_SAMPLES, ST_PRUNE_TPUT, ST_PRUNE_JOBS};
    pthread_mutex_lock(&s->mu);
    int rc = step_done(s, ST_BEGIN, err);
    for (size_t i = 0; rc == PFI_OK && i < sizeof which / sizeof which[0]; i++) {
        sqlite3_bind_double(s->st[which[i]], 1, before);
        rc = step_done(s, which[i], err);
    }
    if (rc == PFI_OK)
        rc = step_done(s, ST_COMMIT, err);
    else
        step_done(s, ST_ROLLBACK, NULL);
    pthread_mutex_unlock(&s->mu);
    return rc;
}
