/* Rank statistics: Spearman, Benjamini-Hochberg, Holm, Kruskal-Wallis, Dunn.
 * Formulas as in scipy.stats (spearmanr, kruskal) and scikit-posthocs
 * (posthoc_dunn); distributions from GSL. */
#include "pfi/stats.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

static int all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

int pfi_stats_rank(const double *x, size_t n, double *ranks, double *tie_sum)
{
    if (!x || !ranks || n == 0) return PFI_EINVAL;
    if (!all_finite(x, n)) return PFI_EINVAL;
    size_t *idx = malloc(n * sizeof *idx);
    if (!idx) return PFI_ENOMEM;
    gsl_sort_index(idx, x, 1, n);
    double ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && x[idx[j]] == x[idx[i]])
            j++;
        /* positions i..j-1 (0-based) share the average of ranks i+1..j */
        double avg = 0.5 * ((double)(i + 1) + (double)j);
        for (size_t k = i; k < j; k++)
            ranks[idx[k]] = avg;
        double t = (double)(j - i);
        ties += t * t * t - t;
        i = j;
    }
    free(idx);
    if (tie_sum) *tie_sum = ties;
    return PFI_OK;
}

int pfi_stats_spearman(const double *x, const double *y, size_t n, double *rho, double *p)
{
    if (!x || !y || !rho) return PFI_EINVAL;
    if (n < 3) return PFI_ENODATA;
    double *r = malloc(2 * n * sizeof *r);
    if (!r) return PFI_ENOMEM;
    double *rx = r, *ry = r + n, tx, ty;
    int rc = pfi_stats_rank(x, n, rx, &tx);
    if (rc == PFI_OK) rc = pfi_stats_rank(y, n, ry, &ty);
    if (rc != PFI_OK) {
        free(r);
        return rc;
    }
    double nn = (double)n;
    /* all values tied <=> sum(t^3 - t) = n^3 - n: no variance, no rho */
    if (tx >= nn * nn * nn - nn || ty >= nn * nn * nn - nn) {
        free(r);
        return PFI_EUNDEFINED;
    }
    double c = gsl_stats_correlation(rx, 1, ry, 1, n);
    free(r);
    if (!isfinite(c)) return PFI_EUNDEFINED;
    /* ranks in perfect (anti-)order can give 1 - 4e-16: that is +-1, with p = 0 */
    if (fabs(c) > 1 - 1e-12) c = c > 0 ? 1 : -1;
    if (p) {
        double df = nn - 2;
        if (fabs(c) >= 1) {
            *p = 0;
        } else {
            double t = c * sqrt(df / ((1 - c) * (1 + c)));
            double pv = 2 * gsl_cdf_tdist_Q(fabs(t), df);
            *p = pv > 1 ? 1 : pv;
        }
    }
    *rho = c;
    return PFI_OK;
}

/* Indices of p in ascending order. The order among equal p values does not
 * matter: BH and Holm give tied p values the same adjusted value. */
static size_t *order(const double *p, size_t n)
{
    size_t *idx = malloc(n * sizeof *idx);
    if (idx) gsl_sort_index(idx, p, 1, n);
    return idx;
}

static int check_p(const double *p, size_t n)
{
    if (!p || n == 0) return PFI_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!(p[i] >= 0 && p[i] <= 1)) return PFI_EINVAL;
    return PFI_OK;
}

int pfi_stats_bh(const double *p, size_t n, double *q)
{
    int rc = check_p(p, n);
    if (rc != PFI_OK || !q) return rc ? rc : PFI_EINVAL;
    size_t *idx = order(p, n);
    if (!idx) return PFI_ENOMEM;
    double run = 1;
    /* from the largest p down: running minimum of m p_(j) / j */
    for (size_t r = n; r-- > 0;) {
        double v = p[idx[r]] * (double)n / (double)(r + 1);
        if (v < run) run = v;
        q[idx[r]] = run;
    }
    free(idx);
    return PFI_OK;
}

int pfi_stats_holm(const double *p, size_t n, double *adj)
{
    int rc = check_p(p, n);
    if (rc != PFI_OK || !adj) return rc ? rc : PFI_EINVAL;
    size_t *idx = order(p, n);
    if (!idx) return PFI_ENOMEM;
    double run = 0;
    /* from the smallest p up: running maximum of (m - j + 1) p_(j) */
    for (size_t r = 0; r < n; r++) {
        double v = p[idx[r]] * (double)(n - r);
        if (v > 1) v = 1;
        if (v > run) run = v;
        adj[idx[r]] = run;
    }
    free(idx);
    return PFI_OK;
}

/* Shared by Kruskal-Wallis and Dunn: ranks of the pooled sample, per-group
 * counts and rank sums, and the tie term. */
typedef struct {
    double *rank_sum; /* k */
    size_t *count;    /* k */
    double ties;      /* sum(t^3 - t) */
} pooled;

static void pooled_free(pooled *s)
{
    free(s->rank_sum);
    free(s->count);
}

static int pool(const double *x, const size_t *g, size_t n, size_t k, pooled *s)
{
    s->rank_sum = NULL;
    s->count = NULL;
    if (!x || !g || k < 2) return k < 2 ? PFI_ENODATA : PFI_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (g[i] >= k) return PFI_EINVAL;
    s->rank_sum = calloc(k, sizeof *s->rank_sum);
    s->count = calloc(k, sizeof *s->count);
    double *r = malloc((n ? n : 1) * sizeof *r);
    if (!s->rank_sum || !s->count || !r) {
        free(r);
        pooled_free(s);
        return PFI_ENOMEM;
    }
    int rc = n ? pfi_stats_rank(x, n, r, &s->ties) : PFI_ENODATA;
    if (rc == PFI_OK) {
        for (size_t i = 0; i < n; i++) {
            s->rank_sum[g[i]] += r[i];
            s->count[g[i]]++;
        }
        for (size_t j = 0; j < k; j++)
            if (s->count[j] == 0) rc = PFI_ENODATA;
        double nn = (double)n;
        if (rc == PFI_OK && s->ties >= nn * nn * nn - nn) rc = PFI_EUNDEFINED;
    }
    free(r);
    if (rc != PFI_OK) pooled_free(s);
    return rc;
}

int pfi_stats_kruskal(const double *x, const size_t *g, size_t n, size_t k, pfi_kruskal *out)
{
    if (!out) return PFI_EINVAL;
    pooled s;
    int rc = pool(x, g, n, k, &s);
    if (rc != PFI_OK) return rc;
    double N = (double)n, acc = 0;
    for (size_t j = 0; j < k; j++)
        acc += s.rank_sum[j] * s.rank_sum[j] / (double)s.count[j];
    double H = 12.0 / (N * (N + 1)) * acc - 3 * (N + 1);
    H /= 1 - s.ties / (N * N * N - N);
    pooled_free(&s);
    if (H < 0) H = 0; /* rounding when all group mean ranks coincide */
    out->H = H;
    out->df = (int)(k - 1);
    out->p = gsl_cdf_chisq_Q(H, (double)(k - 1));
    return PFI_OK;
}

int pfi_stats_dunn(const double *x, const size_t *g, size_t n, size_t k, pfi_dunn_pair *out)
{
    if (!out) return PFI_EINVAL;
    pooled s;
    int rc = pool(x, g, n, k, &s);
    if (rc != PFI_OK) return rc;
    size_t m = k * (k - 1) / 2;
    double *praw = malloc(m * sizeof *praw), *padj = malloc(m * sizeof *padj);
    if (!praw || !padj) {
        free(praw);
        free(padj);
        pooled_free(&s);
        return PFI_ENOMEM;
    }
    double N = (double)n;
    double var = N * (N + 1) / 12.0 - s.ties / (12.0 * (N - 1));
    size_t e = 0;
    for (size_t a = 0; a < k; a++)
        for (size_t b = a + 1; b < k; b++, e++) {
            double ra = s.rank_sum[a] / (double)s.count[a];
            double rb = s.rank_sum[b] / (double)s.count[b];
            double se = sqrt(var * (1.0 / (double)s.count[a] + 1.0 / (double)s.count[b]));
            out[e].a = a;
            out[e].b = b;
            out[e].z = (ra - rb) / se;
            praw[e] = 2 * gsl_cdf_ugaussian_Q(fabs(out[e].z));
            if (praw[e] > 1) praw[e] = 1;
        }
    rc = pfi_stats_holm(praw, m, padj);
    for (e = 0; rc == PFI_OK && e < m; e++) {
        out[e].p_raw = praw[e];
        out[e].p_holm = padj[e];
    }
    free(praw);
    free(padj);
    pooled_free(&s);
    return rc;
}

int pfi_stats_median_mean(const double *x, size_t n, double *median, double *mean)
{
    if (!x || n == 0 || !median || !mean || !all_finite(x, n)) return n ? PFI_EINVAL : PFI_ENODATA;
    double *c = malloc(n * sizeof *c);
    if (!c) return PFI_ENOMEM;
    for (size_t i = 0; i < n; i++)
        c[i] = x[i];
    gsl_sort(c, 1, n);
    *median = gsl_stats_median_from_sorted_data(c, 1, n);
    *mean = gsl_stats_mean(c, 1, n);
    free(c);
    return PFI_OK;
}
