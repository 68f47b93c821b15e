/* PFI definitions on hand-computed sweeps (paper Sec. 2, Appendix A). */
#include "test_util.h"

#include <string.h>

#include "pfi/curve.h"
#include "pfi/index.h"
#include "pfi/quantile.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A job whose throughput is proportional to power: PFI 1 by Eq. 1, area 0
 * (the curve is the diagonal), constant elasticity alpha = 1 so PFI_ce = 0. */
static void linear_job(void **state)
{
    double P[] = {1600, 2400, 3200, 4000, 4800, 5600};
    double T[6];
    for (size_t i = 0; i < 6; i++)
        T[i] = 0.625 * P[i];
    double v;
    assert_int_equal(pfi_index_ratio(P, T, 6, NULL, &v), PFI_OK);
    assert_near(v, 1.0, 1e-12);
    assert_int_equal(pfi_index_area(P, T, 6, &v), PFI_OK);
    assert_near(v, 0.0, 1e-12);
    assert_int_equal(pfi_index_ce(P, T, 6, &v), PFI_OK);
    assert_near(v, 0.0, 1e-12);
}

/* More runs than the stack buffers hold: the heap path gives the same answers. */
static void many_runs(void **state)
{
    pfi_sweeps *s = pfi_sweeps_create();
    pfi_group_meta m = {"", "m", "dense", "pt", "", 1};
    for (int i = 1; i <= 100; i++) {
        pfi_run r = {.cap_w = 10.0 * i, .power_w = 9.0 * i, .tput = 2.0 * i};
        assert_int_equal(pfi_sweeps_add_run(s, "g", &m, &r, NULL, NULL), PFI_OK);
    }
    assert_int_equal(pfi_sweeps_finalize(s, 0, NULL, NULL), PFI_OK);
    pfi_index_result r;
    assert_int_equal(pfi_index_group(pfi_sweeps_group(s, 0), PFI_METHOD_ALL, NULL, &r), PFI_OK);
    assert_near(r.pfi, 1.0, 1e-12);
    assert_near(r.pfi_ce, 0.0, 1e-12);
    assert_near(r.pfi_area, 0.0, 1e-12);
    assert_int_equal(r.n_terms, 99);
    pfi_sweeps_destroy(s);
}

/* Keeps 98% throughput at 95% power: (1 - 0.95) / (1 - 0.98) = 0.05 / 0.02 = 2.5. */
static void keeps_98_at_95(void **state)
{
    double P[] = {950, 1000}, T[] = {980, 1000}, v;
    assert_int_equal(pfi_index_ratio(P, T, 2, NULL, &v), PFI_OK);
    assert_near(v, 2.5, 1e-12);
}

/* The paper's interpretation examples (Sec. 2): -5% power with -2%, -5% and
 * -10% throughput give 2.5 (inelastic), 1 (linear) and 0.5 (elastic). */
static void paper_section2_examples(void **state)
{
    struct {
        double t, want;
    } cases[] = {{0.98, 2.5}, {0.95, 1.0}, {0.90, 0.5}};
    for (size_t i = 0; i < N(cases); i++) {
        double P[] = {0.95, 1.0}, T[] = {cases[i].t, 1.0}, v;
        assert_int_equal(pfi_index_ratio(P, T, 2, NULL, &v), PFI_OK);
        assert_near(v, cases[i].want, 1e-12);
    }
}

/* Four caps; terms by hand: (1-.4)/(1-.7) = 2, (1-.6)/(1-.85) = 2.6667,
 * (1-.8)/(1-.95) = 4; mean 8.6667/3 = 2.8889. */
static void ratio_mean_of_terms(void **state)
{
    double P[] = {400, 600, 800, 1000}, T[] = {700, 850, 950, 1000}, v;
    assert_int_equal(pfi_index_ratio(P, T, 4, NULL, &v), PFI_OK);
    assert_near(v, (2.0 + 0.4 / 0.15 + 4.0) / 3.0, 1e-12);
}

/* Eq. 5 by hand with (P0,T0) = (0,0): P = (500, 1000), T = (800, 1000):
 * (0+800)(500-0) + (800+1000)(1000-500) = 400000 + 900000 = 1.3e6;
 * 1.3e6 / (2 * 1000 * 1000) - 0.5 = 0.15. */
static void area_by_hand(void **state)
{
    double P[] = {500, 1000}, T[] = {800, 1000}, v;
    assert_int_equal(pfi_index_area(P, T, 2, &v), PFI_OK);
    assert_near(v, 0.15, 1e-12);
}

/* T = k P^0.3 exactly: alpha = 0.3, PFI_ce = 0.7. */
static void ce_power_law(void **state)
{
    double P[] = {1600, 2400, 3200, 4000, 4800, 5600}, T[6], v;
    for (size_t i = 0; i < 6; i++)
        T[i] = 42.0 * pow(P[i], 0.3);
    assert_int_equal(pfi_index_ce(P, T, 6, &v), PFI_OK);
    assert_near(v, 0.7, 1e-12);
    double Pc[] = {5, 5}, Tc[] = {1, 2};
    assert_int_equal(pfi_index_ce(Pc, Tc, 2, &v), PFI_EUNDEFINED);
}

/* A capped run at or above Tmax has no ratio: excluded and marked, others kept. */
static void exclusion_at_or_above_tmax(void **state)
{
    double P[] = {400, 600, 800, 1000}, T[] = {700, 1000, 1010, 1000}, v;
    int excl[4] = {9, 9, 9, 9};
    assert_int_equal(pfi_index_ratio(P, T, 4, excl, &v), PFI_OK);
    assert_near(v, 2.0, 1e-12); /* only the 400 W term: 0.6 / 0.3 */
    assert_int_equal(excl[0], PFI_EXCL_NONE);
    assert_int_equal(excl[1], PFI_EXCL_TPUT_AT_MAX);
    assert_int_equal(excl[2], PFI_EXCL_TPUT_AT_MAX);
    assert_int_equal(excl[3], PFI_EXCL_NONE);
    assert_true(strlen(pfi_index_exclusion_reason(PFI_EXCL_TPUT_AT_MAX)) > 0);

    double P2[] = {800, 1000}, T2[] = {1000, 1000};
    v = 123;
    assert_int_equal(pfi_index_ratio(P2, T2, 2, excl, &v), PFI_EUNDEFINED);
    assert_near(v, 123, 0); /* untouched: no inf, no NaN */
}

static pfi_sweeps *six_cap_group(void)
{
    /* Per-GPU caps 200..700 W on 8 GPUs; throughput by hand below. */
    static const double caps[] = {200, 300, 400, 500, 600, 700};
    static const double power[] = {1600, 2400, 3200, 4000, 4700, 5400};
    static const double tput[] = {6000, 7600, 8600, 9300, 9800, 10000};
    pfi_sweeps *s = pfi_sweeps_create();
    pfi_group_meta m = {"H200", "m", "dense", "pt", "", 8};
    for (size_t i = 0; i < 6; i++) {
        pfi_run r = {.cap_w = caps[i], .power_w = power[i], .tput = tput[i], .line = (long)i + 2};
        assert_int_equal(pfi_sweeps_add_run(s, "g", &m, &r, "x.csv", NULL), PFI_OK);
    }
    assert_int_equal(pfi_sweeps_finalize(s, 0, "x.csv", NULL), PFI_OK);
    return s;
}

/* Table 9's question: PFI on the 4-cap grid 200/500/600/700 keeps only those
 * runs. By hand: 200 W: (1-1600/5400)/(1-0.6) = 1.759259; 500 W:
 * (1-4000/5400)/(1-0.93) = 3.703704; 600 W: (1-4700/5400)/(1-0.98) = 6.481481;
 * mean 3.981481. The full grid adds 300 W: (1-2400/5400)/(1-0.76) = 2.314815
 * and 400 W: (1-3200/5400)/(1-0.86) = 2.910053; mean over five 3.433862. */
static void subgrid_recomputation(void **state)
{
    pfi_sweeps *s = six_cap_group(), *sub = NULL;
    pfi_index_result r;
    assert_int_equal(pfi_index_group(pfi_sweeps_group(s, 0), PFI_METHOD_RATIO, NULL, &r), 0);
    assert_near(r.pfi, 3.433862, 1e-6);
    double grid[] = {200, 500, 600, 700};
    pfi_error err = {0};
    assert_int_equal(pfi_sweeps_subgrid(s, grid, 4, &sub, &err), PFI_OK);
    assert_int_equal(pfi_sweeps_group(sub, 0)->n_runs, 4);
    assert_int_equal(pfi_index_group(pfi_sweeps_group(sub, 0), PFI_METHOD_RATIO, NULL, &r), 0);
    assert_near(r.pfi, 3.981481, 1e-6);
    pfi_sweeps_destroy(sub);

    /* A grid without the uncapped cap, or leaving one run, is an error. */
    double no_top[] = {200, 500};
    assert_int_equal(pfi_sweeps_subgrid(s, no_top, 2, &sub, &err), PFI_EINVAL);
    assert_null(sub);
    assert_non_null(strstr(err.msg, "uncapped"));
    double only_top[] = {700};
    assert_int_equal(pfi_sweeps_subgrid(s, only_top, 1, &sub, &err), PFI_ENODATA);
    assert_null(sub);
    pfi_sweeps_destroy(s);
}

/* Hyndman-Fan type 7 by hand: [1,2,3,4] median = 2.5, q=0.25 -> 1 + 0.75 = 1.75,
 * q=0.9 -> h = 2.7 -> 3 + 0.7 = 3.7. */
static void quantiles_type7(void **state)
{
    double a[] = {4, 1, 3, 2};
    assert_near(pfi_quantile_select(a, 4, 0.5), 2.5, 1e-12);
    double b[] = {4, 1, 3, 2};
    assert_near(pfi_quantile_select(b, 4, 0.25), 1.75, 1e-12);
    double c[] = {4, 1, 3, 2};
    assert_near(pfi_quantile_select(c, 4, 0.9), 3.7, 1e-12);
    double d[] = {7};
    assert_near(pfi_quantile_select(d, 1, 0.975), 7, 0);
    /* Many ties and a long array against a full sort. */
    double e[1001], f[1001];
    for (int i = 0; i < 1001; i++)
        e[i] = f[i] = (double)((i * 7919) % 37);
    for (int i = 0; i < 1001; i++)
        for (int j = i + 1; j < 1001; j++)
            if (f[j] < f[i]) {
                double t = f[i];
                f[i] = f[j];
                f[j] = t;
            }
    double h = 1000 * 0.025;
    assert_near(pfi_quantile_select(e, 1001, 0.025), f[25] + (h - 25) * (f[26] - f[25]), 1e-12);
}

/* A capped run that ties the uncapped throughput (T == Tmax) has no defined
 * ratio: it is excluded, and n_terms (the capped runs in the ratio) must not
 * count it. Runs: (400, 700), (600, 1000) tied, (800, 1000) tied, (1000, 1000)
 * uncapped: one term, (1 - .4)/(1 - .7) = 2. */
static void n_terms_skips_ties(void **state)
{
    pfi_sweeps *s = pfi_sweeps_create();
    pfi_group_meta m = {"", "m", "dense", "pt", "", 1};
    const double P[] = {400, 600, 800, 1000}, T[] = {700, 1000, 1000, 1000};
    for (int i = 0; i < 4; i++) {
        pfi_run r = {.cap_w = 200.0 * (i + 2), .power_w = P[i], .tput = T[i]};
        assert_int_equal(pfi_sweeps_add_run(s, "g", &m, &r, NULL, NULL), PFI_OK);
    }
    assert_int_equal(pfi_sweeps_finalize(s, 0, NULL, NULL), PFI_OK);
    pfi_index_result r;
    int excl[4] = {0};
    assert_int_equal(pfi_index_group(pfi_sweeps_group(s, 0), PFI_METHOD_ALL, excl, &r), PFI_OK);
    assert_true(r.has_pfi);
    assert_near(r.pfi, 2.0, 1e-12);
    assert_int_equal(r.n_terms, 1);
    pfi_sweeps_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(linear_job),
        cmocka_unit_test(many_runs),
        cmocka_unit_test(n_terms_skips_ties),
        cmocka_unit_test(keeps_98_at_95),
        cmocka_unit_test(paper_section2_examples),
        cmocka_unit_test(ratio_mean_of_terms),
        cmocka_unit_test(area_by_hand),
        cmocka_unit_test(ce_power_law),
        cmocka_unit_test(exclusion_at_or_above_tmax),
        cmocka_unit_test(subgrid_recomputation),
        cmocka_unit_test(quantiles_type7),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
