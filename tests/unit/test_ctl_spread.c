/* The variance arithmetic of the controller's learn readings
 * (src/control/ctl_spread.c), against values computed by hand. */
#include "test_util.h"

#include <math.h>

#include "control/ctl_spread.h"

/* A job on three nodes reporting 3, 4 and 12 tokens/s of SD: the sum's
 * variance 9 + 16 + 144 = 169, its SD 13. */
static void test_sum_of_nodes(void **st)
{
    (void)st;
    double v = 0;
    v = ctl_spread_add(v, 3);
    assert_true(fabs(v - 9) < 1e-12);
    v = ctl_spread_add(v, 4);
    v = ctl_spread_add(v, 12);
    assert_true(fabs(v - 169) < 1e-12);
    assert_true(fabs(ctl_spread_sd(v) - 13) < 1e-12);
    /* one node unknown: the whole sum is (not the known part's 9) */
    assert_true(isnan(ctl_spread_add(9, NAN)));
    assert_true(isnan(ctl_spread_add(NAN, 3)));
    assert_true(isnan(ctl_spread_add(9, -1)));
    assert_true(isnan(ctl_spread_add(9, INFINITY)));
}

/* a = 0.3, one report's variance 1, the first term the mean (variance 1):
 * after term 2: 0.49 + 0.09 = 0.58; term 3: 0.49 * 0.58 + 0.09 = 0.3742;
 * the limit 0.3 / 1.7 = 0.17647058823529413. */
static void test_ewma(void **st)
{
    (void)st;
    double v = 1;
    v = ctl_spread_ewma(v, 1, 0.3);
    assert_true(fabs(v - 0.58) < 1e-12);
    v = ctl_spread_ewma(v, 1, 0.3);
    assert_true(fabs(v - 0.3742) < 1e-12);
    for (int i = 0; i < 200; i++)
        v = ctl_spread_ewma(v, 1, 0.3);
    assert_true(fabs(v - 0.17647058823529413) < 1e-12);
    /* terms of variance 4 after a mean of variance 0.5: 0.49 * 0.5 + 0.09 * 4 */
    assert_true(fabs(ctl_spread_ewma(0.5, 4, 0.3) - 0.605) < 1e-12);
    assert_true(isnan(ctl_spread_ewma(NAN, 1, 0.3)));
    assert_true(isnan(ctl_spread_ewma(1, NAN, 0.3)));
}

/* unknown is given to learn as exact (0), never as NaN (which it refuses) */
static void test_sd(void **st)
{
    (void)st;
    assert_true(ctl_spread_sd(NAN) == 0);
    assert_true(ctl_spread_sd(-1) == 0);
    assert_true(ctl_spread_sd(INFINITY) == 0);
    assert_true(fabs(ctl_spread_sd(2.25) - 1.5) < 1e-15);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_sum_of_nodes),
        cmocka_unit_test(test_ewma),
        cmocka_unit_test(test_sd),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
