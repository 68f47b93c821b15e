/* SQLite store of pfid (see include/pfi/store.h). */
#include "pfi/store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* Schema version 1. Adding a version means adding a migration step in
 * migrate() and bumping PFI_STORE_SCHEMA_VERSION. */
static const char *schema_v1 =
    "CREATE TABLE samples("
    " t REAL NOT NULL, gpu INTEGER NOT NULL, valid INTEGER NOT NULL,"
    " power_w REAL, energy_j REAL, limit_w REAL, sm_clock_mhz REAL, mem_clock_mhz REAL,"
    " util_gpu_pct REAL, util_mem_pct REAL, temp_c REAL, fb_used_mib REAL,"
    " clock_reasons INTEGER, sm_active REAL, sm_occupancy REAL, tensor_active REAL,"
    " dram_active REAL, pcie_tx REAL, pcie_rx REAL, nvlink_tx REAL, nvlink_rx REAL);"
    "CREATE INDEX samples_t ON samples(t);"
    "CREATE TABLE jobs("
    " id TEXT NOT NULL, gpus TEXT NOT NULL, arch TEXT NOT NULL, task TEXT NOT NULL,"
    " registered_at REAL NOT NULL, ended_at REAL);"
    /* An id is unique among running jobs only: a requeued job may reuse it. */
    "CREATE UNIQUE INDEX jobs_running ON jobs(id) WHERE ended_at IS NULL;"
    "CREATE TABLE throughput("
    " job TEXT NOT NULL, t REAL NOT NULL, tokens_per_s REAL NOT NULL);"
    "CREATE INDEX throughput_job_t ON throughput(job, t);"
    "CREATE TABLE caps("
    " gpu INTEGER PRIMARY KEY, watts REAL NOT NULL, set_at REAL NOT NULL,"
    " expires_at REAL NOT NULL, default_w REAL NOT NULL);";

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
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_COUNT
};

static const char *stmt_sql[ST_COUNT] = {
    [ST_SAMPLE] = "INSERT INTO samples VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_JOB_ADD] = "INSERT INTO jobs(id,gpus,arch,task,registered_at,ended_at) "
                   "VALUES(?,?,?,?,?,NULL)",
    [ST_JOB_END] = "UPDATE jobs SET ended_at=? WHERE id=? AND ended_at IS NULL",
    [ST_JOBS_RUNNING] = "SELECT id,gpus,arch,task,registered_at FROM jobs "
                        "WHERE ended_at IS NULL ORDER BY registered_at, rowid",
    [ST_TPUT_ADD] = "INSERT INTO throughput VALUES(?,?,?)",
    [ST_TPUT_COUNT] = "SELECT count(*) FROM throughput WHERE job=?",
    [ST_CAP_PUT] = "INSERT OR REPLACE INTO caps VALUES(?,?,?,?,?)",
    [ST_CAP_DEL] = "DELETE FROM caps WHERE gpu=?",
    [ST_CAPS] = "SELECT gpu,watts,set_at,expires_at,default_w FROM caps ORDER BY gpu",
    [ST_PRUNE_SAMPLES] = "DELETE FROM samples WHERE t<?",
    [ST_PRUNE_TPUT] = "DELETE FROM throughput WHERE t<?",
    [ST_PRUNE_JOBS] = "DELETE FROM jobs WHERE ended_at IS NOT NULL AND ended_at<?",
    [ST_SAMPLES_SINCE] = "SELECT * FROM samples WHERE t>=? ORDER BY t, gpu",
    [ST_TPUT_SINCE] = "SELECT t, tokens_per_s FROM throughput WHERE job=? AND t>=? ORDER BY t",
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
};

struct pfi_store {
    sqlite3 *db;
    sqlite3_stmt *st[ST_COUNT];
    pthread_mutex_t mu;
    char path[256];
};

static int db_error(pfi_store *s, pfi_error *err, const char *what)
{
    return pfi_error_set(err, PFI_EIO, s->path, 0, "%s: %s", what, sqlite3_errmsg(s->db));
}

/* Runs a prepared statement that returns no rows, then resets it. */
static int step_done(pfi_store *s, int which, pfi_error *err)
{
    sqlite3_stmt *st = s->st[which];
    int rc = sqlite3_step(st);
    int ok = rc == SQLITE_DONE;
    if (!ok) db_error(s, err, stmt_sql[which]);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return ok ? PFI_OK : PFI_EIO;
}

static int exec(pfi_store *s, const char *sql, pfi_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        pfi_error_set(err, PFI_EIO, s->path, 0, "%s", msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        return PFI_EIO;
    }
    return PFI_OK;
}

static int user_version(pfi_store *s, int *v, pfi_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
        return db_error(s, err, "reading the schema version");
    int rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? PFI_OK : db_error(s, err, "reading the schema version");
}

static int migrate(pfi_store *s, pfi_error *err)
{
    int v, rc;
    if ((rc = exec(s, "BEGIN IMMEDIATE", err)) != PFI_OK) return rc;
    if ((rc = user_version(s, &v, err)) != PFI_OK) goto fail;
    if (v > PFI_STORE_SCHEMA_VERSION) {
        rc = pfi_error_set(err, PFI_ENOTSUP, s->path, 0,
                           "database schema version %d is newer than this pfid's (%d)", v,
                           PFI_STORE_SCHEMA_VERSION);
        goto fail;
    }
    if (v == 0) {
        if ((rc = exec(s, schema_v1, err)) != PFI_OK) goto fail;
        if ((rc = exec(s, "PRAGMA user_version=1", err)) != PFI_OK) goto fail;
    }
    return exec(s, "COMMIT", err);
fail:
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int pfi_store_open(const char *path, pfi_store **out, pfi_error *err)
{
    *out = NULL;
    pfi_store *s = calloc(1, sizeof *s);
    if (!s) return pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    snprintf(s->path, sizeof s->path, "%s", path);
    pthread_mutex_init(&s->mu, NULL);
    int rc;
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        rc = pfi_error_set(err, PFI_EIO, path, 0, "cannot open database: %s",
                           s->db ? sqlite3_errmsg(s->db) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout(s->db, 5000);
    /* journal_mode answers with a row; exec ignores it. A file on a
     * filesystem without shared memory stays in its old mode, which is still
     * correct, only slower. */
    if ((rc = exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                      "PRAGMA foreign_keys=ON;", err)) != PFI_OK)
        goto fail;
    if ((rc = migrate(s, err)) != PFI_OK) goto fail;
    for (int i = 0; i < ST_COUNT; i++) {
        if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i],
                               NULL) != SQLITE_OK) {
            rc = db_error(s, err, stmt_sql[i]);
            goto fail;
        }
    }
    *out = s;
    return PFI_OK;
fail:
    pfi_store_close(s);
    return rc;
}

void pfi_store_close(pfi_store *s)
{
    if (!s) return;
    for (int i = 0; i < ST_COUNT; i++) sqlite3_finalize(s->st[i]);
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static void bind_field(sqlite3_stmt *st, int col, const pfi_gpu_sample *x, int field, double v)
{
    if (x->valid & (1u << field))
        sqlite3_bind_double(st, col, v);
    else
        sqlite3_bind_null(st, col);
}

static int insert_sample(pfi_store *s, double t, unsigned gpu, const pfi_gpu_sample *x,
                         pfi_error *err)
{
    sqlite3_stmt *st = s->st[ST_SAMPLE];
    sqlite3_bind_double(st, 1, t);
    sqlite3_bind_int64(st, 2, gpu);
    sqlite3_bind_int64(st, 3, x->valid);
    bind_field(st, 4, x, PFI_GF_POWER, x->power_mw / 1000.0);
    bind_field(st, 5, x, PFI_GF_ENERGY, x->energy_mj / 1000.0);
    bind_field(st, 6, x, PFI_GF_LIMIT, x->limit_mw / 1000.0);
    bind_field(st, 7, x, PFI_GF_SM_CLOCK, x->sm_clock_mhz);
    bind_field(st, 8, x, PFI_GF_MEM_CLOCK, x->mem_clock_mhz);
    bind_field(st, 9, x, PFI_GF_UTIL_GPU, x->util_gpu_pct);
    bind_field(st, 10, x, PFI_GF_UTIL_MEM, x->util_mem_pct);
    bind_field(st, 11, x, PFI_GF_TEMP, x->temp_c);
    bind_field(st, 12, x, PFI_GF_FB_USED, x->fb_used_mib);
    if (x->valid & (1u << PFI_GF_CLOCK_EVENTS))
        sqlite3_bind_int64(st, 13, (sqlite3_int64)x->clock_events);
    else
        sqlite3_bind_null(st, 13);
    bind_field(st, 14, x, PFI_GF_SM_ACTIVE, x->sm_active);
    bind_field(st, 15, x, PFI_GF_SM_OCCUPANCY, x->sm_occupancy);
    bind_field(st, 16, x, PFI_GF_TENSOR_ACTIVE, x->tensor_active);
    bind_field(st, 17, x, PFI_GF_DRAM_ACTIVE, x->dram_active);
    bind_field(st, 18, x, PFI_GF_PCIE_TX, x->pcie_tx);
    bind_field(st, 19, x, PFI_GF_PCIE_RX, x->pcie_rx);
    bind_field(st, 20, x, PFI_GF_NVLINK_TX, x->nvlink_tx);
    bind_field(st, 21, x, PFI_GF_NVLINK_RX, x->nvlink_rx);
    return step_done(s, ST_SAMPLE, err);
}

int pfi_store_add_samples(pfi_store *s, double t, const pfi_gpu_sample *samples, unsigned n,
                          pfi_error *err)
{
    pthread_mutex_lock(&s->mu);
    int rc = step_done(s, ST_BEGIN, err);
    for (unsigned g = 0; rc == PFI_OK && g < n; g++) rc = insert_sample(s, t, g, &samples[g], err);
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
    char gpus[PFI_STORE_MAX_JOB_GPUS * 12];
    gpus_to_text(job, gpus, sizeof gpus);
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_JOB_ADD];
    sqlite3_bind_text(st, 1, job->id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, gpus, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, job->arch, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, job->task, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 5, job->registered_at);
    int rc = sqlite3_step(st);
    int out = PFI_OK;
    if (rc == SQLITE_CONSTRAINT)
        out = pfi_error_set(err, PFI_ESTATE, s->path, 0, "job '%s' is already running",
                            job->id);
    else if (rc != SQLITE_DONE)
        out = db_error(s, err, "adding a job");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    pthread_mutex_unlock(&s->mu);
    return out;
}

int pfi_store_job_end(pfi_store *s, const char *id, double t, pfi_error *err)
{
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

/* Reads every row of prepared statement `which` into a grown array of
 * `elem`-byte items, one `row` call each; on failure nothing is returned. */
typedef int (*row_reader)(pfi_store *s, sqlite3_stmt *st, void *item, pfi_error *err);

static int collect(pfi_store *s, int which, size_t elem, row_reader row, const char *what,
                   void **out, size_t *n, pfi_error *err)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    int rc = PFI_OK, step;
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[which];
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
        if ((rc = row(s, st, item, err)) != PFI_OK) break;
        (*n)++;
    }
    if (rc == PFI_OK && step != SQLITE_DONE) rc = db_error(s, err, what);
    sqlite3_reset(st);
    pthread_mutex_unlock(&s->mu);
    if (rc != PFI_OK) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

static int job_row(pfi_store *s, sqlite3_stmt *st, void *item, pfi_error *err)
{
    pfi_store_job *j = item;
    snprintf(j->id, sizeof j->id, "%s", (const char *)sqlite3_column_text(st, 0));
    snprintf(j->arch, sizeof j->arch, "%s", (const char *)sqlite3_column_text(st, 2));
    snprintf(j->task, sizeof j->task, "%s", (const char *)sqlite3_column_text(st, 3));
    j->registered_at = sqlite3_column_double(st, 4);
    if (gpus_from_text((const char *)sqlite3_column_text(st, 1), j) != PFI_OK)
        return pfi_error_set(err, PFI_EPARSE, s->path, 0, "job '%s': bad GPU list '%s'", j->id,
                             (const char *)sqlite3_column_text(st, 1));
    return PFI_OK;
}

int pfi_store_jobs_running(pfi_store *s, pfi_store_job **out, size_t *n, pfi_error *err)
{
    return collect(s, ST_JOBS_RUNNING, sizeof **out, job_row, "reading jobs", (void **)out, n,
                   err);
}

int pfi_store_add_throughput(pfi_store *s, const char *job, double t, double tokens_per_s,
                             pfi_error *err)
{
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

static double col(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? 0.0 : sqlite3_column_double(st, i);
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
        /* Columns in schema order (see schema_v1). */
        pfi_gpu_sample x = {
            .valid = (uint32_t)sqlite3_column_int64(st, 2),
            .power_mw = col(st, 3) * 1000.0,
            .energy_mj = col(st, 4) * 1000.0,
            .limit_mw = col(st, 5) * 1000.0,
            .sm_clock_mhz = col(st, 6),
            .mem_clock_mhz = col(st, 7),
            .util_gpu_pct = col(st, 8),
            .util_mem_pct = col(st, 9),
            .temp_c = col(st, 10),
            .fb_used_mib = col(st, 11),
            .clock_events = (uint32_t)sqlite3_column_int64(st, 12),
            .sm_active = col(st, 13),
            .sm_occupancy = col(st, 14),
            .tensor_active = col(st, 15),
            .dram_active = col(st, 16),
            .pcie_tx = col(st, 17),
            .pcie_rx = col(st, 18),
            .nvlink_tx = col(st, 19),
            .nvlink_rx = col(st, 20),
        };
        if (fn(sqlite3_column_double(st, 0), (unsigned)sqlite3_column_int64(st, 1), &x, ctx))
            break;
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
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_CAP_PUT];
    sqlite3_bind_int64(st, 1, cap->gpu);
    sqlite3_bind_double(st, 2, cap->watts);
    sqlite3_bind_double(st, 3, cap->set_at);
    sqlite3_bind_double(st, 4, cap->expires_at);
    sqlite3_bind_double(st, 5, cap->default_w);
    int rc = step_done(s, ST_CAP_PUT, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_store_cap_delete(pfi_store *s, unsigned gpu, pfi_error *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_bind_int64(s->st[ST_CAP_DEL], 1, gpu);
    int rc = step_done(s, ST_CAP_DEL, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static int cap_row(pfi_store *s, sqlite3_stmt *st, void *item, pfi_error *err)
{
    pfi_store_cap *c = item;
    c->gpu = (unsigned)sqlite3_column_int64(st, 0);
    c->watts = sqlite3_column_double(st, 1);
    c->set_at = sqlite3_column_double(st, 2);
    c->expires_at = sqlite3_column_double(st, 3);
    c->default_w = sqlite3_column_double(st, 4);
    return PFI_OK;
}

int pfi_store_caps(pfi_store *s, pfi_store_cap **out, size_t *n, pfi_error *err)
{
    return collect(s, ST_CAPS, sizeof **out, cap_row, "reading caps", (void **)out, n, err);
}

int pfi_store_prune(pfi_store *s, double before, pfi_error *err)
{
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
