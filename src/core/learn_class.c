/* Live learn's job classes (pfi_live_job.class_id, issue 29 item 3): jobs
 * of one class are expected to share a curve (replicas of one
 * configuration: a Slurm array, a Kubernetes label), so each reads its
 * classmates' readings as its own, in y = T / Tmax against the share of
 * Pmax. A curtailment reads each job once a period, so a class of k jobs
 * reads each power k times as often, and the readings' noise, which is
 * what learn loses to (docs/learn.md), falls by sqrt(k).
 *
 * A class is checked, never trusted. Before any reading, by what the
 * controller knows of both: replicas of one configuration have the same
 * floor as a share of Pmax and the same telemetry, so the same predicted
 * PFI; a classmate whose floor share or predicted PFI differs beyond
 * GATE_FLOOR or GATE_PFI is never pooled (alike), for a classmate pooled
 * on agreeing readings costs until they disagree, and at small cuts that
 * is most of the event. Then by the readings: job x pools the readings of a
 * classmate y only while their own readings agree, at every power both
 * were read at, within SPLIT_Z SDs of the difference and together within
 * SPLIT_DIR (exact readings: to the last bits), and weighs them less by
 * the class's spread (what pairs that agree still differ by beyond their
 * noise). Pooled jobs get the same estimate, so the oracle gives them the
 * same power and their readings meet again there: a classmate whose curve
 * differs is read beside the others until the difference shows, and is
 * split out; a wrong class costs the periods before that (test_families'
 * test_classes: wrong classes within 4 points of none at 5-10% cut, 56-75%
 * against 72-86% with the split disabled, before the priors' check).
 *
 * A job pools with at most POOL_MAX classmates (the next ones in the
 * class's order), so a class of thousands costs O(jobs) a proposal; the
 * noise is down 4x by then. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "learn_live_int.h"

/* SPLIT_Z: one power's difference that splits; SPLIT_DIR: the mean of the
 * differences' z over the powers both read, times the root of their
 * number (one curve above the other at every power, each within the
 * noise). Wrong classes at 5-10% cut (20 workloads, 1% noise, against no
 * class): the 3 SD rule alone cost sigmoid 5% 13.5 points, bumps 5%
 * 11.5, dead zones 5% 12.0, with the class's spread 8.3, 9.4 and 8.5, and
 * then with the direction at 2 / 1.5 / 1 SD 6.3 / 5.1 /
 * 2.7, 5.1 / 3.3 / 2.1, 4.5 / 3.0 / 1.8, while the right class's gain
 * there fell 0.5-2 points (dead zones 5% 88.8 / 88.8 / 86.7% against
 * 81.4% with none). 1 SD was kept; with the priors' check (below) 1.5
 * (100 workloads, right class at 5 / 10%: dead zones 84.0 / 88.4 -> 85.0
 * / 89.7%, bumps 77.1 / 87.0 -> 78.3 / 87.6%, sigmoid 90.6 -> 91.2% at
 * 5%; wrong classes no cell more than 0.2 under none), where 2 SD gave
 * dead zones 86.4 / 90.1% but wrong classes there 0.6 under none at 10%. */
#define SPLIT_Z 3.0
#define SPLIT_DIR 1.5
/* The priors' check (alike): floor shares within GATE_FLOOR of Pmax,
 * predicted PFIs within GATE_PFI of the larger (an unknown one passes).
 * Wrong classes against none at 5-40% cut (100 workloads, 1% noise;
 * sigmoid, bumps, dead zones): from -1.2, -2.4 and -2.3 points at 5% to
 * within 0.3 in every cell, the right classes' cells unchanged (replicas
 * share their priors). Tried first, on the readings alone (the same
 * cells at 5%, wrong / right class, against -1.2 / -2.4 / -2.3 and 90.6
 * / 77.1 / 84.0%): y's readings weighed by how well the pair's
 * differences pin their slopes' difference (a prior SD of 0.5), moved by
 * its estimate, +1.3 / -1.2 / -1.3 and 87.6 / 74.7 / 80.4%; not moved
 * +1.0 / -1.7 / -1.8 and 88.3 / 76.1 / 82.2%; weighed by the class's
 * spread over every pair compared, agreeing or not, +0.6 / -4.3 / -3.2
 * and 89.1 / 75.2 / 81.5%: a classmate weighed as evidence says still
 * costs where the rules split, and the right class loses a third of its
 * gain. */
#define GATE_FLOOR 0.02
#define GATE_PFI 0.10
#define SPAN 0.05
enum { POOL_MAX = 16 };

/* y's own value at x's bin q (u: its share of x's Pmax) into *v, its
 * variance into *var: y's bin there, or linear between its two bins about
 * u when both are noisy and within SPAN of Pmax (a controller's caps are
 * whole watts on jobs of different Pmax: their readings seldom meet);
 * 0 when y has neither. */
static int value_at(const ljob *y, size_t *b, double u, double *v, double *var)
{
    double ym = y->j.pmax_w;
    while (*b < y->nown && y->own[*b].p / ym < u - 1e-3)
        (*b)++;
    if (*b < y->nown && y->own[*b].p / ym <= u + 1e-3) {
        const bin *q = &y->own[*b];
        if (!(q->sw > 0)) return 0;
        *v = q->swy / q->sw;
        *var = q->sw < EXACT_W ? 1 / q->sw : 0;
        return 1;
    }
    if (*b == 0 || *b >= y->nown) return 0;
    const bin *l = &y->own[*b - 1], *r = &y->own[*b];
    double ul = l->p / ym, ur = r->p / ym;
    if (ur - ul > SPAN || !(l->sw > 0 && r->sw > 0) || l->sw >= EXACT_W || r->sw >= EXACT_W)
        return 0;
    double f = (u - ul) / (ur - ul);
    *v = (1 - f) * l->swy / l->sw + f * r->swy / r->sw;
    *var = (1 - f) * (1 - f) / l->sw + f * f / r->sw;
    return 1;
}

/* x's own readings against y's at x's powers: -1 they disagree (above),
 * 0 none compared, 1 they agree; adds the squared differences of the
 * noisy ones less their noise to *ss and their count to *n (the class's
 * spread). */
static int agree_at(const ljob *x, const ljob *y, double *ss, double *n)
{
    size_t b = 0, cmp = 0;
    double s = 0, c = 0, zs = 0;
    for (size_t a = 0; a < x->nown; a++) {
        const bin *p = &x->own[a];
        double yv, yvar;
        if (!(p->sw > 0) || !value_at(y, &b, p->p / x->j.pmax_w, &yv, &yvar)) continue;
        if (p->sw >= EXACT_W && yvar > 0) continue; /* exact against interpolated */
        double d = p->swy / p->sw - yv;
        double var = (p->sw < EXACT_W ? 1 / p->sw : 0) + yvar;
        if (d * d > SPLIT_Z * SPLIT_Z * var + 1e-18) return -1;
        cmp++;
        if (var > 0) {
            s += d * d - var;
            c++;
            zs += d / sqrt(var);
        }
    }
    /* one curve above the other at every power read, each within the noise */
    if (c > 0 && fabs(zs) > SPLIT_DIR * sqrt(c)) return -1;
    *ss += s;
    *n += c;
    return cmp > 0;
}

/* Whether x and y may be replicas by what is known before the event. */
static int alike(const ljob *x, const ljob *y)
{
    double fx = x->j.floor_w / x->j.pmax_w, fy = y->j.floor_w / y->j.pmax_w;
    double px = x->j.pfi_hat, py = y->j.pfi_hat;
    if (fabs(fx - fy) > GATE_FLOOR) return 0;
    return !(isfinite(px) && isfinite(py)) || fabs(px - py) <= GATE_PFI * fmax(fabs(px), fabs(py));
}

/* Whether x pools y: their priors are alike (above) and y's readings
 * agree with x's at x's powers, or, where none of x's powers has a
 * reading of y's to compare with, x's agree with y's at y's (comparing
 * both ways every time split true classmates on the interpolation's
 * error: test_classes' class gain 35.7 -> 30.9 points). */
static int agree(const ljob *x, const ljob *y, double *ss, double *n)
{
    if (!alike(x, y)) return 0;
    int a = agree_at(x, y, ss, n);
    return (a == 0 ? agree_at(y, x, ss, n) : a) > 0;
}

/* y's own readings into x's view, at the same share of x's Pmax, each
 * noisy one weighed as its variance plus tau2 (how far a classmate's
 * curve may sit from x's); an exact bin stays as first read (add_reading,
 * learn_live.c). */
static void merge(ljob *x, const ljob *y, double tau2)
{
    double f = x->j.pmax_w / y->j.pmax_w, tol = 1e-3 * x->j.pmax_w;
    for (size_t k = 0; k < y->nown; k++) {
        const bin *q = &y->own[k];
        if (!(q->sw > 0)) continue;
        bin *b = live_bin_slot(x->b, &x->nb, q->p * f, tol);
        if (b->sw >= EXACT_W && q->sw >= EXACT_W) continue;
        double r = q->sw < EXACT_W ? 1 / (1 + q->sw * tau2) : 1;
        b->sw += r * q->sw;
        b->swy += r * q->swy;
        b->swc += q->swc;
        b->nc += q->nc;
        b->swp += r * q->swp;
        b->swyp += r * q->swyp;
    }
}

typedef struct {
    uint64_t c;
    size_t i;
} cix;

static int by_class(const void *a, const void *b)
{
    const cix *x = a, *y = b;
    if (x->c != y->c) return x->c < y->c ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* l->cls: the classed jobs by (class, index); each job's grp the slot its
 * class starts at. Every view is made again. -1 on no memory. */
static int order(pfi_live *l)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        k += l->jobs[i].j.class_id != 0;
    cix *v = malloc((k + 1) * sizeof *v);
    if (!v) return -1;
    if (k + 1 > l->cap_cls) {
        size_t *o = realloc(l->cls, (k + 1) * sizeof *o);
        if (o) l->cls = o;
        unsigned char *ag = o ? realloc(l->cls_agree, (k + 1) * POOL_MAX) : NULL;
        if (ag) l->cls_agree = ag;
        if (!ag) {
            free(v);
            return -1;
        }
        l->cap_cls = k + 1;
    }
    k = 0;
    for (size_t i = 0; i < l->n; i++) {
        ljob *x = &l->jobs[i];
        x->grp = SIZE_MAX;
        x->pool_n = 1;
        if (x->j.class_id) {
            v[k++] = (cix){x->j.class_id, i};
            x->own_dirty = 1;
        }
    }
    qsort(v, k, sizeof *v, by_class);
    for (size_t a = 0, s = 0; a < k; a++) {
        if (a > 0 && v[a].c != v[a - 1].c) s = a;
        l->cls[a] = v[a].i;
        l->jobs[v[a].i].grp = s;
        l->jobs[v[a].i].cpos = a - s;
    }
    free(v);
    l->ncls = k;
    l->cls_ok = 1;
    return 0;
}

/* Every classed job's view (its bins b) made again where a reading of its
 * class came in: its own readings and those of the classmates that agree
 * with them; its estimate is then rebuilt. -1 on no memory. */
int live_class_refresh(pfi_live *l)
{
    if (!l->cls_ok && order(l)) return -1;
    for (size_t s = 0, e; s < l->ncls; s = e) {
        uint64_t c = l->jobs[l->cls[s]].j.class_id;
        int dirty = 0;
        for (e = s; e < l->ncls && l->jobs[l->cls[e]].j.class_id == c; e++)
            dirty |= l->jobs[l->cls[e]].own_dirty;
        if (!dirty) continue;
        size_t k = e - s, span = k - 1 < POOL_MAX ? k - 1 : POOL_MAX;
        /* the class's spread: how far the curves of classmates whose
         * readings agree sit apart beyond the readings' noise (the mean
         * square of their differences less it, halved: each pair is two
         * curves off the class's), so that a class of look-alikes that
         * are not replicas pools little */
        double ss = 0, np = 0;
        unsigned char *ag = l->cls_agree;
        for (size_t a = s; a < e; a++)
            for (size_t t = 1; t <= span; t++)
                ag[a * POOL_MAX + t - 1] = (unsigned char)agree(
                    &l->jobs[l->cls[a]], &l->jobs[l->cls[s + (a - s + t) % k]], &ss, &np);
        double tau2 = np > 0 && ss > 0 ? ss / (2 * np) : 0;
        for (size_t a = s; a < e; a++) {
            ljob *x = &l->jobs[l->cls[a]];
            memcpy(x->b, x->own, x->nown * sizeof *x->b);
            x->nb = x->nown;
            x->pool_n = 1;
            for (size_t t = 1; t <= span; t++) {
                if (!ag[a * POOL_MAX + t - 1]) continue;
                merge(x, &l->jobs[l->cls[s + (a - s + t) % k]], tau2);
                x->pool_n++;
            }
            x->est_ok = 0;
        }
        for (size_t a = s; a < e; a++)
            l->jobs[l->cls[a]].own_dirty = 0;
    }
    return 0;
}

/* While exploring, pooled jobs share their estimate, so the oracle sends a
 * class to one power and it reads one depth a round, where the classed
 * information bound (tests/families/bound.c) reads each replica at its own
 * places. Two rules spread them, for noisy readings and jobs that pool
 * (exact readings and jobs alone or split out are as before):
 *   - at deep cuts (the job's equal share at least SPREAD_CUT below its
 *     Pmax) each pooled job's trust region is SPREAD_LO-SPREAD_HI times the
 *     loop's by its place in its class, at as many places as its view
 *     pools jobs: a class pushed to the region's edge reads a depth per
 *     replica a round. At 4 places whatever the class's size, alone, 100
 *     workloads, 1% noise, with the class: dead zones 20 / 30 / 40% 87.4
 *     / 90.9 / 91.9 -> 88.2 / 91.9 / 94.0%, sigmoid 20% 91.3 -> 93.6%,
 *     noisy sweeps 30 / 40% +0.9, flat-knee 30% +0.3, 40% -0.4; from
 *     every cut (the region's growth as the gate: docs/learn.md) noisy
 *     sweeps 10% lost 0.9 and bumps 5% 0.6, while at 5-10% the region
 *     already spans the useful range. With the rules below, a place per
 *     pooled job rather than 4: dead zones 20% +0.3, flat-knee 40% +0.3,
 *     sigmoid 20% +0.4; 0.5-1.5 rather than 0.75-1.25: within 0.5;
 *   - each pooled job's estimate is drawn (live_estimate's draw, one
 *     deviate per job and round, XDRAW_SDS of its pooled readings' SD), so
 *     that replicas read different powers about the estimated optimum,
 *     not only at the region's edge: a knee or a dead zone's edge is
 *     placed by the class's readings on both sides of it. Alone at 1 SD:
 *     flat-knee 20 / 30 / 40% 89.3 / 89.7 / 92.6 -> 89.8 / 90.0 / 93.4%,
 *     mix 5% 89.6 -> 90.2%, noisy sweeps 5% +0.9, dead zones 20% +1.0,
 *     no cell of the four lower by more than 0.2; with the spread above at 1 SD bumps
 *     5% lost 0.6, at 0.5 0.4, at 0.75 0.5 (and the kept draws' smaller
 *     scale for pooled jobs, learn_keep.c, gives it back). */
#define SPREAD_CUT 0.15
#define SPREAD_LO 0.75
#define SPREAD_HI 1.25
#define XDRAW_SDS 0.75

/* Whether x's exploring estimate is spread (above): noisy readings, x
 * pools its classmates. */
static int spread(const pfi_live *l, const ljob *x)
{
    return l->noisy && x->pool_n > 1;
}

double live_class_trust(const pfi_live *l, const ljob *x, double low)
{
    double d = l->delta * x->j.pmax_w;
    if (!spread(l, x) || 1 - x->eq_pw / x->j.pmax_w < SPREAD_CUT) return low - d;
    size_t n = x->pool_n; /* its view's jobs: each at its own depth */
    double f = (double)(x->cpos % n) / (double)(n - 1);
    return low - (SPREAD_LO + (SPREAD_HI - SPREAD_LO) * f) * d;
}

const live_draw *live_class_draw(const pfi_live *l, const ljob *x, live_draw *d)
{
    if (!spread(l, x)) return NULL;
    *d = (live_draw){.seed = live_mix64(l->rounds + 7777), .sds = XDRAW_SDS};
    return d;
}
