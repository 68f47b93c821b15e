/* Monte Carlo confidence intervals for PFI (paper, Table 6 caption).
 *
 * Each draw resamples every run's power and throughput from a normal with the
 * run's standard error (a run without SEMs contributes no noise), recomputes
 * the PFI, and the interval is the central `level` share of the draws.
 * Draws are seeded per group from (seed, group index), so results do not
 * depend on the thread count or on which other groups are computed.
 */
#ifndef PFI_CI_H
#define PFI_CI_H

#include <stddef.h>
#include <stdint.h>

#include "pfi/curve.h"

typedef struct pfi_ci_opts {
    size_t draws;    /* Monte Carlo draws, e.g. 10000 */
    uint64_t seed;   /* base seed */
    double level;    /* e.g. 0.95 */
    unsigned method; /* one PFI_METHOD_* */
} pfi_ci_opts;

typedef struct pfi_ci {
    double low, high; /* valid when has is 1 */
    size_t n_valid;   /* draws where the PFI was defined */
    int has;
} pfi_ci;

/* CI of one group; `index` selects its random stream. */
int pfi_ci_group(const pfi_group *g, size_t index, const pfi_ci_opts *o, pfi_ci *out);

/* CIs of n groups (group i uses stream i) on up to `threads` threads (the
 * caller picks the count; core does not probe the machine). */
int pfi_ci_batch(const pfi_group *const *groups, size_t n, const pfi_ci_opts *o, int threads,
                 pfi_ci *out);

#endif
