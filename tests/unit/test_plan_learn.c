/* The learn policy in the controller's plan (src/control/plan_learn.c): a
 * closed loop against jobs whose true curves the test knows, hand-computed.
 *
 * Two 8-GPU jobs, caps 200-700 W, Pmax 5600 W, Tmax 100 tokens/s, power at
 * per-GPU cap c = min(8 c, 5600) (a power-bound job):
 *   flat:  T = 100 min(1, P / 2400)   (no loss down to 2400 W)
 *   steep: T = 100 P / 5600           (loses in proportion)
 * At a budget of 8000 W the best split is flat 2400 W, steep 5600 W:
 * 200 tokens/s; equal sheds 1600 W from each: 4000 W each, 100 + 71.43 =
 * 171.43. Learn allocates a level 1% under the budget (7920 W; hysteresis,
 * plan_learn.h): the best there is flat 2400, steep 5520: 100 + 98.57 =
 * 198.57. Learn keeps the best split it has measured, not the true optimum
 * (which it may never probe): that it recovers 80% of equal's gap to it is
 * asserted (with 4 exploring rounds; main's learn of 3f96d71 gets 85%). At 7000 W: level 6930, best
 * 100 + 4530 / 56 = 180.89; equal 3500 W each, 100 + 62.5 = 162.5. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "pfi/plan.h"

typedef struct {
    const char *id;
    int steep;
    double cap; /* given last period; NaN none */
    int silent; /* sends no readings */
} tjob;

static double true_p(double cap)
{
    return fmin(8 * cap, 5600);
}
static double true_t(const tjob *j, double p)
{
    if (j->steep == 2) return 100 * (1 - 0.02 * pow(1 - p / 5600, 1.5)); /* "nearly flat" */
    return j->steep ? 100 * p / 5600 : 100 * fmin(1, p / 2400);
}

/* Noisy readings (test_noise_hides_the_gap): each reading off the truth by
 * +-NOISE of it in a fixed pattern, and said to have an SD of SD_GIVEN of it. */
static double NOISE, SD_GIVEN;
static size_t noise_k;

/* One period at time t: readings of last period's caps in, caps out.
 * Returns the jobs' true throughput at the new caps; checks the budget. */
static double period(pfi_plan *p, tjob *j, size_t n, double t, double budget, pfi_plan_obs *seen,
                     size_t *n_seen)
{
    pfi_plan_job pj[8];
    memset(pj, 0, sizeof pj);
    for (size_t i = 0; i < n; i++) {
        pj[i] = (pfi_plan_job){.id = j[i].id,
                               .n_gpus = 8,
                               .min_w = 200,
                               .max_w = 700,
                               .pmax_w = 5600,
                               .tmax = 100,
                               .pfi = NAN};
        if (isfinite(j[i].cap) && !j[i].silent) {
            double pw = true_p(j[i].cap);
            static const double sign[] = {1, -1, -1, 1, 1, -1};
            double t0 = true_t(&j[i], pw);
            pj[i].reading =
                (pfi_plan_obs){j[i].cap, pw, t0 * (1 + NOISE * sign[noise_k++ % 6]), SD_GIVEN * t0};
            if (seen && strcmp(j[i].id, "flat") == 0) seen[(*n_seen)++] = pj[i].reading;
        }
    }
    pfi_error err;
    pfi_error_clear(&err);
    pfi_plan_set_time(p, t);
    if (pfi_plan_set_jobs(p, pj, n, &err) != PFI_OK) fail_msg("set_jobs: %s", err.msg);
    pfi_plan_cap c[8];
    pfi_plan_result r;
    if (pfi_plan_run(p, PFI_PLAN_LEARN, budget, 0, 0, c, &r, &err) != PFI_OK)
        fail_msg("run: %s", err.msg);
    double tot = 0, pw = 0, planned = 0;
    for (size_t i = 0; i < n; i++) {
        j[i].cap = c[i].cap_w;
        assert_true(c[i].cap_w >= 200 && c[i].cap_w <= 700);
        pw += true_p(c[i].cap_w);
        planned += c[i].power_w;
        tot += true_t(&j[i], true_p(c[i].cap_w));
    }
    assert_true(planned <= budget * (1 + 1e-9));
    assert_true(pw <= budget + 1e-6); /* caps round down: the true power is under too */
    return tot;
}

/* flat and steep as the plan is told of them: no readings. */
static void two_jobs(pfi_plan_job pj[2])
{
    const char *ids[2] = {"flat", "steep"};
    for (int i = 0; i < 2; i++)
        pj[i] = (pfi_plan_job){.id = ids[i],
                               .n_gpus = 8,
                               .min_w = 200,
                               .max_w = 700,
                               .pmax_w = 5600,
                               .tmax = 100,
                               .pfi = NAN};
}

/* The share of equal's gap to the best split that a total recovers. */
static double recovered(double got, double equal, double best)
{
    return (got - equal) / (best - equal);
}

static pfi_plan *make_held(size_t rounds, size_t hold)
{
    pfi_plan *p;
    pfi_error err;
    assert_int_equal(pfi_plan_create(&p), PFI_OK);
    assert_int_equal(pfi_plan_use_learn(p, rounds, hold, &err), PFI_OK);
    return p;
}

static pfi_plan *make(size_t rounds)
{
    return make_held(rounds, 1);
}

/* The loop learns the split, follows a budget change, takes jobs that
 * arrive and leave and a job whose readings stop. */
static void test_closed_loop(void **st)
{
    pfi_plan *p = make(4);
    tjob j[3] = {{"flat", 0, NAN, 0}, {"steep", 1, NAN, 0}, {"late", 1, NAN, 0}};
    double t = 0, got = 0;
    got = period(p, j, 2, t++, 8000, NULL, NULL);
    assert_near(got, 100 + 3960.0 / 56, 0.2); /* round 1: equal share of 7920 W, 3960 W each */
    for (int k = 0; k < 10; k++)
        got = period(p, j, 2, t++, 8000, NULL, NULL);
    assert_true(recovered(got, 171.43, 198.57) >= 0.8);
    /* Small moves of the budget keep the level (no epoch, no equal round). */
    double kept = got;
    got = period(p, j, 2, t++, 8050, NULL, NULL);
    assert_near(got, kept, 1e-9);
    /* The budget falls: every round under it; the new best found. */
    for (int k = 0; k < 10; k++)
        got = period(p, j, 2, t++, 7000, NULL, NULL);
    assert_true(recovered(got, 162.5, 180.89) >= 0.8);
    assert_true(got > 162.5 + 15);
    /* A job arrives: three share 10000 W (level 9900: flat 2400, the two
     * linear ones 7500 between them: 100 + 7500 / 56 = 233.9; equal 3300 W
     * each: 100 + 6600 / 56 = 217.86). */
    for (int k = 0; k < 10; k++)
        got = period(p, j, 3, t++, 10000, NULL, NULL);
    assert_true(recovered(got, 217.86, 233.9) >= 0.8);
    /* steep's readings stop: it is planned on what is known, no error. */
    j[1].silent = 1;
    for (int k = 0; k < 5; k++)
        got = period(p, j, 3, t++, 10000, NULL, NULL);
    /* flat leaves: the loop follows (steep and late share 9900 of 11200). */
    j[1].silent = 0;
    tjob two[2] = {j[1], j[2]};
    for (int k = 0; k < 10; k++)
        got = period(p, two, 2, t++, 10000, NULL, NULL);
    assert_true(got >= 0.985 * 9900.0 / 56);
    pfi_plan_destroy(p);
}

/* A restart resumes from the learned points (the store's), and pfid's curve
 * points enter as priors: either way the first round's estimate of flat at
 * its equal share (3960 W, read at t = 0: 100 tokens/s) is what was read,
 * where a loop that starts from nothing has only its prior (a line from
 * Pmax losing 1/Pmax per W in T/Tmax: 100 (1 - 1640 / 5600) = 70.71). */
static void resume(int as_prior)
{
    pfi_plan *p = make(4);
    tjob j[2] = {{"flat", 0, NAN, 0}, {"steep", 1, NAN, 0}};
    pfi_plan_obs seen[64];
    size_t n_seen = 0;
    for (int k = 0; k < 12; k++)
        period(p, j, 2, k, 8000, seen, &n_seen);
    pfi_plan_destroy(p);
    assert_true(n_seen >= 4);

    pfi_plan *q = make(4);
    tjob k2[2] = {{"flat", 0, NAN, 0}, {"steep", 1, NAN, 0}};
    pfi_plan_job pj[2];
    two_jobs(pj);
    if (as_prior) {
        pj[0].prior = seen;
        pj[0].n_prior = n_seen;
    } else {
        pj[0].obs = seen;
        pj[0].n_obs = n_seen;
    }
    pfi_error err;
    pfi_plan_set_time(q, 100);
    assert_int_equal(pfi_plan_set_jobs(q, pj, 2, &err), PFI_OK);
    pfi_plan_cap c[2];
    pfi_plan_result r;
    assert_int_equal(pfi_plan_run(q, PFI_PLAN_LEARN, 8000, 0, 0, c, &r, &err), PFI_OK);
    assert_near(c[0].power_w, 3960, 1e-6);
    assert_near(c[0].tput, 100, 1e-6);
    k2[0].cap = c[0].cap_w;
    k2[1].cap = c[1].cap_w;
    double got = 0;
    for (int k = 1; k < 8; k++)
        got = period(q, k2, 2, 100 + k, 8000, NULL, NULL);
    assert_true(recovered(got, 171.43, 198.57) >= 0.8);
    pfi_plan_destroy(q);
}

static void test_resume_from_store(void **st)
{
    resume(0);
}
static void test_prior_points(void **st)
{
    resume(1);
}

/* Without what was learned, the prior: 70.71 (the reference that shows
 * the two tests above measure something). */
static void test_fresh_prior(void **st)
{
    pfi_plan *p = make(4);
    pfi_plan_job pj[2];
    two_jobs(pj);
    pfi_error err;
    pfi_plan_set_time(p, 0);
    assert_int_equal(pfi_plan_set_jobs(p, pj, 2, &err), PFI_OK);
    pfi_plan_cap c[2];
    pfi_plan_result r;
    assert_int_equal(pfi_plan_run(p, PFI_PLAN_LEARN, 8000, 0, 0, c, &r, &err), PFI_OK);
    assert_near(c[0].tput, 100 * (1 - 1640.0 / 5600), 1e-6);
    pfi_plan_destroy(p);
}

/* Do no harm through the plan: two nearly flat jobs (T = 100 (1 - 0.02
 * u^1.5), u = 1 - P / 5600) share 90% of their Pmax (level 9979.2 W):
 * equal's loss is 100 * 0.02 * (1 - 4989.6 / 5600)^1.5 = 0.072 tokens/s a
 * job, far below readings off by +-1% (1 tokens/s). Told that spread
 * (tput_sd 1%, what the controller passes from pfid's tokens_sd), the loop
 * keeps the equal share from the first proposal on; told the same readings
 * are exact (tput_sd 0, the controller before), it explores: it chases the
 * noise. */
static int caps_move(double sd_given)
{
    pfi_plan *p = make(4);
    tjob j[2] = {{"a", 2, NAN, 0}, {"b", 2, NAN, 0}};
    NOISE = 0.01;
    SD_GIVEN = sd_given;
    noise_k = 0;
    double first[2] = {NAN, NAN};
    int moved = 0;
    for (int k = 0; k < 10; k++) {
        period(p, j, 2, k, 10080, NULL, NULL);
        if (k == 0) {
            first[0] = j[0].cap;
            first[1] = j[1].cap;
            assert_near(first[0], first[1], 1); /* the equal share */
        }
        moved |= j[0].cap != first[0] || j[1].cap != first[1];
    }
    NOISE = SD_GIVEN = 0;
    pfi_plan_destroy(p);
    return moved;
}

static void test_noise_hides_the_gap(void **st)
{
    assert_false(caps_move(0.01));
    assert_true(caps_move(0)); /* the reference: the spread is what holds it */
}

/* The supply curve with learn is the oracle's and leaves the loop alone;
 * a budget over every job uncapped proposes nothing (all at Pmax). */
static void test_flex_and_uncapped(void **st)
{
    pfi_plan *p = make(4);
    tjob j[2] = {{"flat", 0, NAN, 0}, {"steep", 1, NAN, 0}};
    pfi_plan_job pj[2];
    two_jobs(pj);
    pfi_error err;
    pfi_plan_set_time(p, 0);
    assert_int_equal(pfi_plan_set_jobs(p, pj, 2, &err), PFI_OK);
    pfi_plan_cap c[2];
    pfi_plan_result r;
    assert_int_equal(pfi_plan_run(p, PFI_PLAN_LEARN, 20000, 0, 0, c, &r, &err), PFI_OK);
    assert_near(c[0].cap_w, 700, 0);
    assert_near(c[1].cap_w, 700, 0);
    pfi_plan_flex f[3];
    assert_int_equal(pfi_plan_flexibility(p, PFI_PLAN_LEARN, 3, f, &err), PFI_OK);
    assert_near(f[0].gpu_power_w, 11200, 1e-6);
    assert_near(f[2].gpu_power_w, 3200, 1e-6);
    /* the loop's first round is still the equal share */
    double got = period(p, j, 2, 1, 8000, NULL, NULL);
    assert_near(got, 100 + 3960.0 / 56, 0.2);
    pfi_plan_destroy(p);
}

/* Rounds of two periods (the controller's): a proposal holds two periods,
 * the reading of the first (its caps still moving) is not taken, and the
 * loop learns as it does with rounds of one. A job that arrives inside a
 * round is planned at once. */
static void test_rounds_of_two(void **st)
{
    pfi_plan *p = make_held(4, 2);
    tjob j[3] = {{"flat", 0, NAN, 0}, {"steep", 1, NAN, 0}, {"late", 1, NAN, 0}};
    double prev[2] = {NAN, NAN}, got = 0;
    for (int k = 0; k < 24; k++) {
        got = period(p, j, 2, k, 8000, NULL, NULL);
        if (k % 2 == 1) {
            assert_near(j[0].cap, prev[0], 0); /* the second period of a round: the same caps */
            assert_near(j[1].cap, prev[1], 0);
        }
        prev[0] = j[0].cap;
        prev[1] = j[1].cap;
    }
    assert_true(recovered(got, 171.43, 198.57) >= 0.8);
    /* a job arrives in the middle of a round: planned at once, under the budget */
    period(p, j, 3, 24, 8000, NULL, NULL);
    assert_true(isfinite(j[2].cap));
    pfi_plan_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closed_loop),         cmocka_unit_test(test_resume_from_store),
        cmocka_unit_test(test_prior_points),        cmocka_unit_test(test_fresh_prior),
        cmocka_unit_test(test_noise_hides_the_gap), cmocka_unit_test(test_flex_and_uncapped),
        cmocka_unit_test(test_rounds_of_two),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
