/* The store read back with distrust: a damaged file is refused without a
 * byte written, a bad row is skipped (and said) instead of losing every row,
 * unusable cap values come back as NaN. */
#include "store_fixture.h"
#include "test_util.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "pfi/store.h"

/* Runs sql through an independent connection (what the sqlite3 CLI does). */
static void exec_other(const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(test_db_path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

typedef struct {
    int calls;
    char table[16], id[64], why[64];
} seen;

static void hook(const char *table, const char *id, const char *why, void *ctx)
{
    seen *s = ctx;
    s->calls++;
    snprintf(s->table, sizeof s->table, "%s", table);
    snprintf(s->id, sizeof s->id, "%s", id ? id : "(null)");
    snprintf(s->why, sizeof s->why, "%s", why);
}

static void add_job(pfi_store *s, const char *id, unsigned gpu, double t)
{
    pfi_store_job j = {0};
    snprintf(j.id, sizeof j.id, "%s", id);
    j.gpus[0] = gpu;
    j.n_gpus = 1;
    j.registered_at = t;
    pfi_error err;
    assert_int_equal(pfi_store_job_add(s, &j, &err), PFI_OK);
}

static void test_bad_job_row_skipped(void **state)
{
    (void)state;
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    add_job(s, "a", 0, 100);
    add_job(s, "b", 1, 101);
    add_job(s, "c", 2, 102);
    pfi_store_close(s);
    exec_other("UPDATE jobs SET gpus='zero' WHERE id='a';"
               "UPDATE jobs SET registered_at='soon' WHERE id='c';");
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    seen got = {0};
    pfi_store_on_bad_row(s, hook, &got);
    pfi_store_job *jobs;
    size_t n;
    assert_int_equal(pfi_store_jobs_running(s, &jobs, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    assert_string_equal(jobs[0].id, "b");
    assert_int_equal(got.calls, 2);
    assert_string_equal(got.table, "jobs");
    assert_string_equal(got.id, "c"); /* the last one seen */
    assert_string_equal(got.why, "bad registered_at");
    free(jobs);
    /* The skipped ids can be ended, and then registered again. */
    assert_int_equal(pfi_store_job_end(s, "a", 200, &err), PFI_OK);
    add_job(s, "a", 3, 201);
    pfi_store_close(s);
}

static void test_unusable_cap_values(void **state)
{
    (void)state;
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    pfi_store_cap c = {.gpu = 1, .watts = 300, .set_at = 10, .expires_at = 20, .prior_w = 600};
    assert_int_equal(pfi_store_cap_put(s, &c, &err), PFI_OK);
    c.gpu = 2;
    assert_int_equal(pfi_store_cap_put(s, &c, &err), PFI_OK);
    pfi_store_close(s);
    exec_other("UPDATE caps SET prior_w='x', expires_at='never' WHERE gpu=1;"
               "INSERT INTO caps(gpu,watts,set_at,expires_at,prior_w) VALUES(-1,1,1,1,1);");
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    seen got = {0};
    pfi_store_on_bad_row(s, hook, &got);
    pfi_store_cap *caps;
    size_t n;
    assert_int_equal(pfi_store_caps(s, &caps, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    assert_int_equal(caps[0].gpu, 1);
    assert_true(isnan(caps[0].prior_w));
    assert_true(isnan(caps[0].expires_at));
    assert_near(caps[0].watts, 300, 0);
    assert_int_equal(caps[1].gpu, 2);
    assert_near(caps[1].prior_w, 600, 0);
    assert_int_equal(got.calls, 1);
    assert_string_equal(got.table, "caps");
    free(caps);
    pfi_store_close(s);
}

static void file_bytes(char *buf, size_t len, size_t *n)
{
    FILE *f = fopen(test_db_path, "rb");
    assert_non_null(f);
    *n = fread(buf, 1, len, f);
    fclose(f);
}

/* A page overwritten with garbage: refused at open, the file unchanged. */
static void test_damaged_page_refused(void **state)
{
    (void)state;
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    for (int i = 0; i < 50; i++) {
        char id[16];
        snprintf(id, sizeof id, "job-%d", i);
        add_job(s, id, (unsigned)i, i);
    }
    pfi_store_close(s);
    /* Page 2 onwards hold the tables' b-trees (page 1 is the header). */
    FILE *f = fopen(test_db_path, "r+b");
    assert_non_null(f);
    char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 7 + 3);
    for (long pg = 1; pg < 4; pg++) {
        fseek(f, pg * 4096, SEEK_SET);
        fwrite(junk, 1, sizeof junk, f);
    }
    fclose(f);
    static char before[1 << 20], after[1 << 20];
    size_t nb, na;
    file_bytes(before, sizeof before, &nb);
    int rc = pfi_store_open(test_db_path, &s, &err);
    assert_int_equal(rc, PFI_EPARSE);
    assert_null(s);
    assert_non_null(strstr(err.msg, "damaged"));
    file_bytes(after, sizeof after, &na);
    assert_int_equal(na, nb);
    assert_memory_equal(before, after, nb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        test_db_unit_test(test_bad_job_row_skipped),
        test_db_unit_test(test_unusable_cap_values),
        test_db_unit_test(test_damaged_page_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
