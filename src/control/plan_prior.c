/* A job's prior curve from the dataset's groups (plan_prior.h). */
#include "plan_prior.h"

#include <math.h>

void plan_prior_build(double pfi, double pfi_sd, plan_prior *out)
{
    if (!isfinite(pfi)) {
        for (int k = 0; k < PLAN_PRIOR_GRID; k++) {
            double lo = 1;
            for (size_t g = 0; g < plan_prior_n_groups; g++)
                lo = fmin(lo, plan_prior_groups[g].y[k]);
            out->y[k] = lo;
            out->sd[k] = 0; /* the worst the dataset has: a floor, not a guess */
        }
        return;
    }
    double s = isfinite(pfi_sd) && pfi_sd > 0 ? pfi_sd : PLAN_PRIOR_SD;
    double v = s * s + PLAN_PRIOR_BW * PLAN_PRIOR_BW, wsum = 0;
    double w[256];
    size_t n = plan_prior_n_groups < 256 ? plan_prior_n_groups : 256;
    /* Weights relative to the nearest group's, so an estimate far outside
     * the dataset's range still weights its nearest groups (not 0 / 0). */
    double dmin = INFINITY;
    for (size_t g = 0; g < n; g++)
        dmin = fmin(dmin, fabs(plan_prior_groups[g].pfi - pfi));
    for (size_t g = 0; g < n; g++) {
        double d = fabs(plan_prior_groups[g].pfi - pfi);
        w[g] = exp(-0.5 * (d * d - dmin * dmin) / v);
        wsum += w[g];
    }
    /* one pass: the weighted mean and mean square (y in [0, 1]: no
     * cancellation worth the second pass) */
    double m[PLAN_PRIOR_GRID] = {0}, q[PLAN_PRIOR_GRID] = {0};
    for (size_t g = 0; g < n; g++) {
        if (w[g] < 1e-12 * wsum) continue; /* adds nothing a double keeps */
        const double *y = plan_prior_groups[g].y;
        for (int k = 0; k < PLAN_PRIOR_GRID; k++) {
            m[k] += w[g] * y[k];
            q[k] += w[g] * y[k] * y[k];
        }
    }
    for (int k = 0; k < PLAN_PRIOR_GRID; k++) {
        double mean = m[k] / wsum, var = q[k] / wsum - mean * mean;
        out->y[k] = mean;
        out->sd[k] = PLAN_PRIOR_SD_SCALE * sqrt(var > 0 ? var : 0);
    }
}

void plan_prior_at(const plan_prior *p, double x, double *y, double *sd)
{
    if (x >= 1) {
        *y = 1;
        *sd = 0;
        return;
    }
    if (x <= PLAN_PRIOR_X0) {
        double f = x > 0 ? x / PLAN_PRIOR_X0 : 0;
        *y = p->y[0] * f;
        *sd = p->sd[0] * f;
        return;
    }
    double u = (x - PLAN_PRIOR_X0) / PLAN_PRIOR_DX;
    int k = (int)u;
    if (k >= PLAN_PRIOR_GRID - 1) k = PLAN_PRIOR_GRID - 2;
    double f = u - k;
    *y = p->y[k] + (p->y[k + 1] - p->y[k]) * f;
    *sd = p->sd[k] + (p->sd[k + 1] - p->sd[k]) * f;
}
