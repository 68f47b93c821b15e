/* A stand-in for libnvidia-ml.so.1, backed by the GPU model (gpumodel.h), so
 * the nvml backend and pfid run their real NVML path in CI without a GPU
 * (jq's inject_errors.c shows the idea of substituting a library in tests).
 *
 * It exports the NVML symbols pfi uses (nvml_types.h), for H200s: limits
 * 200-700 W, default 700 W. A limit set through
 * nvmlDeviceSetPowerManagementLimit changes the modelled power, clocks and
 * activity as a real card's would. Switches, read at nvmlInit_v2:
 *
 *   FAKE_NVML_GPUS=N          number of GPUs (default 1, at most 64)
 *   FAKE_NVML_JOB=c,s,d,t,T[,spread,floor,extra]
 *                             a training job on every GPU: compute_frac,
 *                             sm_activity, dram_activity, tensor_ratio,
 *                             tokens/s per GPU, and optionally clock_spread,
 *                             floor_mhz, extra_w (gpumodel.h); unset = idle
 *   FAKE_NVML_JOB_GPUS=0,2    only these GPUs run the job
 *   FAKE_NVML_FB_MIB=M        framebuffer used by a job, MiB (default 60000)
 *   FAKE_NVML_FAIL=RULE,...   calls that fail; RULE is FUNC[:GPU][=CODE]
 *                             (code default 999, NVML_ERROR_UNKNOWN);
 *                             FUNC "*" is every call ("*:1=15": GPU 1 is
 *                             lost);
 *                             FUNC "gpm:ID" fails one GPM metric,
 *                             "nvmlDeviceGetClockInfo.mem" only the memory clock
 *   FAKE_NVML_NOTSUP=RULE,... calls that return NVML_ERROR_NOT_SUPPORTED
 *   FAKE_NVML_GPM=0           devices report no GPM support
 *   FAKE_NVML_SET_IGNORE=1    the set call succeeds but changes nothing
 *                             (a lying driver: read-back must catch it)
 *   FAKE_NVML_STATE=PATH      limits persist in PATH (one "GPU mW" line per
 *                             GPU), so a restarted process sees the limit the
 *                             last one left, as with a real driver
 *   FAKE_NVML_PERSISTENCE=0   persistence mode reads as disabled (default on)
 *   FAKE_NVML_UUID_TAG=HEX    up to 8 hex digits in every UUID (default 0), so
 *                             that tests run at once have cards of their own
 *                             (pfid's per-UUID lock is machine-wide)
 *   FAKE_NVML_CTL=PATH        changes while the process runs: PATH is read
 *                             again whenever it changes (mtime or size), one
 *                             command a line:
 *                               fail RULE,...  these calls fail from now on
 *                                              (as FAKE_NVML_FAIL; replaces
 *                                              the previous "fail" line)
 *                               revert GPU     the limit goes back to the
 *                                              default, once per change of
 *                                              the file (a driver reload)
 *                               external GPU MW  an out-of-band limit (a BMC):
 *                                              the enforced limit is the lower
 *                                              of it and the one set; 0 clears
 *                               job GPU        FAKE_NVML_JOB's job runs on GPU
 *                                              from now on (a job starting
 *                                              uncapped), while the line stays
 *
 * Build variants (CMakeLists.txt) leave symbols out, as older or newer
 * drivers do: FAKE_NVML_NO_GPM (no nvmlGpm*), FAKE_NVML_SPARSE (no GPM, no
 * energy, no clocks-event reasons and no nvmlDeviceGetTemperature: the
 * backend must fall back to the throttle-reasons and TemperatureV calls),
 * FAKE_NVML_BROKEN (nvmlInit but no nvmlInit_v2: loading must fail).
 *
 * The numbers that the model does not give are the fake's own: temperature
 * 32.1 C + 0.0371 C/W (a line through the probe's idle 35 C at 77 W and 58 C
 * at 697 W, run_trace.csv), SM occupancy 0.34 x SM activity (the probe's
 * dense_pt), fixed PCIe/NVLink rates, energy integrated from the modelled
 * power on the monotonic clock.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "pfi/gpumodel.h"
#include "telemetry/nvml_types.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_GPUS 64
#define MAX_RULES 64

typedef struct {
    char func[64];
    int gpu; /* -1: every GPU */
    nvmlReturn_t code;
} rule;

typedef struct nvmlDevice_st {
    unsigned index;
    int has_job;
    int job_at_init; /* has_job as FAKE_NVML_JOB{,_GPUS} set it */
    unsigned limit_mw;
    unsigned external_mw; /* FAKE_NVML_CTL "external", 0 none */
    double energy_mj;
    double last_t; /* monotonic seconds of the last energy update */
} fake_gpu;

struct nvmlGpmSample_st {
    int filled;
    unsigned gpu;
    double t;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int inits;
static unsigned n_gpus;
static fake_gpu gpus[MAX_GPUS];
static pfi_job_model job;
static int job_set; /* FAKE_NVML_JOB gave one */
static double fb_mib = 60000;
static rule rules[MAX_RULES];
static int n_rules, n_env_rules;
static int gpm_supported = 1, set_ignore, persistence = 1;
static char state_path[1024], ctl_path[1024];
static long long ctl_mtime_ns = -1, ctl_size = -1;
static int save_state(void);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void parse_rules(const char *env, nvmlReturn_t dflt)
{
    const char *v = getenv(env);
    if (!v) return;
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && n_rules < MAX_RULES;
         tok = strtok_r(NULL, ",", &save)) {
        rule *r = &rules[n_rules++];
        r->gpu = -1;
        r->code = dflt;
        char *eq = strchr(tok, '=');
        if (eq) {
            *eq = '\0';
            r->code = atoi(eq + 1);
        }
        /* "gpm:ID:GPU" or "FUNC:GPU" */
        char *colon = strrchr(tok, ':');
        if (colon && !(strncmp(tok, "gpm:", 4) == 0 && colon == tok + 3)) {
            *colon = '\0';
            r->gpu = atoi(colon + 1);
        }
        snprintf(r->func, sizeof r->func, "%s", tok);
    }
}

/* Applies FAKE_NVML_CTL when the file changed since the last look. Caller
 * holds mu. */
static void ctl_poll(void)
{
    struct stat st;
    if (!ctl_path[0] || stat(ctl_path, &st) != 0) return;
    long long m = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    if (m == ctl_mtime_ns && (long long)st.st_size == ctl_size) return;
    ctl_mtime_ns = m;
    ctl_size = (long long)st.st_size;
    FILE *f = fopen(ctl_path, "r");
    if (!f) return;
    n_rules = n_env_rules;
    for (unsigned i = 0; i < n_gpus; i++) {
        gpus[i].external_mw = 0;
        gpus[i].has_job = gpus[i].job_at_init;
    }
    char line[2048];
    int changed = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        unsigned g, mw;
        if (strncmp(line, "fail ", 5) == 0) {
            char *v = line + 5;
            char env[] = "FAKE_NVML_CTL_FAIL";
            setenv(env, v, 1);
            parse_rules(env, NVML_ERROR_UNKNOWN);
            unsetenv(env);
        } else if (sscanf(line, "revert %u", &g) == 1 && g < n_gpus) {
            gpus[g].limit_mw = (unsigned)(pfi_gpumodel_h200()->tdp_w * 1000);
            changed = 1;
        } else if (sscanf(line, "external %u %u", &g, &mw) == 2 && g < n_gpus) {
            gpus[g].external_mw = mw;
        } else if (sscanf(line, "job %u", &g) == 1 && g < n_gpus && job_set) {
            gpus[g].has_job = 1;
        }
    }
    fclose(f);
    if (changed) save_state();
}

/* The limit the device enforces: the one set, or an out-of-band lower one. */
static unsigned enforced_of(const fake_gpu *g)
{
    return g->external_mw && g->external_mw < g->limit_mw ? g->external_mw : g->limit_mw;
}

/* The injected status for a call on a GPU, or NVML_SUCCESS. */
static nvmlReturn_t injected(const char *func, int gpu)
{
    ctl_poll();
    for (int i = 0; i < n_rules; i++)
        if ((strcmp(rules[i].func, func) == 0 || strcmp(rules[i].func, "*") == 0) &&
            (rules[i].gpu < 0 || rules[i].gpu == gpu))
            return rules[i].code;
    return NVML_SUCCESS;
}

static void load_state(void)
{
    if (!state_path[0]) return;
    FILE *f = fopen(state_path, "r");
    if (!f) return;
    unsigned g, mw;
    while (fscanf(f, "%u %u", &g, &mw) == 2)
        if (g < n_gpus) gpus[g].limit_mw = mw;
    fclose(f);
}

static int save_state(void)
{
    if (!state_path[0]) return 0;
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", state_path);
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    for (unsigned i = 0; i < n_gpus; i++)
        fprintf(f, "%u %u\n", i, gpus[i].limit_mw);
    if (fclose(f) != 0) return -1;
    return rename(tmp, state_path);
}

/* The model's point for a GPU at its current limit. */
static void point_of(const fake_gpu *g, pfi_gpumodel_point *p)
{
    if (pfi_gpumodel_eval(pfi_gpumodel_h200(), g->has_job ? &job : NULL, g->limit_mw / 1000.0, p) !=
        PFI_OK)
        memset(p, 0, sizeof *p);
}

static void update_energy(fake_gpu *g)
{
    double t = now_s();
    pfi_gpumodel_point p;
    point_of(g, &p);
    g->energy_mj += p.power_w * (t - g->last_t) * 1000.0;
    g->last_t = t;
}

/* The GPU behind a handle, or NULL. */
static fake_gpu *dev_of(nvmlDevice_t d)
{
    fake_gpu *g = d.handle;
    if (!inits || !g || g < gpus || g >= gpus + n_gpus) return NULL;
    return g;
}

/* What NVML answers for a handle dev_of rejects: before nvmlInit nothing is
 * initialised; after it the handle itself is bad. */
static nvmlReturn_t bad_handle(void)
{
    return inits ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_UNINITIALIZED;
}

/* The broken variant is a driver older than nvmlInit_v2 (NVML 5): it exports
 * only the first nvmlInit, which pfi does not use. */
#ifdef FAKE_NVML_BROKEN
#define INIT_SYMBOL nvmlInit
#else
#define INIT_SYMBOL nvmlInit_v2
#endif
EXPORT nvmlReturn_t INIT_SYMBOL(void)
{
    nvmlReturn_t r = NVML_SUCCESS;
    const char *v;
    pthread_mutex_lock(&mu);
    n_rules = 0;
    parse_rules("FAKE_NVML_FAIL", NVML_ERROR_UNKNOWN);
    parse_rules("FAKE_NVML_NOTSUP", NVML_ERROR_NOT_SUPPORTED);
    n_env_rules = n_rules;
    v = getenv("FAKE_NVML_CTL");
    snprintf(ctl_path, sizeof ctl_path, "%s", v ? v : "");
    ctl_mtime_ns = ctl_size = -1;
    v = getenv("FAKE_NVML_PERSISTENCE");
    persistence = !(v && strcmp(v, "0") == 0);
    r = injected("nvmlInit_v2", -1);
    if (r != NVML_SUCCESS) goto out;
    v = getenv("FAKE_NVML_GPUS");
    n_gpus = v ? (unsigned)atoi(v) : 1;
    if (n_gpus > MAX_GPUS) n_gpus = MAX_GPUS;
    v = getenv("FAKE_NVML_JOB");
    int has_job = 0;
    memset(&job, 0, sizeof job);
    if (v && sscanf(v, "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &job.compute_frac, &job.sm_activity,
                    &job.dram_activity, &job.tensor_ratio, &job.tput_per_gpu, &job.clock_spread,
                    &job.floor_mhz, &job.extra_w) >= 5)
        has_job = 1;
    job_set = has_job;
    v = getenv("FAKE_NVML_FB_MIB");
    fb_mib = v ? atof(v) : 60000;
    v = getenv("FAKE_NVML_GPM");
    gpm_supported = !(v && strcmp(v, "0") == 0);
    v = getenv("FAKE_NVML_SET_IGNORE");
    set_ignore = v && strcmp(v, "1") == 0;
    v = getenv("FAKE_NVML_STATE");
    snprintf(state_path, sizeof state_path, "%s", v ? v : "");
    const char *only = getenv("FAKE_NVML_JOB_GPUS");
    double t = now_s();
    for (unsigned i = 0; i < n_gpus; i++) {
        int on = has_job;
        if (on && only) {
            char buf[256], *save = NULL;
            snprintf(buf, sizeof buf, "%s", only);
            on = 0;
            for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
                if ((unsigned)atoi(tok) == i) on = 1;
        }
        gpus[i] = (fake_gpu){.index = i,
                             .has_job = on,
                             .job_at_init = on,
                             .limit_mw = (unsigned)(pfi_gpumodel_h200()->tdp_w * 1000),
                             .energy_mj = 2384644.0 + 1000.0 * i,
                             .last_t = t};
    }
    load_state();
    inits++;
    ctl_mtime_ns = ctl_size = -1;
    ctl_poll(); /* again now that the GPUs exist: "external" and "revert" name them */
out:
    pthread_mutex_unlock(&mu);
    return r;
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = inits ? injected("nvmlShutdown", -1) : NVML_ERROR_UNINITIALIZED;
    if (inits) inits--;
    pthread_mutex_unlock(&mu);
    return r;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
        return "Insufficient Permissions";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
        return "Argument version mismatch";
    default:
        return "Unknown Error";
    }
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = !inits ? NVML_ERROR_UNINITIALIZED : injected("nvmlDeviceGetCount_v2", -1);
    if (r == NVML_SUCCESS) *count = n_gpus;
    pthread_mutex_unlock(&mu);
    return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    if (!inits)
        r = NVML_ERROR_UNINITIALIZED;
    else if (index >= n_gpus || !device)
        r = NVML_ERROR_INVALID_ARGUMENT;
    else
        r = injected("nvmlDeviceGetHandleByIndex_v2", (int)index);
    if (r == NVML_SUCCESS) device->handle = &gpus[index];
    pthread_mutex_unlock(&mu);
    return r;
}

static nvmlReturn_t string_call(const char *name, nvmlDevice_t device, char *out, unsigned len,
                                const char *fmt)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    if (!g)
        r = bad_handle();
    else if ((r = injected(name, (int)g->index)) == NVML_SUCCESS) {
        int n = snprintf(out, len, fmt, g->index);
        if (n < 0 || (unsigned)n >= len) r = NVML_ERROR_INSUFFICIENT_SIZE;
    }
    pthread_mutex_unlock(&mu);
    return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    return string_call("nvmlDeviceGetName", device, name, length, "NVIDIA H200");
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    const char *tag = getenv("FAKE_NVML_UUID_TAG");
    char fmt[64];
    snprintf(fmt, sizeof fmt, "GPU-fa6e0000-0000-4000-8000-%08lx00%%02u",
             tag ? strtoul(tag, NULL, 16) & 0xffffffffUL : 0UL);
    return string_call("nvmlDeviceGetUUID", device, uuid, length, fmt);
}

/* A query answering one unsigned value computed under the lock. */
typedef enum { Q_POWER, Q_ENFORCED, Q_LIMIT, Q_DEFAULT } uint_query;

static nvmlReturn_t uint_call(const char *name, nvmlDevice_t device, unsigned *out, uint_query q)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    if (!g)
        r = bad_handle();
    else if (!out)
        r = NVML_ERROR_INVALID_ARGUMENT;
    else if ((r = injected(name, (int)g->index)) == NVML_SUCCESS) {
        pfi_gpumodel_point p;
        switch (q) {
        case Q_POWER:
            point_of(g, &p);
            *out = (unsigned)lround(p.power_w * 1000.0);
            break;
        case Q_ENFORCED:
            *out = enforced_of(g);
            break;
        case Q_LIMIT:
            *out = g->limit_mw;
            break;
        case Q_DEFAULT:
            *out = (unsigned)(pfi_gpumodel_h200()->tdp_w * 1000);
            break;
        }
    }
    pthread_mutex_unlock(&mu);
    return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    return uint_call("nvmlDeviceGetPowerUsage", device, power, Q_POWER);
}

EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
    return uint_call("nvmlDeviceGetEnforcedPowerLimit", device, limit, Q_ENFORCED);
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit)
{
    return uint_call("nvmlDeviceGetPowerManagementLimit", device, limit, Q_LIMIT);
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                             unsigned int *defaultLimit)
{
    return uint_call("nvmlDeviceGetPowerManagementDefaultLimit", device, defaultLimit, Q_DEFAULT);
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                                 unsigned int *minLimit,
                                                                 unsigned int *maxLimit)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    if (!g)
        r = bad_handle();
    else if (!minLimit || !maxLimit)
        r = NVML_ERROR_INVALID_ARGUMENT;
    else if ((r = injected("nvmlDeviceGetPowerManagementLimitConstraints", (int)g->index)) ==
             NVML_SUCCESS) {
        *minLimit = (unsigned)(pfi_gpumodel_h200()->min_limit_w * 1000);
        *maxLimit = (unsigned)(pfi_gpumodel_h200()->max_limit_w * 1000);
    }
    pthread_mutex_unlock(&mu);
    return r;
}

EXPORT nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device, unsigned int limit)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    const pfi_gpu_spec *s = pfi_gpumodel_h200();
    if (!g)
        r = bad_handle();
    else if ((r = injected("nvmlDeviceSetPowerManagementLimit", (int)g->index)) != NVML_SUCCESS)
        ;
    else if (limit < s->min_limit_w * 1000 || limit > s->max_limit_w * 1000)
        r = NVML_ERROR_INVALID_ARGUMENT; /* as the real call does */
    else if (!set_ignore) {
        update_energy(g); /* energy so far at the old limit */
        unsigned old = g->limit_mw;
        g->limit_mw = limit;
        if (save_state() != 0) {
            g->limit_mw = old;
            r = NVML_ERROR_UNKNOWN;
        }
    }
    pthread_mutex_unlock(&mu);
    return r;
}

#ifndef FAKE_NVML_SPARSE
EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                        unsigned long long *energy)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    if (!g)
        r = bad_handle();
    else if ((r = injected("nvmlDeviceGetTotalEnergyConsumption", (int)g->index)) == NVML_SUCCESS) {
        update_energy(g);
        *energy = (unsigned long long)g->energy_mj;
    }
    pthread_mutex_unlock(&mu);
    return r;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                           unsigned int *clock)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    if (!g)
        r = bad_handle();
    else if (type != NVML_CLOCK_SM && type != NVML_CLOCK_MEM && type != NVML_CLOCK_GRAPHICS)
        r = NVML_ERROR_INVALID_ARGUMENT;
    else if ((r = injected(type == NVML_CLOCK_MEM ? "nvmlDeviceGetClockInfo.mem"
                                                  : "nvmlDeviceGetClockInfo",
                           (int)g->index)) == NVML_SUCCESS &&
             (r = injected("nvmlDeviceGetClockInfo", (int)g->index)) == NVML_SUCCESS) {
        pfi_gpumodel_point p;
        point_of(g, &p);
        *clock = (unsigned)lround(type == NVML_CLOCK_MEM ? p.mem_clock_mhz : p.sm_clock_mhz);
    }
    pthread_mutex_unlock(&mu);
    return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                  nvmlUtilization_t *utilization)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    if (!g)
        r = bad_handle();
    else if ((r = injected("nvmlDeviceGetUtilizationRates", (int)g->index)) == NVML_SUCCESS) {
        pfi_gpumodel_point p;
        point_of(g, &p);
        utilization->gpu = (unsigned)lround(p.gpu_util_pct);
        utilization->memory = (unsigned)lround(p.mem_copy_util_pct);
    }
    pthread_mutex_unlock(&mu);
    return r;
}

static unsigned temp_of(const fake_gpu *g)
{
    pfi_gpumodel_point p;
    point_of(g, &p);
    return (unsigned)lround(32.1 + 0.0371 * p.power_w);
}

#ifndef FAKE_NVML_SPARSE
EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
                                             nvmlTemperatureSensors_t sensorType,
                                             unsigned int *temp)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    if (!g)
        r = bad_handle();
    else if (sensorType != NVML_TEMPERATURE_GPU)
        r = NVML_ERROR_INVALID_ARGUMENT;
    else if ((r = injected("nvmlDeviceGetTemperature", (int)g->index)) == NVML_SUCCESS)
        *temp = temp_of(g);
    pthread_mutex_unlock(&mu);
    return r;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device,
                                              nvmlTemperature_v1_t *temperature)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    if (!g)
        r = bad_handle();
    else if (!temperature || temperature->version != NVML_TEMPERATURE_V1_VERSION)
        r = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    else if (temperature->sensorType != NVML_TEMPERATURE_GPU)
        r = NVML_ERROR_INVALID_ARGUMENT;
    else if ((r = injected("nvmlDeviceGetTemperatureV", (int)g->index)) == NVML_SUCCESS)
        temperature->temperature = (int)temp_of(g);
    pthread_mutex_unlock(&mu);
    return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    if (!g)
        r = bad_handle();
    else if ((r = injected("nvmlDeviceGetMemoryInfo", (int)g->index)) == NVML_SUCCESS) {
        const unsigned long long mib = 1048576ULL;
        memory->total = 143771ULL * mib; /* H200: 141 GB HBM3e as NVML reports it */
        memory->used = (unsigned long long)((g->has_job ? fb_mib : 615.0) * mib);
        memory->free = memory->total - memory->used;
    }
    pthread_mutex_unlock(&mu);
    return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t *mode)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    if (!g)
        r = bad_handle();
    else if (!mode)
        r = NVML_ERROR_INVALID_ARGUMENT;
    else if ((r = injected("nvmlDeviceGetPersistenceMode", (int)g->index)) == NVML_SUCCESS)
        *mode = persistence ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    pthread_mutex_unlock(&mu);
    return r;
}

static nvmlReturn_t reasons_call(const char *name, nvmlDevice_t device, unsigned long long *out)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    if (!g)
        r = bad_handle();
    else if ((r = injected(name, (int)g->index)) == NVML_SUCCESS) {
        pfi_gpumodel_point p;
        point_of(g, &p);
        if (!g->has_job)
            *out = NVML_CLOCKS_EVENT_GPU_IDLE;
        else if (p.sm_clock_mhz < pfi_gpumodel_h200()->sm_clock_max_mhz - 0.5)
            *out = NVML_CLOCKS_EVENT_SW_POWER_CAP;
        else
            *out = 0;
    }
    pthread_mutex_unlock(&mu);
    return r;
}

#ifndef FAKE_NVML_SPARSE
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                           unsigned long long *reasons)
{
    return reasons_call("nvmlDeviceGetCurrentClocksEventReasons", device, reasons);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                              unsigned long long *reasons)
{
    return reasons_call("nvmlDeviceGetCurrentClocksThrottleReasons", device, reasons);
}

#if !defined(FAKE_NVML_NO_GPM) && !defined(FAKE_NVML_SPARSE)
EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    if (!g)
        r = bad_handle();
    else if (!gpmSupport || gpmSupport->version != NVML_GPM_SUPPORT_VERSION)
        r = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    else if ((r = injected("nvmlGpmQueryDeviceSupport", (int)g->index)) == NVML_SUCCESS)
        gpmSupport->isSupportedDevice = (unsigned)gpm_supported;
    pthread_mutex_unlock(&mu);
    return r;
}

EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = injected("nvmlGpmSampleAlloc", -1);
    pthread_mutex_unlock(&mu);
    if (r != NVML_SUCCESS) return r;
    if (!gpmSample) return NVML_ERROR_INVALID_ARGUMENT;
    gpmSample->handle = calloc(1, sizeof *gpmSample->handle);
    return gpmSample->handle ? NVML_SUCCESS : NVML_ERROR_MEMORY;
}

EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample)
{
    if (!gpmSample.handle) return NVML_ERROR_INVALID_ARGUMENT;
    free(gpmSample.handle);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    fake_gpu *g = dev_of(device);
    if (!g)
        r = bad_handle();
    else if (!gpmSample.handle)
        r = NVML_ERROR_INVALID_ARGUMENT;
    else if ((r = injected("nvmlGpmSampleGet", (int)g->index)) == NVML_SUCCESS)
        *gpmSample.handle = (struct nvmlGpmSample_st){.filled = 1, .gpu = g->index, .t = now_s()};
    pthread_mutex_unlock(&mu);
    return r;
}

EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    const struct nvmlGpmSample_st *a = m ? m->sample1.handle : NULL;
    const struct nvmlGpmSample_st *b = m ? m->sample2.handle : NULL;
    if (!inits)
        r = NVML_ERROR_UNINITIALIZED;
    else if (!m || m->version != NVML_GPM_METRICS_GET_VERSION)
        r = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    else if (!a || !b || !a->filled || !b->filled || a->gpu != b->gpu || a->gpu >= n_gpus ||
             m->numMetrics > NVML_GPM_METRIC_MAX)
        r = NVML_ERROR_INVALID_ARGUMENT;
    else if ((r = injected("nvmlGpmMetricsGet", (int)a->gpu)) == NVML_SUCCESS) {
        const fake_gpu *g = &gpus[a->gpu];
        pfi_gpumodel_point p;
        point_of(g, &p);
        double load = g->has_job ? 1.0 : 0.0;
        for (unsigned k = 0; k < m->numMetrics; k++) {
            nvmlGpmMetric_t *x = &m->metrics[k];
            char name[32];
            snprintf(name, sizeof name, "gpm:%u", x->metricId);
            x->nvmlReturn = injected(name, (int)a->gpu);
            x->value = 0;
            if (x->nvmlReturn != NVML_SUCCESS) continue;
            switch (x->metricId) {
            case NVML_GPM_METRIC_SM_UTIL:
                x->value = 100 * p.sm_active;
                break;
            case NVML_GPM_METRIC_SM_OCCUPANCY:
                x->value = 34 * p.sm_active;
                break;
            case NVML_GPM_METRIC_ANY_TENSOR_UTIL:
                x->value = 100 * p.tensor_active;
                break;
            case NVML_GPM_METRIC_DRAM_BW_UTIL:
                x->value = 100 * p.dram_active;
                break;
            case NVML_GPM_METRIC_PCIE_TX_PER_SEC:
                x->value = 0.25 + 12.25 * load;
                break;
            case NVML_GPM_METRIC_PCIE_RX_PER_SEC:
                x->value = 0.125 + 24.875 * load;
                break;
            case NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC:
                x->value = 100 * load;
                break;
            case NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC:
                x->value = 200 * load;
                break;
            default:
                x->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
            }
        }
    }
    pthread_mutex_unlock(&mu);
    return r;
}
#endif
