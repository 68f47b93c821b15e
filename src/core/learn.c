/* The learn policy (see include/pfi/learn.h): allocate, observe, re-estimate,
 * re-allocate with the exact oracle on the estimates. */
#include "pfi/learn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/alloc.h"

pfi_learn_opts pfi_learn_defaults(void)
{
    return (pfi_learn_opts){.rounds = 8, .round_s = 30, .event_s = 3600};
}

/* B_PRIOR: the loss exponent b assumed while a job has one measurement
 * (loss grows a little faster than the cut); the estimate is sampled at
 * N_GRID + 1 powers from the floor to Pmax. */
#define B_PRIOR 1.5

/* fmax/fmin without the libm call (NaN gives the bound, as fmax does) */
static inline double at_least(double v, double lo) { return v > lo ? v : lo; }
static inline double at_most(double v, double hi) { return v < hi ? v : hi; }
#define N_GRID 8

struct pfi_learn_plan {
    size_t n, max_obs;
    pfi_learn_opts o;
    pfi_learn_job *jobs; /* copies */
    /* observations of job i: [i * max_obs, + nobs[i]), sorted by power, with
     * lu = ln(1 - P/Pmax) and ll = ln(1 - T/Tmax) (NaN where not positive) */
    double *op, *ot, *lu, *ll, *oc; /* oc: readings averaged into each observation */
    size_t *nobs;
    /* estimated curve: N_GRID + 1 points per job; lug = ln u there, ct0 the
     * estimate before any round (the same every run) */
    double *cp, *ct, *lug, *ct0;
    pfi_alloc_job *est;
    double *pw, *best_pw, *w0; /* w0: round 1's Eq. 2 weights */
    unsigned char *dirty;      /* observations changed in the last round */
    unsigned char *moved;      /* ct differs from ct0 */
    unsigned char *stale;      /* prob's job differs from est */
    size_t *changed;
    pfi_alloc_problem *prob;
    int prob_ok;               /* prob holds est's jobs (up to the stale ones) */
    size_t cap_n, cap_obs;
};
typedef struct pfi_learn_plan state;

/* Inserts (p, t) into job i's sorted observations; a power already seen
 * (within 1e-9 of Pmax) averages the readings, which shrinks their noise.
 * Returns whether the observations changed (only then is a refit needed). */
static int record(state *s, const pfi_learn_job *j, size_t i, double p, double t)
{
    size_t o = i * s->max_obs, k = s->nobs[i];
    double *P = s->op + o, *T = s->ot + o, *LU = s->lu + o, *LL = s->ll + o;
    for (size_t a = 0; a < k; a++)
        if (fabs(P[a] - p) <= 1e-9 * j->pmax_w) {
            /* the same power again: average the readings (noise shrinks) */
            double c = s->oc[o + a], mean = (T[a] * c + t) / (c + 1);
            int changed = T[a] != mean;
            s->oc[o + a] = c + 1;
            if (changed) { /* unchanged, LL[a] already is this loss's log */
                T[a] = mean;
                double loss = 1 - mean / j->tmax;
                LL[a] = loss > 1e-6 ? log(loss) : NAN;
            }
            return changed;
        }
    if (k == s->max_obs) return 0; /* cannot happen: one observation per round */
    /* the logs only for a new power: most rounds repeat most powers */
    double u = 1 - p / j->pmax_w, loss = 1 - t / j->tmax;
    double lu = u > 1e-6 ? log(u) : NAN, ll = loss > 1e-6 ? log(loss) : NAN;
    size_t a = k;
    while (a > 0 && P[a - 1] > p) {
        P[a] = P[a - 1];
        T[a] = T[a - 1];
        s->oc[o + a] = s->oc[o + a - 1];
        LU[a] = LU[a - 1];
        LL[a] = LL[a - 1];
        a--;
    }
    P[a] = p;
    T[a] = t;
    s->oc[o + a] = 1;
    LU[a] = lu;
    LL[a] = ll;
    s->nobs[i] = k + 1;
    return 1;
}

/* Job i's estimated curve. In the job's own units u = 1 - P / Pmax (the
 * power cut) and y = T / Tmax, the loss 1 - y is fitted as a u^b by weighted
 * least squares in log-log over the observations below Pmax (weights loss^2,
 * which scale log residuals back to throughput residuals): b > 1 is a loss
 * that grows faster than the cut, as it does once clocks leave their flat
 * top. With one observation b is fixed at B_PRIOR and a fitted; with none the
 * curve is the PFI prior's line, y = 1 - u / PFI (Eq. 1 with one term). The
 * fit's residuals at the observations are then interpolated linearly (held
 * constant beyond the ends) and added, so the estimate passes through every
 * measured point. */
static void estimate(state *s, const pfi_learn_job *j, size_t i)
{
    size_t o = i * s->max_obs, k = s->nobs[i];
    const double *P = s->op + o, *T = s->ot + o, *LU = s->lu + o, *LL = s->ll + o;
    double sx = 0, sy = 0, sxx = 0, sxy = 0, cnt = 0;
    size_t npts = 0;
    for (size_t q = 0; q < k; q++) {
        if (isnan(LU[q]) || isnan(LL[q])) continue;
        double loss = 1 - T[q] / j->tmax, wt = loss * loss;
        sx += wt * LU[q];
        sy += wt * LL[q];
        sxx += wt * LU[q] * LU[q];
        sxy += wt * LU[q] * LL[q];
        cnt += wt;
        npts++;
    }
    double a, b;
    if (npts == 0) {
        b = 1;
        a = 1 / (isfinite(j->pfi_hat) ? fmax(j->pfi_hat, 0.25) : 1.0);
    } else {
        double var = sxx - sx * sx / cnt;
        b = npts >= 2 && var > 1e-12 * cnt ? (sxy - sx * sy / cnt) / var : B_PRIOR;
        b = at_most(at_least(b, 0.5), 4.0);
        a = exp((sy - b * sx) / cnt);
    }
    size_t g0 = i * (N_GRID + 1);
    const double *cp = s->cp + g0, *lug = s->lug + g0;
    double *ct = s->ct + g0, res[64 + 2];
    for (size_t q = 0; q < k; q++)
        res[q] = T[q] - j->tmax * (1 - (isnan(LU[q]) ? 0 : a * exp(b * LU[q])));
    size_t q = 0;
    for (size_t g = 0; g <= N_GRID; g++) {
        double p = cp[g], fit = j->tmax * (1 - (isinf(lug[g]) ? 0 : a * exp(b * lug[g])));
        while (q < k && P[q] < p) q++;
        double r;
        if (q == 0) r = res[0];
        else if (q == k) r = res[k - 1];
        else r = res[q - 1] + (res[q] - res[q - 1]) * (p - P[q - 1]) / (P[q] - P[q - 1]);
        ct[g] = at_least(fit + r, 0.0);
    }
    s->est[i] = (pfi_alloc_job){.P = cp, .T = ct, .n = N_GRID + 1, .pfi = j->pfi_hat,
                                .dram_copy = NAN, .count = j->count};
}

void pfi_learn_plan_destroy(pfi_learn_plan *s)
{
    if (!s) return;
    void *bufs[] = {s->jobs, s->op,  s->ot,      s->lu, s->ll,    s->oc,    s->nobs,
                    s->cp,   s->ct,  s->lug, s->ct0,  s->est,   s->pw,
                    s->best_pw, s->w0, s->dirty, s->moved, s->stale, s->changed};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]);
    pfi_alloc_problem_destroy(s->prob);
    free(s);
}

/* Grows *buf to `need` elements of `size` bytes unless it holds `have`. */
static int grow(void *buf, size_t need, size_t have, size_t size)
{
    void **b = buf;
    if (need <= have && *b) return 0;
    void *nb = realloc(*b, (need ? need : 1) * size);
    if (!nb) return -1;
    *b = nb;
    return 0;
}

int pfi_learn_plan_reset(pfi_learn_plan *s, const pfi_learn_job *jobs, size_t n,
                         const pfi_learn_opts *o, pfi_error *err)
{
    pfi_learn_opts d = pfi_learn_defaults();
    if (!o) o = &d;
    s->n = 0;
    s->prob_ok = 0;
    if (n == 0 || !jobs)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "learn: no jobs or no observer");
    if (o->rounds < 1 || o->rounds > 64 || !(o->round_s > 0) || !isfinite(o->event_s) ||
        o->event_s < (double)o->rounds * o->round_s)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "learn: need 1-64 rounds of positive length that fit in the event "
                             "(%zu x %g s in %g s)",
                             o->rounds, o->round_s, o->event_s);
    for (size_t i = 0; i < n; i++) {
        const pfi_learn_job *j = &jobs[i];
        if (!(j->pmax_w > 0) || !isfinite(j->pmax_w) || !(j->tmax > 0) || !isfinite(j->tmax) ||
            !(j->floor_w > 0) || j->floor_w > j->pmax_w || isnan(j->pfi_hat) ||
            j->count > PFI_ALLOC_MAX_COUNT)
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "learn: job #%zu needs Pmax > 0, Tmax > 0, 0 < floor <= Pmax, "
                                 "a predicted PFI and a count <= %g",
                                 i + 1, PFI_ALLOC_MAX_COUNT);
    }
    size_t max_obs = o->rounds + 2, nobs = n * max_obs, cn = s->cap_n, co = s->cap_obs;
    size_t ng = n * (N_GRID + 1), cg = cn * (N_GRID + 1);
    if (grow(&s->jobs, n, cn, sizeof *s->jobs) || grow(&s->op, nobs, co, sizeof(double)) ||
        grow(&s->ot, nobs, co, sizeof(double)) || grow(&s->lu, nobs, co, sizeof(double)) ||
        grow(&s->ll, nobs, co, sizeof(double)) || grow(&s->oc, nobs, co, sizeof(double)) ||
        grow(&s->nobs, n, cn, sizeof(size_t)) || grow(&s->cp, ng, cg, sizeof(double)) ||
        grow(&s->ct, ng, cg, sizeof(double)) || grow(&s->lug, ng, cg, sizeof(double)) ||
        grow(&s->ct0, ng, cg, sizeof(double)) ||
        grow(&s->est, n, cn, sizeof *s->est) || grow(&s->pw, n, cn, sizeof(double)) ||
        grow(&s->best_pw, n, cn, sizeof(double)) || grow(&s->w0, n, cn, sizeof(double)) ||
        grow(&s->dirty, n, cn, 1) || grow(&s->moved, n, cn, 1) || grow(&s->stale, n, cn, 1) ||
        grow(&s->changed, n, cn, sizeof(size_t))) {
        s->cap_n = s->cap_obs = 0; /* buffers may now differ in size: start over */
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    if (n > s->cap_n) s->cap_n = n;
    if (nobs > s->cap_obs) s->cap_obs = nobs;
    s->max_obs = max_obs;
    s->o = *o;
    memcpy(s->jobs, jobs, n * sizeof *jobs);
    for (size_t i = 0; i < n; i++) {
        const pfi_learn_job *j = &jobs[i];
        /* the grid: N_GRID + 1 powers from the floor to Pmax (a floor at
         * Pmax is nudged below it: a curve needs two powers) */
        double fl = fmin(j->floor_w, j->pmax_w * (1 - 1e-9));
        for (size_t g = 0; g <= N_GRID; g++) {
            size_t x = i * (N_GRID + 1) + g;
            double p = fl + (j->pmax_w - fl) * (double)g / N_GRID;
            s->cp[x] = p;
            s->lug[x] = g == N_GRID ? -INFINITY : log(1 - p / j->pmax_w);
        }
        s->nobs[i] = 0;
        record(s, j, i, j->pmax_w, j->tmax);
        estimate(s, j, i);
        memcpy(s->ct0 + i * (N_GRID + 1), s->ct + i * (N_GRID + 1),
               (N_GRID + 1) * sizeof(double));
        s->moved[i] = s->stale[i] = 0;
        /* Eq. 2 weights with the predicted PFI */
        s->w0[i] = j->pmax_w * fmax(j->pfi_hat, 0.0) / j->tmax;
    }
    int rc = s->prob ? pfi_alloc_problem_reset(s->prob, s->est, n, err)
                     : pfi_alloc_problem_create(s->est, n, &s->prob, err);
    if (rc) return rc;
    s->prob_ok = 1;
    s->n = n;
    return PFI_OK;
}

int pfi_learn_plan_create(const pfi_learn_job *jobs, size_t n, const pfi_learn_opts *o,
                          pfi_learn_plan **out, pfi_error *err)
{
    *out = NULL;
    pfi_learn_plan *s = calloc(1, sizeof *s);
    if (!s) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int rc = pfi_learn_plan_reset(s, jobs, n, o, err);
    if (rc) {
        pfi_learn_plan_destroy(s);
        return rc;
    }
    *out = s;
    return PFI_OK;
}

int pfi_learn_plan_run(pfi_learn_plan *s, double budget_w, pfi_learn_observe observe, void *ctx,
                       double *power_w, pfi_learn_result *res, pfi_error *err)
{
    if (!s || s->n == 0 || !observe)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "learn: no jobs or no observer");
    size_t n = s->n;
    const pfi_learn_job *jobs = s->jobs;
    const pfi_learn_opts *o = &s->o;
    /* back to what is known before the event: the uncapped point and the
     * prior estimate (the problem catches up before the first oracle round;
     * the first round's shares need only the powers, which never change) */
    for (size_t i = 0; i < n; i++) {
        s->nobs[i] = 0;
        record(s, &jobs[i], i, jobs[i].pmax_w, jobs[i].tmax);
        if (s->moved[i]) {
            memcpy(s->ct + i * (N_GRID + 1), s->ct0 + i * (N_GRID + 1),
                   (N_GRID + 1) * sizeof(double));
            s->moved[i] = 0;
            s->stale[i] = 1;
        }
    }
    int rc = PFI_OK;
    if (!s->prob_ok) { /* an earlier run failed half way: rebuild it all */
        rc = pfi_alloc_problem_reset(s->prob, s->est, n, err);
        if (rc) return rc;
        memset(s->stale, 0, n);
        s->prob_ok = 1;
    }
    double *pw = s->pw;
    double energy = 0; /* tokens over the event */
    double best = -1;
    for (size_t r = 0; rc == PFI_OK && r < o->rounds; r++) {
        if (r == 0) {
            rc = pfi_alloc_proportional(s->prob, s->w0, budget_w, pw, err);
        } else {
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                if (s->dirty[i]) {
                    estimate(s, &jobs[i], i);
                    s->moved[i] = s->stale[i] = 1;
                }
                if (s->stale[i]) {
                    s->changed[k++] = i;
                    s->stale[i] = 0;
                }
            }
            /* nothing changed since the last oracle round: the oracle, being
             * a function of the problem and the budget, repeats itself */
            if (k > 0 || r == 1) {
                rc = pfi_alloc_problem_update(s->prob, s->est, n, s->changed, k, err);
                if (rc == PFI_OK) rc = pfi_alloc_oracle(s->prob, budget_w, pw, NULL, err);
                else s->prob_ok = 0;
            }
        }
        double total = 0;
        for (size_t i = 0; rc == PFI_OK && i < n; i++) {
            double t;
            rc = observe(ctx, i, pw[i], &t);
            if (rc != PFI_OK) {
                pfi_error_set(err, rc, NULL, 0, "learn: observing job #%zu failed", i + 1);
                break;
            }
            total += (double)pfi_alloc_problem_job_count(s->prob, i) * t;
            s->dirty[i] = (unsigned char)record(s, &jobs[i], i, pw[i], t);
        }
        if (rc != PFI_OK) break;
        energy += o->round_s * total;
        /* the best allocation measured so far is the one kept */
        if (total > best) {
            best = total;
            memcpy(s->best_pw, pw, n * sizeof *pw);
        }
    }
    if (rc != PFI_OK) {
        s->prob_ok = 0;
        return rc;
    }
    energy += (o->event_s - (double)o->rounds * o->round_s) * best;
    if (res) {
        res->final_tput = best;
        res->avg_tput = energy / o->event_s;
        res->rounds = o->rounds;
    }
    if (power_w) memcpy(power_w, s->best_pw, n * sizeof *pw);
    return PFI_OK;
}

int pfi_learn_run(const pfi_learn_job *jobs, size_t n, double budget_w, const pfi_learn_opts *o,
                  pfi_learn_observe observe, void *ctx, double *power_w, pfi_learn_result *res,
                  pfi_error *err)
{
    if (n == 0 || !jobs || !observe)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "learn: no jobs or no observer");
    pfi_learn_plan *s = NULL;
    int rc = pfi_learn_plan_create(jobs, n, o, &s, err);
    if (rc == PFI_OK) rc = pfi_learn_plan_run(s, budget_w, observe, ctx, power_w, res, err);
    pfi_learn_plan_destroy(s);
    return rc;
}
