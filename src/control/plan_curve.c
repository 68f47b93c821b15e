/* A job's curve and band for the plan (plan_curve.h). */
#include "plan_curve.h"

#include <math.h>
#include <stdlib.h>

/* A measured point (the job's own or its class's) in absolute terms. */
typedef struct meas {
    double cap, P, T, sdc, sdi;
} meas;

static int by_power(const void *a, const void *b)
{
    const plan_pt *x = a, *y = b;
    return (x->P > y->P) - (x->P < y->P);
}

/* A point of the job's own the plan can use: measured power, throughput, a cap. */
static int own_ok(const pfi_plan_obs *ob)
{
    return ob->power_w > 0 && ob->tput >= 0 && isfinite(ob->cap_w);
}

/* The prior's mean at power pw (relative to pmax). */
static double shape(const plan_prior *pr, double pw, double pmax)
{
    double y, sd;
    plan_prior_at(pr, pw / pmax, &y, &sd);
    return y;
}

size_t plan_curve_build(const pfi_plan_job *j, const plan_prior *pr, const plan_cls_pt *cls,
                        size_t n_cls, plan_pt *out, double *xr)
{
    double n = (double)j->n_gpus;
    double pmax = isfinite(j->pmax_w) && j->pmax_w > 0 ? j->pmax_w : n * j->max_w;
    int tmax_known = isfinite(j->tmax) && j->tmax > 0;
    double tmax = tmax_known ? j->tmax : 1.0;
    /* The measured points: the job's own, then its class's where it has none. */
    meas *m = malloc((j->n_obs + n_cls + 1) * sizeof *m);
    size_t nm = 0;
    for (size_t o = 0; m && o < j->n_obs; o++) {
        const pfi_plan_obs *ob = &j->obs[o];
        if (!own_ok(ob)) continue;
        double sd = ob->tput_sd >= 0 && isfinite(ob->tput_sd) ? ob->tput_sd : 0;
        sd = sqrt(sd * sd + PLAN_WANDER * PLAN_WANDER * ob->tput * ob->tput);
        m[nm++] = (meas){ob->cap_w, ob->power_w, ob->tput, 0, sd};
    }
    size_t own = nm;
    for (size_t c = 0; m && c < n_cls; c++) {
        int have = 0;
        for (size_t o = 0; o < own; o++)
            have |= fabs(m[o].cap - cls[c].cap) <= 5;
        /* only within the job's own cap range: a class's jobs may differ in it */
        if (have || !(cls[c].x > 0) || cls[c].cap < j->min_w - 5 || cls[c].cap > j->max_w + 5)
            continue;
        /* its throughput from the class, its power the job's own bound at
         * that cap (the hardware's): a class never makes the plan under-count
         * power, even a wrong one */
        m[nm++] =
            (meas){cls[c].cap, fmin(n * cls[c].cap, pmax), cls[c].y * tmax, cls[c].sd * tmax, 0};
    }
    /* the job's own deepest point: under it (class points too: another
     * job's curve) the plan has not seen the job itself (plan_cliff.h) */
    double x_r = 1;
    for (size_t o = 0; o < own; o++)
        if (m[o].P <= pmax) x_r = fmin(x_r, m[o].P / pmax);
    *xr = x_r;
    double x_m = x_r; /* with the class's points */
    for (size_t o = own; o < nm; o++)
        if (m[o].P <= pmax) x_m = fmin(x_m, m[o].P / pmax);
    size_t k = 0;
    for (int s = 0; s < PFI_PLAN_PRIOR_POINTS; s++) {
        double c = j->min_w + (j->max_w - j->min_w) * s / (PFI_PLAN_PRIOR_POINTS - 1);
        int measured = 0;
        for (size_t o = 0; o < nm; o++)
            measured |= fabs(m[o].cap - c) <= 5;
        if (measured) continue;
        double pw = fmin(n * c, pmax), y, sdp;
        plan_prior_at(pr, pw / pmax, &y, &sdp);
        double t = tmax * y;
        /* measured neighbours; the uncapped point above the highest */
        double pl = NAN, tl = NAN, il = 0, pu = pmax, tu = tmax, iu = 0;
        for (size_t o = 0; o < nm; o++) {
            if (m[o].P > pmax) continue;
            if (m[o].P <= pw && !(m[o].P <= pl)) pl = m[o].P, tl = m[o].T, il = m[o].sdi;
            if (m[o].P > pw && m[o].P < pu) pu = m[o].P, tu = m[o].T, iu = m[o].sdi;
        }
        double sdi = 0;
        if (isfinite(pl)) {
            double a = shape(pr, pl, pmax), b = shape(pr, pu, pmax), f = 0;
            if (b > a) f = (shape(pr, pw, pmax) - a) / (b - a);
            t = tl + (tu - tl) * f;
            sdi = il + (iu - il) * f;
        } else if (pu < pmax) {
            double b = shape(pr, pu, pmax);
            t = b > 0 ? tu * y / b : t;
            sdi = b > 0 ? iu * y / b : 0;
        }
        /* The prior's SD fades near a measured point (the uncapped one too
         * when Tmax is measured): it has pinned the curve there. */
        double near = 1, x = pw / pmax;
        for (size_t o = 0; o < nm; o++)
            near = fmin(near, fabs(x - m[o].P / pmax) / PLAN_NEAR_X);
        if (tmax_known) near = fmin(near, (1 - x) / PLAN_NEAR_X);
        double sdc = tmax * sdp * near;
        /* Between two measured points a curve that rises with power lies
         * between them, whatever its shape: half the gap below the prior's
         * guess, fading near either point, bounds what the shape may hide. */
        if (isfinite(pl)) sdc = fmax(sdc, PLAN_GAP_SD * near * (t - tl));
        for (size_t o = 0; o < nm; o++)
            if (m[o].P > 0 && fabs(x - m[o].P / pmax) < PLAN_NEAR_X)
                sdc = fmax(sdc, m[o].sdc * (m[o].P > 0 ? t / fmax(m[o].T, 1e-12) : 1) *
                                    (1 - fabs(x - m[o].P / pmax) / PLAN_NEAR_X));
        out[k++] = (plan_pt){c, pw, t, sdc, sdi, fmax(0, x_r - x), fmax(0, x_m - x)};
    }
    for (size_t o = 0; o < nm; o++)
        out[k++] = (plan_pt){m[o].cap,
                             m[o].P,
                             m[o].T,
                             m[o].sdc,
                             m[o].sdi,
                             o < own ? 0 : fmax(0, x_r - m[o].P / pmax),
                             o < own ? 0 : fmax(0, x_m - m[o].P / pmax)};
    free(m);
    qsort(out, k, sizeof *out, by_power);
    return k;
}

void plan_curve_band(const plan_pt *pts, size_t n, double P, double *sdc, double *sdi)
{
    *sdc = *sdi = 0;
    if (n == 0) return;
    if (P <= pts[0].P) {
        *sdc = pts[0].sdc;
        *sdi = pts[0].sdi;
        return;
    }
    for (size_t k = 1; k < n; k++)
        if (P <= pts[k].P) {
            double d = pts[k].P - pts[k - 1].P, f = d > 0 ? (P - pts[k - 1].P) / d : 1;
            *sdc = pts[k - 1].sdc + (pts[k].sdc - pts[k - 1].sdc) * f;
            *sdi = pts[k - 1].sdi + (pts[k].sdi - pts[k - 1].sdi) * f;
            return;
        }
    /* above the highest point: the uncapped end, exact */
}

double plan_curve_tput_at(const plan_pt *pts, size_t n, double P)
{
    if (n == 0) return NAN;
    if (P <= pts[0].P) return pts[0].T;
    for (size_t k = 1; k < n; k++)
        if (P <= pts[k].P) {
            double d = pts[k].P - pts[k - 1].P, f = d > 0 ? (P - pts[k - 1].P) / d : 1;
            return pts[k - 1].T + (pts[k].T - pts[k - 1].T) * f;
        }
    return pts[n - 1].T;
}

void plan_curve_at_cap(const plan_pt *pts, size_t n, double cap, double *P, double *T)
{
    *P = *T = NAN;
    if (n == 0) return;
    if (cap <= pts[0].cap) {
        *P = pts[0].P;
        *T = pts[0].T;
        return;
    }
    for (size_t k = 1; k < n; k++)
        if (cap <= pts[k].cap) {
            double d = pts[k].cap - pts[k - 1].cap, f = d > 0 ? (cap - pts[k - 1].cap) / d : 1;
            *P = pts[k - 1].P + (pts[k].P - pts[k - 1].P) * f;
            *T = pts[k - 1].T + (pts[k].T - pts[k - 1].T) * f;
            return;
        }
    *P = pts[n - 1].P;
    *T = pts[n - 1].T;
}

double plan_curve_from_above(const pfi_plan_job *j, const plan_prior *pr, double pmax, double x,
                             double gap)
{
    if (!(isfinite(j->tmax) && j->tmax > 0)) return NAN;
    double xu = 1, yu = 1; /* the uncapped point */
    for (size_t o = 0; o < j->n_obs; o++) {
        const pfi_plan_obs *ob = &j->obs[o];
        double xo = ob->power_w / pmax;
        if (own_ok(ob) && xo >= x + gap && xo < xu) xu = xo, yu = ob->tput / j->tmax;
    }
    double a = shape(pr, x * pmax, pmax), b = shape(pr, xu * pmax, pmax);
    return b > 0 ? yu * a / b : NAN;
}
