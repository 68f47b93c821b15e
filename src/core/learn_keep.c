/* Live learn's rules of "do no harm" and its second proposals
 * (learn_live_int.h): closing a round against the equal and the best one,
 * stopping exploring, the choice of what to keep, and over a kept
 * combination the draws (noisy readings) and the probes (exact ones). */
#include <math.h>

#include "learn_live_int.h"

/* Noisy readings make the best combination look better than it is: it
 * picks each job's lucky readings. Do no harm: of the combination (its
 * estimated gain over the equal share less one SD per job it moved, the
 * bias of picking a lucky reading, and twice the SD of the rest) and the
 * epoch's best measured round (its measured gain less BEST_SDS SD: a
 * round's total is read whole, only the choice among rounds is biased),
 * the one with the larger lower bound is kept if that bound is positive,
 * else the equal share. With exact readings the combination, which is worth at
 * least every round measured, is kept whenever it gains. */
/* The best round is the largest of up to 7 exploring rounds' noisy
 * totals: its gain is biased up by about the expected maximum of 7
 * normal deviates, 1.35 SD, on top of the 2 SD of the combination's margin
 * (2.5 before: 100 workloads, 1% noise, flat-knee 20% 81.8 -> 83.3%, no
 * other cell moved by 0.2; 2 SD: 80.2%, 5 SD or never the best round:
 * 83.5%). */
#define BEST_SDS 3.5
void live_keep_equal_unless_sure(pfi_live *l)
{
    double gain = 0, var = 0, bias = 0;
    /* jobs that pool their class's readings (learn_class.c) share their
     * estimate's error where they sit at one share of Pmax; the bias term
     * already adds every job's SD linearly, and the 2 SD margin adds them
     * in quadrature for classmates as for other jobs (each is drawn on its
     * own afterwards, thompson). Added linearly per class there as well
     * (3 SD linear in all) it was too cautious: 100 workloads, 1% noise,
     * with the class, flat-knee 20% 88.9 -> 89.3% (docs/learn.md, "The
     * cells that still miss"); wrong classes unchanged. */
    for (size_t i = 0; i < l->n; i++) {
        const ljob *x = &l->jobs[i];
        double c = (double)pfi_alloc_problem_job_count(l->prob, i), p = l->pw[i], q = x->eq_pw;
        if (p == q) continue;
        gain += c * (pfi_alloc_problem_tput_at(l->prob, i, p) -
                     pfi_alloc_problem_tput_at(l->prob, i, q));
        double vp = live_est_var(x, p, &l->eb), vq = live_est_var(x, q, &l->eb);
        var += c * c * (vp + vq);
        bias += c * sqrt(vp);
    }
    double lcb_a = gain - bias - 2 * sqrt(var);
    double lcb_b = l->have_best ? tally_mean(&l->best) - tally_mean(&l->eq) -
                                      BEST_SDS * sqrt(tally_var(&l->best) + tally_var(&l->eq))
                                : -INFINITY;
    l->kept = KEPT_COMBINATION;
    if (lcb_a > 0 && lcb_a >= lcb_b) return;
    int best = lcb_b > 0;
    l->kept = best ? KEPT_BEST : KEPT_EQUAL;
    for (size_t i = 0; i < l->n; i++)
        l->pw[i] = best ? l->jobs[i].best_pw : l->jobs[i].eq_pw;
}

/* A kept round that repeated the equal or the best round: its reading
 * pools with theirs (the mean of the totals, the variance of that mean). */
static void pool(pfi_live *l, tally *m, double total, double v)
{
    if (v == 0 && m->vsum == 0) return; /* exact readings: a repeat tells nothing new */
    l->pooled = 1;
    tally_add(m, total, v);
}

/* Closes the last proposal: its measured total (the estimate for jobs that
 * sent nothing) against the epoch's best and its equal round. Do no harm:
 *   - no allocation can gain more over the equal share than the jobs'
 *     losses there, sum (Tmax - T); when the readings put that within
 *     STOP_SD of its SD, no gain they could show would pass the keep rule
 *     (keep_equal_unless_sure), and exploring stops at once: the equal
 *     share is kept;
 *   - an exploring round that measures worse than equal by more than twice
 *     the SD of the difference halves the trust region (how far below its
 *     readings a job may be cut), one that beats every round before it
 *     widens it by TRUST_GROW. One that gains over equal but less than
 *     the best shows no progress, and widening then cut jobs ever deeper
 *     into cliffs the readings had not reached (dead zones, the sigmoid's
 *     step: 100 workloads, 1% noise, dead zones 10% round by round 57, 68,
 *     69, 47, -27, -18, -21% of equal's gap; docs/learn.md);
 *   - exploring stops when the exploring rounds' measured losses add up
 *     to more than EXPLORE_COST times that bound. */
void live_close_round(pfi_live *l)
{
    double total = 0, var = 0, loss = 0;
    for (size_t i = 0; i < l->n; i++) {
        const ljob *x = &l->jobs[i];
        double c = (double)pfi_alloc_problem_job_count(l->prob, i), t, v = 0;
        if (x->meas.n > 0) {
            t = tally_mean(&x->meas);
            v = tally_var(&x->meas);
        } else {
            t = pfi_alloc_problem_tput_at(l->prob, i, x->pw);
        }
        total += c * t;
        var += c * c * v;
        loss += c * (x->j.tmax - t);
    }
    if (l->polishing) { /* exact: a probe that gained is in the bins, one that did not fails */
        if (!(total > l->polish_ref * (1 + 1e-12))) {
            if (--l->polish_fails <= 0) l->polish_left = 0;
        } else if (l->polish_fails < POLISH_FAILS) {
            l->polish_fails++;
        }
        return;
    }
    if (l->rounds == 1) {
        l->eq = (tally){total, var, 1};
        l->gain_hat = loss;
        if (!(loss > STOP_SD * sqrt(var))) l->stopped = KEEP_EQUAL;
    } else if (l->last_probing) {
        double g = total - tally_mean(&l->eq), sd = sqrt(var + tally_var(&l->eq));
        if (g < -2 * sd)
            l->delta *= 0.5;
        else if (total > tally_mean(&l->best))
            l->delta = at_most(TRUST_GROW * l->delta, 1.0);
        l->expl_cost += at_least(-g, 0.0);
        if (l->expl_cost > EXPLORE_COST * l->gain_hat) l->stopped = 1;
    } else if (l->stopped == KEEP_EQUAL || l->kept == KEPT_EQUAL) {
        pool(l, &l->eq, total, var);
        return;
    } else if (l->kept == KEPT_BEST) {
        pool(l, &l->best, total, var);
        return;
    } else {
        return; /* a kept combination: its readings are in the jobs' bins */
    }
    /* the best round is an exploring one: the best of many kept rounds'
     * noisy totals would be the luckiest, not the best */
    if (!l->have_best || total > tally_mean(&l->best)) {
        l->best = (tally){total, var, 1};
        l->have_best = 1;
        for (size_t i = 0; i < l->n; i++)
            l->jobs[i].best_pw = l->jobs[i].pw;
    }
}

/* A job that pools its class (learn_class.c) draws at TS_POOLED times the
 * scale below: each classmate draws on its own from the same pooled
 * readings, so a class reads several of its alternatives a period already.
 * 100 workloads, 1% noise, with the class and the exploring spread
 * (learn_class.c): dead zones 5 / 10% 84.8 / 89.4 -> 85.6 / 89.9%, bumps
 * 5 / 10% 77.7 / 88.1 -> 78.3 / 88.3%, flat-knee 20 / 30% 89.6 / 90.5 ->
 * 89.4 / 90.3%, mix 5% 90.2 -> 90.1%, no other cell of those families
 * and noisy sweeps moved by more than 0.1; without the spread (docs/learn.md)
 * dead zones 10% 89.5 -> 90.1%, flat-knee 20% 89.3 -> 88.9%. */
#define TS_POOLED 0.6

/* A second proposal over the kept one's (ts_*: the kept problem stays as
 * the keep rule read it): every job's estimate (measured_only, optimistic,
 * draw as in estimate; job i cut at most to lo[i] when lo is given),
 * silent jobs held, and the oracle's allocation of budget_w into l->pw. */
static int repropose(pfi_live *l, double budget_w, double now_s, int measured_only,
                     double optimistic, const double *lo, const live_draw *draw, pfi_error *err)
{
    for (size_t i = 0; i < l->n; i++) {
        ljob *x = &l->jobs[i];
        double *P = l->ts_ep + i * MAXPTS, *T = l->ts_et + i * MAXPTS;
        live_draw dj;
        const live_draw *dr = draw;
        if (draw && x->pool_n > 1) { /* it pools its class (TS_POOLED) */
            dj = *draw;
            dj.sds *= TS_POOLED;
            dr = &dj;
        }
        size_t m = live_estimate(x, measured_only, optimistic, lo ? lo[i] : 0, P, T, dr, &l->eb);
        if (silent_at(l, x, now_s)) m = live_hold(x->pw, P, T, m);
        l->ts_est[i] = (pfi_alloc_job){
            .P = P, .T = T, .n = m, .pfi = NAN, .dram_copy = NAN, .count = x->j.count};
    }
    int rc = l->ts_prob ? pfi_alloc_problem_reset(l->ts_prob, l->ts_est, l->n, err)
                        : pfi_alloc_problem_create(l->ts_est, l->n, &l->ts_prob, err);
    if (rc == PFI_OK) rc = live_tree_apply(l, l->ts_prob, err);
    return rc ? rc : pfi_alloc_oracle(l->ts_prob, budget_w, l->pw, NULL, err);
}

/* Thompson: the combination of measured points chosen on one draw of the
 * readings, each pooled reading moved by a normal deviate times its SD times
 * a scale that falls linearly from TS_FIRST to TS_LAST over the first
 * TS_PERIODS kept periods, and stays there: early on a job's alternatives
 * read once in exploring are read again when they may be better, and the
 * lucky reading a choice on the means would stick to is read down; later
 * the readings are what they are, and a draw only costs. Chosen on the
 * families' table (500 workloads, 1% noise, against 0.5 throughout: dead
 * zones 5% 66.0 -> 67.8%, bumps 5% 65.2 -> 66.5%, flat-knee 20% 79.8 ->
 * 80.9%, sigmoid 5% +0.7, dead zones 10% +0.5, no cell 0.5 lower; 0.5
 * throughout was within 0.1 point of 0.3 and 0.7, and 1 gave up 1-4
 * points on the embedded, H100 and linear families; rising from 0.3 to 0.7
 * loses up to 0.8). */
#define TS_FIRST 1.0
#define TS_LAST 0.3
#define TS_PERIODS 60.0
int live_thompson(pfi_live *l, double budget_w, double now_s, pfi_error *err)
{
    /* periods since the exploring rounds (kept ones, unless exploring stopped early) */
    double k = (double)l->rounds - (double)l->o.explore_rounds;
    double f = at_most(at_least(k / TS_PERIODS, 0.0), 1.0);
    live_draw d = {.seed = live_mix64(l->rounds + 1), .sds = TS_FIRST + (TS_LAST - TS_FIRST) * f};
    return repropose(l, budget_w, now_s, 1, 0, NULL, &d, err);
}

/* Polish: the kept combination in l->pw (worth polish_ref on its
 * readings) gives way to a probe around it, the exploring rounds' oracle
 * with POLISH_OPTIMISM, each job cut at most DELTA0 x Pmax below its kept
 * power (l->w holds those bounds). With exact readings what it measures is
 * what it is worth: one that gains is in the bins for the next kept
 * combination, one that does not costs a period (close_round). */
int live_polish(pfi_live *l, double budget_w, double now_s, pfi_error *err)
{
    l->polish_ref = 0;
    for (size_t i = 0; i < l->n; i++) {
        l->polish_ref += (double)pfi_alloc_problem_job_count(l->prob, i) *
                         pfi_alloc_problem_tput_at(l->prob, i, l->pw[i]);
        l->w[i] = l->pw[i] - DELTA0 * l->jobs[i].j.pmax_w;
    }
    l->polishing = 1;
    l->polish_left--;
    return repropose(l, budget_w, now_s, 0, POLISH_OPTIMISM, l->w, NULL, err);
}
