/* Live learn's internals (learn_live.h), shared by its three files:
 *   - learn_live.c: jobs, readings and the proposal loop;
 *   - learn_estimate.c: a job's estimated curve from its readings;
 *   - learn_keep.c: do no harm (what is kept and when exploring stops) and
 *     the second proposals over a kept one (draws, probes).
 * Nothing outside src/core/learn_*.c includes it. */
#ifndef PFI_LEARN_LIVE_INT_H
#define PFI_LEARN_LIVE_INT_H

#include <math.h>
#include <stdint.h>

#include "pfi/alloc.h"
#include "pfi/learn_live.h"

/* MAXB: pooled readings per job (the closest two merge beyond it); NGRID:
 * grid intervals from the floor to Pmax. */
enum { MAXB = 24, NGRID = 10, MAXPTS = MAXB + NGRID + 4 };
/* max/min without the libm call (a profile of the simulation spent 8% in
 * fmax/fmin); NaN gives the bound */
static inline double at_least(double v, double lo)
{
    return v > lo ? v : lo;
}
static inline double at_most(double v, double hi)
{
    return v < hi ? v : hi;
}

#define EXACT_W 1e24 /* weight of an exact reading (SD 0) */
/* do no harm (close_round): the trust region's first size (share of Pmax)
 * and its growth after a round that beat the best before it; exploring
 * stops when the loss at the equal share is within STOP_SD of its SD, or
 * when exploring's measured losses pass EXPLORE_COST times it. Chosen on
 * the curve families' table (docs/learn.md), not fitted per family. */
#define DELTA0 0.05
#define TRUST_GROW 1.5
#define STOP_SD 4.0
#define EXPLORE_COST 2.0
enum { KEEP_EQUAL = 2 };
/* ... and the combination the keep rule weighs (keep_equal_unless_sure)
 * is chosen on the noisy pooled readings lowered by LCB_SDS of their SDs:
 * on the means it picks the alternatives read once whose readings were
 * lucky, whose SDs then fail the rule (the equal share was kept in 10% of
 * the kept periods of dead zones at 5% with 1% noise), where a combination
 * of well-read points can show its gain and the draws go on (500
 * workloads, 1% noise: dead zones 5% 62.0 -> 65.6%, flat-knee 20% 76.4 ->
 * 78.8%, bumps 20% 90.9 -> 93.2%, noisy sweeps 20% 85.1 -> 86.7%; no cell
 * lower). 0.5 to 2 SDs give the same table; 0.1 half the gain. */
#define LCB_SDS 1.0
/* kept rounds with exact readings first probe around the kept
 * combination (polish): the oracle on estimates made POLISH_OPTIMISM
 * optimistic between readings, each job cut at most DELTA0 x Pmax below
 * its kept power, for at most POLISH_ROUNDS periods and while probes that
 * measure no more than the kept combination have not used up the budget
 * of failures: POLISH_FAILS0 at first, one more for each probe that gained,
 * POLISH_FAILS at most. It reads powers that no exploring round proposed,
 * where the optimum of a non-monotone or non-concave curve lies (500
 * workloads, exact, with STEEP_CAP: noisy sweeps 5% 81.5 -> 91.1%, dead
 * zones 40% 89.4 -> 91.1%, 13 other cells 0.8-2.5 points up, sigmoid 10%
 * 93.9 -> 92.8%). Chosen on the families' table: optimism 1.2 (the
 * exploring rounds') gives a third of it, 2.5 or 3 the same; 5 failures
 * from the start the same table at 1.38x the process CPU of the Sec. 6
 * experiment (bench_sim, embedded curves, where no probe gains) against
 * 1.19x; 1 at first: noisy sweeps 5% 4 points lower. */
#define POLISH_OPTIMISM 2.0
enum { POLISH_ROUNDS = 40, POLISH_FAILS0 = 2, POLISH_FAILS = 5 };
enum { KEPT_COMBINATION, KEPT_BEST, KEPT_EQUAL };

/* Readings of one quantity pooled with equal weights: the sums of the
 * readings and of their variances, and how many; the mean and the variance
 * of the mean. A job's throughput under the last proposal, the equal and
 * the best exploring round's totals. */
typedef struct {
    double sum, vsum, n;
} tally;
static inline double tally_mean(const tally *m)
{
    return m->sum / m->n;
}
static inline double tally_var(const tally *m)
{
    return m->vsum / (m->n * m->n);
}
static inline void tally_add(tally *m, double x, double var)
{
    m->sum += x;
    m->vsum += var;
    m->n += 1;
}

typedef struct {
    double p, sw, swy, swc, nc; /* power; sums of weights, w*y, caps; caps seen */
    double swp, swyp;           /* the prior readings' share of sw, swy */
} bin;

typedef struct {
    pfi_live_job j;
    size_t nb;
    bin b[MAXB];
    double asked_t;     /* first proposal since its last reading; NaN */
    double pw, best_pw; /* the last proposal's power; the epoch's best */
    double eq_pw;       /* the epoch's equal share */
    tally meas;         /* readings taken during the last proposal */
    /* the estimate in the oracle's problem was made in mode est_mode from
     * these very pooled values (est_ok): the next proposal reuses it and
     * rebuilds only the others (pfi_alloc_problem_update) */
    int est_ok, est_mode;
    double est_lo;
    /* its bins' values and weights shrunk across jobs (live_eb): made with
     * the table (live_eb_table), read while it is on, within the proposal */
    double eby[MAXB], ebw[MAXB];
    /* a job of a class (learn_class.c): its own readings (b holds them
     * pooled with the classmates' that agree with them), whether they
     * changed since the view was made, how many jobs the view pools
     * (itself included; 1: split out or alone) and its class's slot in
     * pfi_live.cls (SIZE_MAX: none) */
    bin *own;
    size_t nown, pool_n, grp, cpos;
    int own_dirty;
} ljob;

/* Empirical Bayes across jobs (noisy readings): at a cut u = 1 - p / Pmax
 * the jobs' losses differ by a spread tau2 that all jobs' readings show
 * less their noise; a job's noisy bin is shrunk towards the jobs' loss at
 * its cut by the normal-normal factor, 1 / sw / (tau2 + 1 / sw), and
 * weighs as its posterior, sw + 1 / tau2. Where jobs differ much more
 * than a reading's SD (deep cuts, cliffs) almost nothing moves; at small
 * cuts a reading's luck is pulled in, so that the choice among a job's
 * readings read once or twice is less a choice of their noise. Made for
 * every proposal after the first (exploring and kept rounds) and read by
 * the estimates, the draws and the keep rule's variances; exact readings
 * never move (500 workloads, 1% noise: dead zones 5% 67.9 -> 73.5%, 10%
 * 82.4 -> 83.9%, bumps 5% 66.6 -> 69.8%, 10% 79.9 -> 80.9%, flat-knee 20%
 * 81.0 -> 82.2%, noisy sweeps 5% 69.8 -> 71.1%, embedded and H100 5%
 * +0.9-1.4, no cell 0.5 lower, the exact table unchanged; kept rounds
 * alone gave a third of it, half the shrinking two thirds, the keep
 * rule on the readings' own variances bumps 5% 9 points lower; no bar
 * crossed, and bench_families' CPU 27 -> 37 s at 100 workloads, for every
 * noisy estimate is rebuilt every period).
 * Per bucket of EB_WIDTH, from the bins within one bucket either side:
 * the weighted line of loss against cut (icpt + slope x u) and tau2 (at
 * least EB_TAU2_MIN; NaN: fewer than EB_MIN bins, no shrinking).
 * Buckets by watts below the equal share instead of by cut: flat-knee 20%
 * 1.3 points lower (100 workloads). */
enum { EB_NB = 20, EB_MIN = 15 };
#define EB_WIDTH 0.025
#define EB_TAU2_MIN 1e-8
/* ... and within a job: a job's true residuals about the jobs' line, each
 * in units of the spread at its cut (sqrt tau2), are correlated across its
 * cuts by EB_RHO exp(-|du| / EB_LEN) (du: the two cuts' distance, a share
 * of Pmax), so that a job read below the line at one cut is expected below
 * it at the next (a flexible job is flexible at every small cut): each bin
 * is shrunk towards the line moved by what the job's other bins show (the
 * posterior of a Gaussian process of the residuals, eb_job), and weighs
 * as that posterior. One bin alone: the shrinking above. The readings a
 * job piles up near its equal share then tell how it fares a little
 * deeper, where it was read once (500 workloads, 1% noise: the ten missed
 * noisy cells +16.5 points in all, dead zones 5% 73.5 -> 77.4%, 10% 83.9
 * -> 86.1% (over the bar), sigmoid 5% 81.5 -> 84.3%, bumps 5% 69.8 ->
 * 72.3%, 10% 80.9 -> 83.0%, noisy sweeps 5% +1.6, embedded and mix 5%
 * +1.0-1.3, no cell 0.1 lower; exact cells identical; bench_families'
 * CPU 1.5x, a noisy round of 10^4 jobs 13 ms exploring and 24 ms kept
 * against 6 and 11). At 100 workloads, the ten cells' sum against 710.5:
 * one correlation at every distance 0.35 +9.1, 0.5 +11.5, 0.65 +12.9,
 * 0.8 +11.1 with flat-knee 20% 4.2 lower (a knee: no loss at one cut
 * says little of one deeper); rho 0.8 with EB_LEN 0.1 +13.3, 0.2 +15.5,
 * 0.4 +15.7; 0.9 with 0.05 +11.1, 0.1 +15.1, 0.2 +16.8; rho estimated
 * from the pairs of a job's bins (0.41-0.82 by family) +13.3, flat-knee
 * 20% 1.4 lower. */
#define EB_RHO 0.9
#define EB_LEN 0.2
/* ... about the job's own scale of the jobs' line: job i's losses are m_i
 * times the line (mean m_i L(u) instead of L(u), the spread as before),
 * m_i ~ N(1, sm2) fitted for each bin on the job's other noisy bins
 * (weights 1 / (1 / sw + tau2): the cuts where jobs differ most weigh
 * least), sm2 the jobs' scales' spread about 1 by moments (each job
 * weighed by its scale's precision, less its variance), at least
 * EB_SM2_MIN (the scales' SD 1%, a guard for a table of near-equal jobs);
 * a bin more than EB_JOB_Z SDs (its noise and tau2) off its job's scaled
 * line (a knee, a step of its own) keeps the jobs' line. Every noisy
 * round, as the shrinking (500 workloads, 1% noise: the ten missed noisy
 * cells 725.9 -> 728.6, +2.7: noisy sweeps 5% 72.7 -> 73.5%, sigmoid 5%
 * 84.3 -> 85.0%, bumps 10% 83.1 -> 83.6%, dead zones 5% 77.4 -> 77.8%,
 * mix 5% +0.5, flat-knee 20% 82.1 -> 81.9%, embedded 5% -0.2, no cell
 * lower by more; exact cells identical). At 100 workloads (727.3): kept
 * rounds alone +0.7 (flat-knee 20% -0.5); the scaled mean only where
 * sm2 L^2 is a quarter of tau2 +1.6; the scale as a random effect in the
 * covariance instead (C + c c', c = sd(m) L / sqrt tau2 at most 0.87,
 * the GP's share scaled to keep the diagonal 1) +0.9, kept rounds alone
 * -0.2: the GP's correlation already holds most of it. */
#define EB_SM2_MIN 1e-4
#define EB_JOB_Z 3.0
typedef struct {
    double icpt[EB_NB], slope[EB_NB], tau2[EB_NB];
    /* the jobs' scales' spread about 1 (0: none) */
    double sm2;
    int on; /* 0: no shrinking (exact readings, the first round) */
} live_eb;

struct pfi_live {
    pfi_live_opts o;
    ljob *jobs;
    size_t n, cap;
    /* id -> index + 1 (0 empty), open addressing, size a power of two */
    uint64_t *hkey;
    size_t *hval, hsize;
    /* the epoch */
    int new_epoch;
    size_t rounds; /* proposals made in it */
    double budget, last_now;
    int have_best;
    /* do no harm (see close_round): the equal round's and the best exploring
     * round's measured totals (each pooled with the kept rounds that
     * repeated it), the gain over equal that its readings show (gain_hat),
     * the exploring rounds' measured losses so far, the trust region (a job
     * is cut at most delta x Pmax below its lowest reading) and whether
     * exploring has stopped (1; KEEP_EQUAL: and the equal share is kept) */
    tally eq, best;
    double gain_hat, expl_cost, delta;
    int stopped, last_probing;
    /* kept rounds: which proposal was kept (KEPT_*) */
    int kept, pooled; /* pooled: the last close_round pooled a reading */
    /* polish (exact readings): rounds and failures left, whether the last
     * proposal was one and what the kept combination it was measured
     * against was worth */
    int polish_left, polish_fails, polishing;
    double polish_ref;
    int noisy; /* a reading with a spread has been taken */
    /* the estimates handed to the oracle */
    pfi_alloc_job *est;
    double *ep, *et, *w, *pw;
    pfi_alloc_problem *prob;
    size_t cap_est, *changed;
    int prob_ok; /* prob holds est's jobs, those with est_ok up to date */
    /* the equal round's problem built from no readings (equal_round_cached):
     * prob0_ok, it holds the current jobs'; cached0, it is prob (the last
     * proposal was made on it) and the loop's own is in prob0 meanwhile */
    pfi_alloc_problem *prob0;
    int prob0_ok, cached0;
    /* the draw of a kept combination (thompson): its own estimates and
     * problem, so that prob keeps the means the keep rule reads */
    pfi_alloc_problem *ts_prob;
    pfi_alloc_job *ts_est; /* and ts_ep, ts_et: cap_est entries, as est */
    double *ts_ep, *ts_et;
    live_eb eb; /* the shrinking across jobs of this proposal's estimates */
    /* classes (learn_class.c): the classed jobs' indices by (class, index),
     * valid while cls_ok */
    size_t *cls, ncls, cap_cls;
    unsigned char *cls_agree; /* per classed job, whether it pools each of its next classmates */
    int cls_ok;
    /* the tree (pfi_live_set_tree), its spans by index for the problems */
    pfi_alloc_domain *tree_d;
    size_t tree_nd;
    pfi_live_span *tree_s;
    pfi_alloc_span *tree_ix;
    size_t tree_ns;
};

/* The index of job id, or l->n when absent. */
size_t live_find(const pfi_live *l, uint64_t id);
/* Sets the tree, if any, on prob (built from the jobs in l's order). */
int live_tree_apply(const pfi_live *l, pfi_alloc_problem *prob, pfi_error *err);

/* Job x has sent nothing for stale_s at now_s (and is held where it was). */
static inline int silent_at(const pfi_live *l, const ljob *x, double now_s)
{
    return !isnan(x->asked_t) && now_s - x->asked_t >= l->o.stale_s && l->rounds > 0;
}

/* A draw of a job's noisy pooled readings (thompson): each moved by sds
 * times its SD times a deviate drawn from seed and the job's id. */
typedef struct {
    uint64_t seed;
    double sds;
} live_draw;

/* learn_live.c: the slot of bins[0..*nb) for power p (a bin within tol,
 * or a new one in order; when full the closest two merge first). */
bin *live_bin_slot(bin *bins, size_t *nb, double p, double tol);

/* learn_class.c (each commented where it is defined) */
int live_class_refresh(pfi_live *l);
double live_class_trust(const pfi_live *l, const ljob *x, double low);
const live_draw *live_class_draw(const pfi_live *l, const ljob *x, live_draw *d);

/* learn_estimate.c (each commented where it is defined) */
size_t live_estimate(const ljob *x, int measured_only, double optimistic, double lo_w, double *P,
                     double *T, const live_draw *draw, const live_eb *eb);
void live_eb_table(pfi_live *l);
size_t live_hold(double p, double *P, double *T, size_t m);
double live_cap_at(const ljob *x, double p);
double live_est_var(const ljob *x, double p, const live_eb *eb);
uint64_t live_mix64(uint64_t z);

/* learn_keep.c (likewise) */
void live_close_round(pfi_live *l);
void live_keep_equal_unless_sure(pfi_live *l);
int live_thompson(pfi_live *l, double budget_w, double now_s, pfi_error *err);
int live_polish(pfi_live *l, double budget_w, double now_s, pfi_error *err);

#endif
