/* Live learn's estimate of a job's curve (learn_live_int.h), in
 * y = T / Tmax against power:
 *   - its readings pooled by power (weights 1 / SD^2 in y units; an exact
 *     reading outweighs any noisy one), then made non-decreasing in power
 *     by weighted isotonic regression together with the uncapped point
 *     (Pmax, 1): a noisy or non-monotone reading cannot make a job look
 *     steeper than its neighbours say, and a reading with no loss counts;
 *   - between readings a monotone cubic (Fritsch-Carlson): shape-free,
 *     never outside its neighbours, concave where the readings are;
 *   - below the lowest reading, down to the floor, a line whose loss per W
 *     is the larger of the lowest interval's and a share of the
 *     telemetry prior's (1 / PFI per unit cut; a smaller share below an
 *     exact reading than below a noisy one): optimism about what was
 *     not measured draws a probe there, the prior keeps it from being
 *     unbounded;
 *   - sampled at its readings plus a fixed grid, so that a dead zone found
 *     between grid points is where the readings put it.
 */
#include <math.h>
#include <string.h>

#include "learn_live_int.h"

/* PRIOR_SHARE: the share of the prior's loss per cut assumed below the
 * lowest reading at least. */
#define PRIOR_SHARE 1.0
/* ... and below an exact reading: one reading tells what a probe there
 * gives, so more optimism costs a round at most and finds knees and dead
 * zones sooner (flat-knee at 30-40%: 88% -> 90-92% of equal's gap); a
 * noisy reading's loss at a small cut is within its SD, where probing
 * deeper only adds noise to chase. Chosen on the families' table (docs/learn.md). */
#define PRIOR_SHARE_EXACT 0.25
/* ... and below a noisy reading, from PRIOR_SHARE when its loss is within
 * ZLO SDs of none down to PRIOR_SHARE_EXACT when it is ZHI SDs or more
 * (linear between): a loss that many SDs deep is as sure as an exact one,
 * so the deep cuts' probes come as soon (1% noise, 500 workloads: noisy
 * sweeps 20% 83.2 -> 85.1%, flat-knee 30% 84.9 -> 85.4%, 40% 86.5 ->
 * 89.7%, sigmoid 30% 94.3 -> 96.6%; dead zones 10% 81.4 -> 80.7%). */
#define ZLO 3.0
#define ZHI 8.0
/* optimistic estimates below an exact reading: the loss per W assumed is
 * at most STEEP_CAP times the prior's, for a steep lowest interval may be a
 * step with a plateau below it, which the optimum of a sigmoid family
 * cuts jobs to (exact, with polish, 500 workloads: sigmoid 20% 89.7 ->
 * 92.1%, bumps 30% +1.7; twice the prior's: bumps 10% under the bar;
 * without polish it cost noisy sweeps at 20-30% their bar, docs/learn.md) */
#define STEEP_CAP 4.0

/* Monotone cubic (Fritsch-Carlson) slopes d[] at the n knots (x, y). */
static void pchip_slopes(const double *x, const double *y, size_t n, double *d)
{
    double s[MAXPTS];
    for (size_t k = 0; k + 1 < n; k++)
        s[k] = (y[k + 1] - y[k]) / (x[k + 1] - x[k]);
    d[0] = s[0];
    d[n - 1] = s[n - 2];
    for (size_t k = 1; k + 1 < n; k++) {
        if (s[k - 1] * s[k] <= 0) {
            d[k] = 0;
            continue;
        }
        double w1 = 2 * (x[k + 1] - x[k]) + (x[k] - x[k - 1]);
        double w2 = (x[k + 1] - x[k]) + 2 * (x[k] - x[k - 1]);
        d[k] = (w1 + w2) / (w1 / s[k - 1] + w2 / s[k]);
    }
}

/* splitmix64's finaliser: the draws of thompson, deterministic for a
 * round and a job (the core has no clock and no global state) */
uint64_t live_mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
/* A deviate of mean 0 and SD 1, nearly normal: the sum of the four 16-bit
 * uniforms of one hash, scaled (Irwin-Hall: kurtosis 2.7 against 3, tails
 * ending at 3.46 SD, enough for a draw of at most one SD). Box-Muller's log
 * and cos took 17% of pfi simulate --noise. */
static double gauss(uint64_t *st)
{
    uint64_t z = *st = live_mix64(*st);
    double u = (double)(z & 0xFFFF) + (double)(z >> 16 & 0xFFFF) + (double)(z >> 32 & 0xFFFF) +
               (double)(z >> 48);
    return (u / 65536 - 2 + 2 / 65536.0) * 1.7320508075688772; /* sqrt(12 / 4) */
}

/* Empirical Bayes across jobs (live_eb, learn_live_int.h): the bins that
 * count, noisy ones with no prior reading in them, and a bin's cut. */
static int eb_counts(const bin *b)
{
    return b->sw > 0 && b->sw < EXACT_W && !(b->swp > 0);
}
static double eb_cut(const ljob *x, const bin *b)
{
    return 1 - b->p / x->j.pmax_w;
}
/* The table's bucket of cut u, or -1 beyond it. */
static int eb_bucket(double u)
{
    return u >= 0 && u < EB_NB * EB_WIDTH ? (int)(u / EB_WIDTH) : -1;
}

static void eb_job(const live_eb *eb, const ljob *x, double *y, double *w);
static int eb_line(const live_eb *eb, const ljob *x, const bin *b, double *u, double *mu,
                   double *s);
static void eb_scale_sums(const live_eb *eb, const ljob *x, double *a, double *bb);

/* l->eb from every job's noisy bins: per bucket, over the bins within one
 * bucket either side, the line of loss against cut weighted by the bins'
 * weights (its intercept and slope), and the
 * spread of the jobs' true losses about it, the mean square of the
 * residuals less the mean of the bins' variances (method of moments);
 * fewer than EB_MIN bins: no shrinking there. One pass over the bins,
 * each summed into its own bucket, then each bucket's window of three. */
void live_eb_table(pfi_live *l)
{
    live_eb *e = &l->eb;
    /* weighted sums of 1, u, u^2, v, uv; plain ones of 1, u, u^2, v, uv, v^2;
     * the sum of the bins' variances (v = 1 - y, the loss) */
    double B[EB_NB][12], S[EB_NB][12];
    memset(B, 0, sizeof B);
    for (size_t i = 0; i < l->n; i++) {
        const ljob *x = &l->jobs[i];
        for (size_t a = 0; a < x->nb; a++) {
            const bin *b = &x->b[a];
            if (!eb_counts(b)) continue;
            double u = eb_cut(x, b), w = b->sw, v = 1 - b->swy / b->sw;
            int k = eb_bucket(u);
            if (k < 0) continue;
            double *s = B[k];
            s[0] += w, s[1] += w * u, s[2] += w * u * u, s[3] += w * v, s[4] += w * u * v;
            s[5] += 1, s[6] += u, s[7] += u * u, s[8] += v, s[9] += u * v, s[10] += v * v;
            s[11] += 1 / w;
        }
    }
    for (int k = 0; k < EB_NB; k++)
        for (int q = 0; q < 12; q++)
            S[k][q] = (k > 0 ? B[k - 1][q] : 0) + B[k][q] + (k + 1 < EB_NB ? B[k + 1][q] : 0);
    for (int k = 0; k < EB_NB; k++) {
        const double *s = S[k];
        e->icpt[k] = e->slope[k] = 0;
        e->tau2[k] = NAN;
        if (s[5] < EB_MIN) continue;
        double uc = s[1] / s[0], vc = s[3] / s[0], vu = s[2] / s[0] - uc * uc, b = 0;
        if (vu > 1e-12) b = (s[4] / s[0] - uc * vc) / vu;
        double c = vc - b * uc; /* the line v = c + b u; its residuals' sum of squares */
        double r2 =
            s[10] - 2 * c * s[8] - 2 * b * s[9] + c * c * s[5] + 2 * c * b * s[6] + b * b * s[7];
        e->icpt[k] = c;
        e->slope[k] = b;
        e->tau2[k] = at_least(r2 / (s[5] - 2) - s[11] / s[5], EB_TAU2_MIN);
    }
    e->on = 1;
    /* the jobs' scales' spread sm2 about 1 (EB_SM2_MIN): each job's scale
     * a / bb fitted on its bins, weighed by its precision bb */
    double num = 0, den = 0;
    e->sm2 = 0;
    for (size_t i = 0; i < l->n; i++) {
        double a = 0, bb = 0;
        eb_scale_sums(e, &l->jobs[i], &a, &bb);
        if (bb > 0) {
            num += bb * (a / bb - 1) * (a / bb - 1) - 1;
            den += bb;
        }
    }
    if (den > 0) e->sm2 = at_least(num / den, EB_SM2_MIN);
    for (size_t i = 0; i < l->n; i++)
        eb_job(e, &l->jobs[i], l->jobs[i].eby, l->jobs[i].ebw);
}

/* The jobs' line at bin b of job x: its loss mu and spread s (sqrt tau2)
 * at the bin's cut u. Returns 0 for an exact or prior bin, outside the
 * table, or with no table. */
static int eb_line(const live_eb *eb, const ljob *x, const bin *b, double *u, double *mu, double *s)
{
    if (!eb || !eb->on || !eb_counts(b)) return 0;
    *u = eb_cut(x, b);
    int k = eb_bucket(*u);
    if (k < 0 || isnan(eb->tau2[k])) return 0;
    *mu = eb->icpt[k] + eb->slope[k] * *u;
    *s = sqrt(eb->tau2[k]);
    return 1;
}

/* Job x's sums for its scale of the jobs' line, added to *a and *bb (the
 * scale a / bb, its precision bb): over its bins the table shrinks, each
 * weighed by 1 / (its noise + the jobs' spread), the variance of its loss
 * about the scaled line. */
static void eb_scale_sums(const live_eb *eb, const ljob *x, double *a, double *bb)
{
    double u, mu, s;
    for (size_t q = 0; q < x->nb; q++) {
        const bin *b = &x->b[q];
        if (!eb_line(eb, x, b, &u, &mu, &s)) continue;
        double s2 = 1 / b->sw + s * s;
        *a += mu * (1 - b->swy / b->sw) / s2;
        *bb += mu * mu / s2;
    }
}

/* Every bin of job x, y[a] and w[a] its value and weight: as read, or for
 * the bins the table shrinks, the posterior of the job's true residuals
 * about the job's scale of the jobs' line (live_eb, EB_RHO, EB_SM2_MIN;
 * the scale from the job's other bins): in units of the spread at each
 * cut, prior covariance C (EB_RHO exp(-|du| / EB_LEN), 1 at du = 0), each
 * bin's reading z off by its variance q = 1 / (sw tau2). With L the
 * Cholesky factor of C + Q and V = L^-1 C, the posterior mean is
 * V' L^-1 z and the variance diag(C - V'V). C + Q is at least
 * (1 - EB_RHO) I: the factor exists. One bin alone: the normal-normal
 * shrinking, by 1 / sw / (tau2 + 1 / sw), weight sw + 1 / tau2. The factor
 * is written out (at most MAXB bins, 4-8 in an event): GSL's took 2.5x the
 * CPU of bench_families (100 workloads), this one 1.5x. */
static void eb_job(const live_eb *eb, const ljob *x, double *y, double *w)
{
    double u[MAXB], mu[MAXB], s[MAXB], t[MAXB], L[MAXB][MAXB], V[MAXB][MAXB];
    size_t id[MAXB], K = 0;
    for (size_t a = 0; a < x->nb; a++) {
        const bin *b = &x->b[a];
        y[a] = b->swy / b->sw;
        w[a] = b->sw;
        if (!eb_line(eb, x, b, &u[K], &mu[K], &s[K])) continue;
        t[K] = (1 - y[a] - mu[K]) / s[K]; /* the loss's standardized residual */
        id[K++] = a;
    }
    if (K == 0) return;
    if (eb->sm2 > 0) { /* the mean: the job's scale of the line (EB_SM2_MIN) */
        double a = 1 / eb->sm2, bb = 1 / eb->sm2, m2[MAXB];
        eb_scale_sums(eb, x, &a, &bb);
        for (size_t r = 0; r < K; r++) { /* its scale from its other bins */
            double v = 1 - y[id[r]], q2 = 1 / x->b[id[r]].sw + s[r] * s[r];
            double m = (a - mu[r] * v / q2) / (bb - mu[r] * mu[r] / q2), e = v - m * mu[r];
            m2[r] = e * e <= EB_JOB_Z * EB_JOB_Z * q2 ? m * mu[r] : mu[r];
        }
        for (size_t r = 0; r < K; r++) {
            t[r] = (1 - y[id[r]] - m2[r]) / s[r];
            mu[r] = m2[r];
        }
    }
    for (size_t r = 0; r < K; r++) /* V = C for now */
        for (size_t k = 0; k <= r; k++)
            V[r][k] = V[k][r] = r == k ? 1 : EB_RHO * exp(-fabs(u[r] - u[k]) / EB_LEN);
    for (size_t r = 0; r < K; r++) { /* C + Q = L L' */
        for (size_t k = 0; k <= r; k++) {
            double v = V[r][k] + (r == k ? 1 / (x->b[id[r]].sw * s[r] * s[r]) : 0);
            for (size_t q = 0; q < k; q++)
                v -= L[r][q] * L[k][q];
            L[r][k] = r == k ? sqrt(v) : v / L[k][k];
        }
    }
    for (size_t r = 0; r < K; r++) { /* forward: t = L^-1 z, V = L^-1 C */
        for (size_t q = 0; q < r; q++)
            t[r] -= L[r][q] * t[q];
        t[r] /= L[r][r];
        for (size_t c = 0; c < K; c++) {
            double v = V[r][c];
            for (size_t q = 0; q < r; q++)
                v -= L[r][q] * V[q][c];
            V[r][c] = v / L[r][r];
        }
    }
    for (size_t c = 0; c < K; c++) {
        double m = 0, v = 1;
        for (size_t r = 0; r < K; r++) {
            m += V[r][c] * t[r];
            v -= V[r][c] * V[r][c];
        }
        y[id[c]] = 1 - (mu[c] + s[c] * m);
        w[id[c]] = 1 / (s[c] * s[c] * at_least(v, 1e-12));
    }
}

/* Job x's estimate sampled into P, T (n points returned, ascending), from
 * the floor or lo_w if higher (the trust region; at most the lowest
 * reading). With measured_only, the pooled readings (exact ones as read,
 * noisy ones made monotone) and the uncapped point alone, linear between
 * them and no lower than the lowest reading; noisy pooled readings less
 * LCB_SDS of their SDs, or with a draw, moved as it says (thompson);
 * noisy bins first shrunk across jobs as eb says (live_eb). */
size_t live_estimate(const ljob *x, int measured_only, double optimistic, double lo_w, double *P,
                     double *T, const live_draw *draw, const live_eb *eb)
{
    const pfi_live_job *j = &x->j;
    double fl = at_most(at_least(j->floor_w, lo_w), j->pmax_w * (1 - 1e-9));
    /* knots: readings pooled per bin, the uncapped point last */
    double kx[MAXPTS], ky[MAXPTS], kw[MAXPTS];
    size_t blk[MAXPTS], n = 0; /* PAVA blocks: first knot of each */
    int shrunk = eb && eb->on;
    for (size_t a = 0; a < x->nb; a++) {
        kx[n] = x->b[a].p;
        ky[n] = shrunk ? x->eby[a] : x->b[a].swy / x->b[a].sw;
        kw[n++] = shrunk ? x->ebw[a] : x->b[a].sw;
    }
    if (measured_only && !draw) /* the keep rule's combination: lower bounds */
        for (size_t k = 0; k < n; k++)
            if (kw[k] < EXACT_W) ky[k] -= LCB_SDS / sqrt(kw[k]);
    if (draw) { /* a draw of each noisy pooled reading (thompson) */
        uint64_t st = draw->seed ^ (j->id * 0xD1B54A32D192ED03ULL);
        for (size_t k = 0; k < n; k++)
            if (kw[k] < EXACT_W) ky[k] += draw->sds * gauss(&st) / sqrt(kw[k]);
    }
    /* a bin read with an SD near its value (a classmate's reading weighed
     * down by its class's spread, learn_class.c; a reading as noisy as it
     * is large) must not lower or draw a throughput below none */
    if (measured_only || draw)
        for (size_t k = 0; k < n; k++)
            ky[k] = at_least(ky[k], 0);
    kx[n] = j->pmax_w;
    ky[n] = 1;
    kw[n++] = 1e300;
    double raw[MAXPTS]; /* the values as read, for measured_only's exact ones */
    if (measured_only) memcpy(raw, ky, n * sizeof *raw);
    /* weighted isotonic regression (pool adjacent violators) */
    double by[MAXPTS], bw[MAXPTS];
    size_t nbk = 0;
    for (size_t k = 0; k < n; k++) {
        blk[nbk] = k;
        by[nbk] = ky[k];
        bw[nbk++] = kw[k];
        while (nbk > 1 && by[nbk - 2] >= by[nbk - 1]) {
            double w = bw[nbk - 2] + bw[nbk - 1];
            by[nbk - 2] = (by[nbk - 2] * bw[nbk - 2] + by[nbk - 1] * bw[nbk - 1]) / w;
            bw[nbk - 2] = w;
            nbk--;
        }
    }
    for (size_t b = 0; nbk < n && b < nbk; b++) { /* nbk == n: nothing pooled */
        size_t end = b + 1 < nbk ? blk[b + 1] : n;
        for (size_t k = blk[b]; k < end; k++)
            ky[k] = by[b];
    }
    /* From the floor up: readings taken under a lower floor (an SLA floor
     * that rose since) give way to a knot at the floor, interpolated. */
    if (kx[0] < fl) {
        size_t m = 0;
        for (size_t k = 0; k < n; k++) {
            if (kx[k] < fl) {
                if (k + 1 < n && kx[k + 1] > fl) {
                    double y = ky[k] + (ky[k + 1] - ky[k]) * (fl - kx[k]) / (kx[k + 1] - kx[k]);
                    kx[m] = fl;
                    ky[m++] = y;
                }
                continue;
            }
            kx[m] = kx[k];
            ky[m++] = ky[k];
        }
        n = m; /* >= 1: the uncapped point is above the floor */
    }
    if (measured_only && n >= 2) {
        /* an exact reading is what the job gives at that power, monotone
         * or not: the oracle's envelope passes a dip by itself */
        for (size_t k = 0; k < n; k++) {
            P[k] = kx[k];
            T[k] = (kw[k] >= EXACT_W ? raw[k] : ky[k]) * j->tmax;
        }
        return n;
    }
    /* the floor knot: a line below the lowest reading */
    if (kx[0] > fl * (1 + 1e-9)) {
        double s = (ky[1 < n ? 1 : 0] - ky[0]) / (kx[1 < n ? 1 : 0] - kx[0]);
        if (n < 2 || !isfinite(s)) s = 0;
        double prior = isfinite(j->pfi_hat) && j->pfi_hat > 0.25 ? 1 / (j->pfi_hat * j->pmax_w)
                                                                 : 1 / j->pmax_w;
        int exact = x->nb > 0 && x->b[0].sw >= EXACT_W;
        double share = PRIOR_SHARE_EXACT;
        if (!exact) { /* z: the lowest reading's loss in its SDs */
            double z = x->nb > 0 ? (1 - ky[0]) * sqrt(x->b[0].sw) : 0;
            double t = at_most(at_least((z - ZLO) / (ZHI - ZLO), 0.0), 1.0);
            share = PRIOR_SHARE - (PRIOR_SHARE - PRIOR_SHARE_EXACT) * t;
        }
        double g = at_least(s, share * prior);
        if (optimistic > 0 && exact) g = at_most(g, at_least(STEEP_CAP * prior, share * prior));
        memmove(kx + 1, kx, n * sizeof *kx);
        memmove(ky + 1, ky, n * sizeof *ky);
        kx[0] = fl;
        ky[0] = at_least(ky[1] - g * (kx[1] - fl), 0.0);
        n++;
    } else {
        kx[0] = fl;
    }
    double d[MAXPTS];
    pchip_slopes(kx, ky, n, d);
    /* samples: every knot, and the grid points between them */
    size_t m = 0;
    double step = (j->pmax_w - fl) / NGRID, g = 1; /* the next grid point: fl + g step */
    for (size_t k = 0; k + 1 < n; k++) {
        P[m] = kx[k];
        T[m++] = ky[k] * j->tmax;
        double h = kx[k + 1] - kx[k];
        while (fl + g * step <= kx[k] + 1e-9 * step)
            g += 1;
        for (; fl + g * step < kx[k + 1] - 1e-9 * h; g += 1) {
            double xx = fl + g * step, t = (xx - kx[k]) / h;
            double h00 = (1 + 2 * t) * (1 - t) * (1 - t), h10 = t * (1 - t) * (1 - t);
            double h01 = t * t * (3 - 2 * t), h11 = t * t * (t - 1);
            double yy = h00 * ky[k] + h10 * h * d[k] + h01 * ky[k + 1] + h11 * h * d[k + 1];
            if (optimistic > 0) {
                double q = ky[k + 1] - (ky[k + 1] - ky[k]) * (1 - t) * (1 - t);
                yy = at_most(yy + optimistic * (at_least(q, yy) - yy), ky[k + 1]);
            }
            P[m] = xx;
            T[m++] = at_least(yy, 0.0) * j->tmax;
        }
    }
    P[m] = kx[n - 1];
    T[m++] = ky[n - 1] * j->tmax;
    return m;
}

/* The cap expected at power p: interpolated between bins that saw caps,
 * proportional to power beyond them; NaN when none did. */
double live_cap_at(const ljob *x, double p)
{
    double lp = NAN, lc = NAN, hp = NAN, hc = NAN;
    for (size_t a = 0; a < x->nb; a++) {
        if (!(x->b[a].nc > 0)) continue;
        double c = x->b[a].swc / x->b[a].nc;
        if (x->b[a].p <= p) {
            lp = x->b[a].p;
            lc = c;
        } else if (isnan(hp)) {
            hp = x->b[a].p;
            hc = c;
        }
    }
    if (!isnan(lp) && !isnan(hp)) return lc + (hc - lc) * (p - lp) / (hp - lp);
    if (!isnan(lp)) return lc * p / lp;
    if (!isnan(hp)) return hc * p / hp;
    return NAN;
}

/* The variance of job i's estimate at power p (y units times Tmax): the
 * pooled reading nearest p's, shrunk as eb says. */
double live_est_var(const ljob *x, double p, const live_eb *eb)
{
    double best = INFINITY, w = EXACT_W;
    for (size_t a = 0; a < x->nb; a++)
        if (fabs(x->b[a].p - p) < best) {
            best = fabs(x->b[a].p - p);
            w = eb && eb->on ? x->ebw[a] : x->b[a].sw;
        }
    if (p >= x->j.pmax_w * (1 - 1e-9)) return 0;
    return x->j.tmax * x->j.tmax / w;
}

/* Estimate P, T (m points) narrowed to a range of one power, p clamped
 * into it: the oracle cannot move a job whose readings stopped. Returns 2. */
size_t live_hold(double p, double *P, double *T, size_t m)
{
    p = at_most(at_least(p, P[0]), P[m - 1]);
    double t = 0;
    for (size_t k = 1; k < m; k++)
        if (P[k] >= p) {
            t = T[k - 1] + (T[k] - T[k - 1]) * (p - P[k - 1]) / (P[k] - P[k - 1]);
            break;
        }
    P[0] = p * (1 - 1e-12);
    P[1] = p;
    T[0] = T[1] = at_least(t, 1e-300);
    return 2;
}
