/* Sample quantiles without a full sort (selection, O(n) expected). */
#ifndef PFI_QUANTILE_H
#define PFI_QUANTILE_H

#include <stddef.h>

/* The q-quantile (0 <= q <= 1) of a[0..n-1] with linear interpolation between
 * order statistics (Hyndman-Fan type 7, R's default, numpy's "linear").
 * Reorders a. n must be > 0. */
double pfi_quantile_select(double *a, size_t n, double q);

/* Reorders a[0..n-1] so that a[k] is the k-th smallest (0-based, k < n),
 * no larger value before it and no smaller one after it (C++'s
 * nth_element): the k largest are then a[n-k..n-1], in O(n) expected. */
void pfi_quantile_partition(double *a, size_t n, size_t k);

#endif
