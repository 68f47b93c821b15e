/* Two rules of the controller's period, by hand values:
 *
 * a raise waits one period (ctl_caps_next): a job whose plan goes from
 * 400 W to 500 W per GPU keeps 400 W this period and gets 500 W the next,
 * while a cut (to 300 W) is pushed at once; caps on the 5 W step, down,
 * and up for a job at its floor;
 *
 * the trim (ctl_trim_update): an excess of 100 W over a 1,000 W budget is
 * taken off at once; a deficit of 40 W gives back a quarter, 10 W (all of
 * it, 40 W, would undo the trim at the next wobble and swing the site back
 * over); it is held until the caps planned under the budget have been in
 * force a period, and dropped when nothing is controlled. */
#include "test_util.h"

#include "control/ctl_internal.h"

static void test_raise_waits_one_period(void **st)
{
    (void)st;
    double last = NAN;
    assert_near(ctl_caps_next(402, 0, 200, 700, &last), 400, 0); /* first plan: no wait */
    assert_near(last, 400, 0);
    assert_near(ctl_caps_next(503, 0, 200, 700, &last), 400, 0); /* the raise waits */
    assert_near(last, 500, 0);
    assert_near(ctl_caps_next(503, 0, 200, 700, &last), 500, 0); /* and comes a period later */
    assert_near(ctl_caps_next(302, 0, 200, 700, &last), 300, 0); /* a cut is at once */
    assert_near(ctl_caps_next(301, 1, 200, 700, &last), 300, 0); /* at its floor: up, 305 waits */
    assert_near(last, 305, 0);
    assert_near(ctl_caps_next(900, 0, 200, 700, &last), 305, 0);
    assert_near(ctl_caps_next(900, 0, 200, 700, &last), 700, 0); /* within the GPU's range */
    assert_near(ctl_caps_next(10, 0, 200.4, 700, &last), 201, 0);
}

static void test_trim_unwinds_at_a_quarter(void **st)
{
    (void)st;
    ctl_trim t = {0};
    assert_near(ctl_trim_update(&t, 1, 1, 1000, 1100), 100, 1e-12); /* over: at once */
    assert_near(ctl_trim_update(&t, 1, 1, 1000, 960), 90, 1e-12);   /* under: a quarter */
    assert_near(ctl_trim_update(&t, 1, 0, 1000, 1500), 90, 1e-12);  /* not settled: held */
    assert_near(ctl_trim_update(&t, 1, 1, 1000, 0), 0, 1e-12);      /* never below 0 */
    t.w = 50;
    assert_near(ctl_trim_update(&t, 0, 1, 1000, 1500), 0, 0); /* not controlling */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_raise_waits_one_period),
                                       cmocka_unit_test(test_trim_unwinds_at_a_quarter)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
