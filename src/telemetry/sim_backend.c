/* The sim backend: H200s simulated through the GPU model, so that a power
 * limit set on one changes its power, clocks, activity and throughput as a
 * real card's would. Options and the jobs file: include/telemetry/pfi/sim_backend.h.
 *
 * Quantities the model does not give are the sim's own, taken from the H200
 * probe's run_trace.csv: idle framebuffer 615 MiB; once a process holds a
 * CUDA context (warmup, 2127 MiB, under the paper's 10 GiB threshold; and
 * startup, loaded) the idle GPU sits at the maximum SM clock and 118.4 W;
 * temperature
 * 32.1 C + 0.0371 C/W (a line through the probe's 35 C at 77 W and 58 C at
 * 697 W), SM occupancy 0.34 x SM activity (the probe's dense_pt). PCIe and
 * NVLink rates are not modelled: their bits stay clear.
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend_impl.h"
#include "pfi/csv.h"
#include "pfi/gpumodel.h"
#include "pfi/sim_backend.h"

#define SIM_MAX_GPUS 1024
#define IDLE_FB_MIB 615.0
#define WARMUP_FB_MIB 2127.0
#define CONTEXT_IDLE_W 118.4 /* a process holds a context, no kernels run */

typedef struct {
    unsigned gpu;
    char name[64];
    pfi_job_model m;
    double start_s, warmup_s, startup_s, duration_s, fb_mib;
} sim_job;

typedef enum { PH_IDLE, PH_WARMUP, PH_STARTUP, PH_TRAINING } sim_phase;

typedef struct {
    double limit_w;
    double energy_j;
    double last_t, last_power_w; /* for integrating energy */
} sim_gpu;

typedef struct {
    const pfi_gpu_spec *spec;
    unsigned n;
    sim_gpu *gpus;
    sim_job *jobs;
    size_t n_jobs;
    double noise;
    double start_limit_w; /* limit=W: the limit in force at start, 0 the TDP */
    gsl_rng *rng;
    double t0;     /* monotonic seconds at open */
    double pinned; /* >= 0: the pinned clock */
} sim_state;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double sim_now(const sim_state *s)
{
    return s->pinned >= 0 ? s->pinned : mono_s() - s->t0;
}

static void sim_close(pfi_backend *b)
{
    if (!b) return;
    sim_state *s = b->priv;
    if (s) {
        free(s->gpus);
        free(s->jobs);
        if (s->rng) gsl_rng_free(s->rng);
        free(s);
    }
    pfi_backend_free(b);
}

static int job_end_is_inf(const sim_job *j)
{
    return j->duration_s <= 0;
}

static double job_end(const sim_job *j)
{
    return j->start_s + j->warmup_s + j->startup_s + j->duration_s;
}

/* Reads the jobs file into s->jobs. */
static int load_jobs(sim_state *s, const char *path, pfi_error *err)
{
    pfi_csv *c = NULL;
    int rc = pfi_csv_read_file(path, &c, err);
    if (rc != PFI_OK) return rc;
    static const char *const req[] = {
        "gpu",           "job",          "compute_frac", "sm_activity",
        "dram_activity", "tensor_ratio", "tput_per_gpu", NULL};
    rc = pfi_csv_require(c, req, err);
    if (rc != PFI_OK) goto out;
    size_t n = pfi_csv_rows(c);
    s->jobs = calloc(n ? n : 1, sizeof *s->jobs);
    if (!s->jobs) {
        rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
        goto out;
    }
    static const struct {
        const char *col;
        int optional;
        double dflt;
    } cols[] = {{"gpu", 0, 0},           {"compute_frac", 0, 0}, {"sm_activity", 0, 0},
                {"dram_activity", 0, 0}, {"tensor_ratio", 0, 0}, {"tput_per_gpu", 0, 0},
                {"clock_spread", 1, 0},  {"start_s", 1, 0},      {"warmup_s", 1, 0},
                {"startup_s", 1, 0},     {"duration_s", 1, 0},   {"fb_mib", 1, 60000},
                {"floor_mhz", 1, 0},     {"extra_w", 1, 0}};
    enum { NCOLS = sizeof cols / sizeof cols[0] };
    for (size_t r = 0; r < n; r++) {
        double v[NCOLS];
        long line = pfi_csv_line(c, r);
        for (size_t k = 0; k < NCOLS; k++) {
            int col = pfi_csv_col(c, cols[k].col);
            v[k] = cols[k].dflt;
            if (col < 0) continue;
            rc = pfi_csv_number(c, r, (size_t)col, cols[k].optional, cols[k].dflt, &v[k], err);
            if (rc != PFI_OK) goto out;
        }
        sim_job *j = &s->jobs[r];
        if (v[0] < 0 || v[0] != floor(v[0]) || v[0] >= s->n) {
            rc = pfi_error_set(err, PFI_EINVAL, path, line,
                               "gpu %g is not a GPU index below %u (gpus=)", v[0], s->n);
            goto out;
        }
        j->gpu = (unsigned)v[0];
        snprintf(j->name, sizeof j->name, "%s", pfi_csv_field(c, r, (size_t)pfi_csv_col(c, "job")));
        j->m = (pfi_job_model){.compute_frac = v[1],
                               .sm_activity = v[2],
                               .dram_activity = v[3],
                               .tensor_ratio = v[4],
                               .tput_per_gpu = v[5],
                               .clock_spread = v[6],
                               .floor_mhz = v[12],
                               .extra_w = v[13]};
        j->start_s = v[7];
        j->warmup_s = v[8];
        j->startup_s = v[9];
        j->duration_s = v[10];
        j->fb_mib = v[11];
        for (int k = 7; k <= 10; k++)
            if (v[k] < 0) {
                rc = pfi_error_set(err, PFI_EINVAL, path, line, "%s is negative", cols[k].col);
                goto out;
            }
        if (j->fb_mib < 0 || j->fb_mib > 143771) {
            rc = pfi_error_set(err, PFI_EINVAL, path, line,
                               "fb_mib %g is outside 0-143771 (an H200's memory)", j->fb_mib);
            goto out;
        }
        /* Let the model judge the job's parameters once, at the default limit. */
        pfi_gpumodel_point p;
        if (pfi_gpumodel_eval(s->spec, &j->m, s->spec->tdp_w, &p) != PFI_OK) {
            rc = pfi_error_set(err, PFI_EINVAL, path, line,
                               "job '%s': a model parameter is out of range (ratios 0-1, "
                               "tput_per_gpu >= 0, clock_spread 0-0.5, floor_mhz, extra_w)",
                               j->name);
            goto out;
        }
        for (size_t q = 0; q < r; q++) {
            const sim_job *o = &s->jobs[q];
            if (o->gpu != j->gpu) continue;
            int before = !job_end_is_inf(j) && job_end(j) <= o->start_s;
            int after = !job_end_is_inf(o) && job_end(o) <= j->start_s;
            if (!before && !after) {
                rc = pfi_error_set(err, PFI_EINVAL, path, line,
                                   "job '%s' overlaps job '%s' on GPU %u (line %ld)", j->name,
                                   o->name, j->gpu, pfi_csv_line(c, q));
                goto out;
            }
        }
        s->n_jobs++;
    }
out:
    pfi_csv_destroy(c);
    return rc;
}

static int parse_opts(sim_state *s, const char *opts, char *jobs, size_t jlen, unsigned long *seed,
                      pfi_error *err)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", opts ? opts : "");
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        char *end = NULL;
        if (!eq) goto bad;
        *eq = '\0';
        const char *k = tok, *v = eq + 1;
        if (strcmp(k, "gpus") == 0) {
            long n = strtol(v, &end, 10);
            if (end == v || *end || n < 1 || n > SIM_MAX_GPUS)
                return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                     "sim: gpus=%s is not a count from 1 to %d", v, SIM_MAX_GPUS);
            s->n = (unsigned)n;
        } else if (strcmp(k, "jobs") == 0) {
            snprintf(jobs, jlen, "%s", v);
        } else if (strcmp(k, "noise") == 0) {
            s->noise = strtod(v, &end);
            if (end == v || *end || !(s->noise >= 0 && s->noise <= 0.5))
                return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                     "sim: noise=%s is not a number from 0 to 0.5", v);
        } else if (strcmp(k, "limit") == 0) {
            /* the limit in force at start: a site that runs its GPUs below the TDP */
            s->start_limit_w = strtod(v, &end);
            if (end == v || *end ||
                !(s->start_limit_w >= s->spec->min_limit_w &&
                  s->start_limit_w <= s->spec->max_limit_w))
                return pfi_error_set(
                    err, PFI_EINVAL, NULL, 0,
                    "sim: limit=%s is not a power in the device's range %.0f-%.0f W", v,
                    s->spec->min_limit_w, s->spec->max_limit_w);
        } else if (strcmp(k, "seed") == 0) {
            *seed = strtoul(v, &end, 10);
            if (end == v || *end)
                return pfi_error_set(err, PFI_EINVAL, NULL, 0, "sim: seed=%s is not a number", v);
        } else {
            *eq = '=';
            goto bad;
        }
        continue;
    bad:
        return pfi_error_set(
            err, PFI_EINVAL, NULL, 0,
            "sim: bad option '%s' (expected gpus=N, jobs=FILE, noise=F, seed=S, limit=W)", tok);
    }
    return PFI_OK;
}

static int sim_init(pfi_backend **out, const char *opts, pfi_error *err)
{
    *out = NULL;
    sim_state *s = calloc(1, sizeof *s);
    pfi_backend *b = s ? pfi_backend_alloc(&pfi_backend_sim_ops, s) : NULL;
    if (!b) {
        free(s);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "sim: out of memory");
    }
    s->spec = pfi_gpumodel_h200();
    s->n = 8;
    s->pinned = -1;
    char jobs[1024] = "";
    unsigned long seed = 1;
    int rc = parse_opts(s, opts, jobs, sizeof jobs, &seed, err);
    if (rc != PFI_OK) goto fail;
    s->gpus = calloc(s->n, sizeof *s->gpus);
    s->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!s->gpus || !s->rng) {
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "sim: out of memory");
        goto fail;
    }
    gsl_rng_set(s->rng, seed);
    if (jobs[0] && (rc = load_jobs(s, jobs, err)) != PFI_OK) goto fail;
    s->t0 = mono_s();
    for (unsigned i = 0; i < s->n; i++)
        s->gpus[i] = (sim_gpu){.limit_w = s->start_limit_w > 0 ? s->start_limit_w : s->spec->tdp_w,
                               .energy_j = 0,
                               .last_t = 0,
                               .last_power_w = s->spec->idle_w};
    *out = b;
    return PFI_OK;
fail:
    sim_close(b);
    return rc;
}

/* The job on a GPU at time t and its phase. */
static const sim_job *job_at(const sim_state *s, unsigned gpu, double t, sim_phase *ph)
{
    *ph = PH_IDLE;
    for (size_t k = 0; k < s->n_jobs; k++) {
        const sim_job *j = &s->jobs[k];
        if (j->gpu != gpu || t < j->start_s || (!job_end_is_inf(j) && t >= job_end(j))) continue;
        double dt = t - j->start_s;
        *ph = dt < j->warmup_s                  ? PH_WARMUP
              : dt < j->warmup_s + j->startup_s ? PH_STARTUP
                                                : PH_TRAINING;
        return j;
    }
    return NULL;
}

/* The GPU's modelled state at time t (no noise). */
static void state_at(const sim_state *s, unsigned gpu, double t, pfi_gpumodel_point *p,
                     sim_phase *ph, const sim_job **jp)
{
    const sim_job *j = job_at(s, gpu, t, ph);
    *jp = j;
    if (pfi_gpumodel_eval(s->spec, *ph == PH_TRAINING ? &j->m : NULL, s->gpus[gpu].limit_w, p) !=
        PFI_OK)
        memset(p, 0, sizeof *p); /* unreachable: limits and jobs were validated */
}

/* Adds the energy drawn since the last update at the power then drawn. */
static void integrate(sim_state *s, unsigned gpu, double t, double power_w)
{
    sim_gpu *g = &s->gpus[gpu];
    if (t > g->last_t) g->energy_j += g->last_power_w * (t - g->last_t);
    g->last_t = t;
    g->last_power_w = power_w;
}

static double noisy(sim_state *s, double v)
{
    return s->noise > 0 ? v * (1.0 + gsl_ran_gaussian(s->rng, s->noise)) : v;
}

static int check_gpu(pfi_backend *b, unsigned gpu)
{
    sim_state *s = b->priv;
    if (gpu < s->n) return PFI_OK;
    pfi_backend_set_error(b, "no GPU %u (the sim has %u)", gpu, s->n);
    return PFI_ENOTFOUND;
}

static int sim_sample(pfi_backend *b, unsigned gpu, pfi_gpu_sample *out)
{
    sim_state *s = b->priv;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&b->lock);
    int rc = check_gpu(b, gpu);
    if (rc != PFI_OK) goto done;
    double t = sim_now(s);
    pfi_gpumodel_point p;
    sim_phase ph;
    const sim_job *j;
    state_at(s, gpu, t, &p, &ph, &j);
    double cap = s->gpus[gpu].limit_w;
    if (ph == PH_WARMUP || ph == PH_STARTUP) {
        p.power_w = fmin(CONTEXT_IDLE_W, cap);
        p.sm_clock_mhz = s->spec->sm_clock_max_mhz;
    }
    double power = noisy(s, p.power_w);
    if (power > cap) power = cap;
    if (power < 0) power = 0;
    integrate(s, gpu, t, power);

    /* SI, converted as the NVML backend converts the driver's units */
    double fb_mib = ph == PH_IDLE ? IDLE_FB_MIB : ph == PH_WARMUP ? WARMUP_FB_MIB : j->fb_mib;
    uint32_t events = 0;
    if (ph != PH_TRAINING)
        events = PFI_CLK_IDLE;
    else if (p.sm_clock_mhz < s->spec->sm_clock_max_mhz - 0.5)
        events = PFI_CLK_POWER_CAP;
    const struct {
        pfi_gpu_field f;
        double v;
    } set[] = {
        {PFI_GF_POWER, power},
        {PFI_GF_ENERGY, s->gpus[gpu].energy_j},
        {PFI_GF_LIMIT, cap},
        {PFI_GF_SM_CLOCK, p.sm_clock_mhz * 1e6},
        {PFI_GF_MEM_CLOCK, p.mem_clock_mhz * 1e6},
        {PFI_GF_UTIL_GPU, p.gpu_util_pct * 0.01},
        {PFI_GF_UTIL_MEM, p.mem_copy_util_pct * 0.01},
        {PFI_GF_TEMP, 32.1 + 0.0371 * power},
        {PFI_GF_FB_USED, fb_mib * 1048576.0},
        {PFI_GF_CLOCK_EVENTS, events},
        {PFI_GF_SM_ACTIVE, p.sm_active},
        {PFI_GF_SM_OCCUPANCY, 0.34 * p.sm_active},
        {PFI_GF_TENSOR_ACTIVE, p.tensor_active},
        {PFI_GF_DRAM_ACTIVE, p.dram_active},
    };
    for (size_t k = 0; k < sizeof set / sizeof set[0]; k++)
        pfi_gpu_sample_set(out, set[k].f, set[k].v);
done:
    pthread_mutex_unlock(&b->lock);
    return rc;
}

static int sim_throughput(pfi_backend *b, unsigned gpu, double *tok_s)
{
    sim_state *s = b->priv;
    *tok_s = 0;
    pthread_mutex_lock(&b->lock);
    int rc = check_gpu(b, gpu);
    if (rc == PFI_OK) {
        pfi_gpumodel_point p;
        sim_phase ph;
        const sim_job *j;
        state_at(s, gpu, sim_now(s), &p, &ph, &j);
        if (ph == PH_TRAINING) *tok_s = fmax(0.0, noisy(s, p.tput));
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

static int sim_limits(pfi_backend *b, unsigned gpu, pfi_gpu_limits *out)
{
    sim_state *s = b->priv;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&b->lock);
    int rc = check_gpu(b, gpu);
    if (rc == PFI_OK) {
        out->min_w = s->spec->min_limit_w;
        out->max_w = s->spec->max_limit_w;
        out->default_w = s->spec->tdp_w;
        out->enforced_w = out->current_w = s->gpus[gpu].limit_w;
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

static int sim_set_limit(pfi_backend *b, unsigned gpu, double w)
{
    sim_state *s = b->priv;
    pthread_mutex_lock(&b->lock);
    int rc = check_gpu(b, gpu);
    if (rc != PFI_OK) goto done;
    double lo = s->spec->min_limit_w, hi = s->spec->max_limit_w;
    if (!isfinite(w) || w < lo || w > hi) {
        pfi_backend_set_error(b, "GPU %u: limit %.3f W is outside the device's range %.0f-%.0f W",
                              gpu, w, lo, hi);
        rc = PFI_ERANGE;
        goto done;
    }
    /* Energy up to now was drawn under the old limit. */
    double t = sim_now(s);
    integrate(s, gpu, t, s->gpus[gpu].last_power_w);
    s->gpus[gpu].limit_w = round(w * 1000.0) / 1000.0; /* a whole 1/1000 W, as NVML's mW */
    pfi_gpumodel_point p;
    sim_phase ph;
    const sim_job *j;
    state_at(s, gpu, t, &p, &ph, &j);
    s->gpus[gpu].last_power_w = p.power_w;
done:
    pthread_mutex_unlock(&b->lock);
    return rc;
}

static int sim_info(pfi_backend *b, unsigned gpu, pfi_gpu_info *out)
{
    sim_state *s = b->priv;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&b->lock);
    int rc = check_gpu(b, gpu);
    if (rc == PFI_OK) {
        snprintf(out->name, sizeof out->name, "%s", s->spec->name);
        snprintf(out->uuid, sizeof out->uuid, "GPU-5155d000-0000-4000-8000-%012u", gpu);
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

static int sim_count(pfi_backend *b, unsigned *n)
{
    *n = ((sim_state *)b->priv)->n;
    return PFI_OK;
}

static const char *sim_last_error(const pfi_backend *b)
{
    return b->last_error;
}

int pfi_sim_set_time(pfi_backend *b, double t_s)
{
    if (!b || b->ops != &pfi_backend_sim_ops || !isfinite(t_s)) return PFI_EINVAL;
    pthread_mutex_lock(&b->lock);
    sim_state *s = b->priv;
    if (t_s >= 0) {
        s->pinned = t_s;
    } else {
        /* Back to the wall clock, continuing from the pinned time. */
        if (s->pinned >= 0) s->t0 = mono_s() - s->pinned;
        s->pinned = -1;
    }
    pthread_mutex_unlock(&b->lock);
    return PFI_OK;
}

const pfi_backend_ops pfi_backend_sim_ops = {
    .name = "sim",
    .init = sim_init,
    .close = sim_close,
    .last_error = sim_last_error,
    .count = sim_count,
    .info = sim_info,
    .sample = sim_sample,
    .limits = sim_limits,
    .set_limit = sim_set_limit,
    .throughput = sim_throughput,
};
