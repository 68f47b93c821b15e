/* The dcgm backend on real dcgm-exporter pages (../shared/data/dcgm-exporter:
 * an H100 under MIG, a Tesla T4 page with empty HELP lines, the README's page
 * with a space after the label comma and the blank sentinel), MIG series
 * taken once per GPU, and the page's age: fields stale past N collect
 * intervals. */
#include "test_util.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pfi/backend.h"

#define HAS(s, f) pfi_gpu_sample_has(&(s), (f))

static char *slurp(const char *rel)
{
    char path[1024];
    test_path(path, sizeof path, PFI_SHARED_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static pfi_backend *open_text(char *path, const char *text, const char *extra)
{
    test_write_file(path, text);
    char opts[1400];
    snprintf(opts, sizeof opts, "url=file://%s,cache_ms=0%s", path, extra);
    pfi_backend *b = NULL;
    pfi_error err = {0};
    if (pfi_backend_open("dcgm", opts, &b, &err) != PFI_OK) fail_msg("open: %s", err.msg);
    return b;
}

static void tmp_path(char *path)
{
    strcpy(path, "/tmp/pfi-dcgm-page-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
}

/* Replaces the metric name and value of every sample line of `page` whose
 * name is `from`: the real page's labels with another field. */
static void append_as(char *out, size_t len, const char *page, const char *from, const char *to,
                      const char *const *values)
{
    size_t k = 0;
    for (const char *p = page; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (strncmp(p, from, strlen(from)) == 0 && p[strlen(from)] == '{') {
            const char *close = memchr(p, '}', n);
            assert_non_null(close);
            size_t used = strlen(out);
            snprintf(out + used, len - used, "%s%.*s %s\n", to, (int)(close + 1 - p - strlen(from)),
                     p + strlen(from), values[k++]);
        }
        p += n + (e != NULL);
    }
    assert_true(k > 0);
}

/* issue 512's H100 under MIG: three 1g.10gb instances of GPU 0, every
 * series with GPU_I_ID. The GPU is there (it was not: MIG series were
 * skipped, so a MIG GPU had no power), and the device-wide fields each
 * instance repeats are taken once, not summed; an instance's own fields
 * (framebuffer) are not the GPU's. */
static void test_mig_page(void **state)
{
    (void)state;
    char *page = slurp("data/dcgm-exporter/issue512_h100_mig_metrics_excerpt.prom");
    char path[64];
    tmp_path(path);
    pfi_backend *b = open_text(path, page, "");
    unsigned n = 0;
    assert_int_equal(pfi_backend_count(b, &n), PFI_OK);
    assert_int_equal(n, 1);
    pfi_gpu_info info;
    assert_int_equal(pfi_backend_info(b, 0, &info), PFI_OK);
    assert_string_equal(info.name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(info.uuid, "GPU-58e8f5ea-13cc-013a-d88f-2bcf5ae8bc77");
    pfi_gpu_sample s;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_int_equal(s.valid, 0); /* GR_ENGINE_ACTIVE is no pfi field */
    pfi_backend_close(b);

    /* The same page with the power, SM clock and framebuffer series the
     * exporter writes under MIG, on the page's own labels: each instance
     * repeats the GPU's 245.5 W. */
    static char big[1 << 16];
    snprintf(big, sizeof big, "%s", page);
    static const char *const power[] = {"245.5", "245.5", "245.5"};
    static const char *const clock[] = {"1980", "1980", "1980"};
    static const char *const fb[] = {"1000", "2000", "3000"};
    append_as(big, sizeof big, page, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_POWER_USAGE",
              power);
    append_as(big, sizeof big, page, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_SM_CLOCK",
              clock);
    append_as(big, sizeof big, page, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_FB_USED", fb);
    append_as(big, sizeof big, page, "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
              "DCGM_FI_DEV_POWER_MGMT_LIMIT", power);
    b = open_text(path, big, "");
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_int_equal(s.valid, (1u << PFI_GF_POWER) | (1u << PFI_GF_SM_CLOCK));
    assert_near(s.v[PFI_GF_POWER], 245.5, 0);
    assert_near(s.v[PFI_GF_SM_CLOCK], 1980e6, 0);
    pfi_backend_close(b);

    /* A series without MIG labels is the GPU's own and wins, wherever it is. */
    size_t used = strlen(big);
    snprintf(big + used, sizeof big - used,
             "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-58e8f5ea-13cc-013a-d88f-2bcf5ae8bc77\"} "
             "250.25\n");
    b = open_text(path, big, "");
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near(s.v[PFI_GF_POWER], 250.25, 0);
    pfi_backend_close(b);
    unlink(path);
    free(page);
}

/* DataDog's Tesla T4 page: empty "# HELP name" lines, DCGM_FI_PROCESS_NAME
 * and version labels, the older CLOCK_THROTTLE_REASONS name, a management
 * limit without MIN/MAX/DEF. */
static void test_t4_page(void **state)
{
    (void)state;
    char *page = slurp("data/dcgm-exporter/datadog_dcgm_fixture_T4_excerpt.prom");
    char path[64];
    tmp_path(path);
    pfi_backend *b = open_text(path, page, "");
    unsigned n = 0;
    assert_int_equal(pfi_backend_count(b, &n), PFI_OK);
    assert_int_equal(n, 1);
    pfi_gpu_info info;
    assert_int_equal(pfi_backend_info(b, 0, &info), PFI_OK);
    assert_string_equal(info.name, "Tesla T4");
    pfi_gpu_sample s;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_int_equal(s.valid,
                     (1u << PFI_GF_POWER) | (1u << PFI_GF_ENERGY) | (1u << PFI_GF_CLOCK_EVENTS));
    assert_near(s.v[PFI_GF_POWER], 8.969, 1e-12);
    assert_near(s.v[PFI_GF_ENERGY], 128996.013, 1e-6);               /* mJ -> J */
    assert_true((uint32_t)s.v[PFI_GF_CLOCK_EVENTS] == PFI_CLK_IDLE); /* NVML 0x1 */
    pfi_gpu_limits l;
    assert_int_equal(pfi_backend_limits(b, 0, &l), PFI_ENOTSUP); /* no MIN/MAX/DEF */
    assert_non_null(strstr(pfi_backend_last_error(b), "POWER_MGMT_LIMIT_MIN/MAX/DEF"));
    double age = -1;
    assert_int_equal(pfi_backend_sample_age(b, 0, &age), PFI_OK);
    assert_true(age >= 0 && age < 5);
    pfi_backend_close(b);
    unlink(path);
    free(page);
}

/* The README's page: "gpu="0", UUID=..." (a space after the comma) and
 * 9223372036854775794 for an unsupported field, between shell lines. */
static void test_quickstart_page(void **state)
{
    (void)state;
    char *doc = slurp("data/dcgm-exporter/dcgm-exporter_README_quickstart_excerpt.txt");
    static char page[1 << 14];
    page[0] = '\0';
    for (char *save = NULL, *line = strtok_r(doc, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        if (line[0] == '#' || strncmp(line, "DCGM_", 5) == 0) {
            size_t used = strlen(page);
            snprintf(page + used, sizeof page - used, "%s\n", line);
        }
    assert_non_null(strstr(page, "9223372036854775794"));
    char path[64];
    tmp_path(path);
    pfi_backend *b = open_text(path, page, "");
    pfi_gpu_sample s;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_int_equal(s.valid, (1u << PFI_GF_SM_CLOCK) | (1u << PFI_GF_MEM_CLOCK));
    assert_near(s.v[PFI_GF_SM_CLOCK], 139e6, 0);
    assert_near(s.v[PFI_GF_MEM_CLOCK], 405e6, 0);
    pfi_gpu_info info;
    assert_int_equal(pfi_backend_info(b, 0, &info), PFI_OK);
    assert_string_equal(info.uuid, "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52");
    pfi_backend_close(b);
    unlink(path);
    free(doc);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A page the exporter has not rewritten for more than stale_after collect
 * intervals is stale: nothing fresh, the sample fails and says why; a new
 * page is fresh again. A series timestamp dates its own field. */
static void test_stale(void **state)
{
    (void)state;
    char path[64];
    tmp_path(path);
    pfi_backend *b = open_text(path,
                               "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 300\n"
                               "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 1000\n",
                               ",collect_ms=300,stale_after=2");
    pfi_gpu_sample s;
    double age;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_true(HAS(s, PFI_GF_POWER));
    assert_int_equal(pfi_backend_sample_age(b, 0, &age), PFI_OK);
    assert_true(age >= 0 && age < 0.3);
    sleep_ms(350); /* the same page, a collect later: older, still fresh */
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_int_equal(pfi_backend_sample_age(b, 0, &age), PFI_OK);
    assert_true(age >= 0.3);
    sleep_ms(400); /* past 2 x 300 ms */
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_EBACKEND);
    assert_int_equal(s.valid, 0);
    assert_non_null(strstr(pfi_backend_last_error(b), "stale past 2 collect intervals"));
    assert_int_equal(pfi_backend_sample_age(b, 0, &age), PFI_ENODATA);
    /* the exporter collects again: the page changed */
    test_write_file(path, "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 301\n"
                          "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 1030\n");
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near(s.v[PFI_GF_POWER], 301, 0);
    assert_int_equal(pfi_backend_sample_age(b, 0, &age), PFI_OK);
    assert_true(age < 0.3);

    /* timestamps: a fresh power, an energy 10 s old (stale past 0.6 s) */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    long long ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    char text[256];
    snprintf(text, sizeof text,
             "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 302 %lld\n"
             "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 1060 %lld\n",
             ms, ms - 10000);
    test_write_file(path, text);
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_int_equal(s.valid, 1u << PFI_GF_POWER);
    assert_near(s.v[PFI_GF_POWER], 302, 0);
    pfi_backend_close(b);

    /* defaults: 3 x 30 s (dcgm-exporter's -c 30000) */
    b = open_text(path, text, "");
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_int_equal(s.valid, (1u << PFI_GF_POWER) | (1u << PFI_GF_ENERGY));
    pfi_backend_close(b);
    pfi_backend *bad = NULL;
    pfi_error err = {0};
    char opts[200];
    snprintf(opts, sizeof opts, "url=file://%s,collect_ms=0", path);
    assert_int_equal(pfi_backend_open("dcgm", opts, &bad, &err), PFI_EINVAL);
    snprintf(opts, sizeof opts, "url=file://%s,stale_after=x", path);
    assert_int_equal(pfi_backend_open("dcgm", opts, &bad, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "stale_after=x"));
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mig_page),
        cmocka_unit_test(test_t4_page),
        cmocka_unit_test(test_quickstart_page),
        cmocka_unit_test(test_stale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
