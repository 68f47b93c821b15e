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
 * force a period, and dropped when nothing is controlled; it cannot wind
 * up (issue 27): at most a quarter of the budget (250 W of 1,000 W, where
 * it grew to the whole budget), frozen while readings are missing (a tenth
 * decays each such period: 250 W, 225 W) and not integrated on the first
 * period after;
 *
 * a GPU's ceiling is its prior (issue 27): a GPU whose site limit is 600 W
 * on a 700 W maximum (limits.prior_w, or the prior of pfid's cap, or the
 * limit in force when uncapped) is planned and counted at 600 W. */
#include "test_util.h"

#include <string.h>

#include "control/ctl_internal.h"
#include "pfi/cluster.h"

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
    assert_near(ctl_trim_update(&t, 1, 1, 1, 1000, 1100), 100, 1e-12); /* over: at once */
    assert_near(ctl_trim_update(&t, 1, 1, 1, 1000, 960), 90, 1e-12);   /* under: a quarter */
    assert_near(ctl_trim_update(&t, 1, 0, 1, 1000, 1500), 90, 1e-12);  /* not settled: held */
    assert_near(ctl_trim_update(&t, 1, 1, 1, 1000, 0), 0, 1e-12);      /* never below 0 */
    t.w = 50;
    assert_near(ctl_trim_update(&t, 0, 1, 1, 1000, 1500), 0, 0); /* not controlling */
}

static void test_trim_cannot_wind_up(void **st)
{
    (void)st;
    ctl_trim t = {0};
    assert_near(ctl_trim_update(&t, 1, 1, 1, 1000, 3000), 250, 1e-12); /* bounded */
    assert_near(ctl_trim_update(&t, 1, 1, 0, 1000, 9000), 225, 1e-9);  /* missing: frozen */
    assert_near(ctl_trim_update(&t, 1, 1, 1, 1000, 9000), 225, 1e-9);  /* first one after */
    assert_near(ctl_trim_update(&t, 1, 1, 1, 1000, 900), 200, 1e-9);   /* then as before */
}

/* GPU i's listing: limits with max 700 W, and prior (JSON text) */
#define GPU(i, lim, cap)                                                                           \
    "{\"gpu\":" #i ",\"up\":true,\"sample\":{\"power_watts\":300},\"limits\":{\"min_w\":200,"      \
    "\"max_w\":700" lim "},\"cap\":" cap "}"

static void test_prior_is_the_ceiling(void **st)
{
    (void)st;
    static const char *const gpus =
        "{\"gpus\":[" GPU(0, ",\"enforced_w\":700,\"prior_w\":600", "null") "," GPU(
            1, ",\"enforced_w\":600",
            "null") "," GPU(2, ",\"enforced_w\":450",
                            "{\"watts\":450,\"prior_w\":600}") "," GPU(3, "", "null") "]}";
    static const char *const jobs =
        "{\"jobs\":[{\"id\":\"j\",\"gpus\":[0,1,2],\"phase\":\"training\"}]}";
    pfi_cl_node nd = {0};
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_cl_parse_gpus(gpus, strlen(gpus), &nd, &err) != PFI_OK ||
        pfi_cl_parse_jobs(jobs, strlen(jobs), &nd, &err) != PFI_OK)
        fail_msg("%s", err.msg);
    for (int g = 0; g < 3; g++)
        assert_near(ctl_gpu_counted_max(&nd.gpus[g]), 600, 0);
    assert_near(ctl_gpu_counted_max(&nd.gpus[3]), 700, 0); /* nothing known but its maximum */
    ctl_jobs J;
    memset(&J, 0, sizeof J);
    double fixed = 0, measured = 0, live = 0;
    ctl_carry *k = ctl_jobs_begin(&J);
    ctl_merge_node(&J, NULL, k, 0, &nd, &fixed, &measured, &live);
    ctl_jobs_end(k);
    assert_int_equal(J.n, 1);
    assert_near(J.v[0].max_w, 600, 0);
    ctl_jobs_free(&J);
    pfi_cl_node_clear(&nd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_raise_waits_one_period),
                                       cmocka_unit_test(test_trim_unwinds_at_a_quarter),
                                       cmocka_unit_test(test_trim_cannot_wind_up),
                                       cmocka_unit_test(test_prior_is_the_ceiling)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
