/* Live learn (include/core/pfi/learn_live.h): readings in, proposals out.
 *
 * The estimate of a job's curve, in y = T / Tmax against power:
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
 * The exact oracle (alloc.h) then allocates on the estimates: optimistic
 * ones while exploring (the value of probing, see estimate), within a
 * trust region below the readings, the plain ones in the last exploring
 * round, the readings alone once exploring is over (with exact readings
 * after probes around them: polish); and the rules of "do
 * no harm" (close_round, keep_equal_unless_sure) decide when to stop
 * exploring and what to keep. With noisy readings a kept combination is
 * drawn every period (thompson): the best one on a draw of the readings,
 * so that a job's alternatives read once in exploring are read again when
 * they may be better, and the lucky reading a choice on the means would
 * stick to is read down (+1-5 points of equal's gap in the families'
 * noisy cells at 5-20%, -0.7 to -1.3 on the embedded, H100 and linear
 * ones at 5-10%, which stay above 93%; README).
 *
 * Speed paths: an estimate that did not change is not rebuilt, and the
 * problem is updated for the changed jobs alone (pfi_alloc_problem_update):
 * 1.4-1.7x on a controller's kept rounds at 10^4 jobs (bench_live, 5-6 ms
 * against 8.5 ms), nothing in the simulation, where every round moves
 * every job. Exact readings: a kept choice that nothing moved stands
 * without a pass (the replay then stops reading, learn.c). Removed: with
 * noisy readings, choosing what to keep on a growing gap of periods rather
 * than every period; once the draws were made every period it saved 1.3x
 * of CPU on bench_families (128 s against 166 s), under the 1.5x a speed
 * path must pay, for the same table.
 */
#include "pfi/learn_live.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/alloc.h"

/* MAXB: pooled readings per job (the closest two merge beyond it); NGRID:
 * grid intervals from the floor to Pmax; PRIOR_SHARE: the share of the
 * prior's loss per cut assumed below the lowest reading at least. */
enum { MAXB = 24, NGRID = 10, MAXPTS = MAXB + NGRID + 4 };
/* max/min without the libm call (a profile of the simulation spent 8% in
 * fmax/fmin); NaN gives the bound */
static inline double at_least(double v, double lo) { return v > lo ? v : lo; }
static inline double at_most(double v, double hi) { return v < hi ? v : hi; }

#define PRIOR_SHARE 1.0
/* ... and below an exact reading: one reading tells what a probe there
 * gives, so more optimism costs a round at most and finds knees and dead
 * zones sooner (flat-knee at 30-40%: 88% -> 90-92% of equal's gap); a
 * noisy reading's loss at a small cut is within its SD, where probing
 * deeper only adds noise to chase. Chosen on the families' table (README). */
#define PRIOR_SHARE_EXACT 0.25
/* ... and below a noisy reading, from PRIOR_SHARE when its loss is within
 * ZLO SDs of none down to PRIOR_SHARE_EXACT when it is ZHI SDs or more
 * (linear between): a loss that many SDs deep is as sure as an exact one,
 * so the deep cuts' probes come as soon (1% noise, 500 workloads: noisy
 * sweeps 20% 83.2 -> 85.1%, flat-knee 30% 84.9 -> 85.4%, 40% 86.5 ->
 * 89.7%, sigmoid 30% 94.3 -> 96.6%; dead zones 10% 81.4 -> 80.7%). */
#define ZLO 3.0
#define ZHI 8.0
/* exploring rounds: how far towards the optimistic bound (see estimate);
 * a little past it (never above the next knot) draws the probes that find
 * dead zones and knees within the rounds. Chosen on the families' table. */
#define OPTIMISM 1.2
/* the last EXPLOIT exploring rounds use the plain estimate: the kept
 * combination then has readings where the estimated optimum is */
#define EXPLOIT 1
#define EXACT_W 1e24 /* weight of an exact reading (SD 0) */
/* do no harm (close_round): the trust region's first size (share of Pmax)
 * and its growth after a round that gained; exploring stops when the loss
 * at the equal share is within STOP_SD of its SD, or when exploring's
 * measured losses pass EXPLORE_COST times it. Chosen on the curve families'
 * table (README), not fitted per family. */
#define DELTA0 0.05
#define TRUST_GROW 1.5
#define STOP_SD 4.0
#define EXPLORE_COST 2.0
enum { KEEP_EQUAL = 2 };
/* kept rounds with noisy readings: the combination is chosen on a draw of
 * the pooled readings, each moved by TS_SCALE times its SD times a normal
 * deviate (thompson). Chosen on the families' table: 0.3, 0.5 and 0.7 are
 * within 0.1 point of one another on average; 1 gives up 1-4 points on the
 * embedded, H100 and linear families. */
#define TS_SCALE 0.5
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
/* optimistic estimates below an exact reading: the loss per W assumed is
 * at most STEEP_CAP times the prior's, for a steep lowest interval may be a
 * step with a plateau below it, which the optimum of a sigmoid family
 * cuts jobs to (exact, with polish, 500 workloads: sigmoid 20% 89.7 ->
 * 92.1%, bumps 30% +1.7; twice the prior's: bumps 10% under the bar;
 * without polish it cost noisy sweeps at 20-30% their bar, README) */
#define STEEP_CAP 4.0
enum { KEPT_COMBINATION, KEPT_BEST, KEPT_EQUAL };

/* Readings of one quantity pooled with equal weights: the sums of the
 * readings and of their variances, and how many; the mean and the variance
 * of the mean. A job's throughput under the last proposal, the equal and
 * the best exploring round's totals. */
typedef struct {
    double sum, vsum, n;
} tally;
static inline double tally_mean(const tally *m) { return m->sum / m->n; }
static inline double tally_var(const tally *m) { return m->vsum / (m->n * m->n); }
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
    double asked_t;             /* first proposal since its last reading; NaN */
    double pw, best_pw;         /* the last proposal's power; the epoch's best */
    double eq_pw;               /* the epoch's equal share */
    tally meas;                 /* readings taken during the last proposal */
    /* the estimate in the oracle's problem was made in mode est_mode from
     * these very pooled values (est_ok): the next proposal reuses it and
     * rebuilds only the others (pfi_alloc_problem_update) */
    int est_ok, est_mode;
    double est_lo;
} ljob;

struct pfi_live {
    pfi_live_opts o;
    ljob *jobs;
    size_t n, cap;
    /* id -> index + 1 (0 empty), open addressing, size a power of two */
    uint64_t *hkey;
    size_t *hval, hsize;
    /* the epoch */
    int new_epoch;
    size_t rounds;       /* proposals made in it */
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
    int noisy;        /* a reading with a spread has been taken */
    /* the estimates handed to the oracle */
    pfi_alloc_job *est;
    double *ep, *et, *w, *pw;
    pfi_alloc_problem *prob;
    size_t cap_est, *changed;
    int prob_ok; /* prob holds est's jobs, those with est_ok up to date */
    /* the draw of a kept combination (thompson): its own estimates and
     * problem, so that prob keeps the means the keep rule reads */
    pfi_alloc_problem *ts_prob;
    pfi_alloc_job *ts_est; /* and ts_ep, ts_et: cap_est entries, as est */
    double *ts_ep, *ts_et;
};

pfi_live_opts pfi_live_defaults(void) { return (pfi_live_opts){.explore_rounds = 8, .stale_s = 90}; }

void pfi_live_destroy(pfi_live *l)
{
    if (!l) return;
    free(l->jobs);
    free(l->hkey);
    free(l->hval);
    free(l->est);
    free(l->ep);
    free(l->et);
    free(l->w);
    free(l->pw);
    free(l->changed);
    pfi_alloc_problem_destroy(l->prob);
    pfi_alloc_problem_destroy(l->ts_prob);
    free(l->ts_est);
    free(l->ts_ep);
    free(l->ts_et);
    free(l);
}

int pfi_live_create(const pfi_live_opts *o, pfi_live **out, pfi_error *err)
{
    *out = NULL;
    pfi_live_opts d = pfi_live_defaults();
    if (!o) o = &d;
    if (o->explore_rounds < 1 || o->explore_rounds > 64 || !(o->stale_s > 0))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "live learn: need 1-64 exploring rounds and a positive stale time");
    pfi_live *l = calloc(1, sizeof *l);
    if (!l) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    l->o = *o;
    l->new_epoch = 1;
    l->last_now = -INFINITY;
    *out = l;
    return PFI_OK;
}

size_t pfi_live_jobs(const pfi_live *l) { return l ? l->n : 0; }
uint64_t pfi_live_job_id(const pfi_live *l, size_t k) { return l->jobs[k].j.id; }

static size_t hslot(const pfi_live *l, uint64_t id)
{
    uint64_t h = id * 0x9E3779B97F4A7C15ULL;
    size_t m = l->hsize - 1, s = (size_t)(h >> 17) & m;
    while (l->hval[s] && l->hkey[s] != id) s = (s + 1) & m;
    return s;
}

/* The index of job id, or n when absent. */
static size_t find(const pfi_live *l, uint64_t id)
{
    if (!l->hsize) return l->n;
    size_t s = hslot(l, id);
    return l->hval[s] ? l->hval[s] - 1 : l->n;
}

static int rehash(pfi_live *l, size_t size)
{
    uint64_t *k = calloc(size, sizeof *k);
    size_t *v = calloc(size, sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    free(l->hkey);
    free(l->hval);
    l->hkey = k;
    l->hval = v;
    l->hsize = size;
    for (size_t i = 0; i < l->n; i++) {
        size_t s = hslot(l, l->jobs[i].j.id);
        l->hkey[s] = l->jobs[i].j.id;
        l->hval[s] = i + 1;
    }
    return 0;
}

int pfi_live_job_set(pfi_live *l, const pfi_live_job *j, pfi_error *err)
{
    if (!(j->pmax_w > 0 && j->pmax_w <= PFI_ALLOC_MAX_W) || !(j->tmax > 0 && j->tmax <= PFI_ALLOC_MAX_TPUT) ||
        !(j->floor_w > 0) || j->floor_w > j->pmax_w || j->count > PFI_ALLOC_MAX_COUNT ||
        isinf(j->pfi_hat))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "live learn: job %llu needs 0 < Pmax <= %g W, 0 < Tmax, 0 < floor <= "
                             "Pmax, a finite or NaN PFI and a count <= %g",
                             (unsigned long long)j->id, PFI_ALLOC_MAX_W, PFI_ALLOC_MAX_COUNT);
    l->new_epoch = 1;
    l->prob_ok = 0;
    size_t i = find(l, j->id);
    if (i < l->n) {
        l->jobs[i].j = *j;
        l->jobs[i].est_ok = 0;
        return PFI_OK;
    }
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 16;
        ljob *nj = realloc(l->jobs, nc * sizeof *nj);
        if (!nj) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        l->jobs = nj;
        l->cap = nc;
    }
    if (2 * (l->n + 1) > l->hsize && rehash(l, l->hsize ? 2 * l->hsize : 64))
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    ljob *x = &l->jobs[l->n];
    memset(x, 0, sizeof *x);
    x->j = *j;
    x->asked_t = NAN;
    x->pw = x->best_pw = j->pmax_w;
    size_t s = hslot(l, j->id);
    l->hkey[s] = j->id;
    l->hval[s] = ++l->n;
    return PFI_OK;
}

int pfi_live_job_remove(pfi_live *l, uint64_t id, pfi_error *err)
{
    size_t i = find(l, id);
    if (i >= l->n)
        return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "live learn: no job %llu",
                             (unsigned long long)id);
    l->jobs[i] = l->jobs[--l->n];
    l->jobs[i].est_ok = 0; /* it moved to another slot */
    l->new_epoch = 1;
    l->prob_ok = 0;
    /* rebuild the table: removals are rare next to readings */
    return rehash(l, l->hsize) ? pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory") : PFI_OK;
}

/* Adds a reading of y = t / Tmax with weight w at power p to job x's bins
 * (pooled with a bin within 0.1% of Pmax: the same cap read again). */
static void add_reading(ljob *x, double p, double y, double w, double cap, int prior)
{
    double tol = 1e-3 * x->j.pmax_w;
    size_t a = 0;
    while (a < x->nb && x->b[a].p < p - tol) a++;
    if (a == x->nb || x->b[a].p > p + tol) {
        if (x->nb == MAXB) { /* full: merge the two closest neighbours */
            size_t m = 0;
            for (size_t k = 1; k + 1 < x->nb; k++)
                if (x->b[k + 1].p - x->b[k].p < x->b[m + 1].p - x->b[m].p) m = k;
            bin *u = &x->b[m], *v = &x->b[m + 1];
            u->p = (u->p * u->sw + v->p * v->sw) / (u->sw + v->sw);
            u->sw += v->sw;
            u->swy += v->swy;
            u->swc += v->swc;
            u->nc += v->nc;
            u->swp += v->swp;
            u->swyp += v->swyp;
            memmove(v, v + 1, (x->nb - m - 2) * sizeof *v);
            x->nb--;
            if (a > m + 1) a--;
        }
        memmove(&x->b[a + 1], &x->b[a], (x->nb - a) * sizeof *x->b);
        x->b[a] = (bin){.p = p};
        x->nb++;
    }
    bin *b = &x->b[a];
    double before = b->sw > 0 ? b->swy / b->sw : NAN;
    /* an exact reading repeated tells nothing new (and adding it would move
     * the mean in its last bits, which re-estimates the job) */
    if (!(w >= EXACT_W && b->sw >= EXACT_W && y == before)) {
        b->sw += w;
        b->swy += w * y;
        /* a new value, or a noisy reading's weight (the estimate's lower
         * bounds and the prior's share below it depend on it): re-estimate */
        if (!(b->swy / b->sw == before) || w < EXACT_W) x->est_ok = 0;
    }
    if (!isnan(cap)) {
        b->swc += cap;
        b->nc += 1;
    }
    if (prior) {
        b->swp += w;
        b->swyp += w * y;
    }
}

int pfi_live_observe(pfi_live *l, const pfi_live_reading *r, size_t n, pfi_error *err)
{
    for (size_t k = 0; k < n; k++) {
        size_t i = find(l, r[k].id);
        if (i >= l->n)
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "live learn: reading %zu: no job %llu",
                                 k + 1, (unsigned long long)r[k].id);
        ljob *x = &l->jobs[i];
        const pfi_live_reading *q = &r[k];
        if (!(q->power_w > 0 && q->power_w <= PFI_ALLOC_MAX_W) || !(q->tput >= 0) ||
            !(q->tput <= PFI_ALLOC_MAX_TPUT) || !(q->tput_sd >= 0) || isinf(q->tput_sd) ||
            !isfinite(q->t_s) || isinf(q->cap_w))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "live learn: reading %zu (job %llu): power in (0, %g] W, "
                                 "throughput and spread >= 0 and a finite time needed",
                                 k + 1, (unsigned long long)q->id, PFI_ALLOC_MAX_W);
        double p = at_most(at_least(q->power_w, x->j.floor_w), x->j.pmax_w), sd = q->tput_sd / x->j.tmax;
        double w = sd > 0 ? 1 / (sd * sd) : EXACT_W;
        if (sd > 0) l->noisy = 1;
        if (w > EXACT_W) w = EXACT_W;
        /* a reading at Pmax only confirms what is known */
        if (p < x->j.pmax_w * (1 - 1e-9)) add_reading(x, p, q->tput / x->j.tmax, w, q->cap_w, q->prior);
        if (!q->prior) {
            x->asked_t = NAN;
            if (q->t_s > l->last_now) { /* taken while the last proposal was in force */
                tally_add(&x->meas, q->tput, q->tput_sd * q->tput_sd);
            }
        }
    }
    return PFI_OK;
}

void pfi_live_forget(pfi_live *l)
{
    for (size_t i = 0; i < l->n; i++) {
        ljob *x = &l->jobs[i];
        size_t m = 0;
        for (size_t a = 0; a < x->nb; a++) {
            bin b = x->b[a];
            if (!(b.swp > 0)) continue;
            b.sw = b.swp;
            b.swy = b.swyp;
            b.swc = b.nc = 0;
            x->b[m++] = b;
        }
        x->nb = m;
        x->est_ok = 0;
        x->asked_t = NAN;
        x->meas = (tally){0};
    }
    l->new_epoch = 1;
    l->last_now = -INFINITY;
}

/* Monotone cubic (Fritsch-Carlson) slopes d[] at the n knots (x, y). */
static void pchip_slopes(const double *x, const double *y, size_t n, double *d)
{
    double s[MAXPTS];
    for (size_t k = 0; k + 1 < n; k++) s[k] = (y[k + 1] - y[k]) / (x[k + 1] - x[k]);
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
static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
/* A deviate of mean 0 and SD 1, nearly normal: the sum of the four 16-bit
 * uniforms of one hash, scaled (Irwin-Hall: kurtosis 2.7 against 3, tails
 * ending at 3.46 SD, enough for a draw of half an SD). Box-Muller's log
 * and cos took 17% of pfi simulate --noise. */
static double gauss(uint64_t *st)
{
    uint64_t z = *st = mix64(*st);
    double u = (double)(z & 0xFFFF) + (double)(z >> 16 & 0xFFFF) + (double)(z >> 32 & 0xFFFF) +
               (double)(z >> 48);
    return (u / 65536 - 2 + 2 / 65536.0) * 1.7320508075688772; /* sqrt(12 / 4) */
}

/* Job x's estimate sampled into P, T (n points returned, ascending), from
 * the floor or lo_w if higher (the trust region; at most the lowest
 * reading). With measured_only, the pooled readings (exact ones as read,
 * noisy ones made monotone) and the uncapped point alone, linear between
 * them and no lower than the lowest reading; noisy pooled readings less
 * LCB_SDS of their SDs, or, with a non-zero draw, moved by TS_SCALE x
 * their SD x a deviate drawn from it and the job's id (thompson). */
static size_t estimate(const ljob *x, int measured_only, double optimistic, double lo_w, double *P,
                       double *T, uint64_t draw)
{
    const pfi_live_job *j = &x->j;
    double fl = at_most(at_least(j->floor_w, lo_w), j->pmax_w * (1 - 1e-9));
    /* knots: readings pooled per bin, the uncapped point last */
    double kx[MAXPTS], ky[MAXPTS], kw[MAXPTS];
    size_t blk[MAXPTS], n = 0; /* PAVA blocks: first knot of each */
    for (size_t a = 0; a < x->nb; a++) {
        kx[n] = x->b[a].p;
        ky[n] = x->b[a].swy / x->b[a].sw;
        kw[n++] = x->b[a].sw;
    }
    if (measured_only && !draw) /* the keep rule's combination: lower bounds */
        for (size_t k = 0; k < n; k++)
            if (kw[k] < EXACT_W) ky[k] -= LCB_SDS / sqrt(kw[k]);
    if (draw) { /* a draw of each noisy pooled reading (thompson) */
        uint64_t st = draw ^ (j->id * 0xD1B54A32D192ED03ULL);
        for (size_t k = 0; k < n; k++)
            if (kw[k] < EXACT_W) ky[k] += TS_SCALE * gauss(&st) / sqrt(kw[k]);
    }
    kx[n] = j->pmax_w;
    ky[n] = 1;
    kw[n++] = 1e300;
    double raw[MAXPTS];
    memcpy(raw, ky, n * sizeof *raw);
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
    for (size_t b = 0; b < nbk; b++) {
        size_t end = b + 1 < nbk ? blk[b + 1] : n;
        for (size_t k = blk[b]; k < end; k++) ky[k] = by[b];
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
        while (fl + g * step <= kx[k] + 1e-9 * step) g += 1;
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
static double cap_at(const ljob *x, double p)
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

static int grow_est(pfi_live *l)
{
    if (l->n <= l->cap_est && l->est) return 0;
    size_t c = l->n;
    l->prob_ok = 0; /* the estimates' arrays move */
    size_t *ch = realloc(l->changed, c * sizeof *ch);
    if (!ch) return -1;
    l->changed = ch;
    pfi_alloc_job *e = realloc(l->est, c * sizeof *e);
    if (e) l->est = e;
    double *ep = realloc(l->ep, c * MAXPTS * sizeof *ep);
    if (ep) l->ep = ep;
    double *et = realloc(l->et, c * MAXPTS * sizeof *et);
    if (et) l->et = et;
    double *w = realloc(l->w, c * sizeof *w);
    if (w) l->w = w;
    double *pw = realloc(l->pw, c * sizeof *pw);
    if (pw) l->pw = pw;
    /* the second proposal's (repropose): its problem copies the curves, so
     * they may move */
    pfi_alloc_job *te = realloc(l->ts_est, c * sizeof *te);
    if (te) l->ts_est = te;
    double *tp = realloc(l->ts_ep, c * MAXPTS * sizeof *tp);
    if (tp) l->ts_ep = tp;
    double *tt = realloc(l->ts_et, c * MAXPTS * sizeof *tt);
    if (tt) l->ts_et = tt;
    if (!e || !ep || !et || !w || !pw || !te || !tp || !tt) return -1;
    l->cap_est = c;
    return 0;
}

/* The variance of job i's estimate at power p (y units times Tmax): the
 * pooled reading nearest p. */
static double est_var(const ljob *x, double p)
{
    double best = INFINITY, w = EXACT_W;
    for (size_t a = 0; a < x->nb; a++)
        if (fabs(x->b[a].p - p) < best) {
            best = fabs(x->b[a].p - p);
            w = x->b[a].sw;
        }
    if (p >= x->j.pmax_w * (1 - 1e-9)) return 0;
    return x->j.tmax * x->j.tmax / w;
}

/* Noisy readings make the best combination look better than it is: it
 * picks each job's lucky readings. Do no harm: of the combination (its
 * estimated gain over the equal share less one SD per job it moved, the
 * bias of picking a lucky reading, and twice the SD of the rest) and the
 * epoch's best measured round (its measured gain less 2.5 SD: a round's
 * total is read whole, only the choice among rounds is biased), the one
 * with the larger lower bound is kept if that bound is positive, else the
 * equal share. With exact readings the combination, which is worth at
 * least every round measured, is kept whenever it gains. */
static void keep_equal_unless_sure(pfi_live *l)
{
    double gain = 0, var = 0, bias = 0;
    for (size_t i = 0; i < l->n; i++) {
        const ljob *x = &l->jobs[i];
        double c = (double)pfi_alloc_problem_job_count(l->prob, i), p = l->pw[i], q = x->eq_pw;
        if (p == q) continue;
        gain += c * (pfi_alloc_problem_tput_at(l->prob, i, p) - pfi_alloc_problem_tput_at(l->prob, i, q));
        double vp = est_var(x, p), vq = est_var(x, q);
        var += c * c * (vp + vq);
        bias += c * sqrt(vp);
    }
    double lcb_a = gain - bias - 2 * sqrt(var);
    double lcb_b = l->have_best ? tally_mean(&l->best) - tally_mean(&l->eq) -
                                      2.5 * sqrt(tally_var(&l->best) + tally_var(&l->eq))
                                : -INFINITY;
    l->kept = KEPT_COMBINATION;
    if (lcb_a > 0 && lcb_a >= lcb_b) return;
    int best = lcb_b > 0;
    l->kept = best ? KEPT_BEST : KEPT_EQUAL;
    for (size_t i = 0; i < l->n; i++) l->pw[i] = best ? l->jobs[i].best_pw : l->jobs[i].eq_pw;
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
 *     readings a job may be cut), one that gains widens it by TRUST_GROW;
 *   - exploring stops when the exploring rounds' measured losses add up
 *     to more than EXPLORE_COST times that bound. */
static void close_round(pfi_live *l)
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
        if (g < -2 * sd) l->delta *= 0.5;
        else if (g > 0) l->delta = at_most(TRUST_GROW * l->delta, 1.0);
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
        for (size_t i = 0; i < l->n; i++) l->jobs[i].best_pw = l->jobs[i].pw;
    }
}

/* Estimate P, T (m points) narrowed to a range of one power, p clamped
 * into it: the oracle cannot move a job whose readings stopped. Returns 2. */
static size_t hold(double p, double *P, double *T, size_t m)
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

/* Job x has sent nothing for stale_s at now_s (and is held where it was). */
static int silent_at(const pfi_live *l, const ljob *x, double now_s)
{
    return !isnan(x->asked_t) && now_s - x->asked_t >= l->o.stale_s && l->rounds > 0;
}

/* A second proposal over the kept one's (ts_*: the kept problem stays as
 * the keep rule read it): every job's estimate (measured_only, optimistic,
 * draw as in estimate; job i cut at most to lo[i] when lo is given),
 * silent jobs held, and the oracle's allocation of budget_w into l->pw. */
static int repropose(pfi_live *l, double budget_w, double now_s, int measured_only,
                     double optimistic, const double *lo, uint64_t draw, pfi_error *err)
{
    for (size_t i = 0; i < l->n; i++) {
        ljob *x = &l->jobs[i];
        double *P = l->ts_ep + i * MAXPTS, *T = l->ts_et + i * MAXPTS;
        size_t m = estimate(x, measured_only, optimistic, lo ? lo[i] : 0, P, T, draw);
        if (silent_at(l, x, now_s)) m = hold(x->pw, P, T, m);
        l->ts_est[i] = (pfi_alloc_job){.P = P, .T = T, .n = m, .pfi = NAN, .dram_copy = NAN,
                                       .count = x->j.count};
    }
    int rc = l->ts_prob ? pfi_alloc_problem_reset(l->ts_prob, l->ts_est, l->n, err)
                        : pfi_alloc_problem_create(l->ts_est, l->n, &l->ts_prob, err);
    return rc ? rc : pfi_alloc_oracle(l->ts_prob, budget_w, l->pw, NULL, err);
}

/* Thompson: the combination of measured points chosen on one draw of the
 * readings (each pooled reading moved by TS_SCALE x its SD x a normal
 * deviate). */
static int thompson(pfi_live *l, double budget_w, double now_s, pfi_error *err)
{
    return repropose(l, budget_w, now_s, 1, 0, NULL, mix64(l->rounds + 1), err);
}

/* Polish: the kept combination in l->pw (worth polish_ref on its
 * readings) gives way to a probe around it, the exploring rounds' oracle
 * with POLISH_OPTIMISM, each job cut at most DELTA0 x Pmax below its kept
 * power (l->w holds those bounds). With exact readings what it measures is
 * what it is worth: one that gains is in the bins for the next kept
 * combination, one that does not costs a period (close_round). */
static int polish(pfi_live *l, double budget_w, double now_s, pfi_error *err)
{
    l->polish_ref = 0;
    for (size_t i = 0; i < l->n; i++) {
        l->polish_ref += (double)pfi_alloc_problem_job_count(l->prob, i) *
                         pfi_alloc_problem_tput_at(l->prob, i, l->pw[i]);
        l->w[i] = l->pw[i] - DELTA0 * l->jobs[i].j.pmax_w;
    }
    l->polishing = 1;
    l->polish_left--;
    return repropose(l, budget_w, now_s, 0, POLISH_OPTIMISM, l->w, 0, err);
}

/* Hands out l->pw as the proposal made at now_s and closes the round. */
static int emit(pfi_live *l, double budget_w, double now_s, int probing, pfi_live_share *out)
{
    for (size_t i = 0; i < l->n; i++) {
        ljob *x = &l->jobs[i];
        x->pw = l->pw[i];
        if (l->rounds == 0) x->eq_pw = x->pw;
        x->meas = (tally){0};
        if (isnan(x->asked_t)) x->asked_t = now_s;
        /* a kept round's problem holds the readings less LCB_SDS of their
         * SDs (estimate): the estimate handed out is their mean again */
        double t = pfi_alloc_problem_tput_at(l->prob, i, x->pw);
        if (!probing && l->noisy) t += LCB_SDS * sqrt(est_var(x, x->pw));
        out[i] = (pfi_live_share){.id = x->j.id, .power_w = x->pw, .cap_w = cap_at(x, x->pw),
                                  .tput_est = t, .probing = probing};
    }
    l->rounds++;
    l->last_probing = probing;
    l->budget = budget_w;
    l->last_now = now_s;
    l->new_epoch = 0;
    return PFI_OK;
}

int pfi_live_propose(pfi_live *l, double budget_w, double now_s, pfi_live_share *out, size_t n,
                     pfi_error *err)
{
    if (l->n == 0) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "live learn: no jobs");
    if (n < l->n)
        return pfi_error_set(err, PFI_ERANGE, NULL, 0, "live learn: %zu shares for %zu jobs", n,
                             l->n);
    if (!isfinite(now_s) || now_s < l->last_now)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "live learn: time %g s is before the last proposal's", now_s);
    if (!isfinite(budget_w) || budget_w < 0)
        return pfi_error_set(err, PFI_ERANGE, NULL, 0, "live learn: budget %g W", budget_w);
    if (grow_est(l)) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int same = !l->new_epoch && l->rounds > 0 &&
               fabs(budget_w - l->budget) <= 1e-9 * at_least(budget_w, l->budget);
    l->pooled = 0;
    if (same && l->prob_ok) close_round(l); /* (a failed rebuild left no problem to read) */
    else if (!same) {
        l->rounds = 0;
        l->have_best = 0;
        l->stopped = 0;
        l->delta = DELTA0;
        l->expl_cost = 0;
        l->polish_left = POLISH_ROUNDS;
        l->polish_fails = POLISH_FAILS0;
    }
    int probing = !same || ((l->rounds < l->o.explore_rounds || !l->have_best) && !l->stopped);
    /* every job's estimate; silent jobs are held where they were */
    size_t nch = 0;
    int optimistic = probing && l->rounds > 0 && l->rounds + EXPLOIT < l->o.explore_rounds;
    for (size_t i = 0; i < l->n; i++) {
        ljob *x = &l->jobs[i];
        double *P = l->ep + i * MAXPTS, *T = l->et + i * MAXPTS;
        int silent = silent_at(l, x, now_s);
        int mode = !probing ? 1 : silent ? 2 : optimistic ? 3 : l->rounds > 0 ? 5 : 4;
        /* a silent job's range depends on its last power, so always rebuilt */
        /* the trust region: exploring, a job is cut at most delta x Pmax
         * below what it was read at (and its equal share: the budget stays
         * feasible) */
        double lo = 0;
        if (probing && l->rounds > 0)
            lo = at_most(x->nb ? x->b[0].p : x->j.pmax_w, x->eq_pw) - l->delta * x->j.pmax_w;
        if (l->prob_ok && x->est_ok && x->est_mode == mode && x->est_lo == lo && !silent) continue;
        size_t m = estimate(x, !probing, optimistic ? OPTIMISM : 0, lo, P, T, 0);
        if (silent) m = hold(x->pw, P, T, m);
        l->est[i] = (pfi_alloc_job){.P = P, .T = T, .n = m, .pfi = NAN, .dram_copy = NAN,
                                    .count = x->j.count};
        x->est_ok = 1;
        x->est_mode = mode;
        x->est_lo = lo;
        l->changed[nch++] = i;
    }
    int rc = !l->prob      ? pfi_alloc_problem_create(l->est, l->n, &l->prob, err)
             : l->prob_ok ? pfi_alloc_problem_update(l->prob, l->est, l->n, l->changed, nch, err)
                          : pfi_alloc_problem_reset(l->prob, l->est, l->n, err);
    l->prob_ok = rc == PFI_OK;
    if (rc) {
        for (size_t i = 0; i < l->n; i++) l->jobs[i].est_ok = 0;
        return rc;
    }
    l->polishing = 0;
    if (!probing && !l->last_probing && same && nch == 0 && !l->pooled) {
        /* a kept round read as the last one was: nothing the choice rests
         * on moved, so the last proposal stands (exact readings: every
         * period after the rounds costs a pass over the jobs) */
    } else if (!probing) {
        /* the best combination of measured points (each job at one of its
         * readings but the threshold one): with exact readings no worse
         * than any round measured */
        rc = pfi_alloc_oracle(l->prob, budget_w, l->pw, NULL, err);
        if (rc == PFI_OK) keep_equal_unless_sure(l);
        int gains = rc == PFI_OK && l->kept != KEPT_EQUAL && l->stopped != KEEP_EQUAL;
        if (gains && l->noisy && l->kept == KEPT_COMBINATION) rc = thompson(l, budget_w, now_s, err);
        /* polish when exploring ran its rounds (not stopped for its losses);
         * with exact readings the best round is kept over the combination
         * only when both are worth the same to the last bits */
        else if (gains && !l->noisy && !l->stopped && l->polish_left > 0)
            rc = polish(l, budget_w, now_s, err);
        if (l->stopped == KEEP_EQUAL) /* nothing to gain that the readings can show */
            for (size_t i = 0; i < l->n; i++) l->pw[i] = l->jobs[i].eq_pw;
    } else if (l->rounds == 0) {
        for (size_t i = 0; i < l->n; i++) l->w[i] = l->jobs[i].j.pmax_w;
        rc = pfi_alloc_proportional(l->prob, l->w, budget_w, l->pw, err);
    } else {
        rc = pfi_alloc_oracle(l->prob, budget_w, l->pw, NULL, err);
    }
    if (rc) return rc;
    return emit(l, budget_w, now_s, probing || l->polishing, out);
}
