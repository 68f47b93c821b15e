/* The information bound of bench_info_bound (issue 12 item 3, issue 29
 * item 5), shared with test_families so that the test asserts item 5's bar
 * against the bound on its own workloads.
 *
 * An informed policy that no controller has: every job of a workload read
 * at every point of its true sweep (offset 0), or at the floor, one place
 * inside each interval between points (F of the way, offset F in (0, 1),
 * or a uniform random place drawn once per workload, job and interval,
 * offset -1) and the uncapped point; m readings a place, each off by 1%
 * relative noise (the uncapped point exact), made non-decreasing in power
 * (isotonic regression), then the exact oracle on those curves, scored on
 * the true ones. The workloads are pfi simulate's (random mix, seed 1, J
 * jobs drawn uniformly from the family's groups, one entry per job), so
 * bench_families' cells and these are computed on the same jobs. */
#ifndef PFI_TEST_FAMILIES_BOUND_H
#define PFI_TEST_FAMILIES_BOUND_H

#include <stddef.h>

#include "families.h"

/* Sums over `workloads` workloads of 100 jobs, for each reduction r of red
 * and each readings count M[k]: eq_gap[r] (the oracle's total less
 * equal's), eq_sd[r] (one reading's SD at equal, 1% of its total) and
 * inf_gap[k * nr + r] (the oracle's total less the informed policy's).
 * PFI_OK, or PFI_EINVAL (a sweep of more than 64 points, an offset
 * outside [-1, 1)) or PFI_ENOMEM. */
int fam_bound_gaps(const fam_set *fs, size_t workloads, double offset, const unsigned *M, size_t nm,
                   const double *red, size_t nr, double *eq_gap, double *eq_sd, double *inf_gap);

/* The event's average share of a learner that knows no more in period t
 * (of `periods`) than the informed policy with (t - 1) / k readings a
 * place, q[m - 1] its share with m (m up to nm), the equal share (0) when
 * that is better or m is 0: any learner that reads each job once a period
 * and compares k powers, granted every place's readings for free. */
double fam_bound_sequential(const double *q, size_t nm, size_t periods, size_t k);

/* fam_bound_gaps' workloads' jobs */
enum { FAM_BOUND_JOBS = 100 };

#endif
