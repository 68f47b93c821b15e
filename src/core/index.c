/* PFI definitions of the paper (Sec. 2 Eq. 1; Appendix A Eq. 4-5 and the
 * constant-elasticity fit). Kept allocation-free: the Monte Carlo CI calls
 * these ten thousand times per group. */
#include "pfi/index.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_fit.h>

const char *pfi_index_exclusion_reason(int reason)
{
    switch (reason) {
    case PFI_EXCL_NONE:
        return "";
    case PFI_EXCL_TPUT_AT_MAX:
        return "throughput at or above the uncapped run's";
    default:
        return "unknown";
    }
}

int pfi_index_ratio(const double *P, const double *T, size_t n, int *excl, double *pfi)
{
    if (n < 2) return PFI_ENODATA;
    double pmax = P[n - 1], tmax = T[n - 1];
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        double dt = 1.0 - T[i] / tmax;
        /* T_i >= Tmax: no throughput lost, the ratio is undefined (not +inf). */
        int bad = !(dt > 0);
        if (excl) excl[i] = bad ? PFI_EXCL_TPUT_AT_MAX : PFI_EXCL_NONE;
        if (bad) continue;
        sum += (1.0 - P[i] / pmax) / dt;
        k++;
    }
    if (excl) excl[n - 1] = PFI_EXCL_NONE;
    if (k == 0) return PFI_EUNDEFINED;
    *pfi = sum / (double)k;
    return PFI_OK;
}

int pfi_index_area(const double *P, const double *T, size_t n, double *pfi)
{
    if (n < 1) return PFI_ENODATA;
    double pmax = P[n - 1], tmax = T[n - 1];
    double acc = 0, pp = 0, tp = 0; /* boundary (P0, T0) = (0, 0) */
    for (size_t i = 0; i < n; i++) {
        acc += (T[i] + tp) * (P[i] - pp);
        pp = P[i];
        tp = T[i];
    }
    *pfi = acc / (2.0 * tmax * pmax) - 0.5;
    return PFI_OK;
}

/* Up to this many runs the work arrays live on the stack; sweeps have 3-10
 * caps, so the Monte Carlo loop never allocates. */
#define STACK_RUNS 64

/* A pair of n-double arrays: the caller's stack buffers, or heap memory that
 * pair_free releases. */
typedef struct {
    double *a, *b;
    int heap;
} pair;

static int pair_get(pair *p, size_t n, double *sa, double *sb)
{
    p->heap = n > STACK_RUNS;
    p->a = p->heap ? malloc(n * sizeof(double)) : sa;
    p->b = p->heap ? malloc(n * sizeof(double)) : sb;
    if (p->a && p->b) return PFI_OK;
    free(p->a);
    free(p->b);
    return PFI_ENOMEM;
}

static void pair_free(pair *p)
{
    if (!p->heap) return;
    free(p->a);
    free(p->b);
}

int pfi_index_ce(const double *P, const double *T, size_t n, double *pfi)
{
    if (n < 2) return PFI_ENODATA;
    double xs[STACK_RUNS], ys[STACK_RUNS];
    pair buf;
    if (pair_get(&buf, n, xs, ys) != PFI_OK) return PFI_ENOMEM;
    double *x = buf.a, *y = buf.b;
    for (size_t i = 0; i < n; i++) {
        x[i] = log(P[i]);
        y[i] = log(T[i]);
    }
    int rc = PFI_OK;
    int same_p = 1;
    for (size_t i = 1; i < n; i++)
        if (x[i] != x[0]) same_p = 0;
    if (same_p) {
        rc = PFI_EUNDEFINED;
    } else {
        double c0, c1, cov00, cov01, cov11, sumsq;
        gsl_fit_linear(x, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
        *pfi = 1.0 - c1;
    }
    pair_free(&buf);
    return rc;
}

int pfi_index_group(const pfi_group *g, unsigned methods, int *excl, pfi_index_result *res)
{
    if (!g || !res) return PFI_EINVAL;
    size_t n = g->n_runs;
    *res = (pfi_index_result){0};
    if (n < 2) return PFI_ENODATA;
    double ps[STACK_RUNS], ts[STACK_RUNS];
    pair buf;
    if (pair_get(&buf, n, ps, ts) != PFI_OK) return PFI_ENOMEM;
    double *P = buf.a, *T = buf.b;
    for (size_t i = 0; i < n; i++) {
        P[i] = g->runs[i].power_w;
        T[i] = g->runs[i].tput;
    }
    int rc = PFI_OK;
    /* The ratio always runs: its exclusions describe the group. */
    int r = pfi_index_ratio(P, T, n, excl, &res->pfi);
    res->has_pfi = (r == PFI_OK);
    if (!res->has_pfi) res->pfi = 0;
    if (r != PFI_OK && r != PFI_EUNDEFINED) rc = r;
    for (size_t i = 0; i + 1 < n; i++)
        if (T[i] < T[n - 1]) res->n_terms++;
    if (methods & PFI_METHOD_AREA) res->has_area = pfi_index_area(P, T, n, &res->pfi_area) == 0;
    if (methods & PFI_METHOD_CE) res->has_ce = pfi_index_ce(P, T, n, &res->pfi_ce) == 0;
    pair_free(&buf);
    return rc;
}
