/* pfid's SQLite store: schema, round trips, crash-recovery records, retention. */
#include "test_util.h"
#include "store_fixture.h"

#include <string.h>

#include <sqlite3.h>

#include "pfi/store.h"
#include "pfi/telemetry.h"

/* Runs one query with a single integer or text answer through a second,
 * independent connection: what another process (sqlite3 CLI) would see. */
static void query_text(const char *sql, char *out, size_t len)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(test_db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    out[0] = '\0';
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void test_schema_and_pragmas(void **state)
{
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    char v[64];
    query_text("PRAGMA user_version", v, sizeof v);
    assert_string_equal(v, "4");
    query_text("PRAGMA application_id", v, sizeof v);
    assert_string_equal(v, "1885759844"); /* 0x70666964, 'pfid' */
    query_text("PRAGMA journal_mode", v, sizeof v);
    assert_string_equal(v, "wal");
    pfi_store_close(s);
    /* Reopening an existing database keeps it (no second CREATE). */
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    pfi_store_close(s);
    pfi_store_close(NULL);
}

static void test_newer_schema_refused(void **state)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(test_db_path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version=7", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    pfi_store *s = (pfi_store *)1;
    pfi_error err;
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_ENOTSUP);
    assert_null(s);
    assert_non_null(strstr(err.msg, "newer"));
}

static void test_not_a_database(void **state)
{
    FILE *f = fopen(test_db_path, "w");
    fputs("this is not a database, just text long enough to fill a header page......\n", f);
    fclose(f);
    pfi_store *s;
    pfi_error err;
    assert_int_not_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    assert_null(s);
    assert_string_equal(err.file, test_db_path);
}

static void test_samples_null_when_invalid(void **state)
{
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    pfi_gpu_sample x[2];
    memset(x, 0, sizeof x);
    x[0].valid = (1u << PFI_GF_POWER) | (1u << PFI_GF_SM_CLOCK);
    x[0].v[PFI_GF_POWER] = (690500) * 1e-3; /* stored in W */
    x[0].v[PFI_GF_SM_CLOCK] = (1755) * 1e6;
    x[0].v[PFI_GF_TEMP] = 99; /* not valid: must be NULL */
    x[1].valid = 1u << PFI_GF_CLOCK_EVENTS;
    x[1].v[PFI_GF_CLOCK_EVENTS] = 0x80;
    assert_int_equal(pfi_store_add_samples(s, 1000.5, x, 2, &err), PFI_OK);
    char v[64];
    query_text("SELECT power_w FROM samples WHERE gpu=0", v, sizeof v);
    assert_near(atof(v), 690.5, 1e-9);
    query_text("SELECT sm_clock_hz FROM samples WHERE gpu=0", v, sizeof v);
    assert_near(atof(v), 1755e6, 1e-3);
    query_text("SELECT count(*) FROM samples WHERE gpu=0 AND temp_c IS NULL", v, sizeof v);
    assert_string_equal(v, "1");
    query_text("SELECT clock_events FROM samples WHERE gpu=1", v, sizeof v);
    assert_string_equal(v, "128");
    query_text("SELECT count(*) FROM samples", v, sizeof v);
    assert_string_equal(v, "2");
    pfi_store_close(s);
}

static void test_jobs(void **state)
{
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    pfi_store_job a = {.id = "llama-pt",
                       .gpus = {0, 1, 7},
                       .n_gpus = 3,
                       .arch = "dense",
                       .task = "pt",
                       .registered_at = 10};
    pfi_store_job b = {.id = "moe \"ft\"", .gpus = {2}, .n_gpus = 1, .registered_at = 11};
    assert_int_equal(pfi_store_job_add(s, &a, &err), PFI_OK);
    assert_int_equal(pfi_store_job_add(s, &b, &err), PFI_OK);
    /* The same id twice while running is refused. */
    assert_int_equal(pfi_store_job_add(s, &a, &err), PFI_ESTATE);
    pfi_store_job *jobs;
    size_t n;
    assert_int_equal(pfi_store_jobs_running(s, &jobs, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    assert_string_equal(jobs[0].id, "llama-pt");
    assert_int_equal(jobs[0].n_gpus, 3);
    assert_int_equal(jobs[0].gpus[2], 7);
    assert_string_equal(jobs[0].arch, "dense");
    assert_string_equal(jobs[1].id, "moe \"ft\"");
    assert_string_equal(jobs[1].arch, "");
    free(jobs);
    assert_int_equal(pfi_store_job_end(s, "llama-pt", 20, &err), PFI_OK);
    assert_int_equal(pfi_store_job_end(s, "llama-pt", 21, &err), PFI_ENOTFOUND);
    assert_int_equal(pfi_store_job_end(s, "nope", 21, &err), PFI_ENOTFOUND);
    assert_int_equal(pfi_store_jobs_running(s, &jobs, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    assert_string_equal(jobs[0].id, "moe \"ft\"");
    free(jobs);
    /* An ended job's id may be registered again (a requeued job). */
    a.registered_at = 30;
    assert_int_equal(pfi_store_job_add(s, &a, &err), PFI_OK);
    pfi_store_close(s);
}

static void test_throughput_and_prune(void **state)
{
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    pfi_store_job a = {.id = "j", .gpus = {0}, .n_gpus = 1, .registered_at = 1};
    pfi_store_job b = {.id = "k", .gpus = {1}, .n_gpus = 1, .registered_at = 1};
    assert_int_equal(pfi_store_job_add(s, &a, &err), PFI_OK);
    assert_int_equal(pfi_store_job_add(s, &b, &err), PFI_OK);
    for (int i = 0; i < 100; i++)
        assert_int_equal(pfi_store_add_throughput(s, "j", i, 1000 + i, &err), PFI_OK);
    pfi_gpu_sample x = {.valid = 1u << PFI_GF_POWER, .v = {[PFI_GF_POWER] = 1e-3}};
    for (int i = 0; i < 10; i++)
        assert_int_equal(pfi_store_add_samples(s, i * 10, &x, 1, &err), PFI_OK);
    long long cnt;
    assert_int_equal(pfi_store_throughput_count(s, "j", &cnt, &err), PFI_OK);
    assert_int_equal(cnt, 100);
    assert_int_equal(pfi_store_job_end(s, "k", 5, &err), PFI_OK);
    pfi_store_cap c = {.gpu = 3, .watts = 400, .set_at = 0, .expires_at = 1, .prior_w = 700};
    assert_int_equal(pfi_store_cap_put(s, &c, &err), PFI_OK);
    /* Keep t >= 50: rows 50..99 of throughput, samples at 50..90, job j
     * (running), not k (ended at 5); the cap is never pruned. */
    assert_int_equal(pfi_store_prune(s, 50, &err), PFI_OK);
    assert_int_equal(pfi_store_throughput_count(s, "j", &cnt, &err), PFI_OK);
    assert_int_equal(cnt, 50);
    char v[64];
    query_text("SELECT count(*) FROM samples", v, sizeof v);
    assert_string_equal(v, "5");
    query_text("SELECT group_concat(id) FROM jobs", v, sizeof v);
    assert_string_equal(v, "j");
    query_text("SELECT count(*) FROM caps", v, sizeof v);
    assert_string_equal(v, "1");
    pfi_store_close(s);
}

typedef struct {
    int n;
    double t[8];
    unsigned gpu[8];
    pfi_gpu_sample x[8];
} walk;

static int collect(double t, unsigned gpu, const pfi_gpu_sample *x, void *ctx)
{
    walk *w = ctx;
    w->t[w->n] = t;
    w->gpu[w->n] = gpu;
    w->x[w->n] = *x;
    return ++w->n == 8;
}

static int sum_tput(double t, double v, void *ctx)
{
    *(double *)ctx += v;
    return 0;
}

/* What a restarted agent replays: samples back in time then GPU order with
 * their units and validity, reports of one job from a time on. */
static void test_replay(void **state)
{
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    pfi_gpu_sample x[2];
    memset(x, 0, sizeof x);
    for (int k = 0; k < 3; k++) {
        x[0].valid = (1u << PFI_GF_POWER) | (1u << PFI_GF_FB_USED) | (1u << PFI_GF_CLOCK_EVENTS);
        x[0].v[PFI_GF_POWER] = (600000 + k) * 1e-3;
        x[0].v[PFI_GF_FB_USED] = (20000) * 1048576.0;
        x[0].v[PFI_GF_CLOCK_EVENTS] = 4;
        x[1].valid = 1u << PFI_GF_UTIL_GPU;
        x[1].v[PFI_GF_UTIL_GPU] = (97) * 0.01;
        x[1].v[PFI_GF_POWER] = (123) * 1e-3; /* not valid: comes back as 0 */
        assert_int_equal(pfi_store_add_samples(s, 100 + k, x, 2, &err), PFI_OK);
    }
    walk w = {0};
    assert_int_equal(pfi_store_samples_since(s, 101, collect, &w, &err), PFI_OK);
    assert_int_equal(w.n, 4); /* t=101 and 102, two GPUs each */
    assert_near(w.t[0], 101, 0);
    assert_int_equal(w.gpu[0], 0);
    assert_int_equal(w.gpu[1], 1);
    assert_near(w.t[3], 102, 0);
    assert_near((w.x[0].v[PFI_GF_POWER] * 1e3), 600001, 1e-6);
    assert_near((w.x[0].v[PFI_GF_FB_USED] * (1 / 1048576.0)), 20000, 0);
    assert_int_equal(((uint32_t)w.x[0].v[PFI_GF_CLOCK_EVENTS]), 4);
    assert_int_equal(w.x[0].valid, x[0].valid);
    assert_int_equal(w.x[1].valid, 1u << PFI_GF_UTIL_GPU);
    assert_near((w.x[1].v[PFI_GF_UTIL_GPU] * 100), 97, 0);
    assert_near((w.x[1].v[PFI_GF_POWER] * 1e3), 0, 0);
    pfi_store_job j = {.id = "r", .gpus = {0}, .n_gpus = 1, .registered_at = 1};
    assert_int_equal(pfi_store_job_add(s, &j, &err), PFI_OK);
    for (int k = 0; k < 5; k++)
        assert_int_equal(pfi_store_add_throughput(s, "r", 10 + k, 100 * (k + 1), &err), PFI_OK);
    assert_int_equal(pfi_store_add_throughput(s, "other", 12, 1e6, &err), PFI_OK);
    double sum = 0;
    assert_int_equal(pfi_store_throughput_since(s, "r", 12, sum_tput, &sum, &err), PFI_OK);
    assert_near(sum, 300 + 400 + 500, 0);
    pfi_store_close(s);
}

static void test_caps_survive_reopen(void **state)
{
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    pfi_store_cap a = {.gpu = 2, .watts = 400, .set_at = 100, .expires_at = 200, .prior_w = 700};
    pfi_store_cap b = {.gpu = 0, .watts = 300, .set_at = 100, .expires_at = 150, .prior_w = 700};
    assert_int_equal(pfi_store_cap_put(s, &a, &err), PFI_OK);
    assert_int_equal(pfi_store_cap_put(s, &b, &err), PFI_OK);
    a.watts = 450; /* a new cap on the same GPU replaces the old record */
    assert_int_equal(pfi_store_cap_put(s, &a, &err), PFI_OK);
    /* No close: what a SIGKILL leaves behind is the WAL, which the next
     * connection must replay. A second handle stands for the next process. */
    pfi_store *s2;
    assert_int_equal(pfi_store_open(test_db_path, &s2, &err), PFI_OK);
    pfi_store_cap *caps;
    size_t n;
    assert_int_equal(pfi_store_caps(s2, &caps, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    assert_int_equal(caps[0].gpu, 0);
    assert_near(caps[0].watts, 300, 0);
    assert_near(caps[0].expires_at, 150, 0);
    assert_int_equal(caps[1].gpu, 2);
    assert_near(caps[1].watts, 450, 0);
    assert_near(caps[1].prior_w, 700, 0);
    free(caps);
    assert_int_equal(pfi_store_cap_delete(s2, 0, &err), PFI_OK);
    assert_int_equal(pfi_store_cap_delete(s2, 5, &err), PFI_OK);
    assert_int_equal(pfi_store_caps(s, &caps, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    free(caps);
    char v[64];
    query_text("PRAGMA integrity_check", v, sizeof v);
    assert_string_equal(v, "ok");
    pfi_store_close(s2);
    pfi_store_close(s);
}

/* A running job's live-estimate basis (schema 3): kept exactly across a
 * reopen, by field name, NaN for a missing field; a requeued id starts
 * without one; an ended job takes none. */
static void test_job_basis(void **state)
{
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    pfi_store_job a = {.id = "j", .gpus = {0}, .n_gpus = 1, .registered_at = 1};
    assert_int_equal(pfi_store_job_add(s, &a, &err), PFI_OK);
    double tm[PFI_TM_NFIELDS], got[PFI_TM_NFIELDS], t = 0;
    for (int f = 0; f < PFI_TM_NFIELDS; f++)
        tm[f] = 0.1 * f + 1.0 / 3.0;
    tm[PFI_TM_GPU_TEMP] = NAN;
    assert_int_equal(pfi_store_job_basis_get(s, "j", &t, got, &err), PFI_ENODATA);
    assert_int_equal(pfi_store_job_basis_put(s, "j", 1796000000.123456, tm, &err), PFI_OK);
    assert_int_equal(pfi_store_job_basis_put(s, "nope", 1, tm, &err), PFI_ENOTFOUND);
    pfi_store_close(s);
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    assert_int_equal(pfi_store_job_basis_get(s, "j", &t, got, &err), PFI_OK);
    assert_true(t == 1796000000.123456);
    for (int f = 0; f < PFI_TM_NFIELDS; f++) {
        if (f == PFI_TM_GPU_TEMP)
            assert_true(isnan(got[f]));
        else
            assert_true(got[f] == tm[f]); /* bit for bit */
    }
    assert_int_equal(pfi_store_job_end(s, "j", 5, &err), PFI_OK);
    assert_int_equal(pfi_store_job_basis_get(s, "j", &t, got, &err), PFI_ENODATA);
    assert_int_equal(pfi_store_job_basis_put(s, "j", 6, tm, &err), PFI_ENOTFOUND);
    a.registered_at = 10;
    assert_int_equal(pfi_store_job_add(s, &a, &err), PFI_OK);
    assert_int_equal(pfi_store_job_basis_get(s, "j", &t, got, &err), PFI_ENODATA);
    pfi_store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        test_db_unit_test(test_schema_and_pragmas),
        test_db_unit_test(test_newer_schema_refused),
        test_db_unit_test(test_not_a_database),
        test_db_unit_test(test_samples_null_when_invalid),
        test_db_unit_test(test_jobs),
        test_db_unit_test(test_throughput_and_prune),
        test_db_unit_test(test_caps_survive_reopen),
        test_db_unit_test(test_replay),
        test_db_unit_test(test_job_basis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
