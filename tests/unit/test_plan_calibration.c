/* The calibration of the controller's promises (issue 29): on seeded sim
 * fleets whose jobs' true curves are drawn from tests/families (the mix of
 * every family, and the embedded dataset's groups), 1% reading noise, four
 * events of 12 periods with a quarter of the jobs replaced between events
 * (tests/families/calib.h):
 *   - the realised throughput is at or above the plan's 90% lower bound in
 *     at least 90% of the periods;
 *   - from the second event on, |expected - realised| / realised <= 5% on
 *     average per event;
 *   - the caps never draw more than the budget;
 *   - deliberately mislabelled classes (two groups' jobs under each label)
 *     cost nothing against no class: the same coverage bar, no period over
 *     the budget, the throughput realised within 0.1% of no class's;
 *   - the same with the learn policy on the mix (its loop pools classes
 *     too, learn_class.c), mislabelled classes within 0.3% of no class's
 *     throughput (measured 0.12% under; 2.5% under while pairs of
 *     classmates never read at one share of Pmax pooled unchecked), the
 *     event error within 5% as well (4.33% at worst, class; 5.87% before
 *     each job's own readings priced it, plan_cliff.h);
 *   - learn on the dead-zone family, per event and class setting
 *     (test_dead_zone_learn). */
#include "test_util.h"

#include "calib.h"

typedef struct tally {
    size_t periods, covered, over;
    double realised, worst_err;
} tally;

static tally run(fam_kind f, calib_classes c, pfi_plan_policy policy)
{
    tally t = {0};
    for (unsigned long seed = 1; seed <= 3; seed++) {
        calib_opts o = calib_defaults();
        o.family = f;
        o.seed = seed;
        o.classes = c;
        o.policy = policy;
        calib_event ev[4];
        pfi_error err;
        pfi_error_clear(&err);
        if (calib_run(&o, ev, &err) != PFI_OK) fail_msg("%s", err.msg);
        for (size_t e = 0; e < o.events; e++) {
            t.periods += ev[e].periods;
            t.covered += ev[e].covered;
            t.over += ev[e].over;
            t.realised += ev[e].realised;
            if (e > 0 && ev[e].err_mean > t.worst_err) t.worst_err = ev[e].err_mean;
        }
    }
    return t;
}

static void check(fam_kind f, pfi_plan_policy policy, double err_bar, double slack)
{
    tally none = run(f, CALIB_NO_CLASS, policy), cls = run(f, CALIB_CLASS, policy),
          bad = run(f, CALIB_MISLABELLED, policy);
    const tally *all[] = {&none, &cls, &bad};
    for (int k = 0; k < 3; k++) {
        double cov = (double)all[k]->covered / (double)all[k]->periods;
        print_message("%s %s classes %d: coverage %.3f over %zu periods, worst event error "
                      "%.4f, realised %.1f\n",
                      fam_name(f), pfi_plan_policy_name(policy), k, cov, all[k]->periods,
                      all[k]->worst_err, all[k]->realised);
        assert_true(cov >= 0.9);
        assert_true(all[k]->worst_err <= err_bar);
        assert_int_equal(all[k]->over, 0);
    }
    assert_true(bad.realised >= none.realised * (1 - slack));
}

static void test_mix(void **st)
{
    (void)st;
    check(FAM_MIX, PFI_PLAN_PFI, 0.05, 1e-3);
}

static void test_mix_learn(void **st)
{
    (void)st;
    /* 4.33% in its worst event (class; docs/learn.md, "Learn's
     * promises"); seen failing at 5.87% (no class) before the job's own readings
     * priced it under its points */
    check(FAM_MIX, PFI_PLAN_LEARN, 0.05, 3e-3);
}

/* Learn on dead zones (the realised throughput collapses below a share of
 * Pmax that no reading above it shows; learn's first round of an event is
 * the equal share, deeper than any reading at 55% of the uncapped power):
 * in every event and for every class setting the realised throughput is at
 * or above the 90% bound in at least 90% of the periods (seen failing
 * without plan_cliff.h: 0.69-0.75 in the third event). The expected value
 * is within 4% from the second event on, under the 5% (3.64% at
 * worst, the third event, no class; seen failing at 6.86% before each
 * job's own readings priced it under its lowest point, its samples taken
 * again on the points that later pinned its curve, and at 4.80% before
 * those readings were points of its curve: the third event's first
 * periods put most jobs into dead zones under their points, docs/learn.md). */
static void test_dead_zone_learn(void **st)
{
    (void)st;
    for (int c = 0; c < 3; c++) {
        size_t periods[4] = {0}, covered[4] = {0};
        double err[4] = {0};
        for (unsigned long seed = 1; seed <= 3; seed++) {
            calib_opts o = calib_defaults();
            o.family = FAM_DEAD_ZONE;
            o.seed = seed;
            o.classes = (calib_classes)c;
            o.policy = PFI_PLAN_LEARN;
            calib_event ev[4];
            pfi_error err_;
            pfi_error_clear(&err_);
            if (calib_run(&o, ev, &err_) != PFI_OK) fail_msg("%s", err_.msg);
            for (size_t e = 0; e < 4; e++) {
                periods[e] += ev[e].periods;
                covered[e] += ev[e].covered;
                err[e] += ev[e].err_mean / 3;
                assert_int_equal(ev[e].over, 0);
            }
        }
        for (size_t e = 0; e < 4; e++) {
            double cov = (double)covered[e] / (double)periods[e];
            print_message("dead-zone learn classes %d event %zu: coverage %.3f, error %.4f\n", c,
                          e + 1, cov, err[e]);
            assert_true(cov >= 0.9);
            if (e > 0) assert_true(err[e] <= 0.04);
        }
    }
}

static void test_embedded(void **st)
{
    (void)st;
    check(FAM_EMBEDDED, PFI_PLAN_PFI, 0.05, 1e-3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mix),
        cmocka_unit_test(test_mix_learn),
        cmocka_unit_test(test_dead_zone_learn),
        cmocka_unit_test(test_embedded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
