/* The PFI predictor (paper Sec. 5, Table 3, Appendix D.5): ordinary least
 * squares with an intercept on a chosen feature set, cross-validated by
 * leave-one-out (LOO) and leave-one-cluster-out (LOCO, clusters = arch x task).
 *
 * Data layout: X is row-major, n rows (sweep groups) by p columns (features,
 * intercept excluded); y holds the n PFI values. Columns are standardised
 * (training mean and SD) before the GSL fit (gsl_multifit_linear) so that
 * features in bytes/s and in ratios are equally well conditioned; the
 * coefficients returned are in the raw units.
 *
 * Definitions (state them when you report numbers):
 *   in-sample R2   = 1 - SS_res / SS_tot of the fit on all n rows;
 *   out-of-sample  = 1 - sum_i (y_i - yhat_{-i})^2 / sum_i (y_i - ybar)^2, where
 *   R2 (LOO/LOCO)    yhat_{-i} is predicted by the model fitted without row i's
 *                    fold and ybar is the FULL-sample mean (so it can be < 0,
 *                    and far below 0 when held-out predictions extrapolate);
 *   RMSE           = sqrt(mean_i (y_i - yhat_{-i})^2);
 *   rho            = Spearman rho between y and the held-out predictions.
 *
 * Errors: p == 0 or p > PFI_MODEL_MAX_P is PFI_EINVAL; fewer rows than
 * p + 2 (a fit needs a residual degree of freedom) is PFI_ENODATA; a constant
 * feature or a rank-deficient design (collinear features) is PFI_EUNDEFINED
 * with the column named in err. Outputs are never NaN.
 * Nothing here allocates beyond scratch space freed before returning.
 */
#ifndef PFI_MODEL_H
#define PFI_MODEL_H

#include <stddef.h>

#include "pfi/error.h"

#define PFI_MODEL_MAX_P 32

typedef struct pfi_ols {
    size_t p;                         /* features, intercept excluded */
    size_t n;                         /* rows fitted */
    double coef[PFI_MODEL_MAX_P + 1]; /* coef[0] intercept, coef[1 + j] feature j (raw units) */
    double r2;                        /* in-sample R2 */
    double rmse;                      /* in-sample RMSE */
} pfi_ols;

/* Fits y = b0 + sum_j b_j X[i, j]. */
int pfi_model_ols(const double *X, const double *y, size_t n, size_t p, pfi_ols *out,
                  pfi_error *err);

/* b0 + sum_j b_j x[j] for one row x[0..p). */
double pfi_model_predict(const pfi_ols *m, const double *x);

typedef struct pfi_cv {
    size_t n;      /* rows */
    size_t folds;  /* folds actually held out */
    double r2_in;  /* in-sample R2 of the fit on all rows */
    double r2_oos; /* out-of-sample R2, definition above */
    double rmse;   /* out-of-sample RMSE */
    double rho;    /* Spearman(y, held-out prediction); valid when has_rho */
    int has_rho;   /* 0 when the predictions are constant */
} pfi_cv;

/* Cross-validation. fold == NULL is leave-one-out, computed exactly without
 * refits by the PRESS identity yhat_{-i} = y_i - e_i / (1 - h_i); otherwise fold[i] in
 * [0, n_folds) names row i's fold (LOCO: one fold per arch x task cluster)
 * and each fold is held out in turn (an empty fold is skipped). When pred is
 * not NULL it receives the n held-out predictions. A training set that is
 * too small or singular for some fold fails the whole CV with that fold
 * named in err: a CV that silently skips folds would flatter the model. */
int pfi_model_cv(const double *X, const double *y, size_t n, size_t p, const size_t *fold,
                 size_t n_folds, double *pred, pfi_cv *out, pfi_error *err);

typedef struct pfi_validation {
    size_t n;
    double r2; /* 1 - SS_res / SS_tot around the validation set's own mean */
    double rmse;
    double rho;
    int has_r2, has_rho; /* 0 when n < 2 or y / predictions constant */
} pfi_validation;

/* Applies a fitted model to held-out groups (the paper's validation set). */
int pfi_model_validate(const pfi_ols *m, const double *X, const double *y, size_t n,
                       pfi_validation *out);

/* Leverages (diagonal of the hat matrix with intercept) of X's rows. */
int pfi_model_leverage(const double *X, size_t n, size_t p, double *h, pfi_error *err);

typedef struct pfi_leverage_step {
    size_t k;       /* rows dropped so far */
    size_t n;       /* rows left */
    size_t dropped; /* index of the row dropped at this step (k >= 1) */
    double rho, p;  /* Spearman(x, y) over the rows left; valid when has */
    int has;
} pfi_leverage_step;

/* The paper's Table 12: Spearman(x, y) as the k highest-leverage rows are
 * dropped, k = 0..kmax (out has kmax + 1 entries). Leverage comes from the
 * single predictor x alone, computed once on all rows; rows are dropped in
 * descending leverage (ties: lower index first). */
int pfi_model_leverage_drop(const double *x, const double *y, size_t n, size_t kmax,
                            pfi_leverage_step *out, pfi_error *err);

#endif
