/* OLS with an intercept, cross-validation and leverage (see model.h for the
 * definitions). The fit standardises each column on the training rows, solves
 * with GSL's truncated-SVD least squares and refuses a rank-deficient design
 * instead of returning an arbitrary minimum-norm solution. */
#include "pfi/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit.h>

#include "pfi/stats.h"

/* Singular values below this fraction of the largest count as zero: the
 * design is then collinear (after standardisation, so units do not matter). */
#define RANK_TOL 1e-10

/* Fits on the rows listed in rows[0..m) (indices into X, y). */
static int fit_rows(const double *X, const double *y, size_t p, const size_t *rows, size_t m,
                    pfi_ols *out, pfi_error *err)
{
    if (m < p + 2)
        return pfi_error_set(err, PFI_ENODATA, NULL, 0,
                             "%zu groups cannot fit %zu feature(s): need at least %zu", m, p,
                             p + 2);
    double mean[PFI_MODEL_MAX_P], sd[PFI_MODEL_MAX_P];
    for (size_t j = 0; j < p; j++) {
        double s = 0, ss = 0;
        for (size_t r = 0; r < m; r++)
            s += X[rows[r] * p + j];
        mean[j] = s / (double)m;
        for (size_t r = 0; r < m; r++) {
            double d = X[rows[r] * p + j] - mean[j];
            ss += d * d;
        }
        sd[j] = sqrt(ss / (double)m);
        /* relative test: a feature varying only in its last bits is constant */
        if (!(sd[j] > 1e-12 * fmax(1.0, fabs(mean[j]))))
            return pfi_error_set(err, PFI_EUNDEFINED, NULL, 0,
                                 "feature %zu is constant over the %zu groups fitted", j + 1, m);
    }
    double ybar = 0, sst = 0;
    for (size_t r = 0; r < m; r++)
        ybar += y[rows[r]];
    ybar /= (double)m;
    for (size_t r = 0; r < m; r++)
        sst += (y[rows[r]] - ybar) * (y[rows[r]] - ybar);
    if (!(sst > 0))
        return pfi_error_set(err, PFI_EUNDEFINED, NULL, 0,
                             "PFI is the same for all %zu groups fitted: R2 undefined", m);

    gsl_matrix *A = gsl_matrix_alloc(m, p + 1);
    gsl_vector *b = gsl_vector_alloc(m), *c = gsl_vector_alloc(p + 1);
    gsl_matrix *cov = gsl_matrix_alloc(p + 1, p + 1);
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(m, p + 1);
    int rc = PFI_OK;
    if (!A || !b || !c || !cov || !w) {
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        goto done;
    }
    for (size_t r = 0; r < m; r++) {
        gsl_matrix_set(A, r, 0, 1.0);
        for (size_t j = 0; j < p; j++)
            gsl_matrix_set(A, r, j + 1, (X[rows[r] * p + j] - mean[j]) / sd[j]);
        gsl_vector_set(b, r, y[rows[r]]);
    }
    double chisq;
    size_t rank;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int g = gsl_multifit_linear_tsvd(A, b, RANK_TOL, c, cov, &chisq, &rank, w);
    gsl_set_error_handler(old);
    if (g != GSL_SUCCESS) {
        rc = pfi_error_set(err, PFI_EUNDEFINED, NULL, 0, "least squares failed: %s",
                           gsl_strerror(g));
        goto done;
    }
    if (rank < p + 1) {
        rc = pfi_error_set(err, PFI_EUNDEFINED, NULL, 0,
                           "singular design: %zu features are collinear (rank %zu of %zu)", p, rank,
                           p + 1);
        goto done;
    }
    memset(out, 0, sizeof *out);
    out->p = p;
    out->n = m;
    double b0 = gsl_vector_get(c, 0);
    for (size_t j = 0; j < p; j++) {
        double bj = gsl_vector_get(c, j + 1) / sd[j];
        out->coef[j + 1] = bj;
        b0 -= bj * mean[j];
    }
    out->coef[0] = b0;
    double ssr = 0;
    for (size_t r = 0; r < m; r++) {
        double e = y[rows[r]] - pfi_model_predict(out, &X[rows[r] * p]);
        ssr += e * e;
    }
    out->r2 = 1 - ssr / sst;
    out->rmse = sqrt(ssr / (double)m);
    if (!isfinite(out->r2) || !isfinite(out->coef[0]))
        rc = pfi_error_set(err, PFI_EUNDEFINED, NULL, 0, "fit is numerically degenerate");
done:
    gsl_multifit_linear_free(w);
    gsl_matrix_free(cov);
    gsl_vector_free(c);
    gsl_vector_free(b);
    gsl_matrix_free(A);
    return rc;
}

static int check_args(const double *X, const double *y, size_t n, size_t p, pfi_error *err)
{
    if (!X || !y || p == 0 || p > PFI_MODEL_MAX_P)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "need 1 to %d features, got %zu",
                             PFI_MODEL_MAX_P, p);
    for (size_t i = 0; i < n * p; i++)
        if (!isfinite(X[i]))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "group %zu: feature %zu is not finite",
                                 i / p + 1, i % p + 1);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(y[i]))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "group %zu: PFI is not finite", i + 1);
    return PFI_OK;
}

int pfi_model_ols(const double *X, const double *y, size_t n, size_t p, pfi_ols *out,
                  pfi_error *err)
{
    int rc = check_args(X, y, n, p, err);
    if (rc != PFI_OK || !out) return rc ? rc : PFI_EINVAL;
    size_t *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (size_t i = 0; i < n; i++)
        rows[i] = i;
    pfi_ols m;
    rc = fit_rows(X, y, p, rows, n, &m, err);
    free(rows);
    if (rc == PFI_OK) *out = m;
    return rc;
}

double pfi_model_predict(const pfi_ols *m, const double *x)
{
    double v = m->coef[0];
    for (size_t j = 0; j < m->p; j++)
        v += m->coef[j + 1] * x[j];
    return v;
}

/* Leave-one-out without n refits: for OLS the prediction of row i by the fit
 * without it is y_i - e_i / (1 - h_i) (the PRESS identity), with e_i the full
 * fit's residual and h_i its leverage. h_i = 1 means the other rows cannot
 * determine the fit (e.g. the only MoE group and an arch dummy): undefined,
 * as the refit would be singular. `rows` is scratch (n entries). */
static int loo_press(const double *X, const double *y, size_t n, size_t p, const pfi_ols *full,
                     size_t *rows, double *yhat, pfi_error *err)
{
    if (n < p + 3)
        return pfi_error_set(err, PFI_ENODATA, NULL, 0,
                             "leave-one-out with %zu feature(s) needs at least %zu groups", p,
                             p + 3);
    double *h = malloc(n * sizeof *h);
    if (!h) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int rc = pfi_model_leverage(X, n, p, h, err);
    for (size_t i = 0; rc == PFI_OK && i < n; i++) {
        if (!(1 - h[i] > 1e-9)) {
            /* refit to name the cause (constant feature or singular design) */
            size_t m = 0;
            for (size_t k = 0; k < n; k++)
                if (k != i) rows[m++] = k;
            pfi_ols tmp;
            char msg[sizeof err->msg] = "the other groups cannot determine the fit";
            if (fit_rows(X, y, p, rows, m, &tmp, err) != PFI_OK && err)
                snprintf(msg, sizeof msg, "%s", err->msg);
            rc = pfi_error_set(err, PFI_EUNDEFINED, NULL, 0, "group %zu held out: %s", i + 1, msg);
            break;
        }
        double e = y[i] - pfi_model_predict(full, &X[i * p]);
        yhat[i] = y[i] - e / (1 - h[i]);
    }
    free(h);
    return rc;
}

int pfi_model_cv(const double *X, const double *y, size_t n, size_t p, const size_t *fold,
                 size_t n_folds, double *pred, pfi_cv *out, pfi_error *err)
{
    int rc = check_args(X, y, n, p, err);
    if (rc != PFI_OK || !out) return rc ? rc : PFI_EINVAL;
    if (fold) {
        for (size_t i = 0; i < n; i++)
            if (fold[i] >= n_folds)
                return pfi_error_set(err, PFI_EINVAL, NULL, 0, "group %zu: fold out of range",
                                     i + 1);
    } else {
        n_folds = n;
    }
    pfi_ols full;
    rc = pfi_model_ols(X, y, n, p, &full, err);
    if (rc != PFI_OK) return rc;

    size_t *rows = malloc(n * sizeof *rows);
    double *yhat = malloc(n * sizeof *yhat);
    if (!rows || !yhat) {
        free(rows);
        free(yhat);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    size_t used = 0;
    if (!fold) {
        rc = loo_press(X, y, n, p, &full, rows, yhat, err);
        used = n;
        n_folds = 0; /* done: skip the refitting loop */
    }
    for (size_t f = 0; f < n_folds && rc == PFI_OK; f++) {
        size_t m = 0, held = 0;
        for (size_t i = 0; i < n; i++) {
            size_t fi = fold ? fold[i] : i;
            if (fi != f)
                rows[m++] = i;
            else
                held++;
        }
        if (held == 0) continue;
        used++;
        pfi_ols fm;
        rc = fit_rows(X, y, p, rows, m, &fm, err);
        if (rc != PFI_OK) {
            char msg[sizeof err->msg];
            if (err) {
                snprintf(msg, sizeof msg, "%s", err->msg);
                pfi_error_set(err, rc, NULL, 0, "%s %zu held out: %s", fold ? "fold" : "group",
                              f + 1, msg);
            }
            break;
        }
        for (size_t i = 0; i < n; i++)
            if ((fold ? fold[i] : i) == f) yhat[i] = pfi_model_predict(&fm, &X[i * p]);
    }
    if (rc == PFI_OK && used < 2)
        rc = pfi_error_set(err, PFI_ENODATA, NULL, 0,
                           "cross-validation needs at least two non-empty folds");
    if (rc == PFI_OK) {
        double ybar = 0, sst = 0, ssr = 0;
        for (size_t i = 0; i < n; i++)
            ybar += y[i];
        ybar /= (double)n;
        for (size_t i = 0; i < n; i++) {
            sst += (y[i] - ybar) * (y[i] - ybar);
            ssr += (y[i] - yhat[i]) * (y[i] - yhat[i]);
        }
        memset(out, 0, sizeof *out);
        out->n = n;
        out->folds = used;
        out->r2_in = full.r2;
        out->r2_oos = 1 - ssr / sst; /* sst > 0: the full fit checked it */
        out->rmse = sqrt(ssr / (double)n);
        out->has_rho = pfi_stats_spearman(y, yhat, n, &out->rho, NULL) == PFI_OK;
        if (!out->has_rho) out->rho = 0;
        if (!isfinite(out->r2_oos) || !isfinite(out->rmse))
            rc = pfi_error_set(err, PFI_EUNDEFINED, NULL, 0, "held-out predictions are not finite");
        if (rc == PFI_OK && pred) memcpy(pred, yhat, n * sizeof *pred);
    }
    free(rows);
    free(yhat);
    return rc;
}

int pfi_model_validate(const pfi_ols *m, const double *X, const double *y, size_t n,
                       pfi_validation *out)
{
    if (!m || !X || !y || !out || n == 0) return n ? PFI_EINVAL : PFI_ENODATA;
    double *yhat = malloc(n * sizeof *yhat);
    if (!yhat) return PFI_ENOMEM;
    double ybar = 0, sst = 0, ssr = 0;
    for (size_t i = 0; i < n; i++) {
        yhat[i] = pfi_model_predict(m, &X[i * m->p]);
        ybar += y[i];
    }
    ybar /= (double)n;
    for (size_t i = 0; i < n; i++) {
        sst += (y[i] - ybar) * (y[i] - ybar);
        ssr += (y[i] - yhat[i]) * (y[i] - yhat[i]);
    }
    memset(out, 0, sizeof *out);
    out->n = n;
    out->rmse = sqrt(ssr / (double)n);
    out->has_r2 = n >= 2 && sst > 0;
    out->r2 = out->has_r2 ? 1 - ssr / sst : 0;
    out->has_rho = pfi_stats_spearman(y, yhat, n, &out->rho, NULL) == PFI_OK;
    if (!out->has_rho) out->rho = 0;
    free(yhat);
    return isfinite(out->rmse) && isfinite(out->r2) ? PFI_OK : PFI_EUNDEFINED;
}

int pfi_model_leverage(const double *X, size_t n, size_t p, double *h, pfi_error *err)
{
    int rc = PFI_OK;
    if (!X || !h || p == 0 || p > PFI_MODEL_MAX_P)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "need 1 to %d features, got %zu",
                             PFI_MODEL_MAX_P, p);
    for (size_t i = 0; i < n * p; i++)
        if (!isfinite(X[i]))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "group %zu: feature %zu is not finite",
                                 i / p + 1, i % p + 1);
    if (n < p + 1)
        return pfi_error_set(err, PFI_ENODATA, NULL, 0, "leverage needs more groups than features");
    gsl_matrix *A = gsl_matrix_alloc(n, p + 1), *V = gsl_matrix_alloc(p + 1, p + 1);
    gsl_vector *S = gsl_vector_alloc(p + 1), *work = gsl_vector_alloc(p + 1);
    if (!A || !V || !S || !work) {
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        goto done;
    }
    for (size_t j = 0; j < p; j++) {
        double s = 0, ss = 0;
        for (size_t i = 0; i < n; i++)
            s += X[i * p + j];
        s /= (double)n;
        for (size_t i = 0; i < n; i++)
            ss += (X[i * p + j] - s) * (X[i * p + j] - s);
        double sd = sqrt(ss / (double)n);
        if (!(sd > 1e-12 * fmax(1.0, fabs(s)))) {
            rc = pfi_error_set(err, PFI_EUNDEFINED, NULL, 0, "feature %zu is constant", j + 1);
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            gsl_matrix_set(A, i, j + 1, (X[i * p + j] - s) / sd);
    }
    for (size_t i = 0; i < n; i++)
        gsl_matrix_set(A, i, 0, 1.0);
    /* H = U U' over the non-zero singular values, so h_i = sum_k U_ik^2 */
    gsl_linalg_SV_decomp(A, V, S, work);
    double smax = gsl_vector_get(S, 0);
    for (size_t k = 0; k <= p; k++)
        if (!(gsl_vector_get(S, k) > RANK_TOL * smax)) {
            rc = pfi_error_set(err, PFI_EUNDEFINED, NULL, 0, "singular design: collinear features");
            goto done;
        }
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t k = 0; k <= p; k++)
            s += gsl_matrix_get(A, i, k) * gsl_matrix_get(A, i, k);
        h[i] = s;
    }
done:
    gsl_vector_free(work);
    gsl_vector_free(S);
    gsl_matrix_free(V);
    gsl_matrix_free(A);
    return rc;
}

int pfi_model_leverage_drop(const double *x, const double *y, size_t n, size_t kmax,
                            pfi_leverage_step *out, pfi_error *err)
{
    if (!x || !y || !out) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "NULL argument");
    if (kmax >= n)
        return pfi_error_set(err, PFI_ENODATA, NULL, 0, "cannot drop %zu of %zu groups", kmax, n);
    double *h = malloc(n * sizeof *h), *xs = malloc(n * sizeof *xs), *ys = malloc(n * sizeof *ys);
    char *gone = calloc(n, 1);
    int rc =
        (h && xs && ys && gone) ? PFI_OK : pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    if (rc == PFI_OK) rc = pfi_model_leverage(x, n, 1, h, err);
    for (size_t k = 0; rc == PFI_OK && k <= kmax; k++) {
        pfi_leverage_step *s = &out[k];
        memset(s, 0, sizeof *s);
        s->k = k;
        if (k > 0) {
            size_t best = n;
            for (size_t i = 0; i < n; i++)
                if (!gone[i] && (best == n || h[i] > h[best])) best = i;
            gone[best] = 1;
            s->dropped = best;
        }
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (!gone[i]) {
                xs[m] = x[i];
                ys[m++] = y[i];
            }
        s->n = m;
        s->has = pfi_stats_spearman(xs, ys, m, &s->rho, &s->p) == PFI_OK;
        if (!s->has) s->rho = s->p = 0;
    }
    free(h);
    free(xs);
    free(ys);
    free(gone);
    return rc;
}
