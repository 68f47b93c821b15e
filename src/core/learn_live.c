/* Live learn (include/core/pfi/learn_live.h): readings in, proposals out.
 * The jobs, their readings and the proposal loop; the internals it shares
 * with learn_estimate.c and learn_keep.c are in learn_live_int.h.
 *
 * Each job's curve is estimated from its readings (learn_estimate.c). The
 * exact oracle (alloc.h) then allocates on the estimates: optimistic
 * ones while exploring (the value of probing, see estimate), within a
 * trust region below the readings, the plain ones in the last exploring
 * round, the readings alone once exploring is over (with exact readings
 * after probes around them: polish); and the rules of "do
 * no harm" (learn_keep.c) decide when to stop
 * exploring and what to keep. With noisy readings a kept combination is
 * drawn every period (thompson): the best one on a draw of the readings,
 * so that a job's alternatives read once in exploring are read again when
 * they may be better, and the lucky reading a choice on the means would
 * stick to is read down (+1-5 points of equal's gap in the families'
 * noisy cells at 5-20%, -0.7 to -1.3 on the embedded, H100 and linear
 * ones at 5-10%, which stay above 93%; docs/learn.md).
 *
 * Speed paths: an estimate that did not change is not rebuilt, and the
 * problem is updated for the changed jobs alone (pfi_alloc_problem_update):
 * 1.4-1.7x on a controller's kept rounds at 10^4 jobs with exact readings
 * (bench_live, 5-6 ms against 8.5 ms), nothing in the simulation, where
 * every round moves every job; with noisy readings every estimate is
 * rebuilt each period, for the shrinking across jobs (live_eb) moves them
 * all; the equal round with no readings (every event of a replay) reuses
 * the problem of the last one (equal_round_cached). Exact readings: a kept
 * choice that nothing moved stands
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

#include "learn_live_int.h"

/* exploring rounds: how far towards the optimistic bound (see estimate);
 * a little past it (never above the next knot) draws the probes that find
 * dead zones and knees within the rounds. Chosen on the families' table. */
#define OPTIMISM 1.2
/* ... and with noisy readings, in the first EARLY_ROUNDS exploring rounds
 * after the equal one, OPTIMISM_EARLY: the early readings go further into
 * each interval, so that the kept periods choose among more places (100
 * workloads, 1% noise: noisy sweeps 5% 73.1 -> 75.0%, sigmoid 5-20%
 * +0.5-0.7, flat-knee 30% +0.6; noisy sweeps 10% -0.5, embedded and bumps
 * 5% -0.4, no other cell lower by 0.3. 1.7 over three rounds: noisy sweeps
 * 5% 74.3%; 2.0 over two 74.8%; 2.5 costs noisy sweeps 10% 0.8; 1.7 in
 * every round: dead zones 5% and linear 5% -0.6 and -0.8). */
#define OPTIMISM_EARLY 2.0
enum { EARLY_ROUNDS = 3 };
/* the last EXPLOIT exploring rounds use the plain estimate: the kept
 * combination then has readings where the estimated optimum is */
#define EXPLOIT 1

pfi_live_opts pfi_live_defaults(void)
{
    return (pfi_live_opts){.explore_rounds = 8, .stale_s = 90};
}

void pfi_live_destroy(pfi_live *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->n; i++)
        free(l->jobs[i].own);
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
    pfi_alloc_problem_destroy(l->prob0);
    pfi_alloc_problem_destroy(l->ts_prob);
    free(l->ts_est);
    free(l->ts_ep);
    free(l->ts_et);
    free(l->cls);
    free(l->cls_agree);
    free(l->tree_d);
    free(l->tree_s);
    free(l->tree_ix);
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

size_t pfi_live_jobs(const pfi_live *l)
{
    return l ? l->n : 0;
}
uint64_t pfi_live_job_id(const pfi_live *l, size_t k)
{
    return l->jobs[k].j.id;
}

static size_t hslot(const pfi_live *l, uint64_t id)
{
    uint64_t h = id * 0x9E3779B97F4A7C15ULL;
    size_t m = l->hsize - 1, s = (size_t)(h >> 17) & m;
    while (l->hval[s] && l->hkey[s] != id)
        s = (s + 1) & m;
    return s;
}

/* The index of job id, or n when absent. */
static size_t find(const pfi_live *l, uint64_t id)
{
    if (!l->hsize) return l->n;
    size_t s = hslot(l, id);
    return l->hval[s] ? l->hval[s] - 1 : l->n;
}

size_t live_find(const pfi_live *l, uint64_t id)
{
    return find(l, id);
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

/* Job x joins class c (0: none): a classed job keeps its own readings
 * apart from the view the estimate reads (learn_class.c), a job that
 * leaves its class takes its own back. -1 on no memory. */
static int class_bins(ljob *x, uint64_t c)
{
    if (c && !x->own) {
        x->own = malloc(MAXB * sizeof *x->own);
        if (!x->own) return -1;
        memcpy(x->own, x->b, x->nb * sizeof *x->b);
        x->nown = x->nb;
        x->own_dirty = 1;
    } else if (!c && x->own) {
        memcpy(x->b, x->own, x->nown * sizeof *x->b);
        x->nb = x->nown;
        free(x->own);
        x->own = NULL;
        x->pool_n = 1;
        x->grp = SIZE_MAX;
    }
    return 0;
}

int pfi_live_job_set(pfi_live *l, const pfi_live_job *j, pfi_error *err)
{
    if (!(j->pmax_w > 0 && j->pmax_w <= PFI_ALLOC_MAX_W) ||
        !(j->tmax > 0 && j->tmax <= PFI_ALLOC_MAX_TPUT) || !(j->floor_w > 0) ||
        j->floor_w > j->pmax_w || j->count > PFI_ALLOC_MAX_COUNT || isinf(j->pfi_hat))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "live learn: job %llu needs 0 < Pmax <= %g W, 0 < Tmax, 0 < floor <= "
                             "Pmax, a finite or NaN PFI and a count <= %g",
                             (unsigned long long)j->id, PFI_ALLOC_MAX_W, PFI_ALLOC_MAX_COUNT);
    l->new_epoch = 1;
    l->prob_ok = l->prob0_ok = 0;
    size_t i = find(l, j->id);
    if (i < l->n) {
        ljob *x = &l->jobs[i];
        if (x->j.class_id != j->class_id) l->cls_ok = 0;
        if (class_bins(x, j->class_id))
            return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        x->j = *j;
        x->est_ok = 0;
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
    x->pool_n = 1;
    x->grp = SIZE_MAX;
    if (class_bins(x, j->class_id)) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    if (j->class_id) l->cls_ok = 0;
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
    free(l->jobs[i].own);
    l->jobs[i] = l->jobs[--l->n];
    l->jobs[i].est_ok = 0; /* it moved to another slot */
    l->cls_ok = 0;
    l->new_epoch = 1;
    l->prob_ok = l->prob0_ok = 0;
    /* rebuild the table: removals are rare next to readings */
    return rehash(l, l->hsize) ? pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory") : PFI_OK;
}

bin *live_bin_slot(bin *bins, size_t *nb, double p, double tol)
{
    size_t a = 0;
    while (a < *nb && bins[a].p < p - tol)
        a++;
    if (a < *nb && bins[a].p <= p + tol) return &bins[a];
    if (*nb == MAXB) { /* full: merge the two closest neighbours */
        size_t m = 0;
        for (size_t k = 1; k + 1 < *nb; k++)
            if (bins[k + 1].p - bins[k].p < bins[m + 1].p - bins[m].p) m = k;
        bin *u = &bins[m], *v = &bins[m + 1];
        u->p = (u->p * u->sw + v->p * v->sw) / (u->sw + v->sw);
        u->sw += v->sw;
        u->swy += v->swy;
        u->swc += v->swc;
        u->nc += v->nc;
        u->swp += v->swp;
        u->swyp += v->swyp;
        memmove(v, v + 1, (*nb - m - 2) * sizeof *v);
        (*nb)--;
        if (a > m + 1) a--;
    }
    memmove(&bins[a + 1], &bins[a], (*nb - a) * sizeof *bins);
    bins[a] = (bin){.p = p};
    (*nb)++;
    return &bins[a];
}

/* Adds a reading of y = t / Tmax with weight w at power p to job x's bins
 * (pooled with a bin within 0.1% of Pmax: the same cap read again); a
 * job of a class keeps its own (learn_class.c pools them). */
static void add_reading(ljob *x, double p, double y, double w, double cap, int prior)
{
    double tol = 1e-3 * x->j.pmax_w;
    bin *b = x->own ? live_bin_slot(x->own, &x->nown, p, tol) : live_bin_slot(x->b, &x->nb, p, tol);
    if (x->own) x->own_dirty = 1;
    /* an exact bin stays as first read: another exact reading in it (the
     * same cap read again, or a power within the tolerance) tells nothing
     * new, and averaging it in moved the bin's value with every repeat of
     * either power, so that a kept choice could never stand (test_epoch).
     * Prior points pool as they come (they come once, before the event). */
    if (w >= EXACT_W && b->sw >= EXACT_W && !prior) return;
    double before = b->sw > 0 ? b->swy / b->sw : NAN;
    /* a prior exact point repeated tells nothing new (and adding it would
     * move the mean in its last bits, which re-estimates the job) */
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
        double p = at_most(at_least(q->power_w, x->j.floor_w), x->j.pmax_w),
               sd = q->tput_sd / x->j.tmax;
        double w = sd > 0 ? 1 / (sd * sd) : EXACT_W;
        if (sd > 0) l->noisy = 1;
        if (w > EXACT_W) w = EXACT_W;
        /* a reading at Pmax only confirms what is known */
        if (p < x->j.pmax_w * (1 - 1e-9))
            add_reading(x, p, q->tput / x->j.tmax, w, q->cap_w, q->prior);
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
        bin *bs = x->own ? x->own : x->b;
        size_t *nb = x->own ? &x->nown : &x->nb, m = 0;
        for (size_t a = 0; a < *nb; a++) {
            bin b = bs[a];
            if (!(b.swp > 0)) continue;
            b.sw = b.swp;
            b.swy = b.swyp;
            b.swc = b.nc = 0;
            bs[m++] = b;
        }
        *nb = m;
        x->own_dirty = 1;
        x->est_ok = 0;
        x->asked_t = NAN;
        x->meas = (tally){0};
    }
    l->new_epoch = 1;
    l->last_now = -INFINITY;
}

/* Reallocates *buf (any pointer's address) to bytes; keeps it on failure. */
static int regrow(void *buf, size_t bytes)
{
    void **b = buf, *nb = realloc(*b, bytes);
    if (!nb) return -1;
    *b = nb;
    return 0;
}

static int grow_est(pfi_live *l)
{
    if (l->n <= l->cap_est && l->est) return 0;
    size_t c = l->n, curves = c * MAXPTS * sizeof(double);
    l->prob_ok = 0; /* the estimates' arrays move */
    /* the second proposal's (ts_*, repropose) too: its problem copies the
     * curves, so they may move. A failure leaves every array valid (some
     * grown) and cap_est as it was: the next proposal tries again. */
    if (regrow(&l->changed, c * sizeof *l->changed) || regrow(&l->est, c * sizeof *l->est) ||
        regrow(&l->ep, curves) || regrow(&l->et, curves) || regrow(&l->w, c * sizeof *l->w) ||
        regrow(&l->pw, c * sizeof *l->pw) || regrow(&l->ts_est, c * sizeof *l->ts_est) ||
        regrow(&l->ts_ep, curves) || regrow(&l->ts_et, curves))
        return -1;
    l->cap_est = c;
    return 0;
}

/* The equal round when no job has a reading (a replay's, at the start of
 * every event): each estimate then depends on its job alone, so the problem
 * built from them is kept in prob0 and swapped in as prob for the round,
 * rather than every estimate and hull made again each event (the Sec. 6
 * experiment: 4% fewer instructions, 2.92 against 3.04 s of CPU, medians
 * of 7 interleaved runs). Returns 0 when a job has readings (nothing
 * done), else 1 with *rc the outcome. */
static int equal_round_cached(pfi_live *l, int *rc, pfi_error *err)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->jobs[i].nb) return 0;
    for (size_t i = 0; i < l->n; i++) /* est's arrays are written, or prob swapped out */
        l->jobs[i].est_ok = 0;
    *rc = PFI_OK;
    if (!l->prob0_ok) {
        for (size_t i = 0; i < l->n; i++) {
            double *P = l->ep + i * MAXPTS, *T = l->et + i * MAXPTS;
            size_t m = live_estimate(&l->jobs[i], 0, 0, 0, P, T, NULL, &l->eb);
            l->est[i] = (pfi_alloc_job){
                .P = P, .T = T, .n = m, .pfi = NAN, .dram_copy = NAN, .count = l->jobs[i].j.count};
        }
        *rc = l->prob0 ? pfi_alloc_problem_reset(l->prob0, l->est, l->n, err)
                       : pfi_alloc_problem_create(l->est, l->n, &l->prob0, err);
        l->prob0_ok = *rc == PFI_OK;
    }
    if (*rc == PFI_OK) *rc = live_tree_apply(l, l->prob0, err);
    if (*rc) {
        l->prob0_ok = 0;
        return 1;
    }
    pfi_alloc_problem *t = l->prob;
    l->prob = l->prob0;
    l->prob0 = t;
    l->cached0 = 1;
    l->prob_ok = 1;
    return 1;
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
        if (!probing && l->noisy) t += LCB_SDS * sqrt(live_est_var(x, x->pw, &l->eb));
        out[i] = (pfi_live_share){.id = x->j.id,
                                  .power_w = x->pw,
                                  .cap_w = live_cap_at(x, x->pw),
                                  .tput_est = t,
                                  .probing = probing};
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
    if (grow_est(l) || live_class_refresh(l))
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int same = !l->new_epoch && l->rounds > 0 &&
               fabs(budget_w - l->budget) <= 1e-9 * at_least(budget_w, l->budget);
    l->pooled = 0;
    if (same && l->prob_ok)
        live_close_round(l); /* (a failed rebuild left no problem to read) */
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
    /* noisy readings: every estimate shrinks towards the other jobs' readings
     * (live_eb), which moved since the last proposal */
    l->eb.on = 0;
    if (l->noisy && same && l->rounds > 0) {
        live_eb_table(l);
        for (size_t i = 0; i < l->n; i++)
            l->jobs[i].est_ok = 0;
    }
    if (l->cached0) { /* the last proposal was the equal round on prob0: the loop's own back */
        pfi_alloc_problem *t = l->prob;
        l->prob = l->prob0;
        l->prob0 = t;
        l->cached0 = 0;
        l->prob_ok = 0;
    }
    /* every job's estimate; silent jobs are held where they were */
    size_t nch = 0;
    int optimistic = probing && l->rounds > 0 && l->rounds + EXPLOIT < l->o.explore_rounds;
    int rc = PFI_OK;
    if (l->rounds == 0 && equal_round_cached(l, &rc, err)) {
        if (rc) return rc;
        goto allocate;
    }
    for (size_t i = 0; i < l->n; i++) {
        ljob *x = &l->jobs[i];
        double *P = l->ep + i * MAXPTS, *T = l->et + i * MAXPTS;
        int silent = silent_at(l, x, now_s);
        int early = optimistic && l->noisy && l->rounds <= EARLY_ROUNDS;
        int mode = !probing ? 1 : silent ? 2 : early ? 6 : optimistic ? 3 : l->rounds > 0 ? 5 : 4;
        /* a silent job's range depends on its last power, so always rebuilt */
        /* the trust region: exploring, a job is cut at most delta x Pmax
         * below what it was read at (and its equal share: the budget stays
         * feasible) */
        double lo = 0;
        if (probing && l->rounds > 0) {
            /* below its own readings, not its class's: a classmate read deeper
             * may not share its curve (learn_class.c, which spreads a pooled
             * class over the region at deep cuts) */
            size_t nb = x->own ? x->nown : x->nb;
            double low = nb ? (x->own ? x->own : x->b)[0].p : x->j.pmax_w;
            lo = live_class_trust(l, x, at_most(low, x->eq_pw));
        }
        if (l->prob_ok && x->est_ok && x->est_mode == mode && x->est_lo == lo && !silent) continue;
        double opt = !optimistic ? 0 : early ? OPTIMISM_EARLY : OPTIMISM;
        /* exploring, a job that pools its class draws its estimate
         * (learn_class.c): replicas then read their own powers */
        live_draw xd;
        const live_draw *dr = probing && l->rounds > 0 ? live_class_draw(l, x, &xd) : NULL;
        size_t m = live_estimate(x, !probing, opt, lo, P, T, dr, &l->eb);
        if (silent) m = live_hold(x->pw, P, T, m);
        l->est[i] = (pfi_alloc_job){
            .P = P, .T = T, .n = m, .pfi = NAN, .dram_copy = NAN, .count = x->j.count};
        x->est_ok = 1;
        x->est_mode = mode;
        x->est_lo = lo;
        l->changed[nch++] = i;
    }
    rc = !l->prob     ? pfi_alloc_problem_create(l->est, l->n, &l->prob, err)
         : l->prob_ok ? pfi_alloc_problem_update(l->prob, l->est, l->n, l->changed, nch, err)
                      : pfi_alloc_problem_reset(l->prob, l->est, l->n, err);
    if (rc == PFI_OK) rc = live_tree_apply(l, l->prob, err);
    l->prob_ok = rc == PFI_OK;
    if (rc) {
        for (size_t i = 0; i < l->n; i++)
            l->jobs[i].est_ok = 0;
        return rc;
    }
allocate:
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
        if (rc == PFI_OK) live_keep_equal_unless_sure(l);
        int gains = rc == PFI_OK && l->kept != KEPT_EQUAL && l->stopped != KEEP_EQUAL;
        if (gains && l->noisy && l->kept == KEPT_COMBINATION)
            rc = live_thompson(l, budget_w, now_s, err);
        /* polish when exploring ran its rounds (not stopped for its losses);
         * with exact readings the best round is kept over the combination
         * only when both are worth the same to the last bits */
        else if (gains && !l->noisy && !l->stopped && l->polish_left > 0)
            rc = live_polish(l, budget_w, now_s, err);
        if (l->stopped == KEEP_EQUAL) /* nothing to gain that the readings can show */
            for (size_t i = 0; i < l->n; i++)
                l->pw[i] = l->jobs[i].eq_pw;
    } else if (l->rounds == 0) {
        for (size_t i = 0; i < l->n; i++)
            l->w[i] = l->jobs[i].j.pmax_w;
        rc = pfi_alloc_proportional(l->prob, l->w, budget_w, l->pw, err);
    } else {
        rc = pfi_alloc_oracle(l->prob, budget_w, l->pw, NULL, err);
    }
    if (rc) return rc;
    return emit(l, budget_w, now_s, probing || l->polishing, out);
}
