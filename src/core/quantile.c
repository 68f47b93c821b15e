#include "pfi/quantile.h"

#include <math.h>

static void swap(double *a, size_t i, size_t j)
{
    double t = a[i];
    a[i] = a[j];
    a[j] = t;
}

/* Hoare-style quickselect with median-of-three pivots: a[k] ends up the k-th
 * smallest, smaller values before it, larger after. */
static void select_kth(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (hi > lo) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < a[lo]) swap(a, mid, lo);
        if (a[hi] < a[lo]) swap(a, hi, lo);
        if (a[hi] < a[mid]) swap(a, hi, mid);
        double pivot = a[mid];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                swap(a, i, j);
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

void pfi_quantile_partition(double *a, size_t n, size_t k)
{
    if (n > 0 && k < n) select_kth(a, n, k);
}

double pfi_quantile_select(double *a, size_t n, double q)
{
    if (q <= 0) q = 0;
    if (q >= 1) q = 1;
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    select_kth(a, n, lo);
    double v = a[lo];
    if (lo + 1 >= n || h == (double)lo) return v;
    double next = a[lo + 1];
    for (size_t i = lo + 2; i < n; i++)
        if (a[i] < next) next = a[i];
    return v + (h - (double)lo) * (next - v);
}
