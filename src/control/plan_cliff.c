/* The fleet's cliffs below a job's measured points (plan_cliff.h). */
#include "plan_cliff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double plan_cliff_ramp(double d)
{
    return d <= 0 ? 0 : d >= PLAN_CLIFF_D ? 1 : d / PLAN_CLIFF_D;
}

void plan_cliff_add(plan_cliff *c, double x, double d, double tput, double curve_t)
{
    if (!(d >= PLAN_CLIFF_MIN_D) || !(curve_t > 0) || !(tput >= 0) || !isfinite(tput) ||
        !(x > 0 && x <= 1))
        return;
    /* a reading above the curve says the prior was pessimistic there */
    c->x[c->next] = x;
    c->s[c->next] = fmax(-1, fmin(1, 1 - tput / curve_t));
    c->next = (c->next + 1) % PLAN_CLIFF_KEEP;
    if (c->n < PLAN_CLIFF_KEEP) c->n++;
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

void plan_cliff_apply(const plan_cliff *c, double z, double pmax, plan_pt *pts, size_t n)
{
    if (!c->any) return;
    for (size_t k = 0; k < n; k++) {
        plan_pt *p = &pts[k];
        double r = plan_cliff_ramp(p->d);
        if (r == 0) continue;
        double x = p->P / pmax, mean = grid_at(c->mean, x), hi = grid_at(c->hi, x);
        if (!(hi > 0)) continue;
        double sd = sqrt(p->sdc * p->sdc + p->sdi * p->sdi);
        double lo = fmin(p->T - z * sd, p->T * (1 - hi * r));
        /* the expected value where the job's class was read is the class's
         * (its replicas' readings, checked, plan_class.c); the bound still
         * allows for a class that hides the job's cliff */
        double t = p->T * (1 - mean * plan_cliff_ramp(p->dm));
        /* the shared part set so that t - z SD is lo (the reading part as it
         * was; where that alone reaches under lo, the shared part is 0) */
        double need = (t - lo) / z;
        p->sdc = sqrt(fmax(0, need * need - p->sdi * p->sdi));
        p->T = t;
    }
}
