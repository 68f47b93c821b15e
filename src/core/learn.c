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
#define N_GRID 8

typedef struct {
    size_t n, max_obs;
    /* observations of job i: [i * max_obs, + nobs[i]), sorted by power, with
     * lu = ln(1 - P/Pmax) and ll = ln(1 - T/Tmax) (NaN where not positive) */
    double *op, *ot, *lu, *ll, *oc; /* oc: readings averaged into each observation */
    size_t *nobs;
    double *cp, *ct, *lug; /* estimated curve: N_GRID + 1 points per job; lug = ln u there */
    pfi_alloc_job *est;
} state;

/* Inserts (p, t) into job i's sorted observations; a power already seen
 * (within 1e-9 of Pmax) averages the readings, which shrinks their noise.
 * Returns whether the observations changed (only then is a refit needed). */
static int record(state *s, const pfi_learn_job *j, size_t i, double p, double t)
{
    size_t o = i * s->max_obs, k = s->nobs[i];
    double *P = s->op + o, *T = s->ot + o, *LU = s->lu + o, *LL = s->ll + o;
    double u = 1 - p / j->pmax_w, loss = 1 - t / j->tmax;
    double lu = u > 1e-6 ? log(u) : NAN, ll = loss > 1e-6 ? log(loss) : NAN;
    for (size_t a = 0; a < k; a++)
        if (fabs(P[a] - p) <= 1e-9 * j->pmax_w) {
            /* the same power again: average the readings (noise shrinks) */
            double c = s->oc[o + a], mean = (T[a] * c + t) / (c + 1);
            int changed = T[a] != mean;
            T[a] = mean;
            s->oc[o + a] = c + 1;
            loss = 1 - mean / j->tmax;
            LL[a] = loss > 1e-6 ? log(loss) : NAN;
            return changed;
        }
    if (k == s->max_obs) return 0; /* cannot happen: one observation per round */
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
        b = fmin(fmax(b, 0.5), 4.0);
        a = exp((sy - b * sx) / cnt);
    }
    double res[64 + 2];
    for (size_t q = 0; q < k; q++)
        res[q] = T[q] - j->tmax * (1 - (isnan(LU[q]) ? 0 : a * exp(b * LU[q])));
    size_t g0 = i * (N_GRID + 1), q = 0;
    const double *cp = s->cp + g0, *lug = s->lug + g0;
    double *ct = s->ct + g0;
    for (size_t g = 0; g <= N_GRID; g++) {
        double p = cp[g], fit = j->tmax * (1 - (isinf(lug[g]) ? 0 : a * exp(b * lug[g])));
        while (q < k && P[q] < p) q++;
        double r;
        if (q == 0) r = res[0];
        else if (q == k) r = res[k - 1];
        else r = res[q - 1] + (res[q] - res[q - 1]) * (p - P[q - 1]) / (P[q] - P[q - 1]);
        ct[g] = fmax(0.0, fit + r);
    }
    s->est[i] = (pfi_alloc_job){.P = cp, .T = ct, .n = N_GRID + 1, .pfi = j->pfi_hat,
                                .dram_copy = NAN};
}

static void state_free(state *s)
{
    free(s->op);
    free(s->ot);
    free(s->lu);
    free(s->ll);
    free(s->oc);
    free(s->nobs);
    free(s->cp);
    free(s->ct);
    free(s->lug);
    free(s->est);
}

int pfi_learn_run(const pfi_learn_job *jobs, size_t n, double budget_w, const pfi_learn_opts *o,
                  pfi_learn_observe observe, void *ctx, double *power_w, pfi_learn_result *res,
                  pfi_error *err)
{
    pfi_learn_opts d = pfi_learn_defaults();
    if (!o) o = &d;
    if (n == 0 || !jobs || !observe)
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
            !(j->floor_w > 0) || j->floor_w > j->pmax_w || isnan(j->pfi_hat))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "learn: job #%zu needs Pmax > 0, Tmax > 0, 0 < floor <= Pmax "
                                 "and a predicted PFI",
                                 i + 1);
    }
    state s = {.n = n, .max_obs = o->rounds + 2};
    s.op = malloc(n * s.max_obs * sizeof(double));
    s.ot = malloc(n * s.max_obs * sizeof(double));
    s.nobs = calloc(n, sizeof(size_t));
    s.lu = malloc(n * s.max_obs * sizeof(double));
    s.ll = malloc(n * s.max_obs * sizeof(double));
    s.oc = malloc(n * s.max_obs * sizeof(double));
    s.cp = malloc(n * (N_GRID + 1) * sizeof(double));
    s.ct = malloc(n * (N_GRID + 1) * sizeof(double));
    s.lug = malloc(n * (N_GRID + 1) * sizeof(double));
    s.est = malloc(n * sizeof *s.est);
    double *pw = malloc(n * sizeof *pw), *best_pw = malloc(n * sizeof *pw);
    double *w = malloc(n * sizeof *w);
    unsigned char *dirty = calloc(n, 1);
    pfi_alloc_problem *prob = NULL;
    int rc = PFI_OK;
    if (!s.op || !s.ot || !s.lu || !s.ll || !s.oc || !s.nobs || !s.cp || !s.ct || !s.lug || !s.est ||
        !pw || !best_pw || !w || !dirty) {
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const pfi_learn_job *j = &jobs[i];
        /* the grid: N_GRID + 1 powers from the floor to Pmax (a floor at
         * Pmax is nudged below it: a curve needs two powers) */
        double fl = fmin(j->floor_w, j->pmax_w * (1 - 1e-9));
        for (size_t g = 0; g <= N_GRID; g++) {
            double p = fl + (j->pmax_w - fl) * (double)g / N_GRID;
            s.cp[i * (N_GRID + 1) + g] = p;
            s.lug[i * (N_GRID + 1) + g] = g == N_GRID ? -INFINITY : log(1 - p / j->pmax_w);
        }
        record(&s, j, i, j->pmax_w, j->tmax);
        estimate(&s, j, i);
    }
    rc = pfi_alloc_problem_create(s.est, n, &prob, err);
    double energy = 0; /* tokens over the event */
    double best = -1;
    for (size_t r = 0; rc == PFI_OK && r < o->rounds; r++) {
        if (r == 0) {
            /* Eq. 2 weights with the predicted PFI */
            for (size_t i = 0; i < n; i++)
                w[i] = jobs[i].pmax_w * fmax(jobs[i].pfi_hat, 0.0) / jobs[i].tmax;
            rc = pfi_alloc_proportional(prob, w, budget_w, pw, err);
        } else {
            for (size_t i = 0; i < n; i++)
                if (dirty[i]) estimate(&s, &jobs[i], i);
            rc = pfi_alloc_problem_reset(prob, s.est, n, err);
            if (rc == PFI_OK) rc = pfi_alloc_oracle(prob, budget_w, pw, NULL, err);
        }
        double total = 0;
        for (size_t i = 0; rc == PFI_OK && i < n; i++) {
            double t;
            rc = observe(ctx, i, pw[i], &t);
            if (rc != PFI_OK) {
                pfi_error_set(err, rc, NULL, 0, "learn: observing job #%zu failed", i + 1);
                break;
            }
            total += t;
            dirty[i] = (unsigned char)record(&s, &jobs[i], i, pw[i], t);
        }
        if (rc != PFI_OK) break;
        energy += o->round_s * total;
        /* the best allocation measured so far is the one kept */
        if (total > best) {
            best = total;
            memcpy(best_pw, pw, n * sizeof *pw);
        }
    }
    if (rc == PFI_OK) {
        energy += (o->event_s - (double)o->rounds * o->round_s) * best;
        if (res) {
            res->final_tput = best;
            res->avg_tput = energy / o->event_s;
            res->rounds = o->rounds;
        }
        if (power_w) memcpy(power_w, best_pw, n * sizeof *pw);
    }
done:
    pfi_alloc_problem_destroy(prob);
    free(pw);
    free(best_pw);
    free(w);
    free(dirty);
    state_free(&s);
    return rc;
}
