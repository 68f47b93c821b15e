/* pfi_store_open_readonly (`pfi export`): a schema-1 store reads as schema 2
 * while its file keeps every byte, its mtime and its user_version; a missing
 * file is not created; writes are refused; a reader beside a writer (pfid)
 * sees its commits and does not block it. */
#include "store_fixture.h"
#include "test_util.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "pfi/store.h"

/* What must not change: the bytes, size and mtime of the file, and no
 * frame in its WAL (a write there reaches the file only at a checkpoint). */
typedef struct {
    char *bytes;
    size_t len;
    struct timespec mtime;
} snapshot;

static snapshot take(void)
{
    snapshot s;
    s.bytes = store_fixture_slurp(test_db_path, &s.len);
    struct stat st;
    assert_int_equal(stat(test_db_path, &st), 0);
    s.mtime = st.st_mtim;
    return s;
}

static void assert_unchanged(snapshot *before)
{
    snapshot now = take();
    assert_int_equal(now.len, before->len);
    assert_memory_equal(now.bytes, before->bytes, before->len);
    assert_int_equal(now.mtime.tv_sec, before->mtime.tv_sec);
    assert_int_equal(now.mtime.tv_nsec, before->mtime.tv_nsec);
    char wal[192];
    snprintf(wal, sizeof wal, "%s-wal", test_db_path);
    struct stat st;
    if (stat(wal, &st) == 0) assert_int_equal(st.st_size, 0);
    free(now.bytes);
    free(before->bytes);
}

/* One integer through an independent read-only connection. */
static long long query_int(const char *q)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(test_db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", q, sqlite3_errmsg(db));
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

typedef struct {
    int n;
    double t[8];
    unsigned gpu[8];
    pfi_gpu_sample x[8];
} samples_seen;

static int on_sample(double t, unsigned gpu, const pfi_gpu_sample *x, void *ctx)
{
    samples_seen *c = ctx;
    if (c->n < 8) {
        c->t[c->n] = t;
        c->gpu[c->n] = gpu;
        c->x[c->n] = *x;
    }
    c->n++;
    return 0;
}

static int on_report(double t, double tokens_per_s, void *ctx)
{
    (void)t;
    *(double *)ctx += tokens_per_s;
    return 0;
}

/* The rows make-store-v1.c wrote (tests/data/store-v1/README.md), read in
 * schema 2's form: SI units (1980 MHz is 1.98e9 Hz, 57 % is 0.57, 80123 MiB
 * is 80123 * 2^20 B), NVML's reasons 0x4|0x8|0x20 as pfi bits, the caps'
 * default_w as prior_w, and a job_points table (empty) that schema 1 lacks. */
static void test_v1_reads_migrated_file_untouched(void **state)
{
    (void)state;
    store_fixture_copy_v1(test_db_path);
    snapshot before = take();
    pfi_store *s;
    pfi_error err;
    assert_int_equal(pfi_store_open_readonly(test_db_path, &s, &err), PFI_OK);

    pfi_store_job *jobs;
    size_t n;
    assert_int_equal(pfi_store_jobs(s, &jobs, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    assert_string_equal(jobs[0].id, "moe-ft");
    assert_near(jobs[0].ended_at, 1764579400.0, 0);
    assert_string_equal(jobs[1].id, "llama-70b-pt");
    assert_int_equal(jobs[1].n_gpus, 2);
    assert_near(jobs[1].registered_at, 1764579500.5, 0);
    assert_near(jobs[1].ended_at, 0, 0);
    assert_near(jobs[1].sla_floor, 0, 0);
    assert_int_equal(jobs[1].exempt, 0);
    free(jobs);

    pfi_store_cap *caps;
    assert_int_equal(pfi_store_caps(s, &caps, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    assert_int_equal(caps[0].gpu, 1);
    assert_near(caps[0].watts, 450, 0);
    assert_near(caps[0].prior_w, 700, 0);
    free(caps);

    samples_seen seen = {0};
    assert_int_equal(pfi_store_samples_since(s, 0, on_sample, &seen, &err), PFI_OK);
    assert_int_equal(seen.n, 6);
    assert_near(seen.t[0], 1764579600.25, 0);
    assert_int_equal(seen.gpu[0], 0);
    const pfi_gpu_sample *g0 = &seen.x[0];
    assert_near(g0->v[PFI_GF_POWER], 690.5, 1e-12);
    assert_near(g0->v[PFI_GF_SM_CLOCK], 1980e6, 0);
    assert_near(g0->v[PFI_GF_UTIL_GPU], 0.57, 1e-15);
    assert_near(g0->v[PFI_GF_FB_USED], 80123.0 * 1048576.0, 0);
    assert_near(g0->v[PFI_GF_CLOCK_EVENTS],
                PFI_CLK_POWER_CAP | PFI_CLK_HW_SLOWDOWN | PFI_CLK_SW_THERMAL, 0);
    assert_near(seen.x[1].v[PFI_GF_POWER], 450.25, 1e-12);

    double sum = 0;
    assert_int_equal(pfi_store_throughput_since(s, "llama-70b-pt", 0, on_report, &sum, &err),
                     PFI_OK);
    assert_near(sum, 12000.5 + 11890.25, 1e-9);
    pfi_store_point *pts;
    assert_int_equal(pfi_store_points(s, NULL, &pts, &n, &err), PFI_OK);
    assert_int_equal(n, 0);
    pfi_store_close(s);

    assert_unchanged(&before);
    assert_int_equal(query_int("PRAGMA user_version"), 1);
    assert_int_equal(query_int("SELECT count(*) FROM sqlite_master WHERE type='table'"), 4);
    assert_int_equal(query_int("SELECT count(*) FROM caps WHERE default_w=700"), 1);
}

static void test_missing_file_not_created(void **state)
{
    (void)state;
    pfi_store *s = (pfi_store *)1;
    pfi_error err;
    assert_int_equal(pfi_store_open_readonly(test_db_path, &s, &err), PFI_ENOTFOUND);
    assert_null(s);
    assert_string_equal(err.file, test_db_path);
    assert_non_null(strstr(err.msg, "No such file"));
    assert_int_equal(access(test_db_path, F_OK), -1);
    assert_int_equal(errno, ENOENT);
}

/* Refused as by the writer's open, file untouched: not SQLite, damaged (the
 * tables' b-tree pages overwritten), another application's. */
static void test_refused_like_the_writer(void **state)
{
    (void)state;
    pfi_store *s;
    pfi_error err;
    FILE *f = fopen(test_db_path, "w");
    assert_non_null(f);
    fputs("not a store\n", f);
    fclose(f);
    snapshot before = take();
    assert_int_equal(pfi_store_open_readonly(test_db_path, &s, &err), PFI_EPARSE);
    assert_non_null(strstr(err.msg, "left untouched"));
    assert_unchanged(&before);

    store_fixture_copy_v1(test_db_path);
    f = fopen(test_db_path, "r+b");
    assert_non_null(f);
    char junk[3 * 4096]; /* pages 2-4 (page 1 is the header) */
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 7 + 3);
    fseek(f, 4096, SEEK_SET);
    assert_int_equal(fwrite(junk, 1, sizeof junk, f), sizeof junk);
    fclose(f);
    before = take();
    assert_int_equal(pfi_store_open_readonly(test_db_path, &s, &err), PFI_EPARSE);
    assert_non_null(strstr(err.msg, "damaged"));
    assert_unchanged(&before);

    unlink(test_db_path);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(test_db_path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA application_id=305419896; CREATE TABLE samples(x);",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    before = take();
    assert_int_equal(pfi_store_open_readonly(test_db_path, &s, &err), PFI_ENOTSUP);
    assert_non_null(strstr(err.msg, "application_id 0x12345678"));
    assert_unchanged(&before);
}

/* Every write function, on a handle reading the file itself (schema 2) and
 * on one reading a migrated in-memory copy (schema 1): PFI_ESTATE, and the
 * handle still reads what was there. */
static void assert_writes_refused(pfi_store *s)
{
    pfi_error err;
    pfi_gpu_sample x = {0};
    pfi_store_job job = {.id = "new", .gpus = {0}, .n_gpus = 1, .arch = "dense", .task = "pt"};
    pfi_store_cap cap = {.gpu = 0, .watts = 300, .set_at = 1, .expires_at = 2, .prior_w = 700};
    pfi_store_point pt = {.job = "new",
                          .cap_w = 300,
                          .power_w = 290,
                          .tokens_per_s = 10,
                          .n = 1,
                          .t_first = 1,
                          .t_last = 2};
    int rc[8] = {
        pfi_store_add_samples(s, 1, &x, 1, &err),
        pfi_store_job_add(s, &job, &err),
        pfi_store_job_end(s, "llama-70b-pt", 2, &err),
        pfi_store_add_throughput(s, "llama-70b-pt", 3, 1000, &err),
        pfi_store_cap_put(s, &cap, &err),
        pfi_store_cap_delete(s, 1, &err),
        pfi_store_point_put(s, &pt, &err),
        pfi_store_prune(s, 1e12, &err),
    };
    for (int i = 0; i < 8; i++)
        if (rc[i] != PFI_ESTATE) fail_msg("write function %d returned %d", i, rc[i]);
    assert_non_null(strstr(err.msg, "read-only"));
    assert_string_equal(err.file, test_db_path);
    pfi_store_job *jobs;
    size_t n;
    assert_int_equal(pfi_store_jobs_running(s, &jobs, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    assert_string_equal(jobs[0].id, "llama-70b-pt");
    free(jobs);
    pfi_store_cap *caps;
    assert_int_equal(pfi_store_caps(s, &caps, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    free(caps);
    long long count;
    assert_int_equal(pfi_store_throughput_count(s, "llama-70b-pt", &count, &err), PFI_OK);
    assert_int_equal(count, 2);
}

static void test_writes_refused(void **state)
{
    (void)state;
    pfi_store *s;
    pfi_error err;
    store_fixture_copy_v1(test_db_path);
    snapshot before = take();
    assert_int_equal(pfi_store_open_readonly(test_db_path, &s, &err), PFI_OK);
    assert_writes_refused(s);
    pfi_store_close(s);
    assert_unchanged(&before);

    /* The same store migrated on disk by the writer: read in place. */
    assert_int_equal(pfi_store_open(test_db_path, &s, &err), PFI_OK);
    pfi_store_close(s);
    assert_int_equal(query_int("PRAGMA user_version"), 4);
    before = take();
    assert_int_equal(pfi_store_open_readonly(test_db_path, &s, &err), PFI_OK);
    assert_writes_refused(s);
    pfi_store_close(s);
    assert_unchanged(&before);
}

static int count_sample(double t, unsigned gpu, const pfi_gpu_sample *x, void *ctx)
{
    (void)t;
    (void)gpu;
    (void)x;
    (*(int *)ctx)++;
    return 0;
}

static int samples_in(pfi_store *s)
{
    int n = 0;
    pfi_error err;
    assert_int_equal(pfi_store_samples_since(s, 0, count_sample, &n, &err), PFI_OK);
    return n;
}

/* The writer's commits both reader tests watch: two GPUs' samples at t,
 * and job j's curve point at 500 W. */
static int add_two_samples(pfi_store *w, double t)
{
    pfi_gpu_sample x[2] = {0};
    pfi_gpu_sample_set(&x[0], PFI_GF_POWER, 500);
    pfi_gpu_sample_set(&x[1], PFI_GF_POWER, 510);
    return pfi_store_add_samples(w, t, x, 2, NULL);
}

static void put_point(pfi_store *w)
{
    pfi_store_point p = {.job = "j",
                         .cap_w = 500,
                         .power_w = 1010,
                         .tokens_per_s = 9000,
                         .tokens_sd = 1,
                         .n = 2,
                         .t_first = 1,
                         .t_last = 2};
    assert_int_equal(pfi_store_point_put(w, &p, NULL), PFI_OK);
}

/* pfid's situation: the writer keeps its connection (WAL) and commits while
 * a reader is open; each read sees the commits so far, and neither blocks. */
static void test_reader_beside_writer(void **state)
{
    (void)state;
    pfi_store *w, *r;
    pfi_error err;
    assert_int_equal(pfi_store_open(test_db_path, &w, &err), PFI_OK);
    assert_int_equal(add_two_samples(w, 1), PFI_OK);
    assert_int_equal(pfi_store_open_readonly(test_db_path, &r, &err), PFI_OK);
    assert_int_equal(samples_in(r), 2);
    assert_int_equal(add_two_samples(w, 2), PFI_OK);
    assert_int_equal(samples_in(r), 4);
    put_point(w);
    pfi_store_point *pts;
    size_t n;
    assert_int_equal(pfi_store_points(r, "j", &pts, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    assert_near(pts[0].power_w, 1010, 0);
    free(pts);
    pfi_store_close(r);
    assert_int_equal(pfi_store_prune(w, 10, &err), PFI_OK);
    assert_int_equal(samples_in(w), 0);
    pfi_store_close(w);
}

/* `pfi export`'s snapshot: reads between begin and end see the store as it
 * was at begin while the writer goes on committing (not blocked); after end
 * they see the commits. A read-write handle has none. */
static void test_snapshot(void **state)
{
    (void)state;
    pfi_store *w, *r;
    pfi_error err;
    assert_int_equal(pfi_store_open(test_db_path, &w, &err), PFI_OK);
    assert_int_equal(add_two_samples(w, 1), PFI_OK);
    assert_int_equal(pfi_store_open_readonly(test_db_path, &r, &err), PFI_OK);
    assert_int_equal(pfi_store_snapshot_begin(r, &err), PFI_OK);
    assert_int_equal(pfi_store_snapshot_begin(r, &err), PFI_ESTATE);
    assert_int_equal(add_two_samples(w, 2), PFI_OK);
    put_point(w);
    assert_int_equal(samples_in(r), 2);
    pfi_store_point *pts;
    size_t n;
    assert_int_equal(pfi_store_points(r, "j", &pts, &n, &err), PFI_OK);
    assert_int_equal(n, 0);
    free(pts);
    pfi_store_snapshot_end(r);
    pfi_store_snapshot_end(r); /* once */
    assert_int_equal(samples_in(r), 4);
    assert_int_equal(pfi_store_points(r, "j", &pts, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    free(pts);
    assert_int_equal(pfi_store_snapshot_begin(w, &err), PFI_ESTATE);
    assert_int_equal(pfi_store_snapshot_begin(r, &err), PFI_OK); /* closed by close */
    pfi_store_close(r);
    pfi_store_snapshot_end(NULL);
    pfi_store_close(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        test_db_unit_test(test_v1_reads_migrated_file_untouched),
        test_db_unit_test(test_missing_file_not_created),
        test_db_unit_test(test_refused_like_the_writer),
        test_db_unit_test(test_writes_refused),
        test_db_unit_test(test_reader_beside_writer),
        test_db_unit_test(test_snapshot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
