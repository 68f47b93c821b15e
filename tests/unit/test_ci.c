/* Monte Carlo CI: interval ends against a hand computation, coverage on
 * synthetic noise, reproducibility, edge cases. */
#include "test_util.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "pfi/ci.h"
#include "pfi/index.h"

static const double caps[] = {200, 300, 400, 500, 600, 700};
static const double p_true[] = {1600, 2400, 3200, 4000, 4800, 5600};
static const double t_true[] = {6000, 7600, 8600, 9300, 9800, 10000};

/* A sweeps with one group observed as truth + N(0, sem) (or exact when rng is NULL). */
static pfi_sweeps *observe(gsl_rng *rng, double rel_sem)
{
    pfi_sweeps *s = pfi_sweeps_create();
    pfi_group_meta m = {"H200", "m", "moe", "ft", "", 8};
    for (int i = 0; i < 6; i++) {
        pfi_run r = {
            .cap_w = caps[i], .power_sem_w = rel_sem * p_true[i], .tput_sem = rel_sem * t_true[i]};
        r.power_w = p_true[i] + (rng ? gsl_ran_gaussian(rng, r.power_sem_w) : 0);
        r.tput = t_true[i] + (rng ? gsl_ran_gaussian(rng, r.tput_sem) : 0);
        assert_int_equal(pfi_sweeps_add_run(s, "g", &m, &r, NULL, NULL), PFI_OK);
    }
    assert_int_equal(pfi_sweeps_finalize(s, 0, NULL, NULL), PFI_OK);
    return s;
}

/* The true PFI lies inside the 95% CI in about 95% of seeded trials. With 400
 * trials the hit rate's standard deviation is sqrt(.95 * .05 / 400) = 1.1%, so
 * [0.92, 0.98] is a +/-3 sd band (a 90% or 99% interval would fail it). */
static void coverage_on_synthetic_noise(void **state)
{
    double truth;
    assert_int_equal(pfi_index_ratio(p_true, t_true, 6, NULL, &truth), PFI_OK);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 12345);
    const int trials = 400;
    int hits = 0;
    pfi_ci_opts o = {.draws = 2000, .seed = 7, .level = 0.95, .method = PFI_METHOD_RATIO};
    for (int t = 0; t < trials; t++) {
        pfi_sweeps *s = observe(rng, 0.001);
        pfi_ci ci;
        assert_int_equal(pfi_ci_group(pfi_sweeps_group(s, 0), &o, &ci), PFI_OK);
        assert_true(ci.has && ci.low < ci.high);
        hits += (ci.low <= truth && truth <= ci.high);
        pfi_sweeps_destroy(s);
    }
    gsl_rng_free(rng);
    double rate = (double)hits / trials;
    print_message("coverage %.3f over %d trials\n", rate, trials);
    assert_true(rate >= 0.92 && rate <= 0.98);
}

/* A group's interval depends on its runs and the seed only: not on the
 * thread count, its position, or the other groups (common random numbers). */
static void reproducible_and_position_free(void **state)
{
    pfi_sweeps *s = observe(NULL, 0.002);
    const pfi_group *g = pfi_sweeps_group(s, 0);
    pfi_sweeps *s6 = pfi_sweeps_create();
    pfi_group_meta m = {"H200", "m", "dense", "pt", "", 8};
    for (int i = 0; i < 8; i++) { /* a larger group to change the batch's shape */
        pfi_run r = {.cap_w = 100.0 + 100 * i,
                     .power_w = 800.0 + 700 * i,
                     .tput = 5000.0 + 600 * i,
                     .power_sem_w = 3,
                     .tput_sem = 9};
        pfi_sweeps_add_run(s6, "big", &m, &r, NULL, NULL);
    }
    assert_int_equal(pfi_sweeps_finalize(s6, 0, NULL, NULL), PFI_OK);
    const pfi_group *big = pfi_sweeps_group(s6, 0);
    const pfi_group *gs[5] = {g, big, g, g, big};
    pfi_ci a[5], b[5], one, other_seed;
    pfi_ci_opts o = {.draws = 3000, .seed = 99, .level = 0.95, .method = PFI_METHOD_RATIO};
    assert_int_equal(pfi_ci_batch(gs, 5, &o, 1, a), PFI_OK);
    assert_int_equal(pfi_ci_batch(gs, 5, &o, 3, b), PFI_OK);
    for (int i = 0; i < 5; i++) {
        assert_true(a[i].low == b[i].low && a[i].high == b[i].high);
        assert_int_equal(a[i].n_valid, 3000);
    }
    assert_int_equal(pfi_ci_group(g, &o, &one), PFI_OK);
    assert_true(one.low == a[0].low && one.high == a[3].high && a[2].low == a[0].low);
    assert_true(a[1].low == a[4].low && a[1].low != a[0].low);
    /* Another seed moves the interval a little, not much. */
    o.seed = 100;
    assert_int_equal(pfi_ci_group(g, &o, &other_seed), PFI_OK);
    assert_true(other_seed.low != one.low);
    assert_near(other_seed.low, one.low, 0.02 * one.low);
    /* The point estimate sits inside its own interval. */
    pfi_index_result r;
    assert_int_equal(pfi_index_group(g, PFI_METHOD_RATIO, NULL, &r), PFI_OK);
    assert_true(a[0].low < r.pfi && r.pfi < a[0].high);
    pfi_sweeps_destroy(s);
    pfi_sweeps_destroy(s6);
}

/* Runs without SEMs add no noise: the interval collapses onto the estimate. */
static void no_noise_collapses(void **state)
{
    pfi_sweeps *s = observe(NULL, 0.0);
    pfi_ci ci;
    pfi_ci_opts o = {.draws = 100, .seed = 1, .level = 0.95, .method = PFI_METHOD_RATIO};
    assert_int_equal(pfi_ci_group(pfi_sweeps_group(s, 0), &o, &ci), PFI_OK);
    double truth;
    pfi_index_ratio(p_true, t_true, 6, NULL, &truth);
    assert_near(ci.low, truth, 1e-12);
    assert_near(ci.high, truth, 1e-12);
    /* Area and CE intervals work the same way. */
    o.method = PFI_METHOD_AREA;
    assert_int_equal(pfi_ci_group(pfi_sweeps_group(s, 0), &o, &ci), PFI_OK);
    o.method = PFI_METHOD_CE;
    assert_int_equal(pfi_ci_group(pfi_sweeps_group(s, 0), &o, &ci), PFI_OK);
    /* Bad options. */
    o.level = 1.5;
    assert_int_equal(pfi_ci_group(pfi_sweeps_group(s, 0), &o, &ci), PFI_EINVAL);
    o.level = 0.95;
    o.draws = 0;
    assert_int_equal(pfi_ci_group(pfi_sweeps_group(s, 0), &o, &ci), PFI_EINVAL);
    pfi_sweeps_destroy(s);
}

/* Interval values against a hand computation. Two runs, (P1, T1) capped and
 * (Pmax, Tmax) = (5600, 10000) uncapped, and noise on one quantity only:
 *   ratio  PFI = (1 - P1/Pmax) / (1 - T1/Tmax), linear and decreasing in P1;
 *   area   PFI = [T1 Pmax + Tmax (Pmax - P1)] / (2 Tmax Pmax) - 1/2 (Eq. 5
 *          with the origin), linear and increasing in T1.
 * A monotone map carries quantiles over, so the central 95% interval is the
 * estimator at P1 -/+ z s (z = 1.959964, the normal's 97.5% point; 1.644854
 * for 90%). With 100,000 draws an empirical 2.5% quantile of N(0,1) has a
 * standard deviation of sqrt(.025 .975 / 1e5) / phi(1.96) = 0.0085, so the
 * ends must agree to 0.04 s (4.7 sd): a wrong z (a 90% interval, a
 * t-quantile), a wrong scale of the noise or a one-sided interval fails. */
static pfi_sweeps *two_runs(double p_sem, double t_sem)
{
    pfi_sweeps *s = pfi_sweeps_create();
    pfi_group_meta m = {"H200", "m", "dense", "pt", "", 8};
    pfi_run c = {
        .cap_w = 300, .power_w = 2400, .tput = 7600, .power_sem_w = p_sem, .tput_sem = t_sem};
    pfi_run u = {.cap_w = 700, .power_w = 5600, .tput = 10000};
    assert_int_equal(pfi_sweeps_add_run(s, "g", &m, &c, NULL, NULL), PFI_OK);
    assert_int_equal(pfi_sweeps_add_run(s, "g", &m, &u, NULL, NULL), PFI_OK);
    assert_int_equal(pfi_sweeps_finalize(s, 0, NULL, NULL), PFI_OK);
    return s;
}

static void interval_by_hand(void **state)
{
    const double Pmax = 5600, Tmax = 10000, P1 = 2400, T1 = 7600, sp = 40, st = 60;
    const struct {
        double level, z;
    } lv[] = {{0.95, 1.959963984540054}, {0.90, 1.6448536269514722}};
    for (int k = 0; k < 2; k++) {
        double z = lv[k].z;
        pfi_ci_opts o = {
            .draws = 100000, .seed = 5, .level = lv[k].level, .method = PFI_METHOD_RATIO};
        pfi_sweeps *s = two_runs(sp, 0);
        pfi_ci ci;
        assert_int_equal(pfi_ci_group(pfi_sweeps_group(s, 0), &o, &ci), PFI_OK);
        double c = 1 - T1 / Tmax, slope = 1 / (Pmax * c); /* |dPFI/dP1| */
        assert_near(ci.low, (1 - (P1 + z * sp) / Pmax) / c, 0.04 * sp * slope);
        assert_near(ci.high, (1 - (P1 - z * sp) / Pmax) / c, 0.04 * sp * slope);
        pfi_sweeps_destroy(s);

        o.method = PFI_METHOD_AREA;
        s = two_runs(0, st);
        assert_int_equal(pfi_ci_group(pfi_sweeps_group(s, 0), &o, &ci), PFI_OK);
        double a0 = (Tmax * (Pmax - P1)) / (2 * Tmax * Pmax) - 0.5, da = Pmax / (2 * Tmax * Pmax);
        assert_near(ci.low, a0 + da * (T1 - z * st), 0.04 * st * da);
        assert_near(ci.high, a0 + da * (T1 + z * st), 0.04 * st * da);
        pfi_sweeps_destroy(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(coverage_on_synthetic_noise),
        cmocka_unit_test(reproducible_and_position_free),
        cmocka_unit_test(no_noise_collapses),
        cmocka_unit_test(interval_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
