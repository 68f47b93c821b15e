/* The controller's store: what a restart reads back is what was written
 * (targets with open ends and null priorities, caps held, learned means and
 * their variances, state), a version-1 store opens, a newer schema is
 * refused. A real SQLite file in /tmp. */
#include "test_util.h"
#include "store_fixture.h"

#include <string.h>

#include <sqlite3.h>

#include "pfi/ctl_store.h"

static pfi_ctl_store *open_tmp(void)
{
    pfi_ctl_store *s;
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_ctl_store_open(test_db_path, &s, &err) != PFI_OK) fail_msg("%s", err.msg);
    return s;
}

/* Writes an older store as raw SQL (its tables and user_version). */
static void old_store(const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(test_db_path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* The store file's user_version (its schema version). */
static int store_version(void)
{
    sqlite3 *db;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open(test_db_path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    int v = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return v;
}

static void test_roundtrip(void **st)
{
    pfi_ctl_store *s = open_tmp();
    pfi_error err;
    pfi_target a = {.id = "sub",
                    .source = PFI_TARGET_OPENADR,
                    .kind = PFI_TARGET_SITE,
                    .limit_w = 240000,
                    .start = 100,
                    .end = INFINITY,
                    .priority = 2,
                    .is_default = 1};
    pfi_target b = {.id = "op",
                    .source = PFI_TARGET_API,
                    .kind = PFI_TARGET_GPU,
                    .limit_w = 5000,
                    .start = 50,
                    .end = 150,
                    .ramp_w_per_s = 10,
                    .priority = PFI_TARGET_NO_PRIORITY};
    assert_int_equal(pfi_ctl_store_put_target(s, &a, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_put_target(s, &b, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_put_cap(s, "http://n1", 3, 450, 1000, 10, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_put_cap(s, "http://n1", 4, 450, 1000, 10, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_put_cap(s, "http://n1", 4, 0, 0, 20, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_put_obs(s, "j", 500, 4000, 90, 1, 1, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_put_obs(s, "j", 500, 3000, 80, 1, 2, &err), PFI_OK);
    /* a spread unknown once stays unknown (NULL), whatever comes after */
    assert_int_equal(pfi_ctl_store_put_obs(s, "k", 400, 3000, 70, NAN, 1, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_put_obs(s, "k", 400, 3000, 70, 4, 2, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_put_job(s, "j", 5000, NAN, 1, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_put_job(s, "j", 4000, 100, 2, &err), PFI_OK);
    /* a class (issue 29): set, kept beside the figures, and one of its own */
    assert_int_equal(pfi_ctl_store_put_job_class(s, "j", "llama-70b", 3, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_put_job_class(s, "m", "moe-ft", 3, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_put_state(s, "trim_w", 123.5, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_put_agent(s, "http://n1", 8, 5600, 1, &err), PFI_OK);
    pfi_ctl_store_close(s);

    s = open_tmp();
    pfi_target *ts;
    size_t n;
    assert_int_equal(pfi_ctl_store_load_targets(s, &ts, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    assert_string_equal(ts[0].id, "op"); /* ordered by start */
    assert_int_equal(ts[0].priority, PFI_TARGET_NO_PRIORITY);
    assert_near(ts[0].ramp_w_per_s, 10, 0);
    assert_true(isinf(ts[1].end));
    assert_int_equal(ts[1].priority, 2);
    assert_true(ts[1].is_default);
    free(ts);
    pfi_ctl_cap_rec *c;
    assert_int_equal(pfi_ctl_store_load_caps(s, &c, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    assert_int_equal(c[0].gpu, 3);
    assert_near(c[0].watts, 450, 0);
    free(c);
    pfi_ctl_obs_rec *o;
    assert_int_equal(pfi_ctl_store_load_obs(s, &o, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    assert_near(o[0].power_w, 3700, 1e-9);   /* 4000 + 0.3 (3000 - 4000) */
    assert_near(o[0].tput, 87, 1e-9);        /* 90 + 0.3 (80 - 90) */
    assert_near(o[0].tput_var, 0.58, 1e-12); /* 0.7^2 1 + 0.3^2 1 (test_ctl_spread's) */
    assert_int_equal(o[0].n, 2);
    assert_string_equal(o[1].job, "k");
    assert_true(isnan(o[1].tput_var));
    free(o);
    pfi_ctl_job_rec *j;
    assert_int_equal(pfi_ctl_store_load_jobs(s, &j, &n, &err), PFI_OK);
    assert_near(j[0].pmax_w, 5000, 0); /* the highest seen */
    assert_near(j[0].tmax, 100, 0);
    assert_string_equal(j[0].job_class, "llama-70b");
    assert_int_equal(n, 2);
    assert_string_equal(j[1].job_class, "moe-ft");
    assert_true(isnan(j[1].pmax_w));
    free(j);
    double v;
    assert_int_equal(pfi_ctl_store_get_state(s, "trim_w", &v, &err), PFI_OK);
    assert_near(v, 123.5, 0);
    assert_int_equal(pfi_ctl_store_get_state(s, "nope", &v, &err), PFI_ENOTFOUND);
    size_t ng;
    assert_int_equal(pfi_ctl_store_get_agent(s, "http://n1", &ng, &v, &err), PFI_OK);
    assert_int_equal(ng, 8);
    assert_int_equal(pfi_ctl_store_del_target(s, PFI_TARGET_API, "op", &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_del_target(s, PFI_TARGET_API, "op", &err), PFI_ENOTFOUND);
    assert_int_equal(pfi_ctl_store_replace_source(s, PFI_TARGET_OPENADR, NULL, 0, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_load_targets(s, &ts, &n, &err), PFI_OK);
    assert_int_equal(n, 0);
    free(ts);
    pfi_ctl_store_close(s);
}

static void test_newer_schema(void **st)
{
    old_store("PRAGMA user_version=9");
    pfi_ctl_store *s;
    pfi_error err;
    pfi_error_clear(&err);
    assert_int_equal(pfi_ctl_store_open(test_db_path, &s, &err), PFI_ESTATE);
    assert_non_null(strstr(err.msg, "newer"));
}

/* A version-2 store (jobs without class) opens: its jobs are kept,
 * classless; it is version 3 after, and takes a class. */
static void test_version_2_store(void **st)
{
    old_store("CREATE TABLE jobs(job TEXT PRIMARY KEY, pmax_w REAL, tmax REAL,"
              " t REAL);"
              "INSERT INTO jobs VALUES('j', 5600, 90, 1);"
              "PRAGMA user_version=2;");
    pfi_ctl_store *s = open_tmp();
    pfi_error err;
    pfi_ctl_job_rec *j;
    size_t n;
    assert_int_equal(pfi_ctl_store_load_jobs(s, &j, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    assert_near(j[0].tmax, 90, 0);
    assert_string_equal(j[0].job_class, "");
    free(j);
    assert_int_equal(pfi_ctl_store_put_job_class(s, "j", "c", 2, &err), PFI_OK);
    assert_int_equal(pfi_ctl_store_load_jobs(s, &j, &n, &err), PFI_OK);
    assert_string_equal(j[0].job_class, "c");
    assert_near(j[0].pmax_w, 5600, 0);
    free(j);
    pfi_ctl_store_close(s);
}

/* A version-1 store (observations without tput_var, as 4133548 made
 * them) opens: its points are kept, their spread unknown; it is version 3
 * after, and its points take a spread from then on. */
static void test_version_1_store(void **st)
{
    old_store("CREATE TABLE observations(job TEXT NOT NULL, cap_w REAL NOT NULL,"
              " power_w REAL NOT NULL, tput REAL NOT NULL, n INTEGER NOT NULL,"
              " t REAL NOT NULL, PRIMARY KEY(job, cap_w));"
              "INSERT INTO observations VALUES('j', 500, 3700, 87, 2, 2);"
              "PRAGMA user_version=1;");
    pfi_ctl_store *s = open_tmp();
    pfi_error err;
    pfi_ctl_obs_rec *o;
    size_t n;
    assert_int_equal(pfi_ctl_store_load_obs(s, &o, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    assert_near(o[0].tput, 87, 0);
    assert_int_equal(o[0].n, 2);
    assert_true(isnan(o[0].tput_var));
    free(o);
    assert_int_equal(pfi_ctl_store_put_obs(s, "j", 400, 3000, 70, 9, 3, &err), PFI_OK);
    pfi_ctl_store_close(s);

    s = open_tmp(); /* again: version 2 as it is */
    assert_int_equal(pfi_ctl_store_load_obs(s, &o, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    assert_near(o[0].cap_w, 400, 0);
    assert_near(o[0].tput_var, 9, 0);
    assert_true(isnan(o[1].tput_var));
    free(o);
    pfi_ctl_store_close(s);
    assert_int_equal(store_version(), 4);
}

/* A version-3 store (targets without domain) opens: its targets are kept,
 * on the site; it is version 4 after, and a target keeps its domain. */
static void test_version_3_store(void **st)
{
    old_store("CREATE TABLE targets(source INTEGER NOT NULL, id TEXT NOT NULL,"
              " kind INTEGER NOT NULL, limit_w REAL NOT NULL, start REAL NOT NULL, end REAL,"
              " ramp_w_per_s REAL NOT NULL, priority INTEGER, is_default INTEGER NOT NULL,"
              " PRIMARY KEY(source, id));"
              "INSERT INTO targets VALUES(0, 'old', 0, 5e5, 10, 20, 0, NULL, 0);"
              "PRAGMA user_version=3;");
    pfi_ctl_store *s = open_tmp();
    pfi_error err;
    pfi_target *t;
    size_t n;
    assert_int_equal(pfi_ctl_store_load_targets(s, &t, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    assert_string_equal(t[0].id, "old");
    assert_near(t[0].limit_w, 5e5, 0);
    assert_int_equal(t[0].is_default, 0);
    assert_string_equal(t[0].domain, "");
    free(t);
    pfi_target f = {.id = "feed",
                    .source = PFI_TARGET_API,
                    .kind = PFI_TARGET_GPU,
                    .limit_w = 4e5,
                    .start = 30,
                    .end = 40,
                    .priority = PFI_TARGET_NO_PRIORITY,
                    .domain = "feed-a"};
    assert_int_equal(pfi_ctl_store_put_target(s, &f, &err), PFI_OK);
    pfi_ctl_store_close(s);
    s = open_tmp();
    assert_int_equal(pfi_ctl_store_load_targets(s, &t, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    assert_string_equal(t[1].id, "feed");
    assert_string_equal(t[1].domain, "feed-a");
    assert_int_equal(t[1].kind, PFI_TARGET_GPU);
    assert_string_equal(t[0].domain, "");
    free(t);
    pfi_ctl_store_close(s);
    assert_int_equal(store_version(), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        test_db_unit_test(test_roundtrip),       test_db_unit_test(test_newer_schema),
        test_db_unit_test(test_version_1_store), test_db_unit_test(test_version_2_store),
        test_db_unit_test(test_version_3_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
