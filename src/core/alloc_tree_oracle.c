/* The exact oracle under nested budgets (alloc.h).
 *
 * Jobs each in one domain. Maximise sum_i E_i(p_i) (concave envelopes)
 * subject to floor_i <= p_i <= Pmax_i and, for every domain a, the power of
 * a's subtree under its limit. The watts above the floors, split into the
 * envelopes' segments, form a polymatroid: laminar capacities on sums of
 * segment widths (each domain's room), every segment bounded by its width.
 * On a polymatroid the greedy is optimal for a linear objective (Edmonds),
 * here sum slope x width: take the segments by decreasing slope, each as
 * far as the tightest room on its path to the root allows. A job's later
 * segments are flatter, so they come later and fill in order. Segments of
 * equal slope form one step of the greedy, shared so that equal jobs get
 * equal watts: a domain whose room they overfill gives each of its
 * subtree's homes the same fraction (the largest that fits, children
 * first), which is a maximal vector of the step's polymatroid and so spends
 * as much as any (test_alloc_tree compares with an LP and brute force).
 *
 * Jobs spread over domains (a share in each) put fractional coefficients in
 * the constraints: no longer a polymatroid, and greedy by slope is not
 * optimal (a job with half its GPUs in a full rack costs that rack half a
 * watt per watt; test_alloc_tree shows the case). Those problems go to the
 * linear program of alloc_tree_lp.c.
 *
 * Cost: a sort of the segments and a walk up each one's path, O(s log s +
 * s depth); bench_alloc_tree measures it against the flat oracle. */
#include "alloc_problem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_tseg(const void *a, const void *b)
{
    const struct tseg *x = a, *y = b;
    if (x->slope != y->slope) return x->slope < y->slope ? 1 : -1; /* steepest first */
    return (x->job > y->job) - (x->job < y->job);
}

static int cmp_desc(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x < y) - (x > y);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The smallest room on the path from h to the root. */
static double path_room(const struct alloc_tree *t, const double *room, size_t h)
{
    double m = INFINITY;
    for (size_t a = h;; a = t->parent[a]) {
        m = fmin(m, room[a]);
        if (a == 0) return m;
    }
}

static void path_take(const struct alloc_tree *t, double *room, size_t h, double w)
{
    for (size_t a = h;; a = t->parent[a]) {
        if (!isinf(room[a])) room[a] = fmax(0.0, room[a] - w);
        if (a == 0) return;
    }
}

/* The largest f <= 1 with sum_k own_k min(g_k, f) <= R over k pairs
 * (g, own) in gw[2k] (sorted by g here). */
static double water_level(double *gw, size_t k, double R)
{
    double fixed = 0, free_w = 0;
    for (size_t j = 0; j < k; j++)
        free_w += gw[2 * j + 1];
    qsort(gw, k, 2 * sizeof *gw, cmp_dbl);
    for (size_t j = 0; j < k; j++) {
        /* levels up to g_j: the pairs before j are capped at their g */
        double g = gw[2 * j], at = fixed + g * free_w;
        if (at > R) return free_w > 0 ? fmax(0.0, (R - fixed) / free_w) : 1.0;
        fixed += gw[2 * j] * gw[2 * j + 1];
        free_w -= gw[2 * j + 1];
    }
    return 1.0; /* every pair fits at its own cap */
}

/* One greedy step: the segments ts[0..k) of equal slope. */
static void step(pfi_alloc_problem *p, const struct tseg *ts, size_t k, double *room, double *added)
{
    struct alloc_tree *t = p->tree;
    if (k == 1) {
        size_t h = t->home[ts[0].job];
        double m = fmin(ts[0].width, path_room(t, room, h));
        if (m > 0) {
            added[ts[0].job] += m;
            path_take(t, room, h, m);
        }
        return;
    }
    /* demand per domain on the segments' paths */
    size_t nt = 0;
    for (size_t j = 0; j < k; j++) {
        size_t h = t->home[ts[j].job];
        for (size_t a = h;; a = t->parent[a]) {
            if (!t->mark[a]) {
                t->mark[a] = 1;
                t->dem[a] = t->own[a] = 0;
                t->g[a] = 1;
                t->touched[nt++] = a;
            }
            t->dem[a] += ts[j].width;
            if (a == 0) break;
        }
        t->own[h] += ts[j].width;
    }
    int fits = 1;
    for (size_t j = 0; j < nt; j++)
        fits &= t->dem[t->touched[j]] <= room[t->touched[j]];
    if (!fits) {
        /* children first: each overfilled domain caps its homes' fraction */
        qsort(t->touched, nt, sizeof *t->touched, cmp_desc);
        double *gw = t->gw;
        for (size_t j = 0; j < nt; j++) {
            size_t a = t->touched[j], m = 0;
            if (!(t->dem[a] > room[a])) continue;
            for (size_t q = 0; q < nt; q++) {
                size_t h = t->touched[q];
                if (h >= a && h < t->end[a] && t->own[h] > 0) {
                    gw[2 * m] = t->g[h];
                    gw[2 * m + 1] = t->own[h];
                    m++;
                }
            }
            double f = water_level(gw, m, room[a]);
            for (size_t q = 0; q < nt; q++) {
                size_t h = t->touched[q];
                if (h >= a && h < t->end[a]) t->g[h] = fmin(t->g[h], f);
            }
        }
    }
    for (size_t j = 0; j < k; j++) {
        size_t h = t->home[ts[j].job];
        double m = fits ? ts[j].width : ts[j].width * t->g[h];
        if (m > 0) {
            added[ts[j].job] += m;
            path_take(t, room, h, m);
        }
    }
    for (size_t j = 0; j < nt; j++)
        t->mark[t->touched[j]] = 0;
}

int alloc_tree_oracle(pfi_alloc_problem *p, double budget_w, double *power_w, pfi_error *err)
{
    struct alloc_tree *t = p->tree;
    double *room = t->resid;
    int rc = alloc_tree_room(p, budget_w, room, err);
    if (rc != PFI_OK) return rc;
    if (t->n_spread) return alloc_tree_lp(p, room, power_w, err);
    size_t n = p->n, ns = 0;
    double wtot = 0;
    for (size_t i = 0; i < n; i++)
        ns += alloc_job_segments(p, i, p->segs + ns, &wtot);
    if (ns > t->cap_ts) {
        struct tseg *nts = realloc(t->ts, ns * sizeof *nts);
        if (!nts) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        t->ts = nts;
        t->cap_ts = ns;
    }
    ns = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = alloc_job_segments(p, i, p->segs + ns, &wtot);
        for (size_t j = ns; j < ns + k; j++)
            t->ts[j] = (struct tseg){p->segs[j].slope, p->segs[j].width, i};
        ns += k;
    }
    qsort(t->ts, ns, sizeof *t->ts, cmp_tseg);
    double *added = p->shed; /* watts above the floor, per entry (all its jobs) */
    for (size_t i = 0; i < n; i++)
        added[i] = 0;
    for (size_t j = 0; j < ns && room[0] > 0;) {
        size_t k = 1;
        while (j + k < ns && t->ts[j + k].slope == t->ts[j].slope)
            k++;
        step(p, t->ts + j, k, room, added);
        j += k;
    }
    for (size_t i = 0; i < n; i++)
        power_w[i] = fmin(p->pmax[i], p->floor_w[i] + added[i] / p->cnt[i]);
    return PFI_OK;
}
