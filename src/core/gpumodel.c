/* A mechanistic model of one GPU running one training job under a power cap.
 *
 * Mechanism (paper Sec. 5 and Fig. 6; the real H200 traces in
 * ../shared/data/h200-probe/README.md): a power cap lowers the SM clock while
 * the memory clock stays at 3201 MHz, so work bound by the SMs slows down and
 * work bound by memory, communication or the host does not.
 *
 * Step time. With x = f / fmax the normalized SM clock and c the job's
 * compute-bound share of its step at fmax, a step takes
 *     t(x) = c / x + (1 - c)                                   (relative to fmax)
 * and throughput is tput_per_gpu / t(x) (Amdahl's law over the clock).
 *
 * Activity. A step moves the same bytes and issues the same tensor work at any
 * clock, so the time-averaged DCGM ratios stretch with the step:
 *     DRAM_ACTIVE(x)  = dram_activity / t(x)
 *     TENSOR_ACTIVE(x) = tensor_ratio * sm_activity / (c + (1 - c) x)  (<= SM_ACTIVE)
 * and SM_ACTIVE stays (compute and memory kernels both occupy the SMs).
 *
 * Power. CMOS dynamic power is C V^2 f and the DVFS table raises V with f, so
 * dynamic power grows as f^k with k > 1 (k = 3 if V were proportional to f;
 * less where V sits near its floor). Static (leakage, board, fans) power is
 * flat and DRAM power follows DRAM activity at the fixed memory clock:
 *     P(x) = static_w + mem_w_per_util * DRAM_ACTIVE(x)
 *            + (dyn_w * sm_activity + tensor_w * TENSOR_ACTIVE(x)) * x^k.
 * static_w, mem_w_per_util, dyn_w, tensor_w and k are fitted by nonlinear
 * least squares (gsl_multifit_nlinear, src/core/gpumodel_fit.c) to every
 * loaded sample of the H200 probe (`pfi model --fit-probe`, see below).
 *
 * Cap. The power controller holds the average a little under the limit
 * (cap_tracking: the probe's GEMM at the 700 W limit averages 695 W over its
 * top-10% samples). The clock settles at the x in [fmin/fmax, 1] where
 * P(x) = cap * cap_tracking; a job whose P(1) already exceeds the default limit
 * is clock-limited uncapped (the probe's GEMM and dense_train). Should even
 * the lowest clock draw too much, the GPU duty-cycles (hardware slowdown):
 * power holds at the target and work scales down with it, while the idle
 * floor keeps drawing, so deep caps cost throughput faster than power. How low
 * DVFS goes before that happens depends on the job (floor_mhz: the paper's
 * Table 9 shows sweeps whose 300-400 W runs lose more throughput than power
 * and one whose 500-600 W runs do; the clock floor and clock_spread below
 * give the model those two shapes).
 *
 * Power that does not follow the clock (extra_w: NVLink and NIC traffic,
 * host I/O) lowers the share a cap can remove.
 *
 * Many GPUs. A synchronous multi-GPU step waits for its slowest GPU. Chips
 * differ in power efficiency (Sinha et al., "Not all GPUs are created equal",
 * SC'22), so once a cap binds their clocks spread and the job runs at the
 * slowest one: clock_spread is that lag at the TDP, ramping in over the
 * first 2% of overshoot so the curve stays continuous, and growing as
 * tdp / cap (leakage differences are a fixed number of watts, a larger share
 * of a smaller budget). The waiting GPUs' power dip is neglected.
 */
#include "pfi/gpumodel.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* H200 SXM (nvml_info.json, smi.csv of the probe): limit 200-700 W, SM clock
 * 345 (the idle clock NVML reports) to 1980 MHz, memory 3201 MHz, idle 80 W
 * (trace.csv, idle phase at 345 MHz).
 * Fitted constants: `pfi model --fit-probe ../shared/data/h200-probe`
 * printed the values below (weighted nonlinear least squares on the steady
 * means of the gemm, stream, dense_train and moe_train loads, with the priors
 * documented in src/cli/cmd_model.c; rmse 19 W, standard errors static 18 W,
 * mem 39 W, dyn 41 W, tensor 74 W, exponent 0.20). The exponent comes out
 * 1.75, below the 3 of V ~ f: in the capping range the H200 runs near its
 * voltage floor. The telemetry maps (copy util per DRAM activity, GPU util
 * exponent) are per-sample least squares on the same trace. The model then
 * puts the GEMM at 1481 MHz / 695 W (probe: 1457-1467 MHz, 692-695 W), the
 * stream at 1980 MHz, dense_train at 1760 MHz (1757) and moe_train at 428 W
 * (404 W: the largest misfit). */
static const pfi_gpu_spec h200 = {
    .name = "NVIDIA H200",
    .tdp_w = 700,
    .min_limit_w = 200,
    .max_limit_w = 700,
    .sm_clock_min_mhz = 345,
    .sm_clock_max_mhz = 1980,
    .mem_clock_mhz = 3201,
    .idle_w = 80,
    .static_w = 62.8866,
    .mem_w_per_util = 212.2728,
    .dyn_w = 365.2320,
    .dyn_exp = 1.7501,
    .tensor_w = 713.3103,
    .cap_tracking = 0.993,
    .copy_per_dram = 1.1098,
    .gpu_util_exp = 0.4965,
};

/* H100 SXM: same 700 W TDP and 200-700 W limits, 1980 MHz max SM clock,
 * HBM3 at 2619 MHz. Its 80 GB of HBM3 draw less than the H200's 141 GB of
 * HBM3e, so its memory power is scaled by the stack count ratio (5/6); the
 * SM side is the same die (GH100), so the SM constants are the H200's. */
static const pfi_gpu_spec h100 = {
    .name = "NVIDIA H100 80GB HBM3",
    .tdp_w = 700,
    .min_limit_w = 200,
    .max_limit_w = 700,
    .sm_clock_min_mhz = 345,
    .sm_clock_max_mhz = 1980,
    .mem_clock_mhz = 2619,
    .idle_w = 70,
    .static_w = 62.8866,
    .mem_w_per_util = 212.2728 * 5.0 / 6.0,
    .dyn_w = 365.2320,
    .dyn_exp = 1.7501,
    .tensor_w = 713.3103,
    .cap_tracking = 0.993,
    .copy_per_dram = 1.1098,
    .gpu_util_exp = 0.4965,
};

const pfi_gpu_spec *pfi_gpumodel_h200(void)
{
    return &h200;
}
const pfi_gpu_spec *pfi_gpumodel_h100(void)
{
    return &h100;
}

double pfi_gpumodel_step_time(const pfi_job_model *job, double x)
{
    return job->compute_frac / x + (1.0 - job->compute_frac);
}

static double tensor_at(const pfi_job_model *job, double x)
{
    double c = job->compute_frac;
    double t = job->tensor_ratio * job->sm_activity / (c + (1.0 - c) * x);
    return t < job->sm_activity ? t : job->sm_activity;
}

double pfi_gpumodel_power_at(const pfi_gpu_spec *gpu, const pfi_job_model *job, double x)
{
    double dram = job->dram_activity / pfi_gpumodel_step_time(job, x);
    double dyn = gpu->dyn_w * job->sm_activity + gpu->tensor_w * tensor_at(job, x);
    return gpu->static_w + job->extra_w + gpu->mem_w_per_util * dram + dyn * pow(x, gpu->dyn_exp);
}

static int in01(double v)
{
    return isfinite(v) && v >= 0 && v <= 1;
}

/* P(x) is increasing in x (every term is), so bisection finds the clock where
 * it meets the target; 60 halvings reach double precision on [xmin, 1]. */
static double solve_clock(const pfi_gpu_spec *gpu, const pfi_job_model *job, double xmin,
                          double target)
{
    double lo = xmin, hi = 1.0;
    for (int i = 0; i < 60 && hi - lo > 1e-13; i++) {
        double mid = 0.5 * (lo + hi);
        if (pfi_gpumodel_power_at(gpu, job, mid) > target)
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

int pfi_gpumodel_eval(const pfi_gpu_spec *gpu, const pfi_job_model *job, double cap_w,
                      pfi_gpumodel_point *out)
{
    if (!gpu || !out) return PFI_EINVAL;
    if (!isfinite(cap_w) || cap_w < gpu->min_limit_w - 1e-9 || cap_w > gpu->max_limit_w + 1e-9)
        return PFI_ERANGE;
    *out = (pfi_gpumodel_point){.cap_w = cap_w, .mem_clock_mhz = gpu->mem_clock_mhz};
    if (!job) {
        out->power_w = gpu->idle_w < cap_w ? gpu->idle_w : cap_w;
        out->sm_clock_mhz = gpu->sm_clock_min_mhz;
        return PFI_OK;
    }
    if (!in01(job->compute_frac) || !in01(job->sm_activity) || !in01(job->dram_activity) ||
        !in01(job->tensor_ratio) || !isfinite(job->tput_per_gpu) || job->tput_per_gpu < 0 ||
        !isfinite(job->clock_spread) || job->clock_spread < 0 || job->clock_spread > 0.2 ||
        !isfinite(job->floor_mhz) || job->floor_mhz < 0 || job->floor_mhz > gpu->sm_clock_max_mhz ||
        !isfinite(job->extra_w) || job->extra_w < 0)
        return PFI_EINVAL;

    double target = cap_w * gpu->cap_tracking;
    double fmin = job->floor_mhz > gpu->sm_clock_min_mhz ? job->floor_mhz : gpu->sm_clock_min_mhz;
    double xmin = fmin / gpu->sm_clock_max_mhz;
    double demand = pfi_gpumodel_power_at(gpu, job, 1.0);
    double x = 1.0, power = demand, duty = 1.0;
    if (demand > target) {
        double pmin = pfi_gpumodel_power_at(gpu, job, xmin);
        if (pmin <= target) {
            x = solve_clock(gpu, job, xmin, target);
            power = pfi_gpumodel_power_at(gpu, job, x);
        } else {
            /* Even the lowest clock draws too much: hardware slowdown gates
             * the clock part of the time; only the idle floor is not gated. */
            x = xmin;
            duty = (target - gpu->idle_w) / (pmin - gpu->idle_w);
            if (duty < 0) duty = 0;
            power = gpu->idle_w + duty * (pmin - gpu->idle_w);
        }
    }
    /* The slowest GPU's lag ramps in over the first 2% of overshoot and
     * grows as tdp / cap: chip-to-chip leakage differences take a larger
     * share of a smaller power budget. */
    double bind = (demand - target) / (0.02 * target);
    bind = bind < 0 ? 0 : bind > 1 ? 1 : bind;
    double lag = job->clock_spread * bind * gpu->tdp_w / cap_w;
    double x_eff = x * (1.0 - (lag < 0.9 ? lag : 0.9));

    double t = pfi_gpumodel_step_time(job, x);
    out->power_w = power;
    out->sm_clock_mhz = x * gpu->sm_clock_max_mhz;
    out->tput = job->tput_per_gpu * duty / pfi_gpumodel_step_time(job, x_eff);
    out->sm_active = job->sm_activity * duty;
    out->tensor_active = tensor_at(job, x) * duty;
    out->dram_active = job->dram_activity / t * duty;
    double copy = gpu->copy_per_dram * out->dram_active;
    out->mem_copy_util_pct = 100.0 * (copy < 1 ? copy : 1);
    out->gpu_util_pct = 100.0 * pow(out->sm_active, gpu->gpu_util_exp);
    return PFI_OK;
}

/* The probe's four loads as model jobs. Activities are given at fmax; for
 * the two clock-limited loads they are the probe's means (README table)
 * mapped back from the measured clock with the formulas above: gemm ran at
 * x = 1467/1980 = 0.741 (dram 0.169 = d x for c = 1), dense_train at
 * x = 1759/1980 = 0.889 (t = 1.100 for c = 0.8: dram 0.288 * 1.100, tensor
 * 0.498 * 0.978 / 0.948). Throughput is results.json's tokens/s times t(x)
 * (gemm and stream count nominal units of work, not tokens). */
static const struct {
    const char *name;
    pfi_job_model job;
} presets[] = {
    {"gemm",
     {.compute_frac = 1.0,
      .sm_activity = 0.936,
      .dram_activity = 0.228,
      .tensor_ratio = 0.971,
      .tput_per_gpu = 4898706.0 / 0.741}},
    {"stream",
     {.compute_frac = 0.0,
      .sm_activity = 0.983,
      .dram_activity = 0.876,
      .tensor_ratio = 0.0,
      .tput_per_gpu = 530854706788.9}},
    {"dense_train",
     {.compute_frac = 0.8,
      .sm_activity = 0.948,
      .dram_activity = 0.317,
      .tensor_ratio = 0.514,
      .tput_per_gpu = 150852.1 * 1.100}},
    {"moe_train",
     {.compute_frac = 0.3,
      .sm_activity = 0.666,
      .dram_activity = 0.535,
      .tensor_ratio = 0.018,
      .tput_per_gpu = 64469.1}},
};

const pfi_job_model *pfi_gpumodel_preset(const char *name)
{
    for (size_t i = 0; name && i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(presets[i].name, name) == 0) return &presets[i].job;
    return NULL;
}

const char *pfi_gpumodel_preset_name(size_t i)
{
    return i < sizeof presets / sizeof presets[0] ? presets[i].name : NULL;
}
