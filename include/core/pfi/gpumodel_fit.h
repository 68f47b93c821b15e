/* Fits the power constants of the GPU model (gpumodel.h) to measured samples
 * by nonlinear least squares (GSL gsl_multifit_nlinear, trust region with
 * Levenberg-Marquardt steps):
 *     power_w = static_w + mem_w_per_util * dram_active
 *               + (dyn_w * sm_active + tensor_w * tensor_active) * (f / fmax)^dyn_exp
 * The caller reads the samples (e.g. the h200-probe trace.csv); nothing here
 * does I/O. The fit allocates only GSL workspaces it frees before returning.
 */
#ifndef PFI_GPUMODEL_FIT_H
#define PFI_GPUMODEL_FIT_H

#include <stddef.h>

#include "pfi/error.h"
#include "pfi/gpumodel.h"

typedef struct pfi_gpumodel_sample {
    double power_w;       /* W */
    double sm_clock_mhz;  /* MHz */
    double sm_active;     /* ratio 0-1 */
    double tensor_active; /* ratio 0-1 */
    double dram_active;   /* ratio 0-1 */
    double mem_copy_util; /* percent, NaN if not measured */
    double gpu_util;      /* percent, NaN if not measured */
    double sd_w;          /* standard deviation of power_w, W (weight 1/sd^2); 0 = 1 W */
} pfi_gpumodel_sample;

enum { PFI_GPUMODEL_FIT_NPARAM = 5 };

typedef struct pfi_gpumodel_fit {
    /* static_w, mem_w_per_util, dyn_w, tensor_w, dyn_exp, in that order */
    double p[PFI_GPUMODEL_FIT_NPARAM];
    double se[PFI_GPUMODEL_FIT_NPARAM]; /* standard errors (weighted covariance)     */
    double rmse_w;                      /* root mean square residual, W */
    double copy_per_dram;               /* least squares slope of mem_copy_util/100 on dram_active
                                           (through the origin, samples with copy util < 95%) */
    double gpu_util_exp; /* least squares slope of log(gpu_util/100) on log(sm_active) */
    size_t n;            /* samples used */
    size_t iterations;
} pfi_gpumodel_fit;

/* Names of the fitted parameters, in the order of pfi_gpumodel_fit.p. */
extern const char *const pfi_gpumodel_fit_names[PFI_GPUMODEL_FIT_NPARAM];

/* Optional Gaussian priors on the parameters, added to the sum of squares as
 * pseudo-observations ((p - mean) / sd)^2; sd 0 = no prior on that parameter. */
typedef struct pfi_gpumodel_prior {
    double mean[PFI_GPUMODEL_FIT_NPARAM];
    double sd[PFI_GPUMODEL_FIT_NPARAM];
} pfi_gpumodel_prior;

/* Fits the constants to n samples of a GPU whose maximum SM clock is
 * sm_clock_max_mhz. PFI_ENODATA with fewer than 2 * NPARAM usable samples,
 * PFI_EINVAL on a non-finite or out-of-range sample (err names its index),
 * PFI_EINFEASIBLE if the solver does not converge. */
int pfi_gpumodel_fit_power(const pfi_gpumodel_sample *s, size_t n, double sm_clock_max_mhz,
                           const pfi_gpumodel_prior *prior, pfi_gpumodel_fit *out, pfi_error *err);

/* The priors of the probe fit (documented in gpumodel_fit.c). */
extern const pfi_gpumodel_prior pfi_gpumodel_probe_prior;

/* The fit behind the committed H200 constants. samples[i] belongs to load
 * phase_of[i] (< n_loads, at most 8 loads). Each load is reduced to its steady
 * state (samples within 10% of the load's median power, averaged, with a
 * 10 W model-error sd): the GPM activity counters are read over a shorter
 * window than the power sensor averages, so single samples disagree. The
 * power constants are fitted to those means with pfi_gpumodel_probe_prior;
 * the telemetry maps to every sample. loads/which (n_loads entries) receive
 * the reduced loads and their phase index, *n_used their count. */
int pfi_gpumodel_fit_probe(const pfi_gpumodel_sample *samples, const size_t *phase_of, size_t n,
                           size_t n_loads, double sm_clock_max_mhz, pfi_gpumodel_sample *loads,
                           size_t *which, size_t *n_used, pfi_gpumodel_fit *out, pfi_error *err);

/* Copies a fit's constants into spec (name, limits and clocks untouched). */
void pfi_gpumodel_fit_apply(const pfi_gpumodel_fit *fit, pfi_gpu_spec *spec);

#endif
