/* Rank statistics for PFI analysis (paper Sec. 4 and Appendix D): Spearman
 * rank correlation, Benjamini-Hochberg q-values, Kruskal-Wallis H, Dunn's
 * post-hoc test and Holm-Bonferroni adjustment. Distributions come from GSL
 * (gsl_cdf_*), sorting from gsl_sort.
 *
 * Ties get average ranks everywhere (scipy.stats.rankdata's "average").
 * Functions return PFI_OK, PFI_EINVAL (NULL or non-finite input),
 * PFI_ENODATA (too few observations) or PFI_EUNDEFINED (e.g. a constant
 * sample, for which no correlation exists); outputs are untouched on error,
 * so no NaN ever escapes. Nothing here allocates except short-lived scratch
 * space (PFI_ENOMEM if that fails).
 */
#ifndef PFI_STATS_H
#define PFI_STATS_H

#include <stddef.h>

#include "pfi/error.h"

/* Average ranks (1-based) of x[0..n) into ranks[0..n). When tie_sum is not
 * NULL it receives sum over tie groups of (t^3 - t), the tie-correction term
 * of Kruskal-Wallis and Dunn. */
int pfi_stats_rank(const double *x, size_t n, double *ranks, double *tie_sum);

/* Spearman rho: Pearson correlation of the average ranks of x and y (exact
 * with ties, unlike 1 - 6 sum d^2 / (n^3 - n)). The two-sided p-value uses
 * t = rho sqrt((n-2) / (1-rho^2)) with n-2 degrees of freedom,
 * p = 2 gsl_cdf_tdist_Q(|t|, n-2) (scipy.stats.spearmanr's default); p is 0
 * when |rho| = 1. n >= 3 (PFI_ENODATA otherwise); a constant x or y is
 * PFI_EUNDEFINED. p may be NULL. */
int pfi_stats_spearman(const double *x, const double *y, size_t n, double *rho, double *p);

/* Benjamini-Hochberg FDR q-values: q_(i) = min over j >= i of min(1, m p_(j) / j)
 * for p sorted ascending, returned in the input order. n >= 1. */
int pfi_stats_bh(const double *p, size_t n, double *q);

/* Holm-Bonferroni step-down adjusted p-values: for p sorted ascending,
 * adj_(i) = max over j <= i of min(1, (m - j + 1) p_(j)), input order. */
int pfi_stats_holm(const double *p, size_t n, double *adj);

typedef struct pfi_kruskal {
    double H; /* tie-corrected statistic */
    int df;   /* groups - 1 */
    double p; /* gsl_cdf_chisq_Q(H, df) */
} pfi_kruskal;

/* Kruskal-Wallis H over n observations x[i] in groups g[i] in [0, k):
 * H = [12 / (N(N+1)) sum R_j^2 / n_j - 3(N+1)] / [1 - sum(t^3-t) / (N^3-N)].
 * Needs k >= 2 groups, each non-empty (PFI_ENODATA), and not every value
 * equal (PFI_EUNDEFINED). */
int pfi_stats_kruskal(const double *x, const size_t *g, size_t n, size_t k, pfi_kruskal *out);

typedef struct pfi_dunn_pair {
    size_t a, b;   /* group indices, a < b */
    double z;      /* (mean rank a - mean rank b) / SE, SE tie-corrected */
    double p_raw;  /* two-sided normal p */
    double p_holm; /* Holm-Bonferroni over the k(k-1)/2 pairs */
} pfi_dunn_pair;

/* Dunn's test for every pair of k groups (out has k(k-1)/2 entries, in the
 * order (0,1), (0,2), ..., (1,2), ...):
 * SE^2 = [N(N+1)/12 - sum(t^3-t) / (12(N-1))] (1/n_a + 1/n_b).
 * Same preconditions as pfi_stats_kruskal. */
int pfi_stats_dunn(const double *x, const size_t *g, size_t n, size_t k, pfi_dunn_pair *out);

/* Median (type-7, i.e. the middle or mean of the two middle values) and mean
 * of x[0..n), n >= 1. */
int pfi_stats_median_mean(const double *x, size_t n, double *median, double *mean);

#endif
