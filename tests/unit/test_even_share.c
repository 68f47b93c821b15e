/* pfi_even_shares on hand-computed splits (the node ceiling's). */
#include "test_util.h"

#include "pfi/even_share.h"

static void check(const double *lo, const double *hi, size_t n, double budget, const double *want)
{
    double got[8];
    assert_int_equal(pfi_even_shares(lo, hi, n, budget, got), PFI_OK);
    for (size_t i = 0; i < n; i++) {
        if (isnan(want[i]))
            assert_true(isnan(got[i]));
        else
            assert_near(got[i], want[i], 1e-9);
    }
}

/* 2000 W over four H200s (200-700 W): 500 W each. */
static void even(void **state)
{
    (void)state;
    double lo[] = {200, 200, 200, 200}, hi[] = {700, 700, 700, 700};
    check(lo, hi, 4, 2000, (double[]){500, 500, 500, 500});
}

/* GPU 0 capped at 300 W: the other three share 1700 W, 566.67 W each. */
static void capped_item_leaves_the_rest(void **state)
{
    (void)state;
    double lo[] = {200, 200, 200, 200}, hi[] = {300, 700, 700, 700};
    check(lo, hi, 4, 2000, (double[]){300, 1700.0 / 3, 1700.0 / 3, 1700.0 / 3});
}

/* Over the highs' sum: every item at its hi; under the lows': at its lo. */
static void beyond_the_bounds(void **state)
{
    (void)state;
    double lo[] = {200, 200, 200, 200}, hi[] = {300, 700, 700, 700};
    check(lo, hi, 4, 3000, hi);
    check(lo, hi, 4, 2400, hi);
    check(lo, hi, 4, 500, lo);
    check(lo, hi, 4, 800, lo);
}

/* Different lows: 300 W over lo {100, 200}: at L = 100 the sum is 100 + 200. */
static void different_lows(void **state)
{
    (void)state;
    double lo[] = {100, 200}, hi[] = {700, 700};
    check(lo, hi, 2, 300, (double[]){100, 200});
    /* 500 W: L + L = 500 once both are over their lows, L = 250 */
    check(lo, hi, 2, 500, (double[]){250, 250});
    /* 350 W: L + 200 = 350 with L in [100, 200], L = 150 */
    check(lo, hi, 2, 350, (double[]){150, 200});
}

/* An item without a usable hi (no limit known) takes no part. */
static void unknown_item_skipped(void **state)
{
    (void)state;
    double lo[] = {200, 200}, hi[] = {NAN, 700};
    check(lo, hi, 2, 400, (double[]){NAN, 400});
    double got[1];
    assert_int_equal(pfi_even_shares(lo, (double[]){NAN}, 1, 400, got), PFI_OK);
    assert_true(isnan(got[0]));
}

static void bad_input(void **state)
{
    (void)state;
    double got[2] = {-1, -1};
    double lo[] = {200, 200}, hi[] = {700, 700};
    assert_int_equal(pfi_even_shares(lo, hi, 2, -1, got), PFI_EINVAL);
    assert_int_equal(pfi_even_shares(lo, hi, 2, NAN, got), PFI_EINVAL);
    assert_int_equal(pfi_even_shares(lo, hi, 2, INFINITY, got), PFI_EINVAL);
    assert_int_equal(pfi_even_shares(lo, (double[]){700, 100}, 2, 500, got), PFI_EINVAL);
    assert_int_equal(pfi_even_shares((double[]){NAN, 200}, hi, 2, 500, got), PFI_EINVAL);
    assert_near(got[0], -1, 0); /* untouched */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(even),
        cmocka_unit_test(capped_item_leaves_the_rest),
        cmocka_unit_test(beyond_the_bounds),
        cmocka_unit_test(different_lows),
        cmocka_unit_test(unknown_item_skipped),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
