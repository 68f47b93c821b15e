/* The dcgm backend on real dcgm-exporter pages (../shared/data/dcgm-exporter,
 * see its README): a MIG H100 whose instances repeat the GPU's power, a T4
 * page with empty HELP lines and only the current limit, the README's
 * quickstart excerpt with a blank sentinel; and the page's age: a page that
 * stops changing goes stale after its collect intervals. References: the
 * numbers printed in the pages. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pfi/backend.h"

static char dir[64];

static const char *page(const char *name, char *buf, size_t len)
{
    return test_path(buf, len, PFI_SHARED_DIR "/data/dcgm-exporter", name);
}

static pfi_backend *open_file(const char *path, const char *extra)
{
    char opts[1400];
    snprintf(opts, sizeof opts, "url=file://%s%s", path, extra);
    pfi_backend *b = NULL;
    pfi_error err = {0};
    if (pfi_backend_open("dcgm", opts, &b, &err) != PFI_OK) fail_msg("open %s: %s", path, err.msg);
    return b;
}

/* Copies the lines of src that start with `keep` (or every line when NULL)
 * to dst, then appends extra. */
static void write_page(const char *dst, const char *src, const char *keep, const char *extra)
{
    FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
    assert_non_null(in);
    assert_non_null(out);
    char line[4096];
    while (fgets(line, sizeof line, in))
        if (!keep || strncmp(line, keep, strlen(keep)) == 0 || line[0] == '#') fputs(line, out);
    if (extra) fputs(extra, out);
    fclose(in);
    fclose(out);
}

static void test_mig_page(void **state)
{
    (void)state;
    char p[1024];
    pfi_backend *b = open_file(page("issue512_h100_mig_metrics_excerpt.prom", p, sizeof p), "");
    unsigned n = 0;
    assert_int_equal(pfi_backend_count(b, &n), PFI_OK);
    assert_int_equal(n, 1); /* three instances, one GPU */
    pfi_gpu_info info;
    assert_int_equal(pfi_backend_info(b, 0, &info), PFI_OK);
    assert_string_equal(info.name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(info.uuid, "GPU-58e8f5ea-13cc-013a-d88f-2bcf5ae8bc77");
    pfi_backend_close(b);

    /* The same instances, each with the GPU's power as dcgm-exporter prints
     * it under MIG, and an instance-level SM activity: the power is taken
     * once (250.5 W, not a sum), the instances' activity is not the GPU's. */
    char mig[128];
    snprintf(mig, sizeof mig, "%s/mig.prom", dir);
    const char *lab = "gpu=\"0\",UUID=\"GPU-58e8f5ea-13cc-013a-d88f-2bcf5ae8bc77\","
                      "modelName=\"NVIDIA H100 80GB HBM3\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=";
    char extra[2048];
    snprintf(extra, sizeof extra,
             "DCGM_FI_DEV_POWER_USAGE{%s\"7\"} 250.5\nDCGM_FI_DEV_POWER_USAGE{%s\"8\"} 250.5\n"
             "DCGM_FI_DEV_POWER_USAGE{%s\"9\"} 250.5\nDCGM_FI_PROF_SM_ACTIVE{%s\"7\"} 0.25\n"
             "DCGM_FI_DEV_FB_USED{%s\"7\"} 9000\n",
             lab, lab, lab, lab, lab);
    write_page(mig, p, NULL, extra);
    b = open_file(mig, "");
    pfi_gpu_sample s;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_true(pfi_gpu_sample_has(&s, PFI_GF_POWER));
    assert_near(s.v[PFI_GF_POWER], 250.5, 0);
    assert_false(pfi_gpu_sample_has(&s, PFI_GF_SM_ACTIVE));
    assert_false(pfi_gpu_sample_has(&s, PFI_GF_FB_USED));
    pfi_backend_close(b);
    unlink(mig);
}

static void test_t4_page(void **state)
{
    (void)state;
    char p[1024];
    pfi_backend *b = open_file(page("datadog_dcgm_fixture_T4_excerpt.prom", p, sizeof p), "");
    pfi_gpu_sample s;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near(s.v[PFI_GF_POWER], 8.969, 1e-12);
    assert_near(s.v[PFI_GF_ENERGY], 128996.013, 1e-6); /* mJ -> J */
    assert_true(pfi_gpu_sample_has(&s, PFI_GF_CLOCK_EVENTS));
    assert_true(((uint32_t)s.v[PFI_GF_CLOCK_EVENTS]) == PFI_CLK_IDLE); /* NVML 0x1 */
    pfi_gpu_limits l;
    assert_int_equal(pfi_backend_limits(b, 0, &l), PFI_ENOTSUP); /* no MIN/MAX/DEF */
    assert_non_null(strstr(pfi_backend_last_error(b), "POWER_MGMT_LIMIT_MIN/MAX/DEF"));
    pfi_backend_close(b);
}

static void test_quickstart_page(void **state)
{
    (void)state;
    char p[1024], q[128];
    snprintf(q, sizeof q, "%s/quickstart.prom", dir);
    write_page(q, page("dcgm-exporter_README_quickstart_excerpt.txt", p, sizeof p), "DCGM_", NULL);
    pfi_backend *b = open_file(q, "");
    pfi_gpu_sample s;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near(s.v[PFI_GF_SM_CLOCK], 139e6, 0);
    assert_near(s.v[PFI_GF_MEM_CLOCK], 405e6, 0);
    pfi_gpu_info info;
    assert_int_equal(pfi_backend_info(b, 0, &info), PFI_OK);
    assert_string_equal(info.uuid, "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52");
    pfi_backend_close(b);
    unlink(q);
}

static void test_page_age(void **state)
{
    (void)state;
    char p[1024], q[128];
    snprintf(q, sizeof q, "%s/age.prom", dir);
    page("datadog_dcgm_fixture_T4_excerpt.prom", p, sizeof p);
    write_page(q, p, NULL, NULL);
    /* collected every 100 ms, stale after 2 collections; no scrape cache */
    pfi_backend *b = open_file(q, ",cache_ms=0,collect_ms=100,stale_intervals=2");
    pfi_gpu_sample s;
    double age = -1;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_int_equal(pfi_backend_data_age(b, 0, &age), PFI_OK);
    assert_true(age >= 0 && age < 0.2);
    usleep(300000);
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_EBACKEND);
    assert_non_null(strstr(pfi_backend_last_error(b), "stale"));
    assert_int_equal(pfi_backend_data_age(b, 0, &age), PFI_OK);
    assert_true(age >= 0.3);
    /* The exporter collects again: the page changes, the data are fresh. */
    write_page(q, p, NULL, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 41\n");
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near(s.v[PFI_GF_TEMP], 41, 0);
    assert_int_equal(pfi_backend_data_age(b, 0, &age), PFI_OK);
    assert_true(age < 0.2);
    pfi_backend_close(b);
    /* stale_intervals=0: never stale */
    b = open_file(q, ",cache_ms=0,collect_ms=1,stale_intervals=0");
    usleep(20000);
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    pfi_backend_close(b);
    unlink(q);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/pfi-test-dcgm-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rmdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mig_page),
        cmocka_unit_test(test_t4_page),
        cmocka_unit_test(test_quickstart_page),
        cmocka_unit_test(test_page_age),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
