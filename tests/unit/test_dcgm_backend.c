/* The dcgm backend on the dcgm-exporter fixture through file:// URLs: every
 * DCGM field to its pfi field and unit, NaN and DCGM blanks, a GPU-level
 * series over a MIG instance's, stale timestamps, limits, read-only, the
 * scrape cache, bad endpoints. (A live HTTP
 * scrape is exercised by the agent's integration tests.) */
#include "test_util.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pfi/backend.h"

static char fixture_url[1200], orig_url[1200];

static pfi_backend *open_url(const char *opts)
{
    pfi_backend *b = NULL;
    pfi_error err = {0};
    if (pfi_backend_open("dcgm", opts, &b, &err) != PFI_OK) fail_msg("open: %s", err.msg);
    return b;
}

#define HAS(s, f) pfi_gpu_sample_has(&(s), (f))

static void test_fixture_fields(void **state)
{
    (void)state;
    pfi_backend *b = open_url(fixture_url);
    unsigned n = 0;
    assert_int_equal(pfi_backend_count(b, &n), PFI_OK);
    assert_int_equal(n, 3);
    pfi_gpu_info info;
    assert_int_equal(pfi_backend_info(b, 1, &info), PFI_OK);
    assert_string_equal(info.name, "NVIDIA H200");
    assert_string_equal(info.uuid, "GPU-81c0d4e2-2f6a-4b8d-8e3f-0a1b2c3d4e61");

    pfi_gpu_sample s;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_int_equal(s.valid, (1u << PFI_GF_COUNT) - 1);  /* every field */
    assert_near((s.v[PFI_GF_POWER] * 1e3), 690517, 1e-6); /* 690.517 W */
    assert_near((s.v[PFI_GF_ENERGY] * 1e3), 918273645, 0);
    assert_near((s.v[PFI_GF_LIMIT] * 1e3), 700000, 0);
    assert_near((s.v[PFI_GF_SM_CLOCK] * 1e-6), 1755, 0);
    assert_near((s.v[PFI_GF_MEM_CLOCK] * 1e-6), 3201, 0);
    assert_near((s.v[PFI_GF_UTIL_GPU] * 100), 100, 0);
    assert_near((s.v[PFI_GF_UTIL_MEM] * 100), 42, 0);
    assert_near(s.v[PFI_GF_TEMP], 58, 0);
    assert_near((s.v[PFI_GF_FB_USED] * (1 / 1048576.0)), 70123, 0);
    assert_true(((uint32_t)s.v[PFI_GF_CLOCK_EVENTS]) ==
                PFI_CLK_POWER_CAP); /* NVML 0x4, SW power cap */
    assert_near(s.v[PFI_GF_SM_ACTIVE], 0.947, 1e-15);
    assert_near(s.v[PFI_GF_SM_OCCUPANCY], 0.32, 1e-15);
    assert_near(s.v[PFI_GF_TENSOR_ACTIVE], 0.502, 1e-15);
    assert_near(s.v[PFI_GF_DRAM_ACTIVE], 0.318, 1e-15);
    assert_near(s.v[PFI_GF_PCIE_TX], 31457280, 0); /* bytes/s as DCGM_FI_PROF_PCIE_* */
    assert_near(s.v[PFI_GF_PCIE_RX], 62914560, 0);
    assert_near(s.v[PFI_GF_NVLINK_TX], 1.2582912e10, 0);
    assert_near(s.v[PFI_GF_NVLINK_RX], 1.2582912e10, 0);

    /* GPU 1: DRAM_ACTIVE is NaN -> its bit is clear, the rest read */
    assert_int_equal(pfi_backend_sample(b, 1, &s), PFI_OK);
    assert_false(HAS(s, PFI_GF_DRAM_ACTIVE));
    assert_int_equal(s.valid, ((1u << PFI_GF_COUNT) - 1) & ~(1u << PFI_GF_DRAM_ACTIVE));
    assert_near((s.v[PFI_GF_POWER] * 1e3), 395250, 1e-6);
    assert_near((s.v[PFI_GF_LIMIT] * 1e3), 400000, 0);
    assert_near((s.v[PFI_GF_SM_CLOCK] * 1e-6), 1185, 0);

    /* GPU 2: the MIG instance's 12.5 W does not replace the GPU's power */
    assert_int_equal(pfi_backend_sample(b, 2, &s), PFI_OK);
    assert_near((s.v[PFI_GF_POWER] * 1e3), 77015, 1e-6);
    assert_true(((uint32_t)s.v[PFI_GF_CLOCK_EVENTS]) == PFI_CLK_IDLE); /* NVML 0x1, idle */

    assert_int_equal(pfi_backend_sample(b, 3, &s), PFI_ENOTFOUND);
    assert_int_equal(pfi_backend_throughput(b, 0, &(double){0}), PFI_ENOTSUP);

    pfi_gpu_limits l;
    assert_int_equal(pfi_backend_limits(b, 1, &l), PFI_OK);
    assert_near((l.min_w * 1000), 200000, 0);
    assert_near((l.max_w * 1000), 700000, 0);
    assert_near((l.default_w * 1000), 700000, 0);
    assert_near((l.enforced_w * 1000), 400000, 0);
    assert_near((l.current_w * 1000), 400000, 0);

    /* read-only: nothing is set, and it says so */
    assert_int_equal(pfi_backend_set_limit(b, 1, 500), PFI_ENOTSUP);
    assert_non_null(strstr(pfi_backend_last_error(b), "read-only"));
    assert_int_equal(pfi_backend_limits(b, 1, &l), PFI_OK);
    assert_near((l.enforced_w * 1000), 400000, 0);
    pfi_backend_close(b);
}

/* The fixture as written: its power series are timestamped 2025-11-29,
 * far more than 3 collect intervals ago, so the power is stale (bit clear)
 * and the MIG instance's 12.5 W does not stand in for it; the fields
 * without a timestamp are as old as the page. */
static void test_stale_fixture_power(void **state)
{
    (void)state;
    pfi_backend *b = open_url(orig_url);
    pfi_gpu_sample s;
    for (unsigned g = 0; g < 3; g++) {
        assert_int_equal(pfi_backend_sample(b, g, &s), PFI_OK);
        assert_false(HAS(s, PFI_GF_POWER));
        assert_true(HAS(s, PFI_GF_SM_CLOCK));
    }
    pfi_backend_close(b);
}

/* DCGM blanks are not readings; limits need MIN/MAX/DEF. */
static void test_blanks_and_missing_limits(void **state)
{
    (void)state;
    char path[] = "/tmp/pfi-dcgm-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    test_write_file(path, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 9223372036854775794\n"
                          "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\"} 2147483634\n"
                          "DCGM_FI_PROF_SM_ACTIVE{gpu=\"0\"} 140737488355328\n"
                          "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} +Inf\n"
                          "DCGM_FI_DEV_MEM_CLOCK{gpu=\"0\"} 3201\n"
                          "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu=\"0\"} 1\n");
    char url[1200];
    snprintf(url, sizeof url, "url=file://%s,cache_ms=0,timeout_ms=1000", path);
    pfi_backend *b = open_url(url);
    pfi_gpu_sample s;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_int_equal(s.valid, (1u << PFI_GF_MEM_CLOCK) | (1u << PFI_GF_CLOCK_EVENTS));
    pfi_gpu_limits l;
    assert_int_equal(pfi_backend_limits(b, 0, &l), PFI_ENOTSUP);

    /* cache_ms=0: every sample scrapes again */
    test_write_file(path, "DCGM_FI_DEV_MEM_CLOCK{gpu=\"0\"} 2201\n");
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near((s.v[PFI_GF_MEM_CLOCK] * 1e-6), 2201, 0);
    /* a scrape that breaks is an error of this sample, not the end */
    test_write_file(path, "DCGM_FI_DEV_MEM_CLOCK{gpu=\"0\" 2201\n");
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_EBACKEND);
    assert_non_null(strstr(pfi_backend_last_error(b), ":1:"));
    test_write_file(path, "DCGM_FI_DEV_MEM_CLOCK{gpu=\"0\"} 3201\n");
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    pfi_backend_close(b);

    /* a long cache_ms: the first scrape serves */
    snprintf(url, sizeof url, "url=file://%s,cache_ms=60000", path);
    b = open_url(url);
    test_write_file(path, "DCGM_FI_DEV_MEM_CLOCK{gpu=\"0\"} 1000\n");
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near((s.v[PFI_GF_MEM_CLOCK] * 1e-6), 3201, 0);
    pfi_backend_close(b);
    unlink(path);
}

static void test_bad_endpoints(void **state)
{
    (void)state;
    pfi_backend *b = NULL;
    pfi_error err = {0};
    assert_int_equal(pfi_backend_open("dcgm", "file:///nonexistent/metrics", &b, &err),
                     PFI_EBACKEND);
    assert_null(b);
    assert_non_null(strstr(err.msg, "/nonexistent/metrics"));
    /* nothing listens on port 9 of loopback (discard): refused quickly */
    assert_int_equal(
        pfi_backend_open("dcgm", "url=http://127.0.0.1:9/metrics,timeout_ms=2000", &b, &err),
        PFI_EBACKEND);
    assert_non_null(strstr(err.msg, "cannot scrape"));
    /* a Prometheus page without DCGM series */
    char path[] = "/tmp/pfi-dcgm-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    test_write_file(path, "# HELP up x\nup 1\n");
    char url[1200];
    snprintf(url, sizeof url, "file://%s", path);
    assert_int_equal(pfi_backend_open("dcgm", url, &b, &err), PFI_EBACKEND);
    assert_non_null(strstr(err.msg, "no DCGM_FI_"));
    unlink(path);
    /* options */
    assert_int_equal(pfi_backend_open("dcgm", "", &b, &err), PFI_EINVAL);
    assert_int_equal(pfi_backend_open("dcgm", NULL, &b, &err), PFI_EINVAL);
    assert_int_equal(pfi_backend_open("dcgm", "url=file:///x,bogus=1", &b, &err), PFI_EINVAL);
    assert_int_equal(pfi_backend_open("dcgm", "url=file:///x,timeout_ms=0", &b, &err), PFI_EINVAL);
    assert_int_equal(pfi_backend_open("dcgm", "url=file:///x,cache_ms=-1", &b, &err), PFI_EINVAL);
    /* only http, https and file */
    assert_int_equal(pfi_backend_open("dcgm", "ftp://127.0.0.1/metrics", &b, &err), PFI_EBACKEND);
    assert_int_equal(pfi_backend_open("nope", "", &b, &err), PFI_ENOTFOUND);
}

int main(void)
{
    char path[1024];
    test_path(path, sizeof path, PFI_SOURCE_DIR, "tests/data/dcgm-exporter-metrics.txt");
    snprintf(orig_url, sizeof orig_url, "file://%s", path);
    /* The fixture with its series timestamps made now (same width). */
    FILE *f = fopen(path, "rb");
    static char text[1 << 16];
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = '\0';
    char now[32];
    snprintf(now, sizeof now, " %lld", (long long)time(NULL) * 1000);
    for (char *ts = strstr(text, " 1764410400123"); ts && strlen(now) == 14;
         ts = strstr(ts, " 1764410400123"))
        memcpy(ts, now, 14);
    static char fresh[] = "/tmp/pfi-dcgm-fixture-XXXXXX";
    int fd = mkstemp(fresh);
    if (fd < 0) return 1;
    close(fd);
    test_write_file(fresh, text);
    snprintf(fixture_url, sizeof fixture_url, "file://%s", fresh);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_fields),
        cmocka_unit_test(test_stale_fixture_power),
        cmocka_unit_test(test_blanks_and_missing_limits),
        cmocka_unit_test(test_bad_endpoints),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(fresh);
    return rc;
}
