/* Sample quantiles without a full sort (selection, O(n) expected). */
#ifndef PFI_QUANTILE_H
#define PFI_QUANTILE_H

#include <stddef.h>

/* The q-quantile (0 <= q <= 1) of a[0..n-1] with linear interpolation between
 * order statistics (Hyndman-Fan type 7, R's default, numpy's "linear").
 * Reorders a. n must be > 0. */
double pfi_quantile_select(double *a, size_t n, double q);

#endif
