/* SQLite store of pfid (see include/io/pfi/store.h): opening, checking and
 * closing it, the sample rows and pruning; the schema is store_schema.c's,
 * the job rows store_jobs.c's, the cap rows store_caps.c's. */
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
#include "store_int.h"
#include "store_schema.h"

/* ST_SAMPLE and ST_SAMPLES_SINCE are generated from the sample columns at
 * open (store_schema.h). */
static const char *stmt_sql[ST_COUNT] = {
    [ST_JOB_ADD] = "INSERT INTO jobs(id,gpus,arch,task,registered_at,ended_at,sla_floor,exempt,"
                   "class) VALUES(?,?,?,?,?,NULL,?,?,?)",
    [ST_JOB_END] = "UPDATE jobs SET ended_at=? WHERE id=? AND ended_at IS NULL",
    [ST_JOBS_RUNNING] = "SELECT id,gpus,arch,task,registered_at,sla_floor,exempt,NULL,class "
                        "FROM jobs "
                        "WHERE ended_at IS NULL ORDER BY registered_at, rowid",
    [ST_JOBS_ALL] = "SELECT id,gpus,arch,task,registered_at,sla_floor,exempt,ended_at,class "
                    "FROM jobs "
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

void pfi_store_on_bad_row(pfi_store *s, pfi_store_bad_row_fn fn, void *ctx)
{
    pthread_mutex_lock(&s->mu);
    s->bad_row = fn;
    s->bad_row_ctx = ctx;
    pthread_mutex_unlock(&s->mu);
}

/* A row a read skips. Caller holds s->mu. */
void store_bad_row(pfi_store *s, const char *table, const char *id, const char *why)
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

int store_db_error(pfi_store *s, pfi_error *err, const char *what)
{
    return pfi_error_set(err, PFI_EIO, s->path, 0, "%s: %s", what, sqlite3_errmsg(s->db));
}

/* Every write function on a read-only handle ends here before touching
 * SQLite: its connection may be an in-memory copy (readonly_schema), which
 * would take the write silently. */
int store_refuse_write(const pfi_store *s, pfi_error *err)
{
    return pfi_error_set(err, PFI_ESTATE, s->path, 0,
                         "the store is open read-only; nothing written");
}

/* Runs a prepared statement that returns no rows, then resets it. */
int store_step_done(pfi_store *s, int which, pfi_error *err)
{
    sqlite3_stmt *st = s->st[which];
    int rc = sqlite3_step(st);
    int ok = rc == SQLITE_DONE;
    if (!ok) store_db_error(s, err, sqlite3_sql(st));
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
            rc = store_db_error(s, err, sql);
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
        store_db_error(s, err, "begin a snapshot");
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
    return store_step_done(s, ST_SAMPLE, err);
}

int pfi_store_add_samples(pfi_store *s, double t, const pfi_gpu_sample *samples, unsigned n,
                          pfi_error *err)
{
    if (s->readonly) return store_refuse_write(s, err);
    pthread_mutex_lock(&s->mu);
    int rc = store_step_done(s, ST_BEGIN, err);
    for (unsigned g = 0; rc == PFI_OK && g < n; g++)
        rc = insert_sample(s, t, g, &samples[g], err);
    if (rc == PFI_OK)
        rc = store_step_done(s, ST_COMMIT, err);
    else
        store_step_done(s, ST_ROLLBACK, NULL);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* store_int.h says what it does. */
int store_collect(pfi_store *s, int which, const char *key, size_t elem, row_reader row,
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
    if (rc == PFI_OK && step != SQLITE_DONE) rc = store_db_error(s, err, what);
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
double store_num_col(sqlite3_stmt *st, int i)
{
    int t = sqlite3_column_type(st, i);
    if (t != SQLITE_INTEGER && t != SQLITE_FLOAT) return NAN;
    double v = sqlite3_column_double(st, i);
    return isfinite(v) ? v : NAN;
}

/* A short TEXT column into buf; -1 when NULL, not text or too long. */
int store_text_col(sqlite3_stmt *st, int i, char *buf, size_t len, int allow_null)
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
    if (step != SQLITE_ROW && step != SQLITE_DONE) rc = store_db_error(s, err, "reading samples");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_store_prune(pfi_store *s, double before, pfi_error *err)
{
    if (s->readonly) return store_refuse_write(s, err);
    static const int which[] = {ST_PRUNE_SAMPLES, ST_PRUNE_TPUT, ST_PRUNE_JOBS};
    pthread_mutex_lock(&s->mu);
    int rc = store_step_done(s, ST_BEGIN, err);
    for (size_t i = 0; rc == PFI_OK && i < sizeof which / sizeof which[0]; i++) {
        sqlite3_bind_double(s->st[which[i]], 1, before);
        rc = store_step_done(s, which[i], err);
    }
    if (rc == PFI_OK)
        rc = store_step_done(s, ST_COMMIT, err);
    else
        store_step_done(s, ST_ROLLBACK, NULL);
    pthread_mutex_unlock(&s->mu);
    return rc;
}
