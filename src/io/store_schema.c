/* pfid's store schema (store_schema.h): version 4, whose samples columns are
 * the GPU field table's store columns (gpu_field.h); versions 1 to 3
 * migrated. A new database is made as schema 2 and migrated, so that every
 * path to the current schema runs the same steps. */
#include "store_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/gpu_field.h"
#include "pfi/store.h"

/* New in schema 2: made by both a fresh database and the migration. */
#define JOB_POINTS_DDL                                                                             \
    "CREATE TABLE job_points("                                                                     \
    " job TEXT NOT NULL, cap_w REAL NOT NULL, power_w REAL NOT NULL,"                              \
    " tokens_per_s REAL NOT NULL, tokens_sd REAL NOT NULL, n INTEGER NOT NULL,"                    \
    " t_first REAL NOT NULL, t_last REAL NOT NULL, PRIMARY KEY(job, cap_w));"

/* Every table of schema 2 but samples (whose columns come from the list). */
static const char *tables_v2 =
    "CREATE INDEX samples_t ON samples(t);"
    "CREATE TABLE jobs("
    " id TEXT NOT NULL, gpus TEXT NOT NULL, arch TEXT NOT NULL, task TEXT NOT NULL,"
    " registered_at REAL NOT NULL, ended_at REAL, sla_floor REAL,"
    " exempt INTEGER NOT NULL DEFAULT 0);"
    /* An id is unique among running jobs only: a requeued job may reuse it. */
    "CREATE UNIQUE INDEX jobs_running ON jobs(id) WHERE ended_at IS NULL;"
    "CREATE TABLE throughput("
    " job TEXT NOT NULL, t REAL NOT NULL, tokens_per_s REAL NOT NULL);"
    "CREATE INDEX throughput_job_t ON throughput(job, t);"
    "CREATE TABLE caps("
    " gpu INTEGER PRIMARY KEY, watts REAL NOT NULL, set_at REAL NOT NULL,"
    " expires_at REAL NOT NULL, prior_w REAL NOT NULL);" JOB_POINTS_DDL;

/* The tables each schema version has: a database with any other table is not
 * pfid's (sqlite_* are SQLite's own). */
static const char *const tables_of[][6] = {
    [1] = {"samples", "jobs", "throughput", "caps", NULL},
    [2] = {"samples", "jobs", "throughput", "caps", "job_points", NULL},
    [3] = {"samples", "jobs", "throughput", "caps", "job_points", NULL},
    [4] = {"samples", "jobs", "throughput", "caps", "job_points", NULL},
};

/* Schema 1's samples as schema 2's columns, frozen: the v1 column and the
 * factor to SI (0: copied as is). The factors are bound, not written in the
 * SQL, so the conversion is the same double product the backends compute. */
static const struct {
    const char *v2, *v1;
    double factor;
} v1_samples[] = {
    {"power_w", "power_w", 0},
    {"energy_j", "energy_j", 0},
    {"limit_w", "limit_w", 0},
    {"sm_clock_hz", "sm_clock_mhz", 1e6},
    {"mem_clock_hz", "mem_clock_mhz", 1e6},
    {"util_gpu_ratio", "util_gpu_pct", 0.01},
    {"util_mem_ratio", "util_mem_pct", 0.01},
    {"temp_c", "temp_c", 0},
    {"fb_used_bytes", "fb_used_mib", 1048576.0},
    {"sm_active_ratio", "sm_active", 0},
    {"sm_occupancy_ratio", "sm_occupancy", 0},
    {"tensor_active_ratio", "tensor_active", 0},
    {"dram_active_ratio", "dram_active", 0},
    {"pcie_tx_bytes_per_s", "pcie_tx", 0},
    {"pcie_rx_bytes_per_s", "pcie_rx", 0},
    {"nvlink_tx_bytes_per_s", "nvlink_tx", 0},
    {"nvlink_rx_bytes_per_s", "nvlink_rx", 0},
};

/* Schema 1 stored NVML's clocks event reasons (nvml.h's values, frozen here:
 * io does not see the telemetry layer's translation, and v1 rows never
 * change); schema 2 stores pfi_clock_event bits. */
static const struct {
    unsigned long long nvml;
    unsigned pfi;
} v1_reasons[] = {
    {0x1, PFI_CLK_IDLE},        {0x2, PFI_CLK_APP_CLOCKS},   {0x4, PFI_CLK_POWER_CAP},
    {0x8, PFI_CLK_HW_SLOWDOWN}, {0x10, PFI_CLK_SYNC_BOOST},  {0x20, PFI_CLK_SW_THERMAL},
    {0x40, PFI_CLK_HW_THERMAL}, {0x80, PFI_CLK_POWER_BRAKE}, {0x100, PFI_CLK_DISPLAY},
};

static int exec(sqlite3 *db, const char *path, const char *sql, pfi_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        pfi_error_set(err, PFI_EIO, path, 0, "%s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return PFI_EIO;
    }
    return PFI_OK;
}

static int pragma_int(sqlite3 *db, const char *path, const char *sql, long long *v, pfi_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return pfi_error_set(err, PFI_EIO, path, 0, "%s: %s", sql, sqlite3_errmsg(db));
    int rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW
               ? PFI_OK
               : pfi_error_set(err, PFI_EIO, path, 0, "%s: %s", sql, sqlite3_errmsg(db));
}

static int is_listed(const char *const *names, const char *t)
{
    for (; names && *names; names++)
        if (strcmp(*names, t) == 0) return 1;
    return 0;
}

int store_schema_check(sqlite3 *db, const char *path, long long *version, pfi_error *err)
{
    long long app, v;
    int rc;
    if ((rc = pragma_int(db, path, "PRAGMA application_id", &app, err)) != PFI_OK) return rc;
    if (app != 0 && app != PFI_STORE_APPLICATION_ID)
        return pfi_error_set(err, PFI_ENOTSUP, path, 0,
                             "not a pfid database (application_id 0x%08llx, pfid's is 0x%08x);"
                             " left untouched",
                             (unsigned long long)app & 0xffffffffULL, PFI_STORE_APPLICATION_ID);
    if ((rc = pragma_int(db, path, "PRAGMA user_version", &v, err)) != PFI_OK) return rc;
    if (v > PFI_STORE_SCHEMA_VERSION)
        return pfi_error_set(err, PFI_ENOTSUP, path, 0,
                             "database schema version %lld is newer than this pfid's (%d);"
                             " left untouched",
                             v, PFI_STORE_SCHEMA_VERSION);
    if (v < 0)
        return pfi_error_set(err, PFI_ENOTSUP, path, 0,
                             "not a pfid database (schema version %lld); left untouched", v);
    const char *const *want = v > 0 ? tables_of[v] : NULL;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT name FROM sqlite_master WHERE type='table' AND "
                           "substr(name,1,7)!='sqlite_' ORDER BY name",
                           -1, &st, NULL) != SQLITE_OK)
        return pfi_error_set(err, PFI_EIO, path, 0, "reading the tables: %s", sqlite3_errmsg(db));
    int step, found = 0;
    rc = PFI_OK;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        if (!is_listed(want, t)) {
            rc = pfi_error_set(err, PFI_ENOTSUP, path, 0,
                               "not a pfid database (table '%s' in a schema %lld database);"
                               " left untouched",
                               t, v);
            break;
        }
        found++;
    }
    if (rc == PFI_OK && step != SQLITE_DONE)
        rc = pfi_error_set(err, PFI_EIO, path, 0, "reading the tables: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    if (rc != PFI_OK) return rc;
    size_t n_want = 0;
    while (want && want[n_want])
        n_want++;
    if ((size_t)found != n_want)
        return pfi_error_set(err, PFI_ENOTSUP, path, 0,
                             "not a pfid database (schema %lld with %d of its %zu tables);"
                             " left untouched",
                             v, found, n_want);
    *version = v;
    return PFI_OK;
}

/* A string grown by appends; NULL after an allocation failure. */
typedef struct {
    char *buf;
    size_t len;
    FILE *f;
} sbuf;

static int sb_open(sbuf *b)
{
    b->buf = NULL;
    b->f = open_memstream(&b->buf, &b->len);
    return b->f ? 0 : -1;
}

static char *sb_close(sbuf *b)
{
    if (fclose(b->f) != 0) {
        free(b->buf);
        return NULL;
    }
    return b->buf;
}

static char *create_samples_sql(void)
{
    sbuf b;
    if (sb_open(&b)) return NULL;
    fputs("CREATE TABLE samples(t REAL NOT NULL, gpu INTEGER NOT NULL, valid INTEGER NOT NULL",
          b.f);
    for (int f = 0; f < PFI_GF_COUNT; f++)
        fprintf(b.f, ", %s %s", pfi_gpu_fields[f].store_column,
                pfi_gpu_fields[f].store_integer ? "INTEGER" : "REAL");
    fputs(");", b.f);
    return sb_close(&b);
}

char *store_sample_insert_sql(void)
{
    sbuf b;
    if (sb_open(&b)) return NULL;
    fputs("INSERT INTO samples(t,gpu,valid", b.f);
    for (int f = 0; f < PFI_GF_COUNT; f++)
        fprintf(b.f, ",%s", pfi_gpu_fields[f].store_column);
    fputs(") VALUES(?,?,?", b.f);
    for (int f = 0; f < PFI_GF_COUNT; f++)
        fputs(",?", b.f);
    fputs(")", b.f);
    return sb_close(&b);
}

char *store_sample_select_sql(void)
{
    sbuf b;
    if (sb_open(&b)) return NULL;
    fputs("SELECT t,gpu,valid", b.f);
    for (int f = 0; f < PFI_GF_COUNT; f++)
        fprintf(b.f, ",%s", pfi_gpu_fields[f].store_column);
    fputs(" FROM samples WHERE t>=? ORDER BY t, gpu", b.f);
    return sb_close(&b);
}

static int create_v2(sqlite3 *db, const char *path, pfi_error *err)
{
    char *sql = create_samples_sql();
    if (!sql) return pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    int rc = exec(db, path, sql, err);
    free(sql);
    return rc == PFI_OK ? exec(db, path, tables_v2, err) : rc;
}

/* Copies schema 1's samples (renamed samples_v1) into schema 2's. */
static int copy_v1_samples(sqlite3 *db, const char *path, pfi_error *err)
{
    sbuf b;
    if (sb_open(&b)) return pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    size_t n = sizeof v1_samples / sizeof v1_samples[0];
    fputs("INSERT INTO samples(t,gpu,valid,clock_events", b.f);
    for (size_t i = 0; i < n; i++)
        fprintf(b.f, ",%s", v1_samples[i].v2);
    fputs(") SELECT t,gpu,valid,CASE WHEN clock_reasons IS NULL THEN NULL ELSE 0", b.f);
    unsigned long long known = 0;
    for (size_t i = 0; i < sizeof v1_reasons / sizeof v1_reasons[0]; i++) {
        fprintf(b.f, "|(((clock_reasons&%llu)!=0)*%u)", v1_reasons[i].nvml, v1_reasons[i].pfi);
        known |= v1_reasons[i].nvml;
    }
    fprintf(b.f, "|(((clock_reasons&~%llu)!=0)*%u) END", known, (unsigned)PFI_CLK_OTHER);
    for (size_t i = 0; i < n; i++) {
        if (v1_samples[i].factor != 0)
            fprintf(b.f, ",%s*?%zu", v1_samples[i].v1, i + 1);
        else
            fprintf(b.f, ",%s", v1_samples[i].v1);
    }
    fputs(" FROM samples_v1", b.f);
    char *sql = sb_close(&b);
    if (!sql) return pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    sqlite3_stmt *st;
    int rc = PFI_OK;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = pfi_error_set(err, PFI_EIO, path, 0, "migrating samples from schema 1: %s",
                           sqlite3_errmsg(db));
    } else {
        for (size_t i = 0; i < n; i++)
            if (v1_samples[i].factor != 0)
                sqlite3_bind_double(st, (int)i + 1, v1_samples[i].factor);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = pfi_error_set(err, PFI_EIO, path, 0, "migrating samples from schema 1: %s",
                               sqlite3_errmsg(db));
        sqlite3_finalize(st);
    }
    free(sql);
    return rc;
}

static int migrate_v1(sqlite3 *db, const char *path, pfi_error *err)
{
    int rc;
    /* The old index goes with the old table; samples_t is made again. */
    if ((rc = exec(db, path, "ALTER TABLE samples RENAME TO samples_v1;", err)) != PFI_OK)
        return rc;
    char *sql = create_samples_sql();
    if (!sql) return pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    rc = exec(db, path, sql, err);
    free(sql);
    if (rc != PFI_OK) return rc;
    if ((rc = copy_v1_samples(db, path, err)) != PFI_OK) return rc;
    return exec(db, path,
                "DROP TABLE samples_v1;"
                "CREATE INDEX samples_t ON samples(t);"
                "ALTER TABLE jobs ADD COLUMN sla_floor REAL;"
                "ALTER TABLE jobs ADD COLUMN exempt INTEGER NOT NULL DEFAULT 0;"
                "ALTER TABLE caps RENAME COLUMN default_w TO prior_w;" JOB_POINTS_DDL,
                err);
}

/* Schema 3: a running job's live-estimate basis (pfi_store_job_basis_put),
 * so that a restart finds the estimate of a job capped for longer than the
 * window (whose uncapped samples the replay no longer sees). */
static int migrate_v2(sqlite3 *db, const char *path, pfi_error *err)
{
    return exec(db, path,
                "ALTER TABLE jobs ADD COLUMN basis_t REAL;"
                "ALTER TABLE jobs ADD COLUMN basis TEXT;",
                err);
}

/* Schema 4: a job's class (issue 29), NULL none. */
static int migrate_v3(sqlite3 *db, const char *path, pfi_error *err)
{
    return exec(db, path, "ALTER TABLE jobs ADD COLUMN class TEXT;", err);
}

int store_schema_open(sqlite3 *db, const char *path, pfi_error *err)
{
    long long v;
    int rc;
    /* Read-only checks first: switching to WAL rewrites the file header, so
     * it waits until the file is known to be pfid's. */
    if ((rc = store_schema_check(db, path, &v, err)) != PFI_OK) return rc;
    /* journal_mode answers with a row; exec ignores it. A file on a
     * filesystem without shared memory stays in its old mode, which is still
     * correct, only slower. */
    if ((rc = exec(db, path, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", err)) != PFI_OK)
        return rc;
    if (v == PFI_STORE_SCHEMA_VERSION) return PFI_OK;
    if ((rc = exec(db, path, "BEGIN IMMEDIATE", err)) != PFI_OK) return rc;
    /* Another process may have created or migrated it meanwhile. */
    if ((rc = store_schema_check(db, path, &v, err)) != PFI_OK) goto fail;
    if (v == 0)
        rc = create_v2(db, path, err);
    else if (v == 1)
        rc = migrate_v1(db, path, err);
    if (rc == PFI_OK && v <= 2) rc = migrate_v2(db, path, err);
    if (rc == PFI_OK && v <= 3) rc = migrate_v3(db, path, err);
    if (rc != PFI_OK) goto fail;
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA application_id=%d; PRAGMA user_version=%d;",
             PFI_STORE_APPLICATION_ID, PFI_STORE_SCHEMA_VERSION);
    if ((rc = exec(db, path, sql, err)) != PFI_OK) goto fail;
    return exec(db, path, "COMMIT", err);
fail:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}
