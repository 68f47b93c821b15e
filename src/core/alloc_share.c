/* The proportional policies: shares of the cut with floors (alloc.h).
 *
 * Water-fill has one exact algorithm, the sweep over the jobs sorted by the
 * share at which each reaches its floor (O(k log k) whatever the input),
 * and one speed path in front of it, kept because it pays: up to 16 passes
 * of "clamp every job that passes its floor", which settle most inputs in
 * two or three and then skip the sort. Measured: 5x at 10^5 jobs (equal,
 * bench_alloc: 4 ms against 20 ms) and 2.6x fewer instructions at the
 * simulation's 100 (pfi simulate --no-learn). The passes alone could take k
 * of them on an adversarial input, hence the sweep after 16. */
#include "alloc_problem.h"

#include <math.h>
#include <stdlib.h>

static int cmp_kv(const void *a, const void *b)
{
    double x = ((const struct kv *)a)->key, y = ((const struct kv *)b)->key;
    return (x > y) - (x < y);
}

/* Sheds over the k entries in kv[] (their .i set) so that they draw B
 * watts, in proportion to w, each job at most room[i] (down to its floor),
 * entry i counting c[i] jobs: shed_i = min(room_i, lambda * w_i), the fixed
 * point of "hold a job that would pass its floor at the floor and share the
 * rest in proportion". Clamping every job that passes its floor at the
 * current lambda only raises lambda, so clamped jobs stay clamped: a few
 * passes usually settle it; after 16 the jobs are sorted by the lambda at
 * which they reach their floor and swept once.
 *
 * What is left to shed is always summed anew from the jobs still free
 * (their Pmax, less what B leaves once the clamped ones sit at their
 * floors), never carried over by subtracting each clamped job's room: with
 * a Pmax of 1.6e11 W among 200 W jobs the running difference is off by an
 * ulp of 3e11 (1e-4 W), enough to put a small job over a 201.5 W budget
 * (fuzz_alloc; test_alloc: test_huge_pmax_at_floors). Returns the watts
 * the entries draw above B at their floors (> 0: every one is at its
 * floor and B is not met), else 0. */
static double water_fill(const double *w, const double *room, const double *pmax,
                         const double *floor_w, const double *c, struct kv *kv, size_t k, double B,
                         double *shed)
{
    double fixed = 0; /* what the clamped entries draw at their floors */
    for (int pass = 0; pass < 16; pass++) {
        double wsum = 0, prem = 0;
        for (size_t a = 0; a < k; a++) {
            wsum += c[kv[a].i] * w[kv[a].i];
            prem += c[kv[a].i] * pmax[kv[a].i];
        }
        double left = prem - (B - fixed);
        if (k == 0) return left > 0 ? left : 0;
        if (left <= 0) {
            for (size_t a = 0; a < k; a++)
                shed[kv[a].i] = 0;
            return 0;
        }
        double lambda = left / wsum;
        size_t kept = 0;
        for (size_t a = 0; a < k; a++) {
            size_t i = kv[a].i;
            if (lambda * w[i] >= room[i]) {
                shed[i] = room[i];
                fixed += c[i] * floor_w[i];
            } else {
                kv[kept++] = kv[a];
            }
        }
        if (kept == k) {
            for (size_t a = 0; a < k; a++)
                shed[kv[a].i] = lambda * w[kv[a].i];
            return 0;
        }
        k = kept;
    }
    for (size_t a = 0; a < k; a++)
        kv[a].key = room[kv[a].i] / w[kv[a].i];
    qsort(kv, k, sizeof *kv, cmp_kv);
    /* sums over each suffix, from the back: each keeps its own magnitude's precision */
    double sp = 0, sw = 0;
    for (size_t a = k; a-- > 0;) {
        sp += c[kv[a].i] * pmax[kv[a].i];
        sw += c[kv[a].i] * w[kv[a].i];
        kv[a].sp = sp;
        kv[a].sw = sw;
    }
    size_t a = 0;
    for (; a < k; a++) {
        double left = kv[a].sp - (B - fixed);
        if (left <= 0) break;
        if (left / kv[a].sw <= kv[a].key) break;
        shed[kv[a].i] = room[kv[a].i];
        fixed += c[kv[a].i] * floor_w[kv[a].i];
    }
    if (a == k) return fixed > B ? fixed - B : 0;
    double left = kv[a].sp - (B - fixed);
    double lambda = left > 0 ? left / kv[a].sw : 0;
    for (size_t b = a; b < k; b++) {
        size_t i = kv[b].i;
        shed[i] = fmin(room[i], lambda * w[i]);
    }
    return 0;
}

int pfi_alloc_proportional(pfi_alloc_problem *p, const double *w, double budget_w, double *power_w,
                           pfi_error *err)
{
    int rc = alloc_check_budget(p, budget_w, err);
    if (rc) return rc;
    size_t n = p->n;
    char lb[32];
    for (size_t i = 0; i < n; i++)
        if (!isfinite(w[i]) || w[i] < 0)
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "job %s: allocation weight %g must be finite and >= 0",
                                 alloc_label(p, i, lb, sizeof lb), w[i]);
    double S = p->pmax_total - budget_w, wmax = 0;
    double *room = p->room, *shed = p->shed, *wn = p->wn;
    for (size_t i = 0; i < n; i++) {
        room[i] = p->pmax[i] - p->floor_w[i];
        shed[i] = 0;
        wmax = fmax(wmax, w[i]);
    }
    /* weights scaled to at most 1: shares are unchanged, and sums of weights
     * times counts cannot overflow (a weight of 1e300 is allowed) */
    for (size_t i = 0; i < n; i++)
        wn[i] = wmax > 0 ? w[i] / wmax : 0;
    w = wn;
    if (p->tree) {
        if ((rc = alloc_tree_share(p, w, budget_w, power_w, err)) != PFI_OK) return rc;
        return alloc_tree_verify(p, power_w, "proportional", err);
    }
    if (S > 0) {
        /* the weighted jobs first, the others at Pmax */
        size_t k = 0;
        double others = 0;
        for (size_t i = 0; i < n; i++) {
            if (w[i] > 0 && room[i] > 0)
                p->kv[k++].i = i;
            else
                others += p->cnt[i] * p->pmax[i];
        }
        double left =
            water_fill(w, room, p->pmax, p->floor_w, p->cnt, p->kv, k, budget_w - others, shed);
        if (left > 0) {
            /* every weighted job is at its floor: zero-weight jobs share the
             * rest in proportion to Pmax (the equal-weight rule), with what
             * the budget leaves them summed anew (see water_fill) */
            double drawn = 0;
            k = 0;
            for (size_t i = 0; i < n; i++) {
                if (!(w[i] > 0) && room[i] > 0)
                    p->kv[k++].i = i;
                else
                    drawn += p->cnt[i] * (room[i] > 0 ? p->floor_w[i] : p->pmax[i]);
            }
            left = water_fill(p->pmax, room, p->pmax, p->floor_w, p->cnt, p->kv, k,
                              budget_w - drawn, shed);
        }
        if (left > 1e-9 * fmax(1.0, p->pmax_total))
            return pfi_error_set(err, PFI_EINFEASIBLE, NULL, 0,
                                 "budget %.1f W is infeasible: every job is at its floor",
                                 budget_w);
    }
    /* a job shed by its whole room sits exactly at its floor (Pmax - room
     * can round below it when powers span many orders of magnitude) */
    for (size_t i = 0; i < n; i++)
        power_w[i] = shed[i] >= room[i] ? p->floor_w[i] : fmax(p->floor_w[i], p->pmax[i] - shed[i]);
    return PFI_OK;
}
