/* The proportional policies under nested budgets (alloc.h): each domain over
 * its limit sheds within its subtree in proportion to the weights.
 *
 * Domains are taken children first. A domain whose jobs (at what the
 * domains below left them) still draw over its limit finds the smallest
 * lambda with shed_i = min(room_i, max(shed_i, lambda w_i)) bringing it under:
 * a job already cut deeper by its rack keeps that cut, the others share the
 * rest by weight, as pfi_alloc_proportional shares a flat budget. When every
 * weighted job in the domain is at its floor the zero-weight ones share the
 * rest in proportion to Pmax (the flat rule, per domain). Sheds only grow,
 * so a domain that fits stays fitting while the domains above cut more, and
 * the root (its limit and the budget) comes last: no limit is passed. A job
 * spread over domains counts in each by its share. */
#include "alloc_problem.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ev {
    double lam, rate;
};

static int cmp_ev(const void *a, const void *b)
{
    double x = ((const struct ev *)a)->lam, y = ((const struct ev *)b)->lam;
    return (x > y) - (x < y);
}

/* The jobs' watts in a's subtree at their current sheds; the candidates
 * (jobs with a share in a) into cand, their shares into al. */
static size_t candidates(const pfi_alloc_problem *p, size_t a, size_t *cand, double *al,
                         double *drawn)
{
    const struct alloc_tree *t = p->tree;
    size_t k = 0;
    double s = 0;
    for (size_t j = t->jstart[a]; j < t->jstart[t->end[a]]; j++) {
        size_t i = t->order[j];
        cand[k] = i;
        al[k++] = 1;
        s += p->cnt[i] * (p->pmax[i] - p->shed[i]);
    }
    for (size_t j = t->jstart[t->nd]; j < p->n; j++) {
        size_t i = t->order[j];
        double x = alloc_tree_alpha(t, i, a);
        if (x > 0) {
            cand[k] = i;
            al[k++] = x;
            s += x * p->cnt[i] * (p->pmax[i] - p->shed[i]);
        }
    }
    *drawn = s;
    return k;
}

/* Sheds D more watts from the candidates by weight w (lambda as above);
 * returns what it could not (> 0 when every one is at its floor). */
static uint64_t lam_key(double v)
{
    uint64_t k;
    memcpy(&k, &v, sizeof k);
    return k;
}

static double key_lam(uint64_t k)
{
    double v;
    memcpy(&v, &k, sizeof v);
    return v;
}

/* The least lambda >= lo at which the cut reaches D, where f (the cut at
 * lo) and rate (its slope just above lo) count the events before lo and
 * ev[0..ne) are the later ones (each changes the slope by its rate at its
 * lambda). A few events are sorted and swept; more go to buckets of their
 * bits (non-negative doubles order as their bit patterns), each bucket's
 * rates and offsets summed, the bucket where the cut reaches D found on
 * those sums and searched again (tmp: scratch of ne). A sort of every
 * event was 70-100 ms at 10^5 jobs under bench_alloc's tree. */
static double cross(struct ev *ev, size_t ne, struct ev *tmp, double lo, double f, double rate,
                    double D)
{
    uint64_t kmin = UINT64_MAX, kmax = 0;
    for (size_t e = 0; e < ne; e++) {
        uint64_t k = lam_key(ev[e].lam);
        kmin = k < kmin ? k : kmin;
        kmax = k > kmax ? k : kmax;
    }
    if (ne <= 64 || kmin == kmax) {
        qsort(ev, ne, sizeof *ev, cmp_ev);
        double at = lo;
        for (size_t e = 0; e < ne; e++) {
            double nf = f + rate * (ev[e].lam - at);
            if (nf >= D && rate > 0) return at + (D - f) / rate;
            f = nf;
            at = ev[e].lam;
            rate += ev[e].rate;
        }
        return rate > 0 ? at + (D - f) / rate : INFINITY;
    }
    enum { NB = 256 };
    int shift = 0;
    while (((kmax - kmin) >> shift) >= NB)
        shift++;
    double sr[NB] = {0}, srd[NB] = {0};
    size_t cnt[NB] = {0};
    for (size_t e = 0; e < ne; e++) {
        size_t q = (size_t)((lam_key(ev[e].lam) - kmin) >> shift);
        cnt[q]++;
        sr[q] += ev[e].rate;
        srd[q] += ev[e].rate * (ev[e].lam - key_lam(kmin + ((uint64_t)q << shift)));
    }
    size_t last = (size_t)((kmax - kmin) >> shift);
    for (size_t q = 0; q <= last; q++) {
        double qlo = key_lam(kmin + ((uint64_t)q << shift));
        if (q == 0 && qlo > lo) { /* from lo to the first bucket: the slope so far */
            double nf = f + rate * (qlo - lo);
            if (nf >= D && rate > 0) return lo + (D - f) / rate;
            f = nf;
        }
        double qhi = key_lam(kmin + ((uint64_t)(q + 1) << shift));
        double fhi = f + (rate + sr[q]) * (qhi - qlo) - srd[q];
        if (q == last || (cnt[q] && fhi >= D) || (!cnt[q] && fhi >= D && rate > 0)) {
            if (!cnt[q]) return qlo + (D - f) / rate;
            size_t m = 0;
            for (size_t e = 0; e < ne; e++)
                if ((size_t)((lam_key(ev[e].lam) - kmin) >> shift) == q) tmp[m++] = ev[e];
            return cross(tmp, m, ev, qlo, f, rate, D);
        }
        f = fhi;
        rate += sr[q];
    }
    return INFINITY; /* not reached: the last bucket returns */
}

/* Sheds D more watts from the candidates by weight w (lambda as above);
 * returns what it could not (> 0 when every one is at its floor). */
static double shed_by(pfi_alloc_problem *p, const double *w, const size_t *cand, const double *al,
                      size_t k, double D, struct ev *ev)
{
    double *shed = p->shed, *room = p->room, most = 0;
    size_t ne = 0;
    for (size_t j = 0; j < k; j++) {
        size_t i = cand[j];
        if (!(w[i] > 0) || !(shed[i] < room[i])) continue;
        double r = al[j] * p->cnt[i] * w[i];
        /* a weight so small that its job would never reach its floor */
        ev[ne++] = (struct ev){fmin(shed[i] / w[i], 1e300), r};
        ev[ne++] = (struct ev){fmin(room[i] / w[i], 1e300), -r};
        most += al[j] * p->cnt[i] * (room[i] - shed[i]);
    }
    double lam = INFINITY;
    if (most > D && ne) lam = cross(ev, ne, ev + ne, 0, 0, 0, D);
    for (size_t j = 0; j < k; j++) {
        size_t i = cand[j];
        if (!(w[i] > 0) || !(shed[i] < room[i])) continue;
        shed[i] = isinf(lam) ? room[i] : fmin(room[i], fmax(shed[i], lam * w[i]));
    }
    return most > D ? 0 : D - most;
}

int alloc_tree_share(pfi_alloc_problem *p, const double *w, double budget_w, double *power_w,
                     pfi_error *err)
{
    struct alloc_tree *t = p->tree;
    int rc = alloc_tree_room(p, budget_w, t->resid, err);
    if (rc != PFI_OK) return rc;
    size_t n = p->n;
    size_t *cand = malloc(n * sizeof *cand);
    double *al = malloc(n * sizeof *al);
    struct ev *ev = malloc(4 * n * sizeof *ev); /* events and cross()'s scratch */
    if (!cand || !al || !ev) {
        free(cand), free(al), free(ev);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        p->room[i] = p->pmax[i] - p->floor_w[i];
        p->shed[i] = 0;
    }
    char lb[32];
    for (size_t a = t->nd; a-- > 0 && rc == PFI_OK;) {
        /* what the jobs may draw here: the limit less fixed power; the
         * root's also the budget */
        double L = t->limit[a] - t->fixed_sub[a];
        if (a == 0) L = fmin(L, budget_w);
        if (isinf(L)) continue;
        double drawn;
        size_t k = candidates(p, a, cand, al, &drawn);
        double D = drawn - L;
        if (!(D > 0)) continue;
        D = shed_by(p, w, cand, al, k, D, ev);
        if (D > 0) D = shed_by(p, p->pmax, cand, al, k, D, ev) /* zero weights: by Pmax */;
        if (D > 1e-9 * fmax(1.0, fabs(L)))
            rc = pfi_error_set(err, PFI_EINFEASIBLE, NULL, 0,
                               "domain %s is infeasible: every job in it is at its floor",
                               alloc_tree_label(t, a, lb, sizeof lb));
    }
    free(cand), free(al), free(ev);
    if (rc != PFI_OK) return rc;
    for (size_t i = 0; i < n; i++)
        power_w[i] =
            p->shed[i] >= p->room[i] ? p->floor_w[i] : fmax(p->floor_w[i], p->pmax[i] - p->shed[i]);
    return PFI_OK;
}
