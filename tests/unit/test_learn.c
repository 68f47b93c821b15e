/* The learn policy: every round meets the budget, the learning rounds are
 * paid for in the average, it recovers the oracle on curves it can learn,
 * and bad input is refused. */
#include "test_util.h"

#include <string.h>

#include "pfi/alloc.h"
#include "pfi/learn.h"
#include "pfi/learn_live.h"

enum { NJ = 12, NP = 6 };

typedef struct {
    pfi_alloc_problem *truth;
    size_t n, calls;
    double round_energy, round_work, period_s, budget; /* the open period's sums */
    double totals[PFI_LEARN_MAX_PERIODS];              /* each period's mean throughput */
    double work; /* jobs x seconds x throughput over every call */
    size_t rounds, last_job;
    int open;
    int fail_at; /* call that fails (0 = never) */
} env;

/* Closes the open period: its mean power must fit the budget. */
static void close_period(env *e)
{
    if (!e->open) return;
    double w = e->round_energy / e->period_s;
    if (w > e->budget + 0.1)
        fail_msg("period %zu draws %.3f W over a %.3f W budget", e->rounds + 1, w, e->budget);
    e->totals[e->rounds++] = e->round_work / e->period_s;
    e->round_energy = e->round_work = e->period_s = 0;
    e->open = 0;
}

static void reset(env *e)
{
    e->calls = e->rounds = 0;
    e->open = 0;
    e->round_energy = e->round_work = e->period_s = 0;
}

/* The true throughput at the applied power. Jobs are read in order every
 * period, so a lower job number opens the next period; job 0's seconds
 * are the period's length. */
static int observe(void *ctx, size_t job, double p, size_t jobs, double secs, double *t)
{
    env *e = ctx;
    if (jobs != 1 || !(secs > 0))
        fail_msg("job %zu observed as %zu jobs for %g s", job, jobs, secs);
    if (e->open && job < e->last_job) close_period(e);
    e->open = 1;
    e->last_job = job;
    if (job == 0) e->period_s += secs;
    if (e->fail_at && (int)e->calls + 1 == e->fail_at) return PFI_EBACKEND;
    double pmax, fl;
    pfi_alloc_problem_job_range(e->truth, job, &pmax, NULL, &fl);
    if (p < fl - 1e-6 || p > pmax + 1e-6)
        fail_msg("job %zu given %g outside [%g, %g]", job, p, fl, pmax);
    *t = pfi_alloc_problem_tput_at(e->truth, job, p);
    e->work += (double)jobs * secs * *t;
    e->round_energy += p * secs;
    e->round_work += secs * *t;
    e->calls++;
    return PFI_OK;
}

/* Jobs whose true curves are y = 1 - a u^b (u = 1 - P/Pmax), the family the
 * estimate fits, with tokens/W spread over a factor 6 as in the paper. */
static double P[NJ][NP], T[NJ][NP];
static void make_jobs(pfi_alloc_job *j, pfi_learn_job *lj)
{
    for (size_t i = 0; i < NJ; i++) {
        double pmax = 5000 + 500 * (double)(i % 3), tmax = pmax * (1 + 0.5 * (double)i);
        double a = 0.8 + 0.05 * (double)(i % 5), b = 1.2 + 0.1 * (double)(i % 4);
        for (size_t k = 0; k < NP; k++) {
            double x = 0.3 + 0.7 * (double)k / (NP - 1);
            P[i][k] = pmax * x;
            T[i][k] = tmax * (1 - a * pow(1 - x, b));
        }
        j[i] = (pfi_alloc_job){.P = P[i], .T = T[i], .n = NP, .pfi = 1.2, .dram_copy = 1};
        lj[i] = (pfi_learn_job){.pmax_w = pmax, .tmax = tmax, .floor_w = P[i][0], .pfi_hat = 1.2};
    }
}

static void test_rounds_budget_and_accounting(void **state)
{
    (void)state;
    pfi_alloc_job j[NJ];
    pfi_learn_job lj[NJ];
    make_jobs(j, lj);
    env e = {.n = NJ};
    assert_int_equal(pfi_alloc_problem_create(j, NJ, &e.truth, NULL), PFI_OK);
    for (double red = 0.05; red < 0.45; red += 0.1) {
        assert_int_equal(pfi_alloc_budget_for_reduction(e.truth, red, &e.budget, NULL), PFI_OK);
        reset(&e);
        e.work = 0;
        pfi_learn_opts o = {.rounds = 5, .round_s = 30, .event_s = 3590};
        pfi_learn_result r;
        double pw[NJ];
        pfi_error err;
        assert_int_equal(pfi_learn_run(lj, NJ, e.budget, &o, observe, &e, pw, &r, &err), PFI_OK);
        close_period(&e);
        /* five rounds, then the kept proposal read every period until it
         * stands (exact readings: then it stands to the end, and the rest of
         * the event is one period; test_replay_reads_every_period) */
        size_t np = r.periods;
        assert_int_equal(e.rounds, np);
        assert_int_equal(r.rounds, 5);
        assert_true(np >= 7 && np < 120);
        double best = 0, sum = 0;
        for (size_t k = 0; k < np - 1; k++) {
            if (k < 5) best = fmax(best, e.totals[k]);
            sum += e.totals[k];
        }
        double kept = e.totals[np - 1];
        assert_near(e.totals[np - 2], kept, 1e-12 * kept);
        /* the average pays for every period before: 30 s each, the kept one the rest */
        double rest = 3590 - 30 * (double)(np - 1);
        assert_near(r.final_tput, kept, 1e-9 * kept);
        assert_near(r.avg_tput, (30 * sum + rest * kept) / 3590, 1e-9 * kept);
        assert_near(e.work / 3590, r.avg_tput, 1e-9 * kept);
        double used = 0, tput = 0;
        for (size_t i = 0; i < NJ; i++) {
            used += pw[i];
            tput += pfi_alloc_problem_tput_at(e.truth, i, pw[i]);
        }
        assert_true(used <= e.budget + 0.1);
        assert_near(tput, kept, 1e-9 * kept);
        /* the first round is the equal share */
        pfi_alloc_result eq, orc;
        assert_int_equal(pfi_alloc_run(e.truth, PFI_POLICY_EQUAL, e.budget, NULL, &eq, NULL),
                         PFI_OK);
        assert_near(e.totals[0], eq.total_tput, 1e-9 * eq.total_tput);
        /* with exact readings the kept combination of measured points is no
         * worse than the best round (up to its one interpolated job), and on
         * these smooth curves within 0.5% of the oracle */
        assert_true(kept >= best * (1 - 1e-3));
        assert_int_equal(pfi_alloc_run(e.truth, PFI_POLICY_ORACLE, e.budget, NULL, &orc, NULL),
                         PFI_OK);
        if (!(kept >= 0.995 * orc.total_tput))
            fail_msg("reduction %.2f: learn keeps %.1f, oracle %.1f", red, kept, orc.total_tput);
        assert_true(kept >= eq.total_tput);
    }
    pfi_alloc_problem_destroy(e.truth);
}

static void test_bad_input(void **state)
{
    (void)state;
    pfi_alloc_job j[NJ];
    pfi_learn_job lj[NJ];
    make_jobs(j, lj);
    env e = {.n = NJ};
    assert_int_equal(pfi_alloc_problem_create(j, NJ, &e.truth, NULL), PFI_OK);
    pfi_alloc_budget_for_reduction(e.truth, 0.2, &e.budget, NULL);
    pfi_learn_result r;
    pfi_error err;
    pfi_learn_opts o = {.rounds = 0, .round_s = 30, .event_s = 3600};
    assert_int_equal(pfi_learn_run(lj, NJ, e.budget, &o, observe, &e, NULL, &r, &err), PFI_EINVAL);
    o = (pfi_learn_opts){.rounds = 10, .round_s = 30, .event_s = 200};
    assert_int_equal(pfi_learn_run(lj, NJ, e.budget, &o, observe, &e, NULL, &r, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "fit in the event"));
    o = pfi_learn_defaults();
    pfi_learn_job bad = lj[0];
    bad.pfi_hat = NAN;
    assert_int_equal(pfi_learn_run(&bad, 1, 1e9, &o, observe, &e, NULL, &r, &err), PFI_EINVAL);
    bad = lj[0];
    bad.floor_w = bad.pmax_w * 2;
    assert_int_equal(pfi_learn_run(&bad, 1, 1e9, &o, observe, &e, NULL, &r, &err), PFI_EINVAL);
    /* floors above the budget */
    assert_int_equal(pfi_learn_run(lj, NJ, 10, &o, observe, &e, NULL, &r, &err), PFI_EINFEASIBLE);
    /* a failing observation aborts the run with its status */
    e.fail_at = 5;
    reset(&e);
    assert_int_equal(pfi_learn_run(lj, NJ, e.budget, &o, observe, &e, NULL, &r, &err),
                     PFI_EBACKEND);
    assert_non_null(strstr(err.msg, "job #5"));
    pfi_alloc_problem_destroy(e.truth);
}

/* A plan run for many budgets, in any order and after a reset to other
 * jobs, gives exactly what pfi_learn_run gives: same powers, same totals,
 * bit for bit (the simulation runs 41 budgets per plan). */
static void test_plan_equals_run(void **state)
{
    (void)state;
    pfi_alloc_job j[NJ];
    pfi_learn_job lj[NJ];
    make_jobs(j, lj);
    env e = {.n = NJ};
    assert_int_equal(pfi_alloc_problem_create(j, NJ, &e.truth, NULL), PFI_OK);
    pfi_learn_opts o = {.rounds = 6, .round_s = 30, .event_s = 3600};
    pfi_learn_plan *pl = NULL;
    pfi_error err;
    assert_int_equal(pfi_learn_plan_create(lj, NJ, &o, &pl, &err), PFI_OK);
    const double reds[] = {0.3, 0.05, 0.4, 0.3, 0.2, 0.1};
    for (size_t n = NJ; n >= NJ / 2; n -= NJ / 2) {
        e.n = n;
        if (n != NJ) assert_int_equal(pfi_learn_plan_reset(pl, lj, n, &o, &err), PFI_OK);
        for (size_t q = 0; q < sizeof reds / sizeof *reds; q++) {
            double pmax_sum = 0;
            for (size_t i = 0; i < n; i++)
                pmax_sum += lj[i].pmax_w;
            e.budget = (1 - reds[q]) * pmax_sum;
            double pw1[NJ], pw2[NJ];
            pfi_learn_result r1, r2;
            reset(&e);
            assert_int_equal(pfi_learn_run(lj, n, e.budget, &o, observe, &e, pw1, &r1, &err),
                             PFI_OK);
            double tot1[PFI_LEARN_MAX_PERIODS];
            memcpy(tot1, e.totals, sizeof tot1);
            reset(&e);
            assert_int_equal(pfi_learn_plan_run(pl, e.budget, observe, &e, pw2, &r2, &err), PFI_OK);
            assert_memory_equal(pw1, pw2, n * sizeof *pw1);
            assert_true(r1.avg_tput == r2.avg_tput && r1.final_tput == r2.final_tput);
            assert_memory_equal(tot1, e.totals, o.rounds * sizeof *tot1);
        }
    }
    /* a failing run leaves the plan usable */
    reset(&e);
    e.fail_at = 2 * (int)e.n + 3;
    assert_int_equal(pfi_learn_plan_run(pl, e.budget, observe, &e, NULL, NULL, &err), PFI_EBACKEND);
    e.fail_at = 0;
    reset(&e);
    pfi_learn_result r3, r4;
    assert_int_equal(pfi_learn_plan_run(pl, e.budget, observe, &e, NULL, &r3, &err), PFI_OK);
    reset(&e);
    assert_int_equal(pfi_learn_run(lj, e.n, e.budget, &o, observe, &e, NULL, &r4, &err), PFI_OK);
    assert_true(r3.avg_tput == r4.avg_tput);
    pfi_learn_plan_destroy(pl);
    pfi_learn_plan_destroy(NULL);
    pfi_alloc_problem_destroy(e.truth);
}

/* Entries standing for several identical jobs (count) learn what as many
 * copies learn: identical jobs get one power every round, so their readings
 * and estimates stay identical; same totals, and every copy at its entry's
 * power. The simulation relies on it to run a workload per group. */
static int observe_plain(void *ctx, size_t job, double p, size_t jobs, double secs, double *t)
{
    (void)jobs;
    (void)secs;
    *t = pfi_alloc_problem_tput_at(ctx, job, p);
    return PFI_OK;
}

/* The replay is the live loop read every period: driven here by hand
 * through learn_live.h for all 120 periods of the event (no shortcut), it
 * gives the replay's average and final powers; with exact readings the
 * replay stops reading once a kept proposal stands, and this shows that it
 * loses nothing by it. */
static void test_replay_reads_every_period(void **state)
{
    (void)state;
    pfi_alloc_job j[NJ];
    pfi_learn_job lj[NJ];
    make_jobs(j, lj);
    pfi_alloc_problem *truth;
    assert_int_equal(pfi_alloc_problem_create(j, NJ, &truth, NULL), PFI_OK);
    for (double red = 0.05; red < 0.45; red += 0.1) {
        double b;
        assert_int_equal(pfi_alloc_budget_for_reduction(truth, red, &b, NULL), PFI_OK);
        pfi_live_opts lo = pfi_live_defaults();
        lo.stale_s = 1e300;
        pfi_live *l;
        assert_int_equal(pfi_live_create(&lo, &l, NULL), PFI_OK);
        for (size_t i = 0; i < NJ; i++) {
            pfi_live_job x = {.id = i,
                              .pmax_w = lj[i].pmax_w,
                              .tmax = lj[i].tmax,
                              .floor_w = lj[i].floor_w,
                              .pfi_hat = lj[i].pfi_hat};
            assert_int_equal(pfi_live_job_set(l, &x, NULL), PFI_OK);
        }
        double work = 0, pw[NJ];
        for (size_t r = 0; r < 120; r++) {
            pfi_live_share sh[NJ];
            pfi_live_reading rd[NJ];
            assert_int_equal(pfi_live_propose(l, b, 30.0 * (double)r, sh, NJ, NULL), PFI_OK);
            for (size_t k = 0; k < NJ; k++) {
                size_t i = (size_t)pfi_live_job_id(l, k);
                double t = pfi_alloc_problem_tput_at(truth, i, sh[k].power_w);
                work += 30 * t;
                pw[i] = sh[k].power_w;
                rd[k] = (pfi_live_reading){.id = i,
                                           .power_w = sh[k].power_w,
                                           .cap_w = NAN,
                                           .tput = t,
                                           .t_s = 30.0 * (double)(r + 1)};
            }
            assert_int_equal(pfi_live_observe(l, rd, NJ, NULL), PFI_OK);
        }
        pfi_live_destroy(l);
        pfi_learn_opts o = pfi_learn_defaults();
        pfi_learn_result res;
        double got[NJ];
        assert_int_equal(pfi_learn_run(lj, NJ, b, &o, observe_plain, truth, got, &res, NULL),
                         PFI_OK);
        if (!(fabs(res.avg_tput - work / 3600) <= 1e-12 * res.avg_tput))
            fail_msg("reduction %.2f: replay %.9f, every period read %.9f", red, res.avg_tput,
                     work / 3600);
        assert_memory_equal(got, pw, sizeof pw);
    }
    pfi_alloc_problem_destroy(truth);
}

static void test_counts_equal_copies(void **state)
{
    (void)state;
    pfi_alloc_job j[NJ], jc[3 * NJ];
    pfi_learn_job lj[NJ], ljc[3 * NJ];
    size_t of[3 * NJ], nc = 0;
    make_jobs(j, lj);
    for (size_t i = 0; i < NJ; i++) {
        size_t c = 1 + i % 3;
        for (size_t q = 0; q < c; q++, nc++) {
            jc[nc] = j[i];
            ljc[nc] = lj[i];
            of[nc] = i;
        }
        j[i].count = lj[i].count = c;
    }
    pfi_alloc_problem *te, *tc;
    assert_int_equal(pfi_alloc_problem_create(j, NJ, &te, NULL), PFI_OK);
    assert_int_equal(pfi_alloc_problem_create(jc, nc, &tc, NULL), PFI_OK);
    pfi_learn_opts o = pfi_learn_defaults();
    for (double red = 0.05; red < 0.45; red += 0.05) {
        double b;
        assert_int_equal(pfi_alloc_budget_for_reduction(tc, red, &b, NULL), PFI_OK);
        double pe[NJ], pc[3 * NJ];
        pfi_learn_result re, rc;
        pfi_error err;
        assert_int_equal(pfi_learn_run(lj, NJ, b, &o, observe_plain, te, pe, &re, &err), PFI_OK);
        assert_int_equal(pfi_learn_run(ljc, nc, b, &o, observe_plain, tc, pc, &rc, &err), PFI_OK);
        assert_near(re.avg_tput, rc.avg_tput, 1e-9 * rc.avg_tput);
        assert_near(re.final_tput, rc.final_tput, 1e-9 * rc.final_tput);
        for (size_t q = 0; q < nc; q++)
            assert_near(pc[q], pe[of[q]], 1e-6 * pe[of[q]]);
    }
    pfi_alloc_problem_destroy(te);
    pfi_alloc_problem_destroy(tc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rounds_budget_and_accounting),
        cmocka_unit_test(test_plan_equals_run),
        cmocka_unit_test(test_counts_equal_copies),
        cmocka_unit_test(test_replay_reads_every_period),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
