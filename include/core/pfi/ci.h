/* Monte Carlo confidence intervals for PFI (paper, Table 6 caption).
 *
 * Each draw resamples every run's power and throughput from a normal with the
 * run's standard error (a run without SEMs contributes no noise), recomputes
 * the PFI, and the interval is the central `level` share of the draws
 * (type-7 quantiles). The standard normals are common to all groups and
 * seeded from `seed` alone (see ci.c), so a group's interval depends only on
 * its own runs and the seed: not on its position, other groups, or threads.
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

/* CI of one group. PFI_EUNDEFINED (out->has = 0) when no draw had a defined PFI. */
int pfi_ci_group(const pfi_group *g, const pfi_ci_opts *o, pfi_ci *out);

/* CIs of n groups on up to `threads` threads (the caller picks the count;
 * core does not probe the machine). Groups without a defined interval get
 * has = 0; the return is PFI_OK unless the options are bad or memory ran out.
 * Memory: draws x 2 x (most runs in a group) doubles. */
int pfi_ci_batch(const pfi_group *const *groups, size_t n, const pfi_ci_opts *o, int threads,
                 pfi_ci *out);

#endif
