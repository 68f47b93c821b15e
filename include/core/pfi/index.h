/* The Power Flexibility Index (PFI) of one sweep group, three ways.
 *
 * Arrays P (aggregate power, W) and T (throughput, tokens/s) hold a group's
 * runs sorted by cap, the uncapped run (Pmax, Tmax) last. Nothing allocates.
 */
#ifndef PFI_INDEX_H
#define PFI_INDEX_H

#include <stddef.h>

#include "pfi/curve.h"
#include "pfi/error.h"

enum {
    PFI_METHOD_RATIO = 1 << 0, /* paper Eq. 1, the adopted definition */
    PFI_METHOD_AREA = 1 << 1,  /* paper Eq. 4-5, trapezoid with (P0,T0) = (0,0) */
    PFI_METHOD_CE = 1 << 2,    /* constant elasticity: 1 - alpha of log T = alpha log P + c */
    PFI_METHOD_ALL = 7,
};

/* Why a capped run is left out of the ratio (Eq. 1 has no term for it). */
enum {
    PFI_EXCL_NONE = 0,
    PFI_EXCL_TPUT_AT_MAX = 1, /* T_i >= Tmax: the ratio's denominator is <= 0 */
};
const char *pfi_index_exclusion_reason(int reason);

/* Ratio PFI (Eq. 1): the mean over capped runs of (1 - P_i/Pmax) / (1 - T_i/Tmax).
 * Runs with T_i >= Tmax are skipped and, if excl != NULL, marked in excl[i]
 * (excl has n entries; the uncapped run's entry is PFI_EXCL_NONE). Returns
 * PFI_EUNDEFINED when no capped run is usable. */
int pfi_index_ratio(const double *P, const double *T, size_t n, int *excl, double *pfi);

/* Area PFI (Eq. 5): sum_i (T_i + T_{i-1})(P_i - P_{i-1}) / (2 Tmax Pmax) - 1/2. */
int pfi_index_area(const double *P, const double *T, size_t n, double *pfi);

/* Constant-elasticity PFI: 1 - alpha from least squares of log T on log P over
 * every run. PFI_EUNDEFINED if all powers are equal. */
int pfi_index_ce(const double *P, const double *T, size_t n, double *pfi);

/* One group's point estimates. Fields for methods not asked for, or undefined,
 * have their has_* flag 0 and value 0 (never NaN). */
typedef struct pfi_index_result {
    double pfi, pfi_area, pfi_ce;
    int has_pfi, has_area, has_ce;
    size_t n_terms; /* capped runs in the ratio */
} pfi_index_result;

/* Computes the methods in `methods` for g; excl (g->n_runs entries, may be
 * NULL) receives each run's exclusion reason. */
int pfi_index_group(const pfi_group *g, unsigned methods, int *excl, pfi_index_result *res);

#endif
