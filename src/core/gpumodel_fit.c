/* Nonlinear least squares fit of the GPU model's power constants (see
 * include/core/pfi/gpumodel_fit.h and the model in gpumodel.c). */
#include "pfi/gpumodel_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

const char *const pfi_gpumodel_fit_names[PFI_GPUMODEL_FIT_NPARAM] = {
    "static_w", "mem_w_per_util", "dyn_w", "tensor_w", "dyn_exp"};

typedef struct {
    const pfi_gpumodel_sample *s;
    size_t n;
    double fmax;
    const pfi_gpumodel_prior *prior; /* may be NULL */
} fit_data;

static double sd_of(const pfi_gpumodel_sample *s)
{
    return s->sd_w > 0 ? s->sd_w : 1.0;
}

static int has_prior(const fit_data *d, int j)
{
    return d->prior && d->prior->sd[j] > 0;
}

static int resid(const gsl_vector *p, void *vd, gsl_vector *f)
{
    const fit_data *d = vd;
    double st = gsl_vector_get(p, 0), mw = gsl_vector_get(p, 1), dw = gsl_vector_get(p, 2),
           tw = gsl_vector_get(p, 3), k = gsl_vector_get(p, 4);
    for (size_t i = 0; i < d->n; i++) {
        const pfi_gpumodel_sample *s = &d->s[i];
        double xk = pow(s->sm_clock_mhz / d->fmax, k);
        double model = st + mw * s->dram_active + (dw * s->sm_active + tw * s->tensor_active) * xk;
        gsl_vector_set(f, i, (model - s->power_w) / sd_of(s));
    }
    for (int j = 0, r = 0; j < PFI_GPUMODEL_FIT_NPARAM; j++)
        if (has_prior(d, j))
            gsl_vector_set(f, d->n + (size_t)r++,
                           (gsl_vector_get(p, (size_t)j) - d->prior->mean[j]) / d->prior->sd[j]);
    return GSL_SUCCESS;
}

static int jac(const gsl_vector *p, void *vd, gsl_matrix *J)
{
    const fit_data *d = vd;
    double dw = gsl_vector_get(p, 2), tw = gsl_vector_get(p, 3), k = gsl_vector_get(p, 4);
    for (size_t i = 0; i < d->n; i++) {
        const pfi_gpumodel_sample *s = &d->s[i];
        double x = s->sm_clock_mhz / d->fmax, xk = pow(x, k);
        double w = 1.0 / sd_of(s);
        gsl_matrix_set(J, i, 0, w);
        gsl_matrix_set(J, i, 1, w * s->dram_active);
        gsl_matrix_set(J, i, 2, w * s->sm_active * xk);
        gsl_matrix_set(J, i, 3, w * s->tensor_active * xk);
        gsl_matrix_set(J, i, 4, w * (dw * s->sm_active + tw * s->tensor_active) * xk * log(x));
    }
    for (int j = 0, r = 0; j < PFI_GPUMODEL_FIT_NPARAM; j++)
        if (has_prior(d, j)) {
            size_t row = d->n + (size_t)r++;
            for (size_t q = 0; q < PFI_GPUMODEL_FIT_NPARAM; q++)
                gsl_matrix_set(J, row, q, q == (size_t)j ? 1.0 / d->prior->sd[j] : 0.0);
        }
    return GSL_SUCCESS;
}

static int sample_ok(const pfi_gpumodel_sample *s, double fmax)
{
    return isfinite(s->power_w) && s->power_w > 0 && isfinite(s->sm_clock_mhz) &&
           s->sm_clock_mhz > 0 && s->sm_clock_mhz <= fmax * 1.001 && isfinite(s->sm_active) &&
           s->sm_active >= 0 && s->sm_active <= 1 && isfinite(s->tensor_active) &&
           s->tensor_active >= 0 && s->tensor_active <= 1 && isfinite(s->dram_active) &&
           s->dram_active >= 0 && s->dram_active <= 1;
}

/* The two telemetry mappings are linear least squares (gsl_fit_mul, through
 * the origin): copy util vs DRAM active away from its 100% ceiling, and
 * log GPU util vs log SM active (GPU util = 100 * SM active^gamma). */
static void fit_telemetry_maps(const pfi_gpumodel_sample *s, size_t n, pfi_gpumodel_fit *out)
{
    double *a = malloc(2 * n * sizeof *a);
    out->copy_per_dram = NAN;
    out->gpu_util_exp = NAN;
    if (!a) return;
    double *b = a + n, c1, cov, ss;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(s[i].mem_copy_util) && s[i].mem_copy_util < 95 && s[i].dram_active > 0.02) {
            a[m] = s[i].dram_active;
            b[m++] = s[i].mem_copy_util / 100.0;
        }
    if (m >= 2 && gsl_fit_mul(a, 1, b, 1, m, &c1, &cov, &ss) == GSL_SUCCESS)
        out->copy_per_dram = c1;
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(s[i].gpu_util) && s[i].gpu_util > 0 && s[i].sm_active > 0.05) {
            a[m] = log(s[i].sm_active);
            b[m++] = log(s[i].gpu_util > 100 ? 1.0 : s[i].gpu_util / 100.0);
        }
    if (m >= 2 && gsl_fit_mul(a, 1, b, 1, m, &c1, &cov, &ss) == GSL_SUCCESS) out->gpu_util_exp = c1;
    free(a);
}

int pfi_gpumodel_fit_power(const pfi_gpumodel_sample *s, size_t n, double sm_clock_max_mhz,
                           const pfi_gpumodel_prior *prior, pfi_gpumodel_fit *out, pfi_error *err)
{
    if (!s || !out || !(sm_clock_max_mhz > 0))
        return pfi_error_set(err, PFI_EINVAL, "", 0, "gpumodel fit: bad arguments");
    for (size_t i = 0; i < n; i++)
        if (!sample_ok(&s[i], sm_clock_max_mhz))
            return pfi_error_set(err, PFI_EINVAL, "", 0,
                                 "gpumodel fit: sample %zu is out of range (power > 0, clock "
                                 "in (0, max], activities in [0, 1])",
                                 i);
    size_t npri = 0;
    for (int j = 0; prior && j < PFI_GPUMODEL_FIT_NPARAM; j++)
        npri += prior->sd[j] > 0;
    /* Every parameter needs an observation or a prior, and one more for the
     * residual variance. */
    if (n + npri <= PFI_GPUMODEL_FIT_NPARAM)
        return pfi_error_set(err, PFI_ENODATA, "", 0,
                             "gpumodel fit: %zu samples and %zu priors, need more than %d", n, npri,
                             PFI_GPUMODEL_FIT_NPARAM);
    memset(out, 0, sizeof *out);

    fit_data d = {s, n, sm_clock_max_mhz, prior};
    size_t nres = n + npri;
    gsl_multifit_nlinear_fdf fdf = {
        .f = resid, .df = jac, .n = nres, .p = PFI_GPUMODEL_FIT_NPARAM, .params = &d};
    /* Start from a generic 700 W GPU: 100 W static, 100 W DRAM, 300 + 150 W
     * SM and tensor dynamic power, quadratic in the clock. */
    double p0[PFI_GPUMODEL_FIT_NPARAM] = {100, 100, 300, 150, 2.0};
    gsl_vector_view x0 = gsl_vector_view_array(p0, PFI_GPUMODEL_FIT_NPARAM);
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, nres, PFI_GPUMODEL_FIT_NPARAM);
    gsl_matrix *cov = gsl_matrix_alloc(PFI_GPUMODEL_FIT_NPARAM, PFI_GPUMODEL_FIT_NPARAM);
    if (!w || !cov) {
        gsl_multifit_nlinear_free(w);
        gsl_matrix_free(cov);
        return pfi_error_set(err, PFI_ENOMEM, "", 0, "gpumodel fit: out of memory");
    }
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int info = 0, rc = gsl_multifit_nlinear_init(&x0.vector, &fdf, w);
    if (rc == GSL_SUCCESS)
        rc = gsl_multifit_nlinear_driver(500, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, w);
    int ret = PFI_OK;
    if (rc != GSL_SUCCESS) {
        ret = pfi_error_set(err, PFI_EINFEASIBLE, "", 0, "gpumodel fit did not converge: %s",
                            gsl_strerror(rc));
    } else {
        gsl_vector *f = gsl_multifit_nlinear_residual(w);
        double chi2;
        gsl_blas_ddot(f, f, &chi2);
        gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, cov);
        /* Weighted residuals are in units of each sample's sd, so the
         * covariance is used as is (no residual rescaling). */
        double ss = 0;
        for (int i = 0; i < PFI_GPUMODEL_FIT_NPARAM; i++) {
            out->p[i] = gsl_vector_get(w->x, i);
            out->se[i] = sqrt(gsl_matrix_get(cov, i, i));
        }
        for (size_t i = 0; i < n; i++) {
            double r = gsl_vector_get(f, i) * sd_of(&s[i]);
            ss += r * r;
        }
        (void)chi2;
        out->rmse_w = sqrt(ss / (double)n);
        out->n = n;
        out->iterations = gsl_multifit_nlinear_niter(w);
        fit_telemetry_maps(s, n, out);
    }
    gsl_set_error_handler(old);
    gsl_multifit_nlinear_free(w);
    gsl_matrix_free(cov);
    return ret;
}

void pfi_gpumodel_fit_apply(const pfi_gpumodel_fit *fit, pfi_gpu_spec *spec)
{
    spec->static_w = fit->p[0];
    spec->mem_w_per_util = fit->p[1];
    spec->dyn_w = fit->p[2];
    spec->tensor_w = fit->p[3];
    spec->dyn_exp = fit->p[4];
    if (isfinite(fit->copy_per_dram)) spec->copy_per_dram = fit->copy_per_dram;
    if (isfinite(fit->gpu_util_exp)) spec->gpu_util_exp = fit->gpu_util_exp;
}

/* Priors of the probe fit, (mean, sd) per parameter in the order of
 * pfi_gpumodel_fit_names: four loads alone cannot separate five constants
 * (without priors the fit trades a negative SM term against a 1 kW memory
 * term). Loaded static power 100 +/- 20 W (the idle GPU draws 80 W at
 * 345 MHz; leakage rises with temperature and voltage under load); DRAM power
 * at full activity 180 +/- 40 W (HBM3e at about 5 pJ/bit times the H200's
 * 4.8 TB/s); the DVFS exponent 2.5 +/- 0.5 (C V^2 f with V rising with f: 3
 * if V ~ f, 1 at the voltage floor). The SM and tensor terms are free. */
const pfi_gpumodel_prior pfi_gpumodel_probe_prior = {
    .mean = {100, 180, 0, 0, 2.5},
    .sd = {20, 40, 0, 0, 0.5},
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int pfi_gpumodel_fit_probe(const pfi_gpumodel_sample *s, const size_t *phase_of, size_t n,
                           size_t n_loads, double sm_clock_max_mhz, pfi_gpumodel_sample *loads,
                           size_t *which, size_t *n_used, pfi_gpumodel_fit *out, pfi_error *err)
{
    if (!s || !phase_of || !loads || !which || !n_used || !out || n_loads > 8)
        return pfi_error_set(err, PFI_EINVAL, "", 0, "gpumodel probe fit: bad arguments");
    double *pw = malloc((n ? n : 1) * sizeof *pw);
    if (!pw) return pfi_error_set(err, PFI_ENOMEM, "", 0, "gpumodel probe fit: out of memory");
    size_t nl = 0;
    for (size_t k = 0; k < n_loads; k++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (phase_of[i] == k) pw[m++] = s[i].power_w;
        if (m == 0) continue;
        qsort(pw, m, sizeof *pw, cmp_double);
        double med = pw[m / 2];
        pfi_gpumodel_sample acc = {0};
        size_t c = 0;
        for (size_t i = 0; i < n; i++) {
            if (phase_of[i] != k || s[i].power_w < 0.9 * med) continue;
            acc.power_w += s[i].power_w;
            acc.sm_clock_mhz += s[i].sm_clock_mhz;
            acc.sm_active += s[i].sm_active;
            acc.tensor_active += s[i].tensor_active;
            acc.dram_active += s[i].dram_active;
            acc.mem_copy_util += s[i].mem_copy_util;
            acc.gpu_util += s[i].gpu_util;
            c++;
        }
        double inv = 1.0 / (double)c;
        loads[nl] = (pfi_gpumodel_sample){acc.power_w * inv,     acc.sm_clock_mhz * inv,
                                          acc.sm_active * inv,   acc.tensor_active * inv,
                                          acc.dram_active * inv, acc.mem_copy_util * inv,
                                          acc.gpu_util * inv,    10.0};
        which[nl++] = k;
    }
    free(pw);
    *n_used = nl;
    int rc =
        pfi_gpumodel_fit_power(loads, nl, sm_clock_max_mhz, &pfi_gpumodel_probe_prior, out, err);
    if (rc != PFI_OK) return rc;
    /* The telemetry maps relate counters read in the same window: every
     * sample counts. */
    pfi_gpumodel_fit maps;
    if (pfi_gpumodel_fit_power(s, n, sm_clock_max_mhz, &pfi_gpumodel_probe_prior, &maps, NULL) ==
        PFI_OK) {
        out->copy_per_dram = maps.copy_per_dram;
        out->gpu_util_exp = maps.gpu_util_exp;
    }
    return PFI_OK;
}
