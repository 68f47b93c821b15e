/* OLS, LOO/LOCO cross-validation and leverage on hand-computed data. */
#include "test_util.h"

#include <string.h>

#include "pfi/model.h"

/* x = 0,1,2,3, y = 1,3,2,5. By hand: xbar 1.5, ybar 2.75, Sxx 5, Sxy 5.5,
 * slope 1.1, intercept 1.1; fitted 1.1,2.2,3.3,4.4, residuals -.1,.8,-1.3,.6,
 * SSR 2.7, SST 8.75, R2 = 1 - 2.7/8.75 = 0.691429.
 * LOO by the PRESS identity e_i / (1 - h_i), h_i = 1/4 + (x_i - 1.5)^2 / 5 =
 * .7,.3,.3,.7: LOO residuals -1/3, 8/7, -13/7, 2; PRESS = 8.866213;
 * R2_oos = 1 - 8.866213/8.75 = -0.013281; RMSE = sqrt(PRESS/4) = 1.488807;
 * held-out predictions 4/3, 13/7, 27/7, 3 rank 1,2,4,3 against y's 1,3,2,4:
 * sum d^2 = 0+1+4+1 = 6, rho = 1 - 36/60 = 0.4. */
static void ols_and_loo_by_hand(void **state)
{
    double X[] = {0, 1, 2, 3}, y[] = {1, 3, 2, 5};
    pfi_ols m;
    pfi_error err;
    assert_int_equal(pfi_model_ols(X, y, 4, 1, &m, &err), PFI_OK);
    assert_near(m.coef[0], 1.1, 1e-12);
    assert_near(m.coef[1], 1.1, 1e-12);
    assert_near(m.r2, 1 - 2.7 / 8.75, 1e-12);
    assert_near(m.rmse, sqrt(2.7 / 4), 1e-12);
    double x5 = 5;
    assert_near(pfi_model_predict(&m, &x5), 1.1 + 5.5, 1e-12);

    pfi_cv cv;
    double pred[4];
    assert_int_equal(pfi_model_cv(X, y, 4, 1, NULL, 0, pred, &cv, &err), PFI_OK);
    double press = 1.0 / 9 + 64.0 / 49 + 169.0 / 49 + 4;
    assert_near(cv.r2_in, 1 - 2.7 / 8.75, 1e-12);
    assert_near(cv.r2_oos, 1 - press / 8.75, 1e-12);
    assert_near(cv.r2_oos, -0.013281, 1e-6);
    assert_near(cv.rmse, sqrt(press / 4), 1e-12);
    assert_near(pred[0], 4.0 / 3, 1e-12);
    assert_near(pred[2], 27.0 / 7, 1e-12);
    assert_true(cv.has_rho);
    assert_near(cv.rho, 0.4, 1e-12);
    assert_int_equal(cv.folds, 4);

    /* LOCO with one row per fold is LOO */
    size_t fold[] = {0, 1, 2, 3};
    pfi_cv cv2;
    assert_int_equal(pfi_model_cv(X, y, 4, 1, fold, 4, NULL, &cv2, &err), PFI_OK);
    assert_near(cv2.r2_oos, cv.r2_oos, 1e-12);
}

/* LOCO by hand: x = 0..5, y = 0,2,1,3,4,5, folds A = rows 0-2, B = rows 3-5.
 * Fit on B: y = x exactly -> predicts A as 0,1,2. Fit on A: xbar 1, ybar 1,
 * Sxy = 1, Sxx = 2 -> y = .5 + .5x -> predicts B as 2, 2.5, 3.
 * Residuals 0,1,-1,1,1.5,2: SSR 9.25; SST around the full mean 2.5 is 17.5;
 * R2_oos = 1 - 9.25/17.5 = 0.471429 (an R2 around each fold's own mean would
 * differ: the definition uses the full-sample mean). RMSE sqrt(9.25/6). */
static void loco_by_hand(void **state)
{
    double X[] = {0, 1, 2, 3, 4, 5}, y[] = {0, 2, 1, 3, 4, 5};
    size_t fold[] = {0, 0, 0, 1, 1, 1};
    pfi_cv cv;
    double pred[6];
    pfi_error err;
    assert_int_equal(pfi_model_cv(X, y, 6, 1, fold, 2, pred, &cv, &err), PFI_OK);
    const double want[] = {0, 1, 2, 2, 2.5, 3};
    for (int i = 0; i < 6; i++)
        assert_near(pred[i], want[i], 1e-12);
    assert_near(cv.r2_oos, 1 - 9.25 / 17.5, 1e-12);
    assert_near(cv.rmse, sqrt(9.25 / 6), 1e-12);
    assert_int_equal(cv.folds, 2);
}

/* Two features on wildly different scales (bytes/s next to a ratio) and an
 * exact plane y = 1 + 2e-11 a - 3 b: the standardised fit recovers the raw
 * coefficients and R2 = 1. */
static void two_features_exact(void **state)
{
    double a[] = {1e11, 2e11, 3e11, 5e11, 8e11, 13e11}, b[] = {0.1, 0.4, 0.2, 0.9, 0.3, 0.7};
    double X[12], y[6];
    for (int i = 0; i < 6; i++) {
        X[2 * i] = a[i];
        X[2 * i + 1] = b[i];
        y[i] = 1 + 2e-11 * a[i] - 3 * b[i];
    }
    pfi_ols m;
    pfi_error err;
    assert_int_equal(pfi_model_ols(X, y, 6, 2, &m, &err), PFI_OK);
    assert_near(m.coef[0], 1, 1e-9);
    assert_near(m.coef[1] * 1e11, 2, 1e-9);
    assert_near(m.coef[2], -3, 1e-9);
    assert_near(m.r2, 1, 1e-12);
}

static void bad_designs(void **state)
{
    pfi_ols m;
    pfi_cv cv;
    pfi_error err;
    /* constant feature */
    double Xc[] = {2, 2, 2, 2}, y[] = {1, 2, 3, 4};
    assert_int_equal(pfi_model_ols(Xc, y, 4, 1, &m, &err), PFI_EUNDEFINED);
    assert_non_null(strstr(err.msg, "constant"));
    /* collinear: second column = 2 x first */
    double Xs[] = {1, 2, 2, 4, 3, 6, 4, 8, 5, 10};
    double y5[] = {1, 3, 2, 5, 4};
    assert_int_equal(pfi_model_ols(Xs, y5, 5, 2, &m, &err), PFI_EUNDEFINED);
    assert_non_null(strstr(err.msg, "singular"));
    /* too few groups: 3 rows cannot fit 2 features with a residual df */
    double X3[] = {1, 0, 2, 1, 3, 5};
    assert_int_equal(pfi_model_ols(X3, y, 3, 2, &m, &err), PFI_ENODATA);
    /* constant PFI: R2 undefined */
    double x4[] = {1, 2, 3, 4}, yc[] = {1.5, 1.5, 1.5, 1.5};
    assert_int_equal(pfi_model_ols(x4, yc, 4, 1, &m, &err), PFI_EUNDEFINED);
    /* no features, too many features, NaN */
    assert_int_equal(pfi_model_ols(x4, y, 4, 0, &m, &err), PFI_EINVAL);
    assert_int_equal(pfi_model_ols(x4, y, 4, PFI_MODEL_MAX_P + 1, &m, &err), PFI_EINVAL);
    double xn[] = {1, NAN, 3, 4};
    assert_int_equal(pfi_model_ols(xn, y, 4, 1, &m, &err), PFI_EINVAL);
    /* LOCO whose training fold is constant in x: the fold is named */
    double Xf[] = {1, 1, 1, 2, 3, 4};
    double yf[] = {1, 2, 3, 2, 3, 5};
    size_t fold[] = {0, 0, 0, 1, 1, 1};
    assert_int_equal(pfi_model_cv(Xf, yf, 6, 1, fold, 2, NULL, &cv, &err), PFI_EUNDEFINED);
    assert_non_null(strstr(err.msg, "fold 2"));
    /* LOO where one group alone carries a dummy (leverage 1): holding it out
     * leaves a constant feature; the group is named, no NaN */
    double xd[] = {0, 0, 0, 1, 0}, yd[] = {1, 2, 1, 3, 2};
    assert_int_equal(pfi_model_cv(xd, yd, 5, 1, NULL, 0, NULL, &cv, &err), PFI_EUNDEFINED);
    assert_non_null(strstr(err.msg, "group 4 held out"));
    assert_non_null(strstr(err.msg, "constant"));
    /* a single non-empty fold is not a cross-validation */
    size_t one[] = {0, 0, 0, 0};
    assert_int_equal(pfi_model_cv(x4, y, 4, 1, one, 2, NULL, &cv, &err), PFI_ENODATA);
}

/* Leverage h_i = 1/n + (x_i - xbar)^2 / Sxx. x = 0,1,2,3: .7,.3,.3,.7.
 * x = 0,1,2,3,10: xbar 3.2, Sxx 62.8, h_5 = .2 + 46.24/62.8 = 0.936306. */
static void leverage_by_hand(void **state)
{
    double x[] = {0, 1, 2, 3}, h[5];
    pfi_error err;
    assert_int_equal(pfi_model_leverage(x, 4, 1, h, &err), PFI_OK);
    assert_near(h[0], 0.7, 1e-12);
    assert_near(h[1], 0.3, 1e-12);
    assert_near(h[3], 0.7, 1e-12);
    double x2[] = {0, 1, 2, 3, 10};
    assert_int_equal(pfi_model_leverage(x2, 5, 1, h, &err), PFI_OK);
    assert_near(h[4], 0.2 + 46.24 / 62.8, 1e-12);
    double sum = 0;
    for (int i = 0; i < 5; i++)
        sum += h[i];
    assert_near(sum, 2, 1e-12); /* trace of the hat matrix = p + 1 */
}

/* Table 12's procedure: x = 0,1,2,3,10,4, y = 1,2,4,3,0,5. Leverage order:
 * x = 10 (row 4) first, then x = 0 (row 0; the mean is 10/3 with 10 gone...
 * leverage is computed once on all rows: xbar = 20/6 = 3.333, distances
 * 3.33,2.33,1.33,.33,6.67,.67 -> order rows 4, 0, 1). k = 0: ranks x
 * 1,2,3,4,6,5 vs y 2,3,5,4,1,6: d = -1,-1,-2,0,5,-1, sum d^2 = 32,
 * rho = 1 - 192/210 = 0.085714. k = 1 (row 4 gone): x 0,1,2,3,4 vs y
 * 1,2,4,3,5: sum d^2 = 2, rho = 1 - 12/120 = 0.9. k = 2 (row 0 gone):
 * x 1,2,3,4 vs y 2,4,3,5: sum d^2 = 2, rho = 1 - 12/60 = 0.8. */
static void leverage_drop_by_hand(void **state)
{
    double x[] = {0, 1, 2, 3, 10, 4}, y[] = {1, 2, 4, 3, 0, 5};
    pfi_leverage_step s[3];
    pfi_error err;
    assert_int_equal(pfi_model_leverage_drop(x, y, 6, 2, s, &err), PFI_OK);
    assert_int_equal(s[0].n, 6);
    assert_near(s[0].rho, 1 - 192.0 / 210, 1e-12);
    assert_int_equal(s[1].dropped, 4);
    assert_near(s[1].rho, 0.9, 1e-12);
    assert_int_equal(s[2].dropped, 0);
    assert_int_equal(s[2].n, 4);
    assert_near(s[2].rho, 0.8, 1e-12);
    assert_int_equal(pfi_model_leverage_drop(x, y, 6, 6, s, &err), PFI_ENODATA);
}

/* Validation on held-out rows: model y = 1 + x applied to x = 1,2,3 with
 * y = 2,3,5: residuals 0,0,1, SSR 1, SST around 10/3 = 4.6667, R2 = 0.785714. */
static void validation_by_hand(void **state)
{
    pfi_ols m = {.p = 1, .n = 10, .coef = {1, 1}};
    double X[] = {1, 2, 3}, y[] = {2, 3, 5};
    pfi_validation v;
    assert_int_equal(pfi_model_validate(&m, X, y, 3, &v), PFI_OK);
    assert_true(v.has_r2);
    assert_near(v.r2, 1 - 1 / (14.0 / 3), 1e-12);
    assert_near(v.rmse, sqrt(1.0 / 3), 1e-12);
    assert_near(v.rho, 1, 1e-12);
    /* one held-out group: no R2, no rho, still an RMSE */
    assert_int_equal(pfi_model_validate(&m, X, y, 1, &v), PFI_OK);
    assert_false(v.has_r2);
    assert_false(v.has_rho);
    assert_near(v.rmse, 0, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ols_and_loo_by_hand), cmocka_unit_test(loco_by_hand),
        cmocka_unit_test(two_features_exact),  cmocka_unit_test(bad_designs),
        cmocka_unit_test(leverage_by_hand),    cmocka_unit_test(leverage_drop_by_hand),
        cmocka_unit_test(validation_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
