/* See pfi/regime.h. */
#include "pfi/regime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const names_by[4][PFI_REGIME_MAX] = {
    {"dense", "moe-pt", "moe-ft", NULL},
    {"dense-pt", "dense-ft", "moe-pt", "moe-ft"},
    {"dense", "moe", NULL, NULL},
    {"pt", "ft", NULL, NULL},
};
static const size_t n_by[4] = {3, 4, 2, 2};

static size_t group_of(pfi_regime_by by, int moe, int ft)
{
    switch (by) {
    case PFI_REGIME_BY_ARCH_TASK:
        return (size_t)(moe * 2 + ft);
    case PFI_REGIME_BY_ARCH:
        return (size_t)moe;
    case PFI_REGIME_BY_TASK:
        return (size_t)ft;
    default:
        return moe ? (ft ? 2u : 1u) : 0u;
    }
}

int pfi_regime_stats_compute(const double *pfi, const int *moe, const int *ft, size_t n,
                             pfi_regime_by by, pfi_regime_stats *out)
{
    if (!pfi || !moe || !ft || !out || (unsigned)by > PFI_REGIME_BY_TASK) return PFI_EINVAL;
    if (n == 0) return PFI_ENODATA;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(pfi[i])) return PFI_EINVAL;
    size_t *g = malloc(n * sizeof *g);
    double *xs = malloc(n * sizeof *xs);
    if (!g || !xs) {
        free(g);
        free(xs);
        return PFI_ENOMEM;
    }
    memset(out, 0, sizeof *out);
    /* compact to the non-empty groups, keeping the fixed order */
    size_t count[PFI_REGIME_MAX] = {0}, map[PFI_REGIME_MAX] = {0};
    for (size_t i = 0; i < n; i++)
        count[group_of(by, !!moe[i], !!ft[i])]++;
    for (size_t j = 0; j < n_by[by]; j++)
        if (count[j]) {
            map[j] = out->k;
            out->name[out->k++] = names_by[by][j];
        }
    for (size_t i = 0; i < n; i++)
        g[i] = map[group_of(by, !!moe[i], !!ft[i])];
    for (size_t j = 0; j < out->k; j++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (g[i] == j) xs[m++] = pfi[i];
        out->n[j] = m;
        pfi_stats_median_mean(xs, m, &out->median[j], &out->mean[j]);
    }
    out->test_rc = pfi_stats_kruskal(pfi, g, n, out->k, &out->kw);
    if (out->test_rc == PFI_OK) out->test_rc = pfi_stats_dunn(pfi, g, n, out->k, out->dunn);
    out->npairs = out->test_rc == PFI_OK ? out->k * (out->k - 1) / 2 : 0;
    free(g);
    free(xs);
    return out->test_rc == PFI_ENOMEM ? PFI_ENOMEM : PFI_OK;
}
