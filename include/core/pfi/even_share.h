/* Even shares of a budget under per-item bounds: the node ceiling's split
 * of its watts over the node's GPUs (src/agent/node_limit.c).
 *
 * The level L at which sum_i clamp(L, lo[i], hi[i]) meets the budget; each
 * share is clamp(L, lo[i], hi[i]). So every item gets the same share unless
 * its bounds say otherwise, and what an item held under the level by its hi
 * cannot use goes to the others (water-filling). A budget under the lows'
 * sum puts every item at its lo (the sum is then over the budget); one over
 * the highs' sum puts every item at its hi. Exact: the sum is piecewise
 * linear in L, with its breaks at the bounds.
 */
#ifndef PFI_EVEN_SHARE_H
#define PFI_EVEN_SHARE_H

#include <stddef.h>

#include "pfi/error.h"

/* Fills share[0..n-1]; an item whose hi is not finite takes no part (its
 * share NaN). PFI_EINVAL for a budget that is negative or not finite, or a
 * finite hi below its lo or a lo that is negative or not finite; share is
 * left untouched then. */
int pfi_even_shares(const double *lo, const double *hi, size_t n, double budget, double *share);

#endif
