/* pfid's store schema 2: the migration of a schema-1 database written by the
 * old code (tests/data/store-v1/), refusing databases that are not pfid's
 * without touching them, and schema 2's new job fields and curve points. */
#include "store_fixture.h"
#include "test_util.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "pfi/store.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
    (void)state;
    return store_fixture_dir(dir, path);
}

static int teardown(void **state)
{
    (void)state;
    store_fixture_remove(dir, path);
    return 0;
}

static void sql(const char *q)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, q, NULL, NULL, &msg) != SQLITE_OK) fail_msg("%s: %s", q, msg);
    sqlite3_close(db);
}

/* One value through an independent read-only connection, as text ("" for
 * NULL or no row). */
static void query_text(const char *q, char *out, size_t len)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", q, sqlite3_errmsg(db));
    out[0] = '\0';
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static double query_num(const char *q)
{
    char v[128];
    query_text(q, v, sizeof v);
    if (!v[0]) fail_msg("%s: NULL or no row", q);
    return strtod(v, NULL);
}

/* The values make-store-v1.c wrote, in schema 2's SI units, computed by hand:
 * MHz * 1e6, percent * 0.01, MiB * 2^20, and NVML's reasons as pfi bits. */
static void test_migrates_v1_fixture(void **state)
{
    (void)state;
    store_fixture_copy_v1(path);
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open(path, &s, &err), PFI_OK);
    pfi_store_close(s);
    char v[128];
    query_text("PRAGMA user_version", v, sizeof v);
    assert_string_equal(v, "4");
    query_text("PRAGMA application_id", v, sizeof v);
    assert_string_equal(v, "1885759844");
    query_text("PRAGMA integrity_check", v, sizeof v);
    assert_string_equal(v, "ok");
    assert_near(query_num("SELECT count(*) FROM samples"), 6, 0);
    assert_near(query_num("SELECT count(*) FROM samples WHERE gpu=0 AND valid=262143"), 3, 0);
    assert_near(query_num("SELECT count(*) FROM samples WHERE gpu=1 AND valid=553"), 3, 0);
#define G0(col, k) "SELECT " col " FROM samples WHERE gpu=0 ORDER BY t LIMIT 1 OFFSET " #k
    assert_near(query_num(G0("power_w", 0)), 690.5, 1e-12);
    assert_near(query_num(G0("power_w", 2)), 692.5, 1e-12);
    assert_near(query_num(G0("energy_j", 1)), 124156.789, 1e-9);
    assert_near(query_num(G0("limit_w", 0)), 700, 0);
    assert_near(query_num(G0("sm_clock_hz", 1)), 1965e6, 0);
    assert_near(query_num(G0("mem_clock_hz", 0)), 3201e6, 0);
    assert_near(query_num(G0("util_gpu_ratio", 0)), 0.57, 1e-15);
    assert_near(query_num(G0("util_gpu_ratio", 2)), 0.59, 1e-15);
    assert_near(query_num(G0("util_mem_ratio", 0)), 0.29, 1e-15);
    assert_near(query_num(G0("temp_c", 2)), 63, 0);
    assert_near(query_num(G0("fb_used_bytes", 0)), 84015054848.0, 0); /* 80123 MiB */
    assert_near(query_num(G0("sm_active_ratio", 0)), 0.81, 0);
    assert_near(query_num(G0("sm_occupancy_ratio", 0)), 0.33, 0);
    assert_near(query_num(G0("tensor_active_ratio", 0)), 0.42, 0);
    assert_near(query_num(G0("dram_active_ratio", 0)), 0.57, 0);
    assert_near(query_num(G0("pcie_tx_bytes_per_s", 0)), 1.5e9, 0);
    assert_near(query_num(G0("pcie_rx_bytes_per_s", 0)), 2.25e9, 0);
    assert_near(query_num(G0("nvlink_tx_bytes_per_s", 0)), 3.0e11, 0);
    assert_near(query_num(G0("nvlink_rx_bytes_per_s", 0)), 2.9e11, 0);
    /* NVML 0x4|0x20|0x8 (SW power cap, SW thermal, HW slowdown), 0x1 (idle),
     * 0x404 (SW power cap and a bit NVML had not defined), 0x80 (brake). */
    assert_near(query_num(G0("clock_events", 0)),
                PFI_CLK_POWER_CAP | PFI_CLK_SW_THERMAL | PFI_CLK_HW_SLOWDOWN, 0);
    assert_near(query_num(G0("clock_events", 1)), PFI_CLK_IDLE, 0);
    assert_near(query_num(G0("clock_events", 2)), PFI_CLK_POWER_CAP | PFI_CLK_OTHER, 0);
    query_text("SELECT group_concat(DISTINCT clock_events) FROM samples WHERE gpu=1", v, sizeof v);
    assert_string_equal(v, "32"); /* PFI_CLK_POWER_BRAKE */
    assert_int_equal(PFI_CLK_POWER_BRAKE, 32);
#undef G0
    /* What was not valid stays NULL. */
    assert_near(query_num("SELECT count(*) FROM samples WHERE gpu=1 AND temp_c IS NULL AND "
                          "energy_j IS NULL AND sm_active_ratio IS NULL"),
                3, 0);
    assert_near(query_num("SELECT power_w FROM samples WHERE gpu=1 LIMIT 1"), 450.25, 1e-12);
    assert_near(query_num("SELECT sm_clock_hz FROM samples WHERE gpu=1 LIMIT 1"), 1410e6, 0);
    assert_near(query_num("SELECT util_gpu_ratio FROM samples WHERE gpu=1 LIMIT 1"), 1.0, 0);
    /* Jobs, reports and the cap, all kept. */
    query_text("SELECT group_concat(id || ':' || gpus || ':' || arch || ':' || task || ':' || "
               "ifnull(ended_at, '-') || ':' || ifnull(sla_floor, '-') || ':' || exempt, ' ') "
               "FROM (SELECT * FROM jobs ORDER BY registered_at)",
               v, sizeof v);
    assert_string_equal(v, "moe-ft:1:moe:ft:1764579400.0:-:0 llama-70b-pt:0,1:dense:pt:-:-:0");
    assert_near(query_num("SELECT sum(tokens_per_s) FROM throughput"), 12000.5 + 11890.25 + 800,
                1e-9);
    query_text("SELECT gpu || ':' || watts || ':' || set_at || ':' || expires_at || ':' || "
               "prior_w FROM caps",
               v, sizeof v);
    assert_string_equal(v, "1:450.0:1764579550.0:1764583150.0:700.0");
    assert_near(query_num("SELECT count(*) FROM job_points"), 0, 0);
    assert_near(query_num("SELECT count(*) FROM sqlite_master WHERE name='samples_t'"), 1, 0);

    /* Through the API after a second open (no second migration). */
    assert_int_equal(pfi_store_open(path, &s, &err), PFI_OK);
    pfi_store_cap *caps;
    size_t n;
    assert_int_equal(pfi_store_caps(s, &caps, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    assert_near(caps[0].prior_w, 700, 0);
    free(caps);
    pfi_store_job *jobs;
    assert_int_equal(pfi_store_jobs_running(s, &jobs, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    assert_string_equal(jobs[0].id, "llama-70b-pt");
    assert_near(jobs[0].sla_floor, 0, 0);
    assert_int_equal(jobs[0].exempt, 0);
    free(jobs);
    pfi_store_close(s);
}

/* A broken schema-1 database fails its migration as a whole: still schema 1
 * with every row. */
static void test_failed_migration_rolls_back(void **state)
{
    (void)state;
    store_fixture_copy_v1(path);
    sql("ALTER TABLE samples DROP COLUMN nvlink_rx;");
    pfi_store *s;
    pfi_error err;
    assert_int_not_equal(pfi_store_open(path, &s, &err), PFI_OK);
    assert_null(s);
    assert_non_null(strstr(err.msg, "nvlink_rx"));
    char v[64];
    query_text("PRAGMA user_version", v, sizeof v);
    assert_string_equal(v, "1");
    assert_near(query_num("SELECT count(*) FROM samples"), 6, 0);
    assert_near(query_num("SELECT count(*) FROM caps WHERE default_w=700"), 1, 0);
    query_text("SELECT group_concat(name) FROM sqlite_master WHERE type='table'", v, sizeof v);
    assert_string_equal(v, "samples,jobs,throughput,caps");
}

/* Opens path expecting PFI_ENOTSUP with `why` in the message, and the file
 * byte for byte as before. */
static void refused(const char *why)
{
    size_t n0, n1;
    char *before = store_fixture_slurp(path, &n0);
    pfi_store *s = (pfi_store *)1;
    pfi_error err;
    assert_int_equal(pfi_store_open(path, &s, &err), PFI_ENOTSUP);
    assert_null(s);
    if (!strstr(err.msg, why)) fail_msg("'%s' lacks '%s'", err.msg, why);
    assert_non_null(strstr(err.msg, "left untouched"));
    assert_string_equal(err.file, path);
    char *after = store_fixture_slurp(path, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);
}

static void test_foreign_application_refused(void **state)
{
    (void)state;
    sql("PRAGMA application_id=305419896; CREATE TABLE samples(x); CREATE TABLE jobs(y);");
    refused("application_id 0x12345678");
}

static void test_foreign_tables_refused(void **state)
{
    (void)state;
    sql("CREATE TABLE accounts(id INTEGER, balance REAL); INSERT INTO accounts VALUES(1, 2.5);");
    refused("table 'accounts'");
}

static void test_extra_table_in_v1_refused(void **state)
{
    (void)state;
    store_fixture_copy_v1(path);
    sql("PRAGMA journal_mode=DELETE; CREATE TABLE notes(x);");
    refused("table 'notes'");
}

static void test_missing_table_in_v1_refused(void **state)
{
    (void)state;
    store_fixture_copy_v1(path);
    sql("PRAGMA journal_mode=DELETE; DROP TABLE throughput;");
    refused("3 of its 4 tables");
}

static void test_newer_version_refused_untouched(void **state)
{
    (void)state;
    store_fixture_copy_v1(path);
    sql("PRAGMA journal_mode=DELETE; PRAGMA user_version=5;");
    refused("newer");
}

static void test_job_sla_and_exempt(void **state)
{
    (void)state;
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open(path, &s, &err), PFI_OK);
    pfi_store_job a = {.id = "a", .gpus = {0}, .n_gpus = 1, .registered_at = 1, .sla_floor = 0.9};
    pfi_store_job b = {.id = "b", .gpus = {1}, .n_gpus = 1, .registered_at = 2, .exempt = 1};
    snprintf(b.job_class, sizeof b.job_class, "llama-70b"); /* schema 4 */
    pfi_store_job bad = {.id = "c", .gpus = {2}, .n_gpus = 1, .sla_floor = 1.5};
    assert_int_equal(pfi_store_job_add(s, &a, &err), PFI_OK);
    assert_int_equal(pfi_store_job_add(s, &b, &err), PFI_OK);
    assert_int_equal(pfi_store_job_add(s, &bad, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "sla_floor"));
    bad.sla_floor = NAN;
    assert_int_equal(pfi_store_job_add(s, &bad, &err), PFI_EINVAL);
    bad.sla_floor = 0;
    bad.exempt = 2;
    assert_int_equal(pfi_store_job_add(s, &bad, &err), PFI_EINVAL);
    pfi_store_job *jobs;
    size_t n;
    assert_int_equal(pfi_store_jobs_running(s, &jobs, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    assert_near(jobs[0].sla_floor, 0.9, 0);
    assert_int_equal(jobs[0].exempt, 0);
    assert_near(jobs[1].sla_floor, 0, 0);
    assert_int_equal(jobs[1].exempt, 1);
    assert_string_equal(jobs[0].job_class, "");
    assert_string_equal(jobs[1].job_class, "llama-70b");
    free(jobs);
    assert_int_equal(pfi_store_jobs(s, &jobs, &n, &err), PFI_OK);
    assert_string_equal(jobs[1].job_class, "llama-70b");
    free(jobs);
    pfi_store_close(s);
    /* No floor is NULL in the table, not 0. */
    char v[64];
    query_text("SELECT count(*) FROM jobs WHERE id='b' AND sla_floor IS NULL", v, sizeof v);
    assert_string_equal(v, "1");
    query_text("SELECT count(*) FROM jobs WHERE id='a' AND class IS NULL", v, sizeof v);
    assert_string_equal(v, "1");
}

static void test_points(void **state)
{
    (void)state;
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open(path, &s, &err), PFI_OK);
    pfi_store_point p = {.job = "j2",
                         .cap_w = 500,
                         .power_w = 980,
                         .tokens_per_s = 9000,
                         .tokens_sd = 40,
                         .n = 12,
                         .t_first = 100,
                         .t_last = 160};
    assert_int_equal(pfi_store_point_put(s, &p, &err), PFI_OK);
    p.cap_w = 700;
    p.power_w = 1390;
    assert_int_equal(pfi_store_point_put(s, &p, &err), PFI_OK);
    pfi_store_point q = {.job = "j1",
                         .cap_w = 400,
                         .power_w = 790,
                         .tokens_per_s = 5000,
                         .tokens_sd = 10,
                         .n = 3,
                         .t_first = 5,
                         .t_last = 9};
    assert_int_equal(pfi_store_point_put(s, &q, &err), PFI_OK);
    /* The same job and cap replaces the point. */
    p.cap_w = 500;
    p.power_w = 980;
    p.tokens_per_s = 9100;
    p.n = 20;
    assert_int_equal(pfi_store_point_put(s, &p, &err), PFI_OK);
    pfi_store_point bad = p;
    bad.power_w = INFINITY;
    assert_int_equal(pfi_store_point_put(s, &bad, &err), PFI_EINVAL);
    bad = p;
    bad.job[0] = '\0';
    assert_int_equal(pfi_store_point_put(s, &bad, &err), PFI_EINVAL);
    bad = p;
    bad.n = -1;
    assert_int_equal(pfi_store_point_put(s, &bad, &err), PFI_EINVAL);

    pfi_store_point *pts;
    size_t n;
    assert_int_equal(pfi_store_points(s, NULL, &pts, &n, &err), PFI_OK);
    assert_int_equal(n, 3);
    assert_string_equal(pts[0].job, "j1");
    assert_string_equal(pts[1].job, "j2");
    assert_near(pts[1].cap_w, 500, 0);
    assert_near(pts[1].tokens_per_s, 9100, 0);
    assert_int_equal(pts[1].n, 20);
    assert_near(pts[1].power_w, 980, 0);
    assert_near(pts[1].tokens_sd, 40, 0);
    assert_near(pts[1].t_first, 100, 0);
    assert_near(pts[1].t_last, 160, 0);
    assert_near(pts[2].cap_w, 700, 0);
    assert_near(pts[2].power_w, 1390, 0);
    free(pts);
    assert_int_equal(pfi_store_points(s, "j2", &pts, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    assert_near(pts[0].cap_w, 500, 0);
    free(pts);
    assert_int_equal(pfi_store_points(s, "none", &pts, &n, &err), PFI_OK);
    assert_int_equal(n, 0);
    assert_null(pts);
    /* Points outlive pruning. */
    assert_int_equal(pfi_store_prune(s, 1e12, &err), PFI_OK);
    assert_int_equal(pfi_store_points(s, NULL, &pts, &n, &err), PFI_OK);
    assert_int_equal(n, 3);
    free(pts);
    pfi_store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_migrates_v1_fixture, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_migration_rolls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_application_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_tables_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extra_table_in_v1_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_table_in_v1_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_version_refused_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_sla_and_exempt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_points, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
