/* The fleet's cliffs below a job's measured points (plan_cliff.h). */
#include "plan_cliff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double plan_cliff_ramp(double d)
{
    return d <= 0 ? 0 : d >= PLAN_CLIFF_D ? 1 : d / PLAN_CLIFF_D;
}

/* A reading above the base says the prior was pessimistic there: s < 0. */
static double shortfall(double y, double base_y)
{
    return fmax(-1, fmin(1, 1 - y / base_y));
}

void plan_cliff_add(plan_cliff *c, uint64_t job, double x, double d, double y, double rsd,
                    double base_y)
{
    if (!(d >= PLAN_CLIFF_MIN_D) || !(base_y > 0) || !(y >= 0) || !isfinite(y) ||
        !(x > 0 && x <= 1))
        return;
    c->x[c->next] = x;
    c->y[c->next] = y;
    c->rsd[c->next] = rsd >= 0 && isfinite(rsd) ? rsd : 0;
    c->s[c->next] = shortfall(y, base_y);
    c->job[c->next] = job;
    c->next = (c->next + 1) % PLAN_CLIFF_KEEP;
    if (c->n < PLAN_CLIFF_KEEP) c->n++;
}

void plan_cliff_rebase(plan_cliff *c, size_t k, double base_y)
{
    if (k < c->n && base_y > 0) c->s[k] = shortfall(c->y[k], base_y);
}

typedef struct ws {
    double s, w;
} ws;

static int by_value(const void *a, const void *b)
{
    double x = ((const ws *)a)->s, y = ((const ws *)b)->s;
    return (x > y) - (x < y);
}

void plan_cliff_fit(plan_cliff *c, double confidence)
{
    memset(c->mean, 0, sizeof c->mean);
    memset(c->hi, 0, sizeof c->hi);
    c->any = 0;
    if (c->n < PLAN_CLIFF_MIN_N) return;
    ws v[PLAN_CLIFF_KEEP];
    for (size_t k = 0; k < c->n; k++)
        v[k] = (ws){c->s[k], 0};
    for (int g = 0; g < PLAN_PRIOR_GRID; g++) {
        double xg = PLAN_PRIOR_X0 + PLAN_PRIOR_DX * g, sw = 0, sw2 = 0, sum = 0;
        for (size_t k = 0; k < c->n; k++) {
            double u = (c->x[k] - xg) / PLAN_CLIFF_H, w = exp(-0.5 * u * u);
            v[k] = (ws){c->s[k], w};
            sw += w;
            sw2 += w * w;
            sum += w * c->s[k];
        }
        /* too few samples near: nothing said there */
        if (!(sw > 0) || sw * sw / sw2 < PLAN_CLIFF_MIN_N) continue;
        qsort(v, c->n, sizeof *v, by_value);
        double acc = 0, q = v[c->n - 1].s;
        for (size_t k = 0; k < c->n; k++) {
            acc += v[k].w;
            if (acc >= confidence * sw) {
                q = v[k].s;
                break;
            }
        }
        c->mean[g] = fmax(0, sum / sw);
        c->hi[g] = fmax(c->mean[g], q);
        c->any |= c->hi[g] > 0;
    }
}

static double grid_at(const double *y, double x)
{
    double u = (x - PLAN_PRIOR_X0) / PLAN_PRIOR_DX;
    if (u <= 0) return y[0];
    int k = (int)u;
    if (k >= PLAN_PRIOR_GRID - 1) return y[PLAN_PRIOR_GRID - 1];
    double f = u - k;
    return y[k] + (y[k + 1] - y[k]) * f;
}

typedef struct xs {
    double x, s, y, rsd;
} xs;

static int by_x(const void *a, const void *b)
{
    double x = ((const xs *)a)->x, y = ((const xs *)b)->x;
    return (x > y) - (x < y);
}

/* The shortfall at x as the job's own samples v[0..m) (sorted by x, all
 * under its lowest point) say, linear between them, and the relative SD of
 * the readings it rests on (the larger of two): returns 1 when x is above
 * the highest (*at: it; *s, *rsd untouched), -1 at or under the lowest (*at:
 * it), else 0. */
static int own_at(const xs *v, size_t m, double x, double *s, double *rsd, size_t *at)
{
    if (x > v[m - 1].x) {
        *at = m - 1;
        return 1;
    }
    if (x <= v[0].x) {
        *s = v[0].s;
        *rsd = v[0].rsd;
        *at = 0;
        return -1;
    }
    size_t k = 1;
    while (v[k].x < x)
        k++;
    double f = (x - v[k - 1].x) / (v[k].x - v[k - 1].x);
    *s = v[k - 1].s + (v[k].s - v[k - 1].s) * f;
    *rsd = fmax(v[k - 1].rsd, v[k].rsd);
    *at = k;
    return 0;
}

/* A point at P on the line between pts[k - 1] and pts[k]. */
static plan_pt between(const plan_pt *a, const plan_pt *b, double P)
{
    double f = (P - a->P) / (b->P - a->P);
#define LERP(F) (a->F + (b->F - a->F) * f)
    return (plan_pt){LERP(cap), P, LERP(T), LERP(sdc), LERP(sdi), LERP(d), LERP(dm)};
#undef LERP
}

/* Samples v[0..m) (sorted by x) made points of pts[0..n), at most extra of
 * them; returns the new count. */
static size_t insert_own(const xs *v, size_t m, double pmax, double xr, plan_pt *pts, size_t n,
                         size_t extra)
{
    size_t want = m < extra ? m : extra;
    for (size_t q = 0; q < want && n >= 2; q++) {
        size_t at = want > 1 ? (size_t)lround((double)q * (double)(m - 1) / (double)(want - 1)) : 0;
        double P = v[at].x * pmax;
        size_t k = 1;
        while (k < n && pts[k].P <= P)
            k++;
        if (k == n || fmin(P - pts[k - 1].P, pts[k].P - P) < PLAN_CLIFF_SEP * pmax) continue;
        plan_pt np = between(&pts[k - 1], &pts[k], P);
        np.d = fmax(0, xr - v[at].x);
        memmove(&pts[k + 1], &pts[k], (n - k) * sizeof *pts);
        pts[k] = np;
        n++;
    }
    return n;
}

size_t plan_cliff_apply(const plan_cliff *c, double z, const pfi_plan_job *j, const plan_prior *pr,
                        double pmax, double xr, const size_t *own, size_t n_own, plan_pt *pts,
                        size_t n, size_t room)
{
    xs v[PLAN_CLIFF_KEEP];
    size_t m = 0;
    for (size_t q = 0; q < n_own && m < PLAN_CLIFF_KEEP; q++)
        if (own[q] < c->n && c->x[own[q]] < xr)
            v[m++] = (xs){c->x[own[q]], c->s[own[q]], c->y[own[q]], c->rsd[own[q]]};
    if (!c->any && m == 0) return n;
    qsort(v, m, sizeof *v, by_x);
    if (room > n)
        n = insert_own(v, m, pmax, xr, pts, n,
                       room - n < PLAN_CLIFF_PTS ? room - n : PLAN_CLIFF_PTS);
    double tmax = j->tmax;
    for (size_t k = 0; k < n; k++) {
        plan_pt *p = &pts[k];
        double r = plan_cliff_ramp(p->d);
        if (r == 0) continue;
        double x = p->P / pmax, mean = grid_at(c->mean, x), hi = grid_at(c->hi, x);
        if (!(hi > 0) && m == 0) continue;
        double sd = sqrt(p->sdc * p->sdc + p->sdi * p->sdi);
        double lo = hi > 0 ? fmin(p->T - z * sd, p->T * (1 - hi * r)) : p->T - z * sd;
        /* the expected value where the job's class was read is the class's
         * (its replicas' readings, checked, plan_class.c); the bound still
         * allows for a class that hides the job's cliff */
        double t = p->T * (1 - mean * plan_cliff_ramp(p->dm));
        if (m > 0) {
            /* where the job itself was read: its readings on its own curve,
             * linear between them; above the highest the fleet's mean (a
             * curve rises with power: never under that reading); under the
             * lowest, its shortfall or the fleet's mean ramped in from it,
             * the deeper (cliffs do not add up; a curve above its shape
             * there meets the fleet's cliffs like any other) */
            double so = 0, rsd = -1, base = plan_curve_from_above(j, pr, pmax, x, 0) * tmax;
            size_t at;
            int where = own_at(v, m, x, &so, &rsd, &at);
            if (where > 0 && v[at].y * tmax > t) {
                t = v[at].y * tmax;
                rsd = v[at].rsd;
            } else if (where <= 0 && base > 0) {
                double fl = where < 0 ? mean * plan_cliff_ramp(fmin(p->dm, v[at].x - x)) : 0;
                so = so > 0 ? fmax(so, fl) : 1 - (1 - so) * (1 - fl);
                t = base * (1 - so);
            } else if (where <= 0) {
                rsd = -1;
            }
            /* priced on its readings: their spread, as a measured point's */
            if (rsd >= 0) p->sdi = fmax(p->sdi, t * sqrt(rsd * rsd + PLAN_WANDER * PLAN_WANDER));
        }
        /* the shared part set so that t - z SD is lo (the reading part as it
         * was; where that alone reaches under lo, the shared part is 0: the
         * bound t - z x the reading part, under a job's own deeper cliff too) */
        lo = fmin(lo, t - z * p->sdi);
        double need = (t - lo) / z;
        p->sdc = sqrt(fmax(0, need * need - p->sdi * p->sdi));
        p->T = t;
    }
    return n;
}
