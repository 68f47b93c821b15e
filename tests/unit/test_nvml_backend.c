/* The nvml backend against tests/fake-nvml (loaded through PFI_NVML_LIB):
 * every field and its unit, every failure switch, limit validation and
 * read-back, optional symbols absent, limits that survive a restart. */
#include "test_util.h"

#include <string.h>
#include <unistd.h>

#include "pfi/backend.h"
#include "pfi/gpumodel.h"
#include "telemetry/nvml_types.h"

static char libdir[1024];

static const char *lib(const char *variant)
{
    static char path[1200];
    snprintf(path, sizeof path, "%s/fake-nvml%s/libnvidia-ml.so.1", libdir, variant);
    return path;
}

static void clear_env(void)
{
    static const char *const vars[] = {
        "FAKE_NVML_GPUS",  "FAKE_NVML_JOB",    "FAKE_NVML_JOB_GPUS", "FAKE_NVML_FB_MIB",
        "FAKE_NVML_FAIL",  "FAKE_NVML_NOTSUP", "FAKE_NVML_GPM",      "FAKE_NVML_SET_IGNORE",
        "FAKE_NVML_STATE", "PFI_NVML_LIB",     "FAKE_NVML_CTL",      "FAKE_NVML_PERSISTENCE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

static int setup(void **state)
{
    (void)state;
    const char *b = getenv("PFI_BUILD_DIR");
    if (!b) return -1;
    snprintf(libdir, sizeof libdir, "%s", b);
    clear_env();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clear_env();
    return 0;
}

/* A compute-heavy job like the probe's dense_train: binds at 700 W. */
#define JOB "0.85,0.9,0.3,0.55,130000"
static const pfi_job_model job = {.compute_frac = 0.85,
                                  .sm_activity = 0.9,
                                  .dram_activity = 0.3,
                                  .tensor_ratio = 0.55,
                                  .tput_per_gpu = 130000};

static pfi_backend *open_ok(const char *variant)
{
    pfi_backend *b = NULL;
    pfi_error err = {0};
    setenv("PFI_NVML_LIB", lib(variant), 1);
    /* the fake has no GPM refresh rate: back-to-back GPM samples are fine */
    int rc = pfi_backend_open("nvml", "gpm_min_ms=0", &b, &err);
    if (rc != PFI_OK) fail_msg("open: %s", err.msg);
    return b;
}

#define HAS(s, f) pfi_gpu_sample_has(&(s), (f))

static void test_missing_library(void **state)
{
    (void)state;
    pfi_backend *b = NULL;
    pfi_error err = {0};
    setenv("PFI_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_int_equal(pfi_backend_open("nvml", "", &b, &err), PFI_EBACKEND);
    assert_null(b);
    assert_non_null(strstr(err.msg, "/nonexistent/libnvidia-ml.so.1"));
    assert_non_null(strstr(err.msg, "NVIDIA driver"));
    /* lib= in the options wins over nothing and names the path too */
    unsetenv("PFI_NVML_LIB");
    assert_int_equal(pfi_backend_open("nvml", "lib=/nope.so", &b, &err), PFI_EBACKEND);
    assert_non_null(strstr(err.msg, "/nope.so"));
    assert_int_equal(pfi_backend_open("nvml", "bogus", &b, &err), PFI_EINVAL);
    assert_int_equal(pfi_backend_open("nvml", "gpm_min_ms=-1", &b, &err), PFI_EINVAL);
}

static void test_required_symbol_missing(void **state)
{
    (void)state;
    pfi_backend *b = NULL;
    pfi_error err = {0};
    setenv("PFI_NVML_LIB", lib("-broken"), 1);
    assert_int_equal(pfi_backend_open("nvml", NULL, &b, &err), PFI_EBACKEND);
    assert_null(b);
    assert_non_null(strstr(err.msg, "nvmlInit_v2"));
}

static void test_init_fails(void **state)
{
    (void)state;
    pfi_backend *b = NULL;
    pfi_error err = {0};
    setenv("FAKE_NVML_FAIL", "nvmlInit_v2=9", 1); /* DRIVER_NOT_LOADED */
    setenv("PFI_NVML_LIB", lib(""), 1);
    assert_int_equal(pfi_backend_open("nvml", NULL, &b, &err), PFI_EBACKEND);
    assert_non_null(strstr(err.msg, "nvmlInit_v2"));
    assert_non_null(strstr(err.msg, "error 9"));
}

/* Idle H200s: every field, unit conversions checked against hand values. */
static void test_idle_fields(void **state)
{
    (void)state;
    setenv("FAKE_NVML_GPUS", "2", 1);
    pfi_backend *b = open_ok("");
    unsigned n = 0;
    assert_int_equal(pfi_backend_count(b, &n), PFI_OK);
    assert_int_equal(n, 2);
    pfi_gpu_info info;
    assert_int_equal(pfi_backend_info(b, 1, &info), PFI_OK);
    assert_string_equal(info.name, "NVIDIA H200");
    assert_string_equal(info.uuid, "GPU-fa6e0000-0000-4000-8000-000000000001");

    pfi_gpu_sample s;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    const pfi_gpu_spec *h = pfi_gpumodel_h200();
    assert_near((s.v[PFI_GF_POWER] * 1e3), round(h->idle_w * 1000), 0.5); /* mW, as NVML reports */
    assert_true(HAS(s, PFI_GF_ENERGY));
    assert_true((s.v[PFI_GF_ENERGY] * 1e3) >= 2384644.0); /* mJ, the fake's counter starts there */
    assert_near((s.v[PFI_GF_LIMIT] * 1e3), 700000, 0);
    assert_near((s.v[PFI_GF_SM_CLOCK] * 1e-6), 345, 0); /* the idle clock */
    assert_near((s.v[PFI_GF_MEM_CLOCK] * 1e-6), 3201, 0);
    assert_near((s.v[PFI_GF_UTIL_GPU] * 100), 0, 0);
    assert_near((s.v[PFI_GF_UTIL_MEM] * 100), 0, 0);
    assert_near(s.v[PFI_GF_TEMP], round(32.1 + 0.0371 * h->idle_w), 0);
    assert_near((s.v[PFI_GF_FB_USED] * (1 / 1048576.0)), 615, 1e-9); /* bytes / 2^20 */
    assert_true(((uint32_t)s.v[PFI_GF_CLOCK_EVENTS]) == PFI_CLK_IDLE);
    for (int f = PFI_GF_POWER; f <= PFI_GF_CLOCK_EVENTS; f++)
        assert_true(HAS(s, f));
    /* GPM needs two samples: the first has none. */
    for (int f = PFI_GF_SM_ACTIVE; f < PFI_GF_COUNT; f++)
        assert_false(HAS(s, f));
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    for (int f = PFI_GF_SM_ACTIVE; f < PFI_GF_COUNT; f++)
        assert_true(HAS(s, f));
    assert_near(s.v[PFI_GF_SM_ACTIVE], 0, 0);
    assert_near(s.v[PFI_GF_PCIE_TX], 0.25 * 1048576, 1e-6); /* 0.25 MiB/s in B/s */
    assert_near(s.v[PFI_GF_PCIE_RX], 0.125 * 1048576, 1e-6);
    assert_near(s.v[PFI_GF_NVLINK_TX], 0, 0);
    assert_string_equal(pfi_backend_last_error(b), "");

    pfi_gpu_limits l;
    assert_int_equal(pfi_backend_limits(b, 1, &l), PFI_OK);
    assert_near((l.min_w * 1000), 200000, 0);
    assert_near((l.max_w * 1000), 700000, 0);
    assert_near((l.default_w * 1000), 700000, 0);
    assert_near((l.enforced_w * 1000), 700000, 0);
    assert_near((l.current_w * 1000), 700000, 0);

    assert_int_equal(pfi_backend_sample(b, 2, &s), PFI_ENOTFOUND);
    assert_int_equal(pfi_backend_throughput(b, 0, &(double){0}), PFI_ENOTSUP);
    pfi_backend_close(b);
}

/* A loaded GPU under a cap: the fake follows the model, the backend passes
 * every value through in pfi's units. */
static void test_job_and_cap(void **state)
{
    (void)state;
    setenv("FAKE_NVML_JOB", JOB, 1);
    setenv("FAKE_NVML_FB_MIB", "70000", 1);
    pfi_backend *b = open_ok("");
    const pfi_gpu_spec *h = pfi_gpumodel_h200();
    pfi_gpumodel_point p700, p400;
    assert_int_equal(pfi_gpumodel_eval(h, &job, 700, &p700), PFI_OK);
    assert_int_equal(pfi_gpumodel_eval(h, &job, 400, &p400), PFI_OK);

    pfi_gpu_sample s;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near((s.v[PFI_GF_POWER] * 1e3), round(p700.power_w * 1000), 0.5);
    assert_near((s.v[PFI_GF_SM_CLOCK] * 1e-6), round(p700.sm_clock_mhz), 0);
    assert_near((s.v[PFI_GF_FB_USED] * (1 / 1048576.0)), 70000, 1e-9);
    assert_near((s.v[PFI_GF_UTIL_GPU] * 100), round(p700.gpu_util_pct), 0);

    assert_int_equal(pfi_backend_set_limit(b, 0, 400), PFI_OK);
    pfi_gpu_limits l;
    assert_int_equal(pfi_backend_limits(b, 0, &l), PFI_OK);
    assert_near((l.enforced_w * 1000), 400000, 0);
    assert_near((l.current_w * 1000), 400000, 0);
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near((s.v[PFI_GF_LIMIT] * 1e3), 400000, 0);
    assert_near((s.v[PFI_GF_POWER] * 1e3), round(p400.power_w * 1000), 0.5);
    assert_true((s.v[PFI_GF_POWER] * 1e3) <= 400000);
    assert_near((s.v[PFI_GF_SM_CLOCK] * 1e-6), round(p400.sm_clock_mhz), 0);
    assert_true((s.v[PFI_GF_SM_CLOCK] * 1e-6) <
                p700.sm_clock_mhz - 100);                 /* the cap lowers the clock */
    assert_near((s.v[PFI_GF_MEM_CLOCK] * 1e-6), 3201, 0); /* and leaves memory alone */
    assert_true(((uint32_t)s.v[PFI_GF_CLOCK_EVENTS]) & PFI_CLK_POWER_CAP);
    /* GPM (second sample): percent -> ratio */
    assert_near(s.v[PFI_GF_SM_ACTIVE], p400.sm_active, 1e-12);
    assert_near(s.v[PFI_GF_SM_OCCUPANCY], 0.34 * p400.sm_active, 1e-12);
    assert_near(s.v[PFI_GF_TENSOR_ACTIVE], p400.tensor_active, 1e-12);
    assert_near(s.v[PFI_GF_DRAM_ACTIVE], p400.dram_active, 1e-12);
    assert_near(s.v[PFI_GF_NVLINK_RX], 200.0 * 1048576, 1e-6);

    /* energy grows */
    double e0 = (s.v[PFI_GF_ENERGY] * 1e3);
    usleep(20000);
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_true((s.v[PFI_GF_ENERGY] * 1e3) > e0);
    pfi_backend_close(b);
}

/* Outside the constraints is refused, never clamped: the limit stays. */
static void test_limit_validation(void **state)
{
    (void)state;
    pfi_backend *b = open_ok("");
    const double bad[] = {199.999, 700.001, 0, -5, NAN, INFINITY, 1e9}; /* W */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(pfi_backend_set_limit(b, 0, bad[i]), PFI_ERANGE);
        assert_non_null(strstr(pfi_backend_last_error(b), "outside"));
        pfi_gpu_limits l;
        assert_int_equal(pfi_backend_limits(b, 0, &l), PFI_OK);
        assert_near((l.enforced_w * 1000), 700000, 0);
    }
    /* the bounds themselves are allowed */
    assert_int_equal(pfi_backend_set_limit(b, 0, 200), PFI_OK);
    assert_int_equal(pfi_backend_set_limit(b, 0, 700), PFI_OK);
    assert_int_equal(pfi_backend_set_limit(b, 3, 500), PFI_ENOTFOUND);
    pfi_backend_close(b);
}

/* A driver that says yes and does nothing is caught by the read-back. */
static void test_readback(void **state)
{
    (void)state;
    setenv("FAKE_NVML_SET_IGNORE", "1", 1);
    pfi_backend *b = open_ok("");
    assert_int_equal(pfi_backend_set_limit(b, 0, 450), PFI_EBACKEND);
    assert_non_null(
        strstr(pfi_backend_last_error(b), "nvmlDeviceGetPowerManagementLimit reads 700000"));
    pfi_backend_close(b);
}

/* An out-of-band limiter below the limit set: the set holds (the management
 * limit reads what was set), the enforced limit shows the lower one. */
static void test_external_limit(void **state)
{
    (void)state;
    char ctl[] = "/tmp/pfi-nvml-ctl-XXXXXX";
    int fd = mkstemp(ctl);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "external 0 350000\n", 18), 18);
    close(fd);
    setenv("FAKE_NVML_CTL", ctl, 1);
    pfi_backend *b = open_ok("");
    assert_int_equal(pfi_backend_set_limit(b, 0, 450), PFI_OK);
    pfi_gpu_limits l;
    assert_int_equal(pfi_backend_limits(b, 0, &l), PFI_OK);
    assert_near(l.current_w, 450, 0);
    assert_near(l.enforced_w, 350, 0);
    pfi_backend_close(b);
    unlink(ctl);
}

/* Persistence mode as the driver reports it; a driver without the call is
 * "cannot tell", not "off". */
static void test_persistence(void **state)
{
    (void)state;
    pfi_backend *b = open_ok("");
    int on = -1;
    assert_int_equal(pfi_backend_persistence(b, 0, &on), PFI_OK);
    assert_int_equal(on, 1);
    pfi_backend_close(b);
    setenv("FAKE_NVML_PERSISTENCE", "0", 1);
    b = open_ok("");
    assert_int_equal(pfi_backend_persistence(b, 0, &on), PFI_OK);
    assert_int_equal(on, 0);
    assert_int_equal(pfi_backend_persistence(b, 5, &on), PFI_ENOTFOUND);
    pfi_backend_close(b);
    setenv("FAKE_NVML_FAIL", "nvmlDeviceGetPersistenceMode=3", 1);
    b = open_ok("");
    assert_int_equal(pfi_backend_persistence(b, 0, &on), PFI_ENOTSUP);
    pfi_backend_close(b);
}

static void test_set_failures(void **state)
{
    (void)state;
    setenv("FAKE_NVML_FAIL", "nvmlDeviceSetPowerManagementLimit=4", 1); /* NO_PERMISSION */
    pfi_backend *b = open_ok("");
    assert_int_equal(pfi_backend_set_limit(b, 0, 450), PFI_EBACKEND);
    assert_non_null(strstr(pfi_backend_last_error(b), "needs root"));
    pfi_backend_close(b);

    setenv("FAKE_NVML_FAIL", "", 1);
    setenv("FAKE_NVML_NOTSUP", "nvmlDeviceSetPowerManagementLimit", 1);
    b = open_ok("");
    assert_int_equal(pfi_backend_set_limit(b, 0, 450), PFI_ENOTSUP);
    pfi_backend_close(b);

    /* constraints unreadable: no limit can be validated, so none is set */
    setenv("FAKE_NVML_NOTSUP", "", 1);
    setenv("FAKE_NVML_FAIL", "nvmlDeviceGetPowerManagementLimitConstraints", 1);
    b = open_ok("");
    assert_int_equal(pfi_backend_set_limit(b, 0, 450), PFI_EBACKEND);
    pfi_gpu_limits l;
    assert_int_equal(pfi_backend_limits(b, 0, &l), PFI_EBACKEND);
    pfi_backend_close(b);
}

/* Each sampled call, failed alone, clears exactly its field(s); the error
 * is recorded; NOT_SUPPORTED clears the same bits without an error. */
static void test_each_field_fails_alone(void **state)
{
    (void)state;
    static const struct {
        const char *func;
        uint32_t bits;
    } t[] = {
        {"nvmlDeviceGetPowerUsage", 1u << PFI_GF_POWER},
        {"nvmlDeviceGetTotalEnergyConsumption", 1u << PFI_GF_ENERGY},
        {"nvmlDeviceGetEnforcedPowerLimit", 1u << PFI_GF_LIMIT},
        {"nvmlDeviceGetClockInfo", (1u << PFI_GF_SM_CLOCK) | (1u << PFI_GF_MEM_CLOCK)},
        {"nvmlDeviceGetClockInfo.mem", 1u << PFI_GF_MEM_CLOCK},
        {"nvmlDeviceGetUtilizationRates", (1u << PFI_GF_UTIL_GPU) | (1u << PFI_GF_UTIL_MEM)},
        {"nvmlDeviceGetTemperature", 1u << PFI_GF_TEMP},
        {"nvmlDeviceGetMemoryInfo", 1u << PFI_GF_FB_USED},
        {"nvmlDeviceGetCurrentClocksEventReasons", 1u << PFI_GF_CLOCK_EVENTS},
        {"nvmlGpmSampleGet", 0xFFu << PFI_GF_SM_ACTIVE},
        {"nvmlGpmMetricsGet", 0xFFu << PFI_GF_SM_ACTIVE},
        {"gpm:2", 1u << PFI_GF_SM_ACTIVE},
        {"gpm:3", 1u << PFI_GF_SM_OCCUPANCY},
        {"gpm:5", 1u << PFI_GF_TENSOR_ACTIVE},
        {"gpm:10", 1u << PFI_GF_DRAM_ACTIVE},
        {"gpm:20", 1u << PFI_GF_PCIE_TX},
        {"gpm:21", 1u << PFI_GF_PCIE_RX},
        {"gpm:61", 1u << PFI_GF_NVLINK_TX},
        {"gpm:60", 1u << PFI_GF_NVLINK_RX},
    };
    const uint32_t all = (1u << PFI_GF_COUNT) - 1;
    for (int mode = 0; mode < 2; mode++) {
        for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
            clear_env();
            setenv("FAKE_NVML_GPUS", "2", 1);
            char rule[96];
            snprintf(rule, sizeof rule, "%s:1", t[i].func); /* GPU 1 only */
            setenv(mode == 0 ? "FAKE_NVML_FAIL" : "FAKE_NVML_NOTSUP", rule, 1);
            pfi_backend *b = open_ok("");
            pfi_gpu_sample s0, s1;
            for (int k = 0; k < 2; k++) {
                assert_int_equal(pfi_backend_sample(b, 0, &s0), PFI_OK);
                assert_int_equal(pfi_backend_sample(b, 1, &s1), PFI_OK);
            }
            if (s0.valid != all) fail_msg("%s: GPU 0 valid %x", t[i].func, s0.valid);
            if (s1.valid != (all & ~t[i].bits))
                fail_msg("%s (mode %d): GPU 1 valid %x, expected %x", t[i].func, mode, s1.valid,
                         all & ~t[i].bits);
            const char *e = pfi_backend_last_error(b);
            if (mode == 0) {
                /* the error names the call ("gpm:5" is metric 5 of MetricsGet) */
                const char *want = strncmp(t[i].func, "gpm:", 4) == 0 ? "metric"
                                   : strchr(t[i].func, '.')           ? "MEM"
                                                                      : t[i].func;
                if (!strstr(e, want)) fail_msg("%s: last error '%s'", t[i].func, e);
                assert_non_null(strstr(e, "GPU 1"));
            } else if (e[0]) {
                fail_msg("%s: NOT_SUPPORTED recorded an error: %s", t[i].func, e);
            }
            pfi_backend_close(b);
        }
    }
}

/* A GPU from which nothing can be read fails its sample; the other GPU and
 * a GPU whose handle could not be had at start do not stop the backend. */
static void test_device_failures(void **state)
{
    (void)state;
    setenv("FAKE_NVML_GPUS", "3", 1);
    setenv("FAKE_NVML_FAIL",
           "nvmlDeviceGetHandleByIndex_v2:2,"
           "nvmlDeviceGetPowerUsage:1=15,nvmlDeviceGetTotalEnergyConsumption:1=15,"
           "nvmlDeviceGetEnforcedPowerLimit:1=15,nvmlDeviceGetClockInfo:1=15,"
           "nvmlDeviceGetUtilizationRates:1=15,nvmlDeviceGetTemperature:1=15,"
           "nvmlDeviceGetMemoryInfo:1=15,nvmlDeviceGetCurrentClocksEventReasons:1=15,"
           "nvmlGpmSampleGet:1=15",
           1);
    pfi_backend *b = open_ok("");
    unsigned n;
    assert_int_equal(pfi_backend_count(b, &n), PFI_OK);
    assert_int_equal(n, 3);
    pfi_gpu_sample s;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_int_equal(pfi_backend_sample(b, 1, &s), PFI_EBACKEND);
    assert_int_equal(s.valid, 0);
    assert_non_null(strstr(pfi_backend_last_error(b), "GPU is lost"));
    assert_int_equal(pfi_backend_sample(b, 2, &s), PFI_EBACKEND);
    assert_non_null(strstr(pfi_backend_last_error(b), "no NVML handle"));
    assert_int_equal(pfi_backend_set_limit(b, 2, 500), PFI_EBACKEND);
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    pfi_backend_close(b);
}

static void test_gpm_unsupported(void **state)
{
    (void)state;
    const char *variants[] = {"", "-nogpm"};
    for (int v = 0; v < 2; v++) {
        clear_env();
        if (v == 0) setenv("FAKE_NVML_GPM", "0", 1);
        pfi_backend *b = open_ok(variants[v]);
        pfi_gpu_sample s;
        for (int k = 0; k < 3; k++)
            assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
        assert_int_equal(s.valid, (1u << PFI_GF_SM_ACTIVE) - 1);
        assert_string_equal(pfi_backend_last_error(b), "");
        pfi_backend_close(b);
    }
}

/* A driver without the newer calls: fall back to throttle reasons and
 * TemperatureV, and leave energy out. */
static void test_sparse_driver(void **state)
{
    (void)state;
    setenv("FAKE_NVML_JOB", JOB, 1);
    pfi_backend *b = open_ok("-sparse");
    pfi_gpu_sample s;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_false(HAS(s, PFI_GF_ENERGY));
    assert_true(HAS(s, PFI_GF_CLOCK_EVENTS));
    assert_true(HAS(s, PFI_GF_TEMP));
    assert_near(s.v[PFI_GF_TEMP], round(32.1 + 0.0371 * (s.v[PFI_GF_POWER] * 1e3) / 1000), 1);
    assert_false(HAS(s, PFI_GF_SM_ACTIVE));
    assert_true(HAS(s, PFI_GF_POWER));
    pfi_backend_close(b);
}

/* GPM samples closer than gpm_min_ms: no GPM fields, and the older sample
 * stays the base, so the next sample after the interval has them. */
static void test_gpm_min_interval(void **state)
{
    (void)state;
    pfi_backend *b = NULL;
    pfi_error err = {0};
    setenv("PFI_NVML_LIB", lib(""), 1);
    assert_int_equal(pfi_backend_open("nvml", "gpm_min_ms=150", &b, &err), PFI_OK);
    pfi_gpu_sample s;
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK); /* first GPM sample */
    assert_false(HAS(s, PFI_GF_SM_ACTIVE));
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK); /* too soon */
    assert_false(HAS(s, PFI_GF_SM_ACTIVE));
    assert_true(HAS(s, PFI_GF_POWER));
    usleep(200000);
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_true(HAS(s, PFI_GF_SM_ACTIVE));
    pfi_backend_close(b);
}

/* A limit left by one process is what the next one sees. */
static void test_state_persists(void **state)
{
    (void)state;
    char path[] = "/tmp/pfi-fake-nvml-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    setenv("FAKE_NVML_STATE", path, 1);
    setenv("FAKE_NVML_GPUS", "2", 1);
    pfi_backend *b = open_ok("");
    assert_int_equal(pfi_backend_set_limit(b, 1, 450), PFI_OK);
    pfi_backend_close(b);
    b = open_ok("");
    pfi_gpu_limits l;
    assert_int_equal(pfi_backend_limits(b, 1, &l), PFI_OK);
    assert_near((l.enforced_w * 1000), 450000, 0);
    assert_int_equal(pfi_backend_limits(b, 0, &l), PFI_OK);
    assert_near((l.enforced_w * 1000), 700000, 0);
    pfi_backend_close(b);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_missing_library, setup, teardown),
        cmocka_unit_test_setup_teardown(test_required_symbol_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_init_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_and_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit_validation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_external_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_persistence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_field_fails_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_unsupported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sparse_driver, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_min_interval, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_persists, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
