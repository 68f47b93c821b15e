/* The nvml backend: libnvidia-ml.so.1 loaded at run time with dlopen, so the
 * same binary runs with and without a GPU (nvtop's approach; the types are
 * ours, in nvml_types.h).
 *
 * Options: comma-separated, all optional: "lib=PATH" (the library to load
 * instead of libnvidia-ml.so.1; the environment variable PFI_NVML_LIB does
 * the same, for tests against tests/fake-nvml), "gpm_min_ms=N" (default 100).
 *
 * Error policy (collectd's): every NVML return code is checked.
 * NVML_ERROR_NOT_SUPPORTED is not an error: the field's bit stays clear. Any
 * other failure clears the bit, is recorded as the last error and printed
 * once on stderr until that field reads again, and sampling goes on with the
 * next field and the next GPU. A symbol the library lacks (an older driver)
 * is treated as NOT_SUPPORTED for its field; only the five calls without
 * which nothing works are required at init.
 *
 * Units: NVML reports mW, mJ, MHz, percent and MiB/s; the sample and the
 * limits leave here in SI (gpu_sample.h), and mW exists nowhere else in pfi.
 *
 * GPM metrics need two samples: each sample() takes a new GPM sample and
 * computes metrics against the previous one, so the first sample() of a GPU
 * has no GPM fields. NVML wants more than 100 ms between two GPM samples
 * ("the internal sample refresh rate"): a sample() sooner than gpm_min_ms
 * after the last GPM sample leaves the GPM bits clear and keeps the older
 * GPM sample as the base for the next one.
 */
#include <dlfcn.h>
#include <math.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_impl.h"
#include "pfi/gpu_field.h"
#include "nvml_types.h"

typedef struct {
    nvmlDevice_t dev;
    int have_handle;
    int gpm;                  /* GPM supported and samples allocated */
    nvmlGpmSample_t gpm_s[2]; /* [prev_idx] is the previous sample */
    int gpm_prev;             /* index of the previous sample, -1 none yet */
    double gpm_prev_t;        /* monotonic seconds of that sample */
    uint32_t warned;          /* per-field "already warned" bits */
} nvml_gpu;

typedef struct {
    void *lib;
    char lib_path[512];
    double gpm_min_s; /* least time between two GPM samples */
    /* required */
    nvmlInit_v2_fn init;
    nvmlShutdown_fn shutdown;
    nvmlErrorString_fn error_string;
    nvmlDeviceGetCount_v2_fn get_count;
    nvmlDeviceGetHandleByIndex_v2_fn get_handle;
    /* optional: NULL means the driver lacks it */
    nvmlDeviceGetString_fn get_name, get_uuid;
    nvmlDeviceGetUInt_fn get_power, get_enforced_limit, get_limit, get_default_limit;
    nvmlDeviceGetULL_fn get_energy, get_event_reasons, get_throttle_reasons;
    nvmlDeviceGetPowerManagementLimitConstraints_fn get_constraints;
    nvmlDeviceGetClockInfo_fn get_clock;
    nvmlDeviceGetUtilizationRates_fn get_util;
    nvmlDeviceGetTemperature_fn get_temp;
    nvmlDeviceGetTemperatureV_fn get_temp_v;
    nvmlDeviceGetMemoryInfo_fn get_mem;
    nvmlDeviceSetPowerManagementLimit_fn set_limit;
    nvmlDeviceGetPersistenceMode_fn get_persistence;
    nvmlGpmQueryDeviceSupport_fn gpm_query;
    nvmlGpmSampleAlloc_fn gpm_alloc;
    nvmlGpmSampleFree_fn gpm_free;
    nvmlGpmSampleGet_fn gpm_get;
    nvmlGpmMetricsGet_fn gpm_metrics;

    int initialized; /* nvmlInit_v2 succeeded: call nvmlShutdown at close */
    unsigned n;
    nvml_gpu *gpus;
    nvmlGpmMetricsGet_t *mg; /* large (13 KB): one per backend, used under the lock */
} nvml_state;

static const char *nvml_str(const nvml_state *s, nvmlReturn_t r)
{
    const char *m = s->error_string ? s->error_string(r) : NULL;
    return m ? m : "unknown NVML error";
}

static void *sym(void *lib, const char *name)
{
    dlerror();
    return dlsym(lib, name);
}

/* A failed read of field f on GPU i: NOT_SUPPORTED is silent, anything else
 * is recorded and warned about once until the field reads again. */
static void field_failed(pfi_backend *b, unsigned i, int f, const char *call, nvmlReturn_t r)
{
    nvml_state *s = b->priv;
    if (r == NVML_ERROR_NOT_SUPPORTED) return;
    pfi_backend_set_error(b, "GPU %u: %s: %s (NVML error %d)", i, call, nvml_str(s, r), r);
    if (!(s->gpus[i].warned & (1u << f))) {
        s->gpus[i].warned |= 1u << f;
        fprintf(stderr, "warning: nvml: %s\n", b->last_error);
    }
}

static void field_ok(pfi_backend *b, unsigned i, int f, pfi_gpu_sample *out)
{
    nvml_state *s = b->priv;
    s->gpus[i].warned &= ~(1u << f);
    out->valid |= 1u << f;
}

static void nvml_close(pfi_backend *b)
{
    if (!b) return;
    nvml_state *s = b->priv;
    if (s) {
        for (unsigned i = 0; s->gpus && i < s->n; i++) {
            nvml_gpu *g = &s->gpus[i];
            if (g->gpm) {
                for (int k = 0; k < 2; k++) {
                    nvmlReturn_t r = s->gpm_free(g->gpm_s[k]);
                    if (r != NVML_SUCCESS)
                        fprintf(stderr, "warning: nvml: GPU %u: nvmlGpmSampleFree: %s\n", i,
                                nvml_str(s, r));
                }
            }
        }
        if (s->initialized) {
            nvmlReturn_t r = s->shutdown();
            if (r != NVML_SUCCESS)
                fprintf(stderr, "warning: nvml: nvmlShutdown: %s\n", nvml_str(s, r));
        }
        if (s->lib) dlclose(s->lib);
        free(s->gpus);
        free(s->mg);
        free(s);
    }
    pfi_backend_free(b);
}

static int parse_opts(nvml_state *s, const char *opts, pfi_error *err)
{
    const char *env = getenv("PFI_NVML_LIB");
    snprintf(s->lib_path, sizeof s->lib_path, "%s", env && *env ? env : "libnvidia-ml.so.1");
    s->gpm_min_s = 0.1;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", opts ? opts : "");
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *end;
        if (strncmp(tok, "lib=", 4) == 0 && tok[4]) {
            snprintf(s->lib_path, sizeof s->lib_path, "%s", tok + 4);
        } else if (strncmp(tok, "gpm_min_ms=", 11) == 0) {
            long ms = strtol(tok + 11, &end, 10);
            if (end == tok + 11 || *end || ms < 0 || ms > 3600000)
                return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                     "nvml: %s is not a time from 0 to 3600000 ms", tok);
            s->gpm_min_s = ms / 1000.0;
        } else {
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "nvml: unknown option '%s' (expected lib=PATH, gpm_min_ms=N)",
                                 tok);
        }
    }
    return PFI_OK;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Sets up GPM for one GPU when the driver and the device support it. */
static void gpm_setup(pfi_backend *b, unsigned i)
{
    nvml_state *s = b->priv;
    nvml_gpu *g = &s->gpus[i];
    g->gpm_prev = -1;
    if (!s->gpm_query || !s->gpm_alloc || !s->gpm_free || !s->gpm_get || !s->gpm_metrics) return;
    nvmlGpmSupport_t sup = {.version = NVML_GPM_SUPPORT_VERSION};
    nvmlReturn_t r = s->gpm_query(g->dev, &sup);
    if (r != NVML_SUCCESS) {
        field_failed(b, i, PFI_GF_SM_ACTIVE, "nvmlGpmQueryDeviceSupport", r);
        return;
    }
    if (!sup.isSupportedDevice) return;
    r = s->gpm_alloc(&g->gpm_s[0]);
    if (r != NVML_SUCCESS) {
        field_failed(b, i, PFI_GF_SM_ACTIVE, "nvmlGpmSampleAlloc", r);
        return;
    }
    r = s->gpm_alloc(&g->gpm_s[1]);
    if (r != NVML_SUCCESS) {
        field_failed(b, i, PFI_GF_SM_ACTIVE, "nvmlGpmSampleAlloc", r);
        s->gpm_free(g->gpm_s[0]);
        return;
    }
    g->gpm = 1;
}

static int nvml_init(pfi_backend **out, const char *opts, pfi_error *err)
{
    *out = NULL;
    nvml_state *s = calloc(1, sizeof *s);
    pfi_backend *b = s ? pfi_backend_alloc(&pfi_backend_nvml_ops, s) : NULL;
    if (!b) {
        free(s);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "nvml: out of memory");
    }
    int rc = parse_opts(s, opts, err);
    if (rc != PFI_OK) goto fail;

    s->lib = dlopen(s->lib_path, RTLD_NOW | RTLD_LOCAL);
    if (!s->lib) {
        const char *why = dlerror();
        rc = pfi_error_set(err, PFI_EBACKEND, NULL, 0,
                           "nvml: cannot load %s (%s): is the NVIDIA driver installed?",
                           s->lib_path, why ? why : "unknown dlopen error");
        goto fail;
    }
#define REQUIRE(field, name)                                                                       \
    do {                                                                                           \
        *(void **)(&s->field) = sym(s->lib, name);                                                 \
        if (!s->field) {                                                                           \
            rc = pfi_error_set(err, PFI_EBACKEND, NULL, 0,                                         \
                               "nvml: %s lacks %s: the driver is too old for pfi", s->lib_path,    \
                               name);                                                              \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)
#define OPTIONAL(field, name) (*(void **)(&s->field) = sym(s->lib, name))
    REQUIRE(init, "nvmlInit_v2");
    REQUIRE(shutdown, "nvmlShutdown");
    REQUIRE(error_string, "nvmlErrorString");
    REQUIRE(get_count, "nvmlDeviceGetCount_v2");
    REQUIRE(get_handle, "nvmlDeviceGetHandleByIndex_v2");
    OPTIONAL(get_name, "nvmlDeviceGetName");
    OPTIONAL(get_uuid, "nvmlDeviceGetUUID");
    OPTIONAL(get_power, "nvmlDeviceGetPowerUsage");
    OPTIONAL(get_energy, "nvmlDeviceGetTotalEnergyConsumption");
    OPTIONAL(get_enforced_limit, "nvmlDeviceGetEnforcedPowerLimit");
    OPTIONAL(get_limit, "nvmlDeviceGetPowerManagementLimit");
    OPTIONAL(get_default_limit, "nvmlDeviceGetPowerManagementDefaultLimit");
    OPTIONAL(get_constraints, "nvmlDeviceGetPowerManagementLimitConstraints");
    OPTIONAL(get_clock, "nvmlDeviceGetClockInfo");
    OPTIONAL(get_util, "nvmlDeviceGetUtilizationRates");
    OPTIONAL(get_temp, "nvmlDeviceGetTemperature");
    OPTIONAL(get_temp_v, "nvmlDeviceGetTemperatureV");
    OPTIONAL(get_mem, "nvmlDeviceGetMemoryInfo");
    OPTIONAL(get_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
    OPTIONAL(get_throttle_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    OPTIONAL(set_limit, "nvmlDeviceSetPowerManagementLimit");
    OPTIONAL(get_persistence, "nvmlDeviceGetPersistenceMode");
    OPTIONAL(gpm_query, "nvmlGpmQueryDeviceSupport");
    OPTIONAL(gpm_alloc, "nvmlGpmSampleAlloc");
    OPTIONAL(gpm_free, "nvmlGpmSampleFree");
    OPTIONAL(gpm_get, "nvmlGpmSampleGet");
    OPTIONAL(gpm_metrics, "nvmlGpmMetricsGet");
#undef REQUIRE
#undef OPTIONAL

    nvmlReturn_t r = s->init();
    if (r != NVML_SUCCESS) {
        rc = pfi_error_set(err, PFI_EBACKEND, NULL, 0, "nvml: nvmlInit_v2: %s (NVML error %d)",
                           nvml_str(s, r), r);
        goto fail;
    }
    s->initialized = 1;
    r = s->get_count(&s->n);
    if (r != NVML_SUCCESS) {
        rc = pfi_error_set(err, PFI_EBACKEND, NULL, 0,
                           "nvml: nvmlDeviceGetCount_v2: %s (NVML error %d)", nvml_str(s, r), r);
        goto fail;
    }
    s->gpus = calloc(s->n ? s->n : 1, sizeof *s->gpus);
    s->mg = malloc(sizeof *s->mg);
    if (!s->gpus || !s->mg) {
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "nvml: out of memory");
        goto fail;
    }
    /* A GPU whose handle cannot be had is warned about and skipped; the
     * others are still served (its sample() then fails). */
    for (unsigned i = 0; i < s->n; i++) {
        s->gpus[i].gpm_prev = -1;
        r = s->get_handle(i, &s->gpus[i].dev);
        if (r != NVML_SUCCESS) {
            pfi_backend_set_error(b, "GPU %u: nvmlDeviceGetHandleByIndex_v2: %s", i,
                                  nvml_str(s, r));
            fprintf(stderr, "warning: nvml: %s\n", b->last_error);
            continue;
        }
        s->gpus[i].have_handle = 1;
        gpm_setup(b, i);
    }
    *out = b;
    return PFI_OK;
fail:
    nvml_close(b);
    return rc;
}

static const char *nvml_last_error(const pfi_backend *b)
{
    return b->last_error;
}

static int nvml_count(pfi_backend *b, unsigned *n)
{
    *n = ((nvml_state *)b->priv)->n;
    return PFI_OK;
}

/* The GPU's state, or NULL with the last error set. */
static nvml_gpu *gpu_of(pfi_backend *b, unsigned gpu, int *rc)
{
    nvml_state *s = b->priv;
    if (gpu >= s->n) {
        pfi_backend_set_error(b, "no GPU %u (the node has %u)", gpu, s->n);
        *rc = PFI_ENOTFOUND;
        return NULL;
    }
    if (!s->gpus[gpu].have_handle) {
        pfi_backend_set_error(b, "GPU %u: no NVML handle (see the warning at start)", gpu);
        *rc = PFI_EBACKEND;
        return NULL;
    }
    return &s->gpus[gpu];
}

static int nvml_info(pfi_backend *b, unsigned gpu, pfi_gpu_info *out)
{
    nvml_state *s = b->priv;
    int rc = PFI_OK;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&b->lock);
    nvml_gpu *g = gpu_of(b, gpu, &rc);
    if (g) {
        char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        nvmlReturn_t r;
        if (s->get_name) {
            r = s->get_name(g->dev, buf, sizeof buf);
            if (r == NVML_SUCCESS) {
                buf[sizeof buf - 1] = '\0';
                snprintf(out->name, sizeof out->name, "%s", buf);
            } else {
                field_failed(b, gpu, PFI_GF_COUNT, "nvmlDeviceGetName", r);
            }
        }
        if (s->get_uuid) {
            r = s->get_uuid(g->dev, buf, sizeof buf);
            if (r == NVML_SUCCESS) {
                buf[sizeof buf - 1] = '\0';
                snprintf(out->uuid, sizeof out->uuid, "%s", buf);
            } else {
                field_failed(b, gpu, PFI_GF_COUNT, "nvmlDeviceGetUUID", r);
            }
        }
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

/* Reads the GPM fields: takes a new sample and, when a previous one exists,
 * computes the metrics between the two. */
static void sample_gpm(pfi_backend *b, unsigned i, pfi_gpu_sample *out, int *errors)
{
    nvml_state *s = b->priv;
    nvml_gpu *g = &s->gpus[i];
    if (!g->gpm) return;
    double now = mono_s();
    if (g->gpm_prev >= 0 && now - g->gpm_prev_t < s->gpm_min_s) return; /* too soon */
    int cur = g->gpm_prev < 0 ? 0 : 1 - g->gpm_prev;
    nvmlReturn_t r = s->gpm_get(g->dev, g->gpm_s[cur]);
    if (r != NVML_SUCCESS) {
        field_failed(b, i, PFI_GF_SM_ACTIVE, "nvmlGpmSampleGet", r);
        if (r != NVML_ERROR_NOT_SUPPORTED) (*errors)++;
        return;
    }
    int prev = g->gpm_prev;
    g->gpm_prev = cur;
    g->gpm_prev_t = now;
    if (prev < 0) return; /* the first sample: nothing to difference yet */

    static const struct {
        unsigned id;
        pfi_gpu_field field;
        double scale; /* NVML unit -> SI */
    } m[] = {
        {NVML_GPM_METRIC_SM_UTIL, PFI_GF_SM_ACTIVE, 0.01},         /* % -> ratio */
        {NVML_GPM_METRIC_SM_OCCUPANCY, PFI_GF_SM_OCCUPANCY, 0.01}, /* % -> ratio */
        {NVML_GPM_METRIC_ANY_TENSOR_UTIL, PFI_GF_TENSOR_ACTIVE, 0.01},
        {NVML_GPM_METRIC_DRAM_BW_UTIL, PFI_GF_DRAM_ACTIVE, 0.01},
        {NVML_GPM_METRIC_PCIE_TX_PER_SEC, PFI_GF_PCIE_TX, 1048576.0}, /* MiB/s -> B/s */
        {NVML_GPM_METRIC_PCIE_RX_PER_SEC, PFI_GF_PCIE_RX, 1048576.0},
        {NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, PFI_GF_NVLINK_TX, 1048576.0},
        {NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, PFI_GF_NVLINK_RX, 1048576.0},
    };
    const unsigned nm = sizeof m / sizeof m[0];
    nvmlGpmMetricsGet_t *mg = s->mg;
    memset(mg, 0, sizeof *mg);
    mg->version = NVML_GPM_METRICS_GET_VERSION;
    mg->numMetrics = nm;
    mg->sample1 = g->gpm_s[prev];
    mg->sample2 = g->gpm_s[cur];
    for (unsigned k = 0; k < nm; k++)
        mg->metrics[k].metricId = m[k].id;
    r = s->gpm_metrics(mg);
    if (r != NVML_SUCCESS) {
        field_failed(b, i, PFI_GF_SM_ACTIVE, "nvmlGpmMetricsGet", r);
        if (r != NVML_ERROR_NOT_SUPPORTED) (*errors)++;
        return;
    }
    for (unsigned k = 0; k < nm; k++) {
        const nvmlGpmMetric_t *x = &mg->metrics[k];
        if (x->nvmlReturn != NVML_SUCCESS || !isfinite(x->value) || x->value < 0) {
            char call[96];
            snprintf(call, sizeof call, "nvmlGpmMetricsGet metric %u (%s)", m[k].id,
                     pfi_gpu_fields[m[k].field].nvml_source);
            field_failed(b, i, m[k].field, call,
                         x->nvmlReturn != NVML_SUCCESS ? x->nvmlReturn : NVML_ERROR_UNKNOWN);
            if (x->nvmlReturn != NVML_ERROR_NOT_SUPPORTED) (*errors)++;
            continue;
        }
        pfi_gpu_sample_set(out, m[k].field, x->value * m[k].scale);
        field_ok(b, i, m[k].field, out);
    }
}

/* One read: the call's status decides the field's bit; value is the SI
 * value set when it succeeded. */
#define READ_CALL(field, call, expr, value)                                                        \
    do {                                                                                           \
        nvmlReturn_t r_ = (expr);                                                                  \
        if (r_ == NVML_SUCCESS) {                                                                  \
            pfi_gpu_sample_set(out, field, (value));                                               \
            field_ok(b, gpu, field, out);                                                          \
        } else {                                                                                   \
            field_failed(b, gpu, field, call, r_);                                                 \
            if (r_ != NVML_ERROR_NOT_SUPPORTED) errors++;                                          \
        }                                                                                          \
    } while (0)
/* The same, the call named by the field table's NVML source. */
#define READ(field, expr, value) READ_CALL(field, pfi_gpu_fields[field].nvml_source, expr, value)

#define MW_TO_W 1e-3 /* also mJ -> J */
#define MHZ_TO_HZ 1e6
#define PCT_TO_RATIO 0.01

static int nvml_sample(pfi_backend *b, unsigned gpu, pfi_gpu_sample *out)
{
    nvml_state *s = b->priv;
    int rc = PFI_OK, errors = 0;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&b->lock);
    nvml_gpu *g = gpu_of(b, gpu, &rc);
    if (!g) goto done;
    nvmlDevice_t d = g->dev;
    unsigned u;
    unsigned long long ull;

    if (s->get_power) READ(PFI_GF_POWER, s->get_power(d, &u), u * MW_TO_W);
    if (s->get_energy) READ(PFI_GF_ENERGY, s->get_energy(d, &ull), (double)ull * MW_TO_W);
    if (s->get_enforced_limit) READ(PFI_GF_LIMIT, s->get_enforced_limit(d, &u), u * MW_TO_W);
    if (s->get_clock) {
        READ(PFI_GF_SM_CLOCK, s->get_clock(d, NVML_CLOCK_SM, &u), u * MHZ_TO_HZ);
        READ(PFI_GF_MEM_CLOCK, s->get_clock(d, NVML_CLOCK_MEM, &u), u * MHZ_TO_HZ);
    }
    if (s->get_util) {
        nvmlUtilization_t ut;
        nvmlReturn_t r = s->get_util(d, &ut);
        if (r == NVML_SUCCESS) {
            pfi_gpu_sample_set(out, PFI_GF_UTIL_GPU, ut.gpu * PCT_TO_RATIO);
            pfi_gpu_sample_set(out, PFI_GF_UTIL_MEM, ut.memory * PCT_TO_RATIO);
            field_ok(b, gpu, PFI_GF_UTIL_GPU, out);
            field_ok(b, gpu, PFI_GF_UTIL_MEM, out);
        } else {
            field_failed(b, gpu, PFI_GF_UTIL_GPU, "nvmlDeviceGetUtilizationRates", r);
            if (r != NVML_ERROR_NOT_SUPPORTED) errors++;
        }
    }
    if (s->get_temp) {
        READ_CALL(PFI_GF_TEMP, "nvmlDeviceGetTemperature", s->get_temp(d, NVML_TEMPERATURE_GPU, &u),
                  u);
    } else if (s->get_temp_v) {
        nvmlTemperature_v1_t t = {.version = NVML_TEMPERATURE_V1_VERSION,
                                  .sensorType = NVML_TEMPERATURE_GPU};
        READ_CALL(PFI_GF_TEMP, "nvmlDeviceGetTemperatureV", s->get_temp_v(d, &t), t.temperature);
    }
    if (s->get_mem) {
        nvmlMemory_t m;
        READ(PFI_GF_FB_USED, s->get_mem(d, &m), (double)m.used); /* bytes */
    }
    if (s->get_event_reasons)
        READ(PFI_GF_CLOCK_EVENTS, s->get_event_reasons(d, &ull), pfi_clock_events_from_nvml(ull));
    else if (s->get_throttle_reasons)
        READ_CALL(PFI_GF_CLOCK_EVENTS, "nvmlDeviceGetCurrentClocksThrottleReasons",
                  s->get_throttle_reasons(d, &ull), pfi_clock_events_from_nvml(ull));
    sample_gpm(b, gpu, out, &errors);

    /* A GPU from which nothing could be read is a failed sample; a partial
     * one is a sample with some bits clear. */
    if (out->valid == 0 && errors > 0) rc = PFI_EBACKEND;
done:
    pthread_mutex_unlock(&b->lock);
    return rc;
}
#undef READ
#undef READ_CALL

/* NVML's limits, mW. */
typedef struct {
    unsigned min, max, def, enf, cur;
} limits_mw;

/* Reads the limits with b->lock held. */
static int read_limits(pfi_backend *b, unsigned gpu, nvml_gpu *g, limits_mw *out)
{
    nvml_state *s = b->priv;
    memset(out, 0, sizeof *out);
    if (!s->get_constraints || !s->get_default_limit || !s->get_enforced_limit) {
        pfi_backend_set_error(b, "GPU %u: this NVML has no power-limit queries", gpu);
        return PFI_ENOTSUP;
    }
    unsigned lo, hi, def, enf, cur;
    nvmlReturn_t r = s->get_constraints(g->dev, &lo, &hi);
    const char *call = "nvmlDeviceGetPowerManagementLimitConstraints";
    if (r == NVML_SUCCESS) {
        call = "nvmlDeviceGetPowerManagementDefaultLimit";
        r = s->get_default_limit(g->dev, &def);
    }
    if (r == NVML_SUCCESS) {
        call = "nvmlDeviceGetEnforcedPowerLimit";
        r = s->get_enforced_limit(g->dev, &enf);
    }
    if (r == NVML_SUCCESS) {
        cur = enf;
        if (s->get_limit) {
            call = "nvmlDeviceGetPowerManagementLimit";
            r = s->get_limit(g->dev, &cur);
        }
    }
    if (r != NVML_SUCCESS) {
        pfi_backend_set_error(b, "GPU %u: %s: %s (NVML error %d)", gpu, call, nvml_str(s, r), r);
        return r == NVML_ERROR_NOT_SUPPORTED ? PFI_ENOTSUP : PFI_EBACKEND;
    }
    *out = (limits_mw){lo, hi, def, enf, cur};
    return PFI_OK;
}

static int nvml_limits(pfi_backend *b, unsigned gpu, pfi_gpu_limits *out)
{
    int rc = PFI_OK;
    pthread_mutex_lock(&b->lock);
    nvml_gpu *g = gpu_of(b, gpu, &rc);
    limits_mw l;
    memset(out, 0, sizeof *out);
    if (g) rc = read_limits(b, gpu, g, &l);
    if (g && rc == PFI_OK)
        *out = (pfi_gpu_limits){.min_w = l.min / 1000.0,
                                .max_w = l.max / 1000.0,
                                .default_w = l.def / 1000.0,
                                .enforced_w = l.enf / 1000.0,
                                .current_w = l.cur / 1000.0};
    pthread_mutex_unlock(&b->lock);
    return rc;
}

/* Validates w against the device's constraints (outside is refused, never
 * clamped), sets it, and reads the management limit back. */
static int nvml_set_limit(pfi_backend *b, unsigned gpu, double w)
{
    double mw = w * 1000.0;
    nvml_state *s = b->priv;
    int rc = PFI_OK;
    pthread_mutex_lock(&b->lock);
    nvml_gpu *g = gpu_of(b, gpu, &rc);
    if (!g) goto done;
    if (!s->set_limit) {
        pfi_backend_set_error(b, "GPU %u: this NVML has no nvmlDeviceSetPowerManagementLimit", gpu);
        rc = PFI_ENOTSUP;
        goto done;
    }
    limits_mw lim;
    rc = read_limits(b, gpu, g, &lim);
    if (rc != PFI_OK) goto done;
    if (!isfinite(mw) || mw < lim.min || mw > lim.max) {
        pfi_backend_set_error(b, "GPU %u: limit %.0f mW is outside the device's range %u-%u mW",
                              gpu, mw, lim.min, lim.max);
        rc = PFI_ERANGE;
        goto done;
    }
    unsigned want = (unsigned)lround(mw); /* NVML takes whole mW; within range after rounding */
    nvmlReturn_t r = s->set_limit(g->dev, want);
    if (r != NVML_SUCCESS) {
        pfi_backend_set_error(b, "GPU %u: nvmlDeviceSetPowerManagementLimit(%u mW): %s%s", gpu,
                              want, nvml_str(s, r),
                              r == NVML_ERROR_NO_PERMISSION ? " (needs root)" : "");
        rc = r == NVML_ERROR_NOT_SUPPORTED ? PFI_ENOTSUP : PFI_EBACKEND;
        goto done;
    }
    /* Read back the power-management limit, the one this call sets: an
     * out-of-band limiter (a BMC) may hold the enforced limit lower, which
     * is not a failed set (pfid reports it as externally limited). */
    unsigned got;
    const char *q =
        s->get_limit ? "nvmlDeviceGetPowerManagementLimit" : "nvmlDeviceGetEnforcedPowerLimit";
    r = s->get_limit ? s->get_limit(g->dev, &got) : s->get_enforced_limit(g->dev, &got);
    if (r != NVML_SUCCESS) {
        pfi_backend_set_error(b, "GPU %u: limit set but %s: %s", gpu, q, nvml_str(s, r));
        rc = PFI_EBACKEND;
    } else if (got != want) {
        pfi_backend_set_error(b, "GPU %u: set %u mW but %s reads %u mW", gpu, want, q, got);
        rc = PFI_EBACKEND;
    }
done:
    pthread_mutex_unlock(&b->lock);
    return rc;
}

static int nvml_persistence(pfi_backend *b, unsigned gpu, int *enabled)
{
    nvml_state *s = b->priv;
    int rc = PFI_OK;
    pthread_mutex_lock(&b->lock);
    nvml_gpu *g = gpu_of(b, gpu, &rc);
    if (g && !s->get_persistence) {
        pfi_backend_set_error(b, "GPU %u: this NVML has no nvmlDeviceGetPersistenceMode", gpu);
        rc = PFI_ENOTSUP;
    } else if (g) {
        nvmlEnableState_t m;
        nvmlReturn_t r = s->get_persistence(g->dev, &m);
        if (r != NVML_SUCCESS) {
            pfi_backend_set_error(b, "GPU %u: nvmlDeviceGetPersistenceMode: %s", gpu,
                                  nvml_str(s, r));
            rc = r == NVML_ERROR_NOT_SUPPORTED ? PFI_ENOTSUP : PFI_EBACKEND;
        } else {
            *enabled = m == NVML_FEATURE_ENABLED;
        }
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

const pfi_backend_ops pfi_backend_nvml_ops = {
    .name = "nvml",
    .init = nvml_init,
    .close = nvml_close,
    .last_error = nvml_last_error,
    .count = nvml_count,
    .info = nvml_info,
    .sample = nvml_sample,
    .limits = nvml_limits,
    .set_limit = nvml_set_limit,
    .throughput = NULL,
    .persistence = nvml_persistence,
};
