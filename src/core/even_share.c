/* Even shares of a budget under per-item bounds (pfi/even_share.h). */
#include "pfi/even_share.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* sum_i clamp(L, lo_i, hi_i) over the items that take part */
static double level_sum(const double *lo, const double *hi, size_t n, double level)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(hi[i])) s += fmin(fmax(level, lo[i]), hi[i]);
    return s;
}

int pfi_even_shares(const double *lo, const double *hi, size_t n, double budget, double *share)
{
    if (!(budget >= 0) || !isfinite(budget)) return PFI_EINVAL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(hi[i])) continue;
        if (!(lo[i] >= 0) || !isfinite(lo[i]) || hi[i] < lo[i]) return PFI_EINVAL;
        m++;
    }
    /* The breaks of the piecewise-linear sum, ascending: L lies between two. */
    double *br = malloc((m ? 2 * m : 1) * sizeof *br);
    if (!br) return PFI_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(hi[i])) {
            br[k++] = lo[i];
            br[k++] = hi[i];
        }
    qsort(br, k, sizeof *br, cmp_double);
    double level = k ? br[0] : 0;
    if (k && level_sum(lo, hi, n, br[k - 1]) <= budget) {
        level = br[k - 1];
    } else if (k && level_sum(lo, hi, n, br[0]) < budget) {
        /* the last break whose sum is at or under the budget */
        size_t a = 0, b = k - 1;
        while (b - a > 1) {
            size_t mid = a + (b - a) / 2;
            if (level_sum(lo, hi, n, br[mid]) <= budget)
                a = mid;
            else
                b = mid;
        }
        double fa = level_sum(lo, hi, n, br[a]), fb = level_sum(lo, hi, n, br[b]);
        level = fb > fa ? br[a] + (budget - fa) * (br[b] - br[a]) / (fb - fa) : br[a];
    }
    free(br);
    for (size_t i = 0; i < n; i++)
        share[i] = isfinite(hi[i]) ? fmin(fmax(level, lo[i]), hi[i]) : NAN;
    return PFI_OK;
}
