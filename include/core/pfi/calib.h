/* Calibrates a GPU-model job (gpumodel.h) so that its power-cap sweep has a
 * given ratio PFI (paper Eq. 1) and, optionally, a given PFI on the paper's
 * 4-cap sub-grid 200/500/600/700 W (Table 9). Pure computation, no I/O.
 *
 * The job's activities and throughput come from the caller; the fit sets its
 * shape: compute_frac and extra_w (one axis: a compute-boundness theta in
 * (0, 2), compute_frac = theta up to 1, then extra_w grows), floor_mhz and
 * clock_spread. Three shape parameters meet one or two targets, so the fit
 * (gsl_multifit_nlinear) carries weak Gaussian priors on the last two: it
 * moves them only as far as the targets need.
 *
 * A 4-cap PFI below the 6-cap one (Table 9's gpt-oss-20b EP1, no compile)
 * needs mild caps that cost relatively more throughput than deep ones: the
 * slowest-GPU lag that appears when a cap first binds. That shape is only
 * reachable for a job that is not clock-limited uncapped (its demand at max
 * clock below the TDP); the activities the caller passes decide that.
 */
#ifndef PFI_CALIB_H
#define PFI_CALIB_H

#include <stddef.h>

#include "pfi/error.h"
#include "pfi/gpumodel.h"

enum { PFI_CALIB_MAX_CAPS = 16 };

/* A modelled sweep of one GPU: for caps[i] (ascending, the last the uncapped
 * TDP), per-GPU power P[i] (W) and throughput T[i] (tokens/s), each times
 * (1 + noise_p[i]) and (1 + noise_t[i]) (NULL = no noise): a measurement
 * realization. */
int pfi_calib_sweep(const pfi_gpu_spec *gpu, const pfi_job_model *job, const double *caps, size_t n,
                    const double *noise_p, const double *noise_t, double *P, double *T);

/* The ratio PFI of a modelled sweep on all its caps (*pfi) and, when
 * pfi_4cap != NULL, on the caps among 200/500/600/700 W. */
int pfi_calib_pfi(const pfi_gpu_spec *gpu, const pfi_job_model *job, const double *caps, size_t n,
                  const double *noise_p, const double *noise_t, double *pfi, double *pfi_4cap);

typedef struct pfi_calib_report {
    double pfi, pfi_4cap; /* achieved */
    double err, err_4cap; /* achieved - target (0 when no 4-cap target) */
    size_t iterations;
} pfi_calib_report;

/* Fits base's shape to the targets (pfi_4cap_target 0 = none) and writes the
 * calibrated job to *out. PFI_EINFEASIBLE (with the closest job in *out) when
 * a target is missed by more than 0.002. */
int pfi_calib_fit(const pfi_gpu_spec *gpu, const pfi_job_model *base, const double *caps, size_t n,
                  const double *noise_p, const double *noise_t, double pfi_target,
                  double pfi_4cap_target, pfi_job_model *out, pfi_calib_report *rep,
                  pfi_error *err);

#endif
