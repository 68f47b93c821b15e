/* Job calibration against published PFI (see include/core/pfi/calib.h). */
#include "pfi/calib.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "pfi/index.h"

int pfi_calib_sweep(const pfi_gpu_spec *gpu, const pfi_job_model *job, const double *caps, size_t n,
                    const double *noise_p, const double *noise_t, double *P, double *T)
{
    for (size_t i = 0; i < n; i++) {
        pfi_gpumodel_point pt;
        int rc = pfi_gpumodel_eval(gpu, job, caps[i], &pt);
        if (rc != PFI_OK) return rc;
        P[i] = pt.power_w * (1.0 + (noise_p ? noise_p[i] : 0.0));
        T[i] = pt.tput * (1.0 + (noise_t ? noise_t[i] : 0.0));
    }
    return PFI_OK;
}

static int is_4cap(double cap)
{
    return fabs(cap - 200) < 0.5 || fabs(cap - 500) < 0.5 || fabs(cap - 600) < 0.5 ||
           fabs(cap - 700) < 0.5;
}

int pfi_calib_pfi(const pfi_gpu_spec *gpu, const pfi_job_model *job, const double *caps, size_t n,
                  const double *noise_p, const double *noise_t, double *pfi, double *pfi_4cap)
{
    double P[PFI_CALIB_MAX_CAPS], T[PFI_CALIB_MAX_CAPS];
    if (n < 2 || n > PFI_CALIB_MAX_CAPS) return PFI_EINVAL;
    int rc = pfi_calib_sweep(gpu, job, caps, n, noise_p, noise_t, P, T);
    if (rc == PFI_OK) rc = pfi_index_ratio(P, T, n, NULL, pfi);
    if (rc != PFI_OK || !pfi_4cap) return rc;
    double P4[PFI_CALIB_MAX_CAPS], T4[PFI_CALIB_MAX_CAPS];
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (is_4cap(caps[i])) {
            P4[m] = P[i];
            T4[m++] = T[i];
        }
    return pfi_index_ratio(P4, T4, m, NULL, pfi_4cap);
}

/* Shape parameters, unconstrained u[0..2] mapped into their ranges:
 *   theta = 2 logistic(u0): compute_frac = 0.05 + 0.95 min(theta, 1),
 *           extra_w = 250 W * max(0, theta - 1)
 *   floor = fmin + (0.9 fmax - fmin) logistic(u1)
 *   clock_spread = 0.1 logistic(u2) */
static double logistic(double u)
{
    return 1.0 / (1.0 + exp(-u));
}

static void apply(const pfi_gpu_spec *gpu, const pfi_job_model *base, const double *u,
                  pfi_job_model *job)
{
    *job = *base;
    double theta = 2.0 * logistic(u[0]);
    job->compute_frac = 0.05 + 0.95 * (theta < 1 ? theta : 1);
    job->extra_w = theta > 1 ? 250.0 * (theta - 1) : 0;
    double fmin = gpu->sm_clock_min_mhz, fhi = 0.9 * gpu->sm_clock_max_mhz;
    job->floor_mhz = fmin + (fhi - fmin) * logistic(u[1]);
    job->clock_spread = 0.1 * logistic(u[2]);
}

/* Weak priors on u1 and u2: floor near the middle of its range, spread near
 * 0.005 (logistic(-3) * 0.1), each a few units wide. */
static const double prior_mean[3] = {0, 0, -3}, prior_sd[3] = {0, 3, 1.5};
/* Target residuals are in units of this PFI tolerance, so they dominate. */
#define PFI_SCALE 0.0005

typedef struct {
    const pfi_gpu_spec *gpu;
    const pfi_job_model *base;
    const double *caps, *np, *nt;
    size_t n;
    double t6, t4;
} calib_ctx;

static int resid(const gsl_vector *uv, void *vc, gsl_vector *f)
{
    const calib_ctx *c = vc;
    double u[3] = {gsl_vector_get(uv, 0), gsl_vector_get(uv, 1), gsl_vector_get(uv, 2)};
    pfi_job_model job;
    apply(c->gpu, c->base, u, &job);
    double p6 = 0, p4 = 0;
    /* An undefined PFI (no throughput lost) is pushed away hard but finitely. */
    if (pfi_calib_pfi(c->gpu, &job, c->caps, c->n, c->np, c->nt, &p6, c->t4 > 0 ? &p4 : NULL))
        p6 = p4 = 100;
    size_t r = 0;
    gsl_vector_set(f, r++, (p6 - c->t6) / PFI_SCALE);
    if (c->t4 > 0) gsl_vector_set(f, r++, (p4 - c->t4) / PFI_SCALE);
    for (int j = 1; j < 3; j++)
        gsl_vector_set(f, r++, (u[j] - prior_mean[j]) / prior_sd[j]);
    return GSL_SUCCESS;
}

int pfi_calib_fit(const pfi_gpu_spec *gpu, const pfi_job_model *base, const double *caps, size_t n,
                  const double *noise_p, const double *noise_t, double pfi_target,
                  double pfi_4cap_target, pfi_job_model *out, pfi_calib_report *rep, pfi_error *err)
{
    if (!gpu || !base || !caps || !out || n < 2 || n > PFI_CALIB_MAX_CAPS || !(pfi_target > 0) ||
        !(pfi_4cap_target >= 0))
        return pfi_error_set(err, PFI_EINVAL, "", 0, "calibration: bad arguments");
    calib_ctx c = {gpu, base, caps, noise_p, noise_t, n, pfi_target, pfi_4cap_target};
    size_t nres = (pfi_4cap_target > 0 ? 2 : 1) + 2;
    gsl_multifit_nlinear_fdf fdf = {.f = resid, .df = NULL, .n = nres, .p = 3, .params = &c};
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, nres, 3);
    if (!w) return pfi_error_set(err, PFI_ENOMEM, "", 0, "calibration: out of memory");
    gsl_error_handler_t *old = gsl_set_error_handler_off();

    /* Deterministic multi-start over compute-boundness: the PFI surface has
     * kinks (where a cap starts to bind or the floor engages). */
    static const double starts[][3] = {
        {0, 0, -3},     {1.5, 0, -3}, {-1.5, 0, -3}, {0, 1.5, -3}, {0, -1.5, -1}, {1.5, 1.5, -1},
        {2.5, 2.5, -3}, {1, 3, -3},   {-1, 3, -3},   {3, 1, -3},   {0.5, 2, -1},  {-0.5, 2.5, -2}};
    double best_u[3] = {0, 0, -3}, best = HUGE_VAL;
    size_t iters = 0;
    for (size_t s = 0; s < sizeof starts / sizeof starts[0] && best > 1.0; s++) {
        double u0[3] = {starts[s][0], starts[s][1], starts[s][2]};
        gsl_vector_view x0 = gsl_vector_view_array(u0, 3);
        int info;
        if (gsl_multifit_nlinear_init(&x0.vector, &fdf, w) != GSL_SUCCESS) continue;
        gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-12, NULL, NULL, &info, w);
        iters += gsl_multifit_nlinear_niter(w);
        /* Judge a start by its target misfit only (priors excluded). */
        gsl_vector *f = gsl_multifit_nlinear_residual(w);
        double miss = fabs(gsl_vector_get(f, 0));
        if (pfi_4cap_target > 0) miss = fmax(miss, fabs(gsl_vector_get(f, 1)));
        if (miss < best) {
            best = miss;
            for (int j = 0; j < 3; j++)
                best_u[j] = gsl_vector_get(w->x, (size_t)j);
        }
    }
    gsl_set_error_handler(old);
    gsl_multifit_nlinear_free(w);

    apply(gpu, base, best_u, out);
    pfi_calib_report r = {0};
    int rc = pfi_calib_pfi(gpu, out, caps, n, noise_p, noise_t, &r.pfi,
                           pfi_4cap_target > 0 ? &r.pfi_4cap : NULL);
    if (rc != PFI_OK)
        return pfi_error_set(err, PFI_EINFEASIBLE, "", 0, "calibration: PFI undefined");
    r.err = r.pfi - pfi_target;
    r.err_4cap = pfi_4cap_target > 0 ? r.pfi_4cap - pfi_4cap_target : 0;
    r.iterations = iters;
    if (rep) *rep = r;
    if (fabs(r.err) > 0.002 || fabs(r.err_4cap) > 0.002)
        return pfi_error_set(err, PFI_EINFEASIBLE, "", 0,
                             "calibration missed: PFI %.3f for %.3f, 4-cap %.3f for %.3f", r.pfi,
                             pfi_target, r.pfi_4cap, pfi_4cap_target);
    return PFI_OK;
}
