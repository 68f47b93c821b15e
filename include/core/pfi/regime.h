/* PFI by job regime (paper Appendix D.4, Tables 10 and 11): each regime's
 * median and mean, the Kruskal-Wallis test across regimes and Dunn's
 * post-hoc pairs (pfi/stats.h does the statistics; this groups the jobs).
 * Shared by `pfi stats` and the report. Nothing allocates beyond scratch
 * space freed before returning.
 */
#ifndef PFI_REGIME_H
#define PFI_REGIME_H

#include <stddef.h>

#include "pfi/stats.h"

typedef enum {
    PFI_REGIME_BY_REGIME,    /* dense (pt and ft pooled), moe-pt, moe-ft: the paper's */
    PFI_REGIME_BY_ARCH_TASK, /* dense-pt, dense-ft, moe-pt, moe-ft */
    PFI_REGIME_BY_ARCH,      /* dense, moe */
    PFI_REGIME_BY_TASK,      /* pt, ft */
} pfi_regime_by;

#define PFI_REGIME_MAX 4

typedef struct pfi_regime_stats {
    size_t k;                         /* non-empty groups, in the fixed order above */
    const char *name[PFI_REGIME_MAX]; /* static strings */
    size_t n[PFI_REGIME_MAX];
    double median[PFI_REGIME_MAX], mean[PFI_REGIME_MAX];
    int test_rc;    /* PFI_OK; PFI_ENODATA with fewer than 2 groups; PFI_EUNDEFINED all equal */
    pfi_kruskal kw; /* valid when test_rc == PFI_OK */
    size_t npairs;  /* k(k-1)/2 when test_rc == PFI_OK, else 0 */
    pfi_dunn_pair dunn[PFI_REGIME_MAX * (PFI_REGIME_MAX - 1) / 2]; /* a, b index name[] */
} pfi_regime_stats;

/* Groups n jobs (PFI pfi[i], MoE if moe[i], fine-tuning if ft[i]) and runs
 * the tests; groups without members are left out. PFI_EINVAL on NULL or a
 * non-finite PFI, PFI_ENODATA for n == 0, PFI_ENOMEM. A test that is
 * undefined is not an error: test_rc says why. */
int pfi_regime_stats_compute(const double *pfi, const int *moe, const int *ft, size_t n,
                             pfi_regime_by by, pfi_regime_stats *out);

#endif
