/* RFC 3339 times and ISO 8601 durations as OpenADR 3 uses them. Expected
 * Unix times from Python's datetime (independent of our calendar code):
 *   python3 -c "import datetime; print(datetime.datetime.fromisoformat(S).timestamp())" */
#include "test_util.h"

#include <string.h>

#include "pfi/ctl_time.h"

static double t_of(const char *s, unsigned *fl)
{
    double t = 0;
    pfi_error err;
    pfi_error_clear(&err);
    int rc = pfi_time_parse(s, 1e9, &t, fl, &err);
    if (rc != PFI_OK) fail_msg("%s: %s", s, err.msg);
    return t;
}

static void test_rfc3339(void **st)
{
    unsigned fl;
    assert_near(t_of("2023-02-10T00:00:00.000Z", &fl), 1675987200.0, 0);
    assert_int_equal(fl, 0);
    assert_near(t_of("2024-06-19T09:51:12.530569Z", &fl), 1718790672.530569, 1e-6);
    assert_near(t_of("2025-03-14T05:30:00+05:30", &fl), 1741910400.0, 0);
    assert_near(t_of("2025-03-14T00:00:00-08:00", &fl), 1741939200.0, 0);
    assert_near(t_of("1969-12-31t23:00:00z", &fl), -3600.0, 0);
    /* A leap second counts as the next second's start (no leap table). */
    assert_near(t_of("2024-02-29T23:59:60Z", &fl), 1709251200.0, 0);
}

/* The openadr-rs fixture's start: seconds left out, tolerated and said. */
static void test_no_seconds(void **st)
{
    unsigned fl;
    assert_near(t_of("2024-01-01T13:37Z", &fl), 1704116220.0, 0);
    assert_true(fl & PFI_TIME_NO_SECONDS);
}

/* Rule: start 0001-01-01 means now. */
static void test_year_one_is_now(void **st)
{
    unsigned fl;
    assert_near(t_of("0001-01-01T00:00:00Z", &fl), 1e9, 0);
    assert_true(fl & PFI_TIME_NOW);
    assert_near(t_of("0001-01-01", &fl), 1e9, 0);
    assert_true(fl & PFI_TIME_NOW);
}

static void test_bad_times(void **st)
{
    /* ug310_ex7.2-4's createdDateTime: a time without a date. */
    const char *bad[] = {"14:13:26",
                         "2023-13-01T00:00:00Z",
                         "2023-02-29T00:00:00Z",
                         "2023-02-10T24:00:00Z",
                         "2023-02-10T00:00:00",
                         "2023-02-10",
                         "2023-02-10T00:00:00Zjunk",
                         "2023-02-10T00:00:00.Z",
                         "",
                         "2023-02-10T00:00:00+5:30"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double t;
        pfi_error err;
        pfi_error_clear(&err);
        int rc = pfi_time_parse(bad[i], 0, &t, NULL, &err);
        if (rc != PFI_EPARSE) fail_msg("'%s' accepted", bad[i]);
        assert_non_null(strstr(err.msg, "RFC 3339"));
    }
}

static double d_of(const char *s, unsigned *fl)
{
    double d = -1;
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_duration_parse(s, &d, fl, &err) != PFI_OK) fail_msg("%s: %s", s, err.msg);
    return d;
}

/* Durations the README lists, hand-computed. */
static void test_durations(void **st)
{
    unsigned fl;
    assert_near(d_of("PT30M", &fl), 1800, 0);
    assert_near(d_of("PT0S", &fl), 0, 0);
    assert_near(d_of("P1W", &fl), 604800, 0);
    assert_near(d_of("P0Y0M0DT1H0M0S", &fl), 3600, 0);
    assert_int_equal(fl, 0);
    assert_near(d_of("PT4H", &fl), 14400, 0);
    assert_near(d_of("P1DT12H", &fl), 129600, 0);
    assert_near(d_of("PT1.5S", &fl), 1.5, 0);
    assert_near(d_of("P2M", &fl), 60 * 86400, 0); /* months: discouraged, 30 days */
    assert_true(fl & PFI_TIME_MONTHS);
}

/* Rule: P9999Y means infinity. */
static void test_infinite(void **st)
{
    unsigned fl;
    assert_true(isinf(d_of("P9999Y", &fl)));
    assert_true(fl & PFI_TIME_INFINITE);
    assert_false(isinf(d_of("P9998Y", &fl)));
}

static void test_bad_durations(void **st)
{
    const char *bad[] = {"",    "P",     "PT",    "30M",   "PT30", "PT1H1H", "PT1M1H",
                         "P1H", "PT-1S", "P1e3D", "PT1S2", "P1DT", "PTT1S"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double d;
        pfi_error err;
        pfi_error_clear(&err);
        if (pfi_duration_parse(bad[i], &d, NULL, &err) != PFI_EPARSE)
            fail_msg("'%s' accepted", bad[i]);
    }
}

static void test_format(void **st)
{
    char b[32];
    pfi_time_format(1675987200.9, b, sizeof b);
    assert_string_equal(b, "2023-02-10T00:00:00Z");
    pfi_time_format(-3600, b, sizeof b);
    assert_string_equal(b, "1969-12-31T23:00:00Z");
    pfi_duration_format(1800, b, sizeof b);
    assert_string_equal(b, "PT1800S");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc3339),         cmocka_unit_test(test_no_seconds),
        cmocka_unit_test(test_year_one_is_now), cmocka_unit_test(test_bad_times),
        cmocka_unit_test(test_durations),       cmocka_unit_test(test_infinite),
        cmocka_unit_test(test_bad_durations),   cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
