/* The controller's SQLite store (include/control/pfi/ctl_store.h). */
#include "pfi/ctl_store.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <sqlite3.h>

/* 2: observations.tput_var (a version-1 store gains it on open, NULL: unknown);
 * 3: jobs.class (an older store gains it on open, NULL: none);
 * 4: targets.domain (an older store gains it on open, NULL: the site) */
#define SCHEMA_VERSION 4

static const char *schema =
    "CREATE TABLE IF NOT EXISTS targets(source INTEGER NOT NULL, id TEXT NOT NULL,"
    " kind INTEGER NOT NULL, limit_w REAL NOT NULL, start REAL NOT NULL, end REAL,"
    " ramp_w_per_s REAL NOT NULL, priority INTEGER, is_default INTEGER NOT NULL,"
    " domain TEXT, PRIMARY KEY(source, id));"
    "CREATE TABLE IF NOT EXISTS caps(agent TEXT NOT NULL, gpu INTEGER NOT NULL,"
    " watts REAL NOT NULL, expires_at REAL NOT NULL, pushed_at REAL NOT NULL,"
    " PRIMARY KEY(agent, gpu));"
    "CREATE TABLE IF NOT EXISTS periods(t REAL NOT NULL, target TEXT, site_limit_w REAL,"
    " gpu_budget_w REAL, fixed_w REAL, trim_w REAL, measured_gpu_w REAL, site_w REAL,"
    " infeasible INTEGER NOT NULL, shortfall_w REAL, agents_up INTEGER NOT NULL, policy TEXT);"
    "CREATE INDEX IF NOT EXISTS periods_t ON periods(t);"
    "CREATE TABLE IF NOT EXISTS allocations(t REAL NOT NULL, job TEXT NOT NULL, power_w REAL,"
    " cap_w REAL, tput REAL, tmax REAL);"
    "CREATE INDEX IF NOT EXISTS allocations_t ON allocations(t);"
    "CREATE TABLE IF NOT EXISTS pushes(t REAL NOT NULL, agent TEXT NOT NULL,"
    " gpu INTEGER NOT NULL, watts REAL, status INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS observations(job TEXT NOT NULL, cap_w REAL NOT NULL,"
    " power_w REAL NOT NULL, tput REAL NOT NULL, n INTEGER NOT NULL, t REAL NOT NULL,"
    " tput_var REAL, PRIMARY KEY(job, cap_w));"
    "CREATE TABLE IF NOT EXISTS jobs(job TEXT PRIMARY KEY, pmax_w REAL, tmax REAL, t REAL,"
    " class TEXT);"
    "CREATE TABLE IF NOT EXISTS agents(url TEXT PRIMARY KEY, n_gpus INTEGER NOT NULL,"
    " max_w REAL NOT NULL, t REAL NOT NULL);"
    "CREATE TABLE IF NOT EXISTS state(key TEXT PRIMARY KEY, value REAL);"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);";

#define N_CACHE 24

struct pfi_ctl_store {
    /* Recursive: the loop and the HTTP server both write; a transaction
     * (begin .. commit) holds it, so the server's writes wait for it and
     * never land inside the loop's transaction. */
    pthread_mutex_t mu;
    sqlite3 *db;
    const char *sql[N_CACHE];
    sqlite3_stmt *st[N_CACHE];
};

static int db_error(pfi_ctl_store *s, pfi_error *err, const char *what)
{
    return pfi_error_set(err, PFI_EIO, NULL, 0, "store: %s: %s", what, sqlite3_errmsg(s->db));
}

/* The cached statement for sql (compared by pointer: callers pass literals). */
static sqlite3_stmt *stmt(pfi_ctl_store *s, const char *sql)
{
    for (int i = 0; i < N_CACHE; i++) {
        if (s->sql[i] == sql) {
            sqlite3_reset(s->st[i]);
            sqlite3_clear_bindings(s->st[i]);
            return s->st[i];
        }
        if (!s->sql[i]) {
            if (sqlite3_prepare_v2(s->db, sql, -1, &s->st[i], NULL) != SQLITE_OK) return NULL;
            s->sql[i] = sql;
            return s->st[i];
        }
    }
    return NULL;
}

/* Binds args by the letters of fmt: d double (NaN/inf -> NULL), i int64, t text. */
static void bindv(sqlite3_stmt *q, const char *fmt, va_list ap)
{
    for (int k = 0; fmt[k]; k++) {
        if (fmt[k] == 'd') {
            double v = va_arg(ap, double);
            if (isfinite(v))
                sqlite3_bind_double(q, k + 1, v);
            else
                sqlite3_bind_null(q, k + 1);
        } else if (fmt[k] == 'i') {
            sqlite3_bind_int64(q, k + 1, va_arg(ap, int64_t));
        } else {
            const char *t = va_arg(ap, const char *);
            if (t)
                sqlite3_bind_text(q, k + 1, t, -1, SQLITE_TRANSIENT);
            else
                sqlite3_bind_null(q, k + 1);
        }
    }
}

static int run(pfi_ctl_store *s, pfi_error *err, const char *sql, const char *fmt, ...)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *q = stmt(s, sql);
    int rc = PFI_OK;
    if (!q) {
        rc = db_error(s, err, "prepare");
    } else {
        va_list ap;
        va_start(ap, fmt);
        bindv(q, fmt, ap);
        va_end(ap);
        int sr = sqlite3_step(q);
        sqlite3_reset(q);
        if (sr != SQLITE_DONE && sr != SQLITE_ROW) rc = db_error(s, err, "write");
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* Whether table has that column (a version-1 store's observations lack one). */
static int has_column(sqlite3 *db, const char *table, const char *col)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT %s FROM %s LIMIT 0", col, table);
    sqlite3_stmt *q;
    int ok = sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK;
    sqlite3_finalize(q);
    return ok;
}

int pfi_ctl_store_open(const char *path, pfi_ctl_store **out, pfi_error *err)
{
    *out = NULL;
    pfi_ctl_store *s = calloc(1, sizeof *s);
    if (!s) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&s->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    if (sqlite3_open(path, &s->db) != SQLITE_OK) {
        pfi_error_set(err, PFI_EIO, path, 0, "cannot open the store: %s",
                      s->db ? sqlite3_errmsg(s->db) : "out of memory");
        pfi_ctl_store_close(s);
        return PFI_EIO;
    }
    sqlite3_busy_timeout(s->db, 5000);
    sqlite3_stmt *q;
    int ver = 0;
    if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &q, NULL) == SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_ROW) ver = sqlite3_column_int(q, 0);
        sqlite3_finalize(q);
    }
    if (ver > SCHEMA_VERSION) {
        pfi_error_set(err, PFI_ESTATE, path, 0,
                      "the store has schema version %d, newer than this pfi (%d)", ver,
                      SCHEMA_VERSION);
        pfi_ctl_store_close(s);
        return PFI_ESTATE;
    }
    /* The tables, the migrations and the version in one transaction: a
     * store is either as it was or all of the current version. */
    char *msg = NULL;
    int ok = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL,
                          &msg) == SQLITE_OK &&
             sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, &msg) == SQLITE_OK &&
             sqlite3_exec(s->db, schema, NULL, NULL, &msg) == SQLITE_OK;
    if (ok && !has_column(s->db, "observations", "tput_var"))
        ok = sqlite3_exec(s->db, "ALTER TABLE observations ADD COLUMN tput_var REAL", NULL, NULL,
                          &msg) == SQLITE_OK;
    if (ok && !has_column(s->db, "targets", "domain"))
        ok = sqlite3_exec(s->db, "ALTER TABLE targets ADD COLUMN domain TEXT", NULL, NULL, &msg) ==
             SQLITE_OK;
    if (ok && !has_column(s->db, "jobs", "class"))
        ok = sqlite3_exec(s->db, "ALTER TABLE jobs ADD COLUMN class TEXT", NULL, NULL, &msg) ==
             SQLITE_OK;
    char ver_sql[40];
    snprintf(ver_sql, sizeof ver_sql, "PRAGMA user_version=%d", SCHEMA_VERSION);
    ok = ok && sqlite3_exec(s->db, ver_sql, NULL, NULL, &msg) == SQLITE_OK &&
         sqlite3_exec(s->db, "COMMIT", NULL, NULL, &msg) == SQLITE_OK;
    if (!ok) {
        pfi_error_set(err, PFI_EIO, path, 0, "cannot set up the store: %s",
                      msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        pfi_ctl_store_close(s);
        return PFI_EIO;
    }
    *out = s;
    return PFI_OK;
}

void pfi_ctl_store_close(pfi_ctl_store *s)
{
    if (!s) return;
    for (int i = 0; i < N_CACHE; i++)
        if (s->st[i]) sqlite3_finalize(s->st[i]);
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

int pfi_ctl_store_begin(pfi_ctl_store *s, pfi_error *err)
{
    pthread_mutex_lock(&s->mu); /* held until commit */
    int rc = run(s, err, "BEGIN", "");
    if (rc != PFI_OK) pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_ctl_store_commit(pfi_ctl_store *s, pfi_error *err)
{
    int rc = run(s, err, "COMMIT", "");
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static const char *SQL_TGT_PUT =
    "INSERT OR REPLACE INTO targets(source, id, kind, limit_w, start, end, ramp_w_per_s, priority,"
    " is_default, domain) VALUES(?,?,?,?,?,?,?,?,?,?)";

int pfi_ctl_store_put_target(pfi_ctl_store *s, const pfi_target *t, pfi_error *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *q = stmt(s, SQL_TGT_PUT);
    if (!q) {
        pthread_mutex_unlock(&s->mu);
        return db_error(s, err, "prepare");
    }
    sqlite3_bind_int(q, 1, t->source);
    sqlite3_bind_text(q, 2, t->id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(q, 3, t->kind);
    sqlite3_bind_double(q, 4, t->limit_w);
    sqlite3_bind_double(q, 5, t->start);
    if (isfinite(t->end)) sqlite3_bind_double(q, 6, t->end);
    sqlite3_bind_double(q, 7, t->ramp_w_per_s);
    if (t->priority != PFI_TARGET_NO_PRIORITY) sqlite3_bind_int64(q, 8, t->priority);
    sqlite3_bind_int(q, 9, t->is_default);
    if (t->domain[0]) sqlite3_bind_text(q, 10, t->domain, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(q);
    sqlite3_reset(q);
    rc = rc == SQLITE_DONE ? PFI_OK : db_error(s, err, "write a target");
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_ctl_store_del_target(pfi_ctl_store *s, pfi_target_source src, const char *id,
                             pfi_error *err)
{
    pthread_mutex_lock(&s->mu);
    int rc = run(s, err, "DELETE FROM targets WHERE source=? AND id=?", "it", (int64_t)src, id);
    if (rc == PFI_OK && sqlite3_changes(s->db) == 0)
        rc = pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "no target '%s'", id);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_ctl_store_replace_source(pfi_ctl_store *s, pfi_target_source src, const pfi_target *ts,
                                 size_t n, pfi_error *err)
{
    pthread_mutex_lock(&s->mu);
    int rc = run(s, err, "DELETE FROM targets WHERE source=?", "i", (int64_t)src);
    for (size_t i = 0; i < n && rc == PFI_OK; i++)
        rc = pfi_ctl_store_put_target(s, &ts[i], err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static int select_locked(pfi_ctl_store *s, const char *sql, size_t elem,
                         void (*fn)(sqlite3_stmt *, void *), void **out, size_t *n, pfi_error *err);

/* Runs a SELECT and hands each row to fn; grows a malloc'd array of elem bytes. */
static int select_all(pfi_ctl_store *s, const char *sql, size_t elem,
                      void (*fn)(sqlite3_stmt *, void *), void **out, size_t *n, pfi_error *err)
{
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&s->mu);
    int rc = select_locked(s, sql, elem, fn, out, n, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static int select_locked(pfi_ctl_store *s, const char *sql, size_t elem,
                         void (*fn)(sqlite3_stmt *, void *), void **out, size_t *n, pfi_error *err)
{
    sqlite3_stmt *q = stmt(s, sql);
    if (!q) return db_error(s, err, "prepare");
    size_t cap = 0;
    char *arr = NULL;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char *a = realloc(arr, cap * elem);
            if (!a) {
                free(arr);
                sqlite3_reset(q);
                return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
            }
            arr = a;
        }
        memset(arr + *n * elem, 0, elem);
        fn(q, arr + *n * elem);
        (*n)++;
    }
    sqlite3_reset(q);
    if (rc != SQLITE_DONE) {
        free(arr);
        *n = 0;
        return db_error(s, err, "read");
    }
    *out = arr;
    return PFI_OK;
}

static double col_d(sqlite3_stmt *q, int c, double null_v)
{
    return sqlite3_column_type(q, c) == SQLITE_NULL ? null_v : sqlite3_column_double(q, c);
}

static void col_s(sqlite3_stmt *q, int c, char *dst, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(q, c);
    snprintf(dst, cap, "%s", t ? (const char *)t : "");
}

static void row_target(sqlite3_stmt *q, void *p)
{
    pfi_target *t = p;
    t->source = (pfi_target_source)sqlite3_column_int(q, 0);
    col_s(q, 1, t->id, sizeof t->id);
    t->kind = (pfi_target_kind)sqlite3_column_int(q, 2);
    t->limit_w = sqlite3_column_double(q, 3);
    t->start = sqlite3_column_double(q, 4);
    t->end = col_d(q, 5, INFINITY);
    t->ramp_w_per_s = sqlite3_column_double(q, 6);
    t->priority = sqlite3_column_type(q, 7) == SQLITE_NULL ? PFI_TARGET_NO_PRIORITY
                                                           : (long)sqlite3_column_int64(q, 7);
    t->is_default = sqlite3_column_int(q, 8);
    col_s(q, 9, t->domain, sizeof t->domain); /* NULL: the site */
}

int pfi_ctl_store_load_targets(pfi_ctl_store *s, pfi_target **out, size_t *n, pfi_error *err)
{
    return select_all(s,
                      "SELECT source, id, kind, limit_w, start, end, ramp_w_per_s, priority,"
                      " is_default, domain FROM targets ORDER BY start, source, id",
                      sizeof **out, row_target, (void **)out, n, err);
}

int pfi_ctl_store_put_cap(pfi_ctl_store *s, const char *agent, unsigned gpu, double watts,
                          double expires_at, double pushed_at, pfi_error *err)
{
    if (watts <= 0)
        return run(s, err, "DELETE FROM caps WHERE agent=? AND gpu=?", "ti", agent, (int64_t)gpu);
    return run(s, err, "INSERT OR REPLACE INTO caps VALUES(?,?,?,?,?)", "tiddd", agent,
               (int64_t)gpu, watts, expires_at, pushed_at);
}

static void row_cap(sqlite3_stmt *q, void *p)
{
    pfi_ctl_cap_rec *c = p;
    col_s(q, 0, c->agent, sizeof c->agent);
    c->gpu = (unsigned)sqlite3_column_int64(q, 1);
    c->watts = sqlite3_column_double(q, 2);
    c->expires_at = sqlite3_column_double(q, 3);
    c->pushed_at = sqlite3_column_double(q, 4);
}

int pfi_ctl_store_load_caps(pfi_ctl_store *s, pfi_ctl_cap_rec **out, size_t *n, pfi_error *err)
{
    return select_all(s, "SELECT agent,gpu,watts,expires_at,pushed_at FROM caps ORDER BY agent,gpu",
                      sizeof **out, row_cap, (void **)out, n, err);
}

int pfi_ctl_store_add_period(pfi_ctl_store *s, const pfi_ctl_period_rec *r, pfi_error *err)
{
    return run(s, err, "INSERT INTO periods VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", "dtddddddidit", r->t,
               r->target, r->site_limit_w, r->gpu_budget_w, r->fixed_w, r->trim_w,
               r->measured_gpu_w, r->site_w, (int64_t)r->infeasible, r->shortfall_w,
               (int64_t)r->agents_up, r->policy);
}

int pfi_ctl_store_add_alloc(pfi_ctl_store *s, double t, const char *job, double power_w,
                            double cap_w, double tput, double tmax, pfi_error *err)
{
    return run(s, err, "INSERT INTO allocations VALUES(?,?,?,?,?,?)", "dtdddd", t, job, power_w,
               cap_w, tput, tmax);
}

int pfi_ctl_store_add_push(pfi_ctl_store *s, double t, const char *agent, unsigned gpu,
                           double watts, long status, pfi_error *err)
{
    return run(s, err, "INSERT INTO pushes VALUES(?,?,?,?,?)", "dtidi", t, agent, (int64_t)gpu,
               watts > 0 ? watts : NAN, (int64_t)status);
}

int pfi_ctl_store_put_obs(pfi_ctl_store *s, const char *job, double cap_w, double power_w,
                          double tput, double tput_var, double t, pfi_error *err)
{
    /* The controller's exponential mean (weight 0.3 on the new point) and
     * its variance (ctl_spread_ewma; NULL, unknown, stays so), so that a
     * restarted controller has the curve the running one had. */
    return run(s, err,
               "INSERT INTO observations(job,cap_w,power_w,tput,n,t,tput_var) "
               "VALUES(?1,?2,?3,?4,1,?5,?6) ON CONFLICT(job, cap_w) DO "
               "UPDATE SET power_w=power_w+0.3*(?3-power_w), tput=tput+0.3*(?4-tput), n=n+1, "
               "t=?5, tput_var=0.7*0.7*tput_var+0.3*0.3*?6",
               "tddddd", job, cap_w, power_w, tput, t, tput_var >= 0 ? tput_var : NAN);
}

static void row_obs(sqlite3_stmt *q, void *p)
{
    pfi_ctl_obs_rec *o = p;
    col_s(q, 0, o->job, sizeof o->job);
    o->cap_w = sqlite3_column_double(q, 1);
    o->power_w = sqlite3_column_double(q, 2);
    o->tput = sqlite3_column_double(q, 3);
    o->n = (long)sqlite3_column_int64(q, 4);
    o->tput_var = sqlite3_column_type(q, 5) == SQLITE_NULL ? NAN : sqlite3_column_double(q, 5);
}

int pfi_ctl_store_load_obs(pfi_ctl_store *s, pfi_ctl_obs_rec **out, size_t *n, pfi_error *err)
{
    return select_all(s,
                      "SELECT job,cap_w,power_w,tput,n,tput_var FROM observations"
                      " ORDER BY job,cap_w",
                      sizeof **out, row_obs, (void **)out, n, err);
}

int pfi_ctl_store_put_job(pfi_ctl_store *s, const char *job, double pmax_w, double tmax, double t,
                          pfi_error *err)
{
    return run(
        s, err,
        "INSERT INTO jobs(job,pmax_w,tmax,t) VALUES(?1,?2,?3,?4) ON CONFLICT(job) DO UPDATE SET "
        "pmax_w=max(coalesce(pmax_w,?2),coalesce(?2,pmax_w)),"
        "tmax=max(coalesce(tmax,?3),coalesce(?3,tmax)), t=?4",
        "tddd", job, pmax_w, tmax, t);
}

int pfi_ctl_store_put_job_class(pfi_ctl_store *s, const char *job, const char *job_class, double t,
                                pfi_error *err)
{
    return run(s, err,
               "INSERT INTO jobs(job,t,class) VALUES(?1,?2,?3) ON CONFLICT(job) DO UPDATE SET "
               "class=?3, t=?2",
               "tdt", job, t, job_class && *job_class ? job_class : NULL);
}

static void row_job(sqlite3_stmt *q, void *p)
{
    pfi_ctl_job_rec *j = p;
    col_s(q, 0, j->job, sizeof j->job);
    j->pmax_w = col_d(q, 1, NAN);
    j->tmax = col_d(q, 2, NAN);
    col_s(q, 3, j->job_class, sizeof j->job_class);
}

int pfi_ctl_store_load_jobs(pfi_ctl_store *s, pfi_ctl_job_rec **out, size_t *n, pfi_error *err)
{
    return select_all(s, "SELECT job,pmax_w,tmax,class FROM jobs ORDER BY job", sizeof **out,
                      row_job, (void **)out, n, err);
}

int pfi_ctl_store_put_agent(pfi_ctl_store *s, const char *url, size_t n_gpus, double max_w,
                            double t, pfi_error *err)
{
    return run(s, err, "INSERT OR REPLACE INTO agents VALUES(?,?,?,?)", "tidd", url,
               (int64_t)n_gpus, max_w, t);
}

int pfi_ctl_store_get_agent(pfi_ctl_store *s, const char *url, size_t *n_gpus, double *max_w,
                            pfi_error *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *q = stmt(s, "SELECT n_gpus, max_w FROM agents WHERE url=?");
    if (!q) {
        pthread_mutex_unlock(&s->mu);
        return db_error(s, err, "prepare");
    }
    sqlite3_bind_text(q, 1, url, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        *n_gpus = (size_t)sqlite3_column_int64(q, 0);
        *max_w = sqlite3_column_double(q, 1);
    }
    sqlite3_reset(q);
    pthread_mutex_unlock(&s->mu);
    if (rc == SQLITE_ROW) return PFI_OK;
    if (rc == SQLITE_DONE) return PFI_ENOTFOUND;
    return db_error(s, err, "read");
}

int pfi_ctl_store_put_state(pfi_ctl_store *s, const char *key, double v, pfi_error *err)
{
    return run(s, err, "INSERT OR REPLACE INTO state VALUES(?,?)", "td", key, v);
}

int pfi_ctl_store_get_state(pfi_ctl_store *s, const char *key, double *v, pfi_error *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *q = stmt(s, "SELECT value FROM state WHERE key=?");
    if (!q) {
        pthread_mutex_unlock(&s->mu);
        return db_error(s, err, "prepare");
    }
    sqlite3_bind_text(q, 1, key, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) *v = col_d(q, 0, NAN);
    sqlite3_reset(q);
    pthread_mutex_unlock(&s->mu);
    if (rc == SQLITE_ROW) return PFI_OK;
    if (rc == SQLITE_DONE) return PFI_ENOTFOUND;
    return db_error(s, err, "read");
}

int pfi_ctl_store_put_meta(pfi_ctl_store *s, const char *key, const char *v, pfi_error *err)
{
    return run(s, err, "INSERT OR REPLACE INTO meta VALUES(?,?)", "tt", key, v);
}

int pfi_ctl_store_get_meta(pfi_ctl_store *s, const char *key, char *v, size_t len, pfi_error *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *q = stmt(s, "SELECT value FROM meta WHERE key=?");
    if (!q) {
        pthread_mutex_unlock(&s->mu);
        return db_error(s, err, "prepare");
    }
    sqlite3_bind_text(q, 1, key, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(q, 0);
        snprintf(v, len, "%s", t ? (const char *)t : "");
    }
    sqlite3_reset(q);
    pthread_mutex_unlock(&s->mu);
    if (rc == SQLITE_ROW) return PFI_OK;
    if (rc == SQLITE_DONE) return PFI_ENOTFOUND;
    return db_error(s, err, "read");
}
