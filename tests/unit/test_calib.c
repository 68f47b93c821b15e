/* Job calibration (calib.h): hits reachable targets on both grids, reports
 * unreachable ones, and its sweep/PFI helpers agree with the index module. */
#include "test_util.h"

#include "pfi/calib.h"
#include <string.h>

#include "pfi/index.h"

static const double caps6[] = {200, 300, 400, 500, 600, 700};

static pfi_job_model base(void)
{
    return (pfi_job_model){
        .sm_activity = 0.9, .dram_activity = 0.35, .tensor_ratio = 0.4, .tput_per_gpu = 1000};
}

static void test_pfi_helper_matches_index(void **state)
{
    (void)state;
    pfi_job_model j = base();
    j.compute_frac = 0.7;
    double P[6], T[6], pfi, pfi4, want, want4;
    assert_int_equal(pfi_calib_sweep(pfi_gpumodel_h200(), &j, caps6, 6, NULL, NULL, P, T), PFI_OK);
    assert_int_equal(pfi_index_ratio(P, T, 6, NULL, &want), PFI_OK);
    /* 4-cap grid by hand: runs 0 (200 W), 3, 4, 5 (500, 600, 700 W). */
    double P4[4] = {P[0], P[3], P[4], P[5]}, T4[4] = {T[0], T[3], T[4], T[5]};
    assert_int_equal(pfi_index_ratio(P4, T4, 4, NULL, &want4), PFI_OK);
    assert_int_equal(pfi_calib_pfi(pfi_gpumodel_h200(), &j, caps6, 6, NULL, NULL, &pfi, &pfi4),
                     PFI_OK);
    assert_near(pfi, want, 1e-12);
    assert_near(pfi4, want4, 1e-12);
    /* Noise multiplies each run: +1% on the uncapped throughput lowers every
     * 1 - T/Tmax, so PFI falls. */
    double nt[6] = {0, 0, 0, 0, 0, 0.01}, noisy;
    assert_int_equal(pfi_calib_pfi(pfi_gpumodel_h200(), &j, caps6, 6, NULL, nt, &noisy, NULL),
                     PFI_OK);
    assert_true(noisy < pfi);
}

static void test_fit_hits_targets(void **state)
{
    (void)state;
    pfi_job_model b = base(), out;
    pfi_calib_report rep;
    /* Both shapes of Table 9: 4-cap above and below the 6-cap PFI. The
     * second shape (gpt-oss-20b EP1, no compile) needs a job that is not
     * clock-limited uncapped (demand 657 W < 700 W: sm 0.8): its first
     * binding caps bring the slowest GPU's lag. */
    const double targets[][3] = {
        {1.30, 1.45, 0.9}, {1.80, 2.00, 0.9}, {1.24, 1.16, 0.8}, {2.5, 0, 0.9}};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        b.sm_activity = targets[i][2];
        assert_int_equal(pfi_calib_fit(pfi_gpumodel_h200(), &b, caps6, 6, NULL, NULL, targets[i][0],
                                       targets[i][1], &out, &rep, NULL),
                         PFI_OK);
        assert_near(rep.pfi, targets[i][0], 0.002);
        if (targets[i][1] > 0) assert_near(rep.pfi_4cap, targets[i][1], 0.002);
        /* The calibrated job keeps the caller's activities and throughput. */
        assert_near(out.sm_activity, b.sm_activity, 0);
        assert_near(out.tput_per_gpu, b.tput_per_gpu, 0);
        double pfi;
        assert_int_equal(pfi_calib_pfi(pfi_gpumodel_h200(), &out, caps6, 6, NULL, NULL, &pfi, NULL),
                         PFI_OK);
        assert_near(pfi, rep.pfi, 1e-12);
    }
}

static void test_unreachable_and_bad_args(void **state)
{
    (void)state;
    pfi_job_model b = base(), out;
    pfi_error err;
    /* PFI 0.3: throughput would have to fall three times faster than power. */
    assert_int_equal(
        pfi_calib_fit(pfi_gpumodel_h200(), &b, caps6, 6, NULL, NULL, 0.3, 0, &out, NULL, &err),
        PFI_EINFEASIBLE);
    assert_non_null(strstr(err.msg, "missed"));
    assert_int_equal(
        pfi_calib_fit(pfi_gpumodel_h200(), &b, caps6, 1, NULL, NULL, 1.3, 0, &out, NULL, &err),
        PFI_EINVAL);
    assert_int_equal(pfi_calib_fit(NULL, &b, caps6, 6, NULL, NULL, 1.3, 0, &out, NULL, NULL),
                     PFI_EINVAL);
    double P[6], T[6];
    const double bad_caps[] = {100, 700};
    assert_int_equal(pfi_calib_sweep(pfi_gpumodel_h200(), &b, bad_caps, 2, NULL, NULL, P, T),
                     PFI_ERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pfi_helper_matches_index),
        cmocka_unit_test(test_fit_hits_targets),
        cmocka_unit_test(test_unreachable_and_bad_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
