/* Prometheus' /api/v1/query answers as --site-meter reads them: the shapes
 * of Prometheus 2.x (a vector of one sample, a scalar) and its errors. */
#include "test_util.h"

#include <string.h>

#include "pfi/prom_query.h"

static int parse(const char *s, double *v, pfi_error *err)
{
    pfi_error_clear(err);
    return pfi_prom_query_parse(s, strlen(s), v, err);
}

static void test_shapes(void **st)
{
    double v;
    pfi_error err;
    assert_int_equal(parse("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":"
                           "[{\"metric\":{},\"value\":[1733040000.123,\"20985.7\"]}]}}",
                           &v, &err),
                     PFI_OK);
    assert_near(v, 20985.7, 1e-9);
    assert_int_equal(parse("{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":"
                           "[1733040000,\"2000\"]}}",
                           &v, &err),
                     PFI_OK);
    assert_near(v, 2000, 0);
}

static void test_errors(void **st)
{
    double v;
    pfi_error err;
    assert_int_equal(
        parse(
            "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error at char 4\"}",
            &v, &err),
        PFI_EINVAL);
    assert_non_null(strstr(err.msg, "parse error at char 4"));
    assert_int_equal(
        parse("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}", &v,
              &err),
        PFI_EINVAL);
    assert_non_null(strstr(err.msg, "0 series"));
    assert_int_equal(parse("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":"
                           "[{\"value\":[1,\"1\"]},{\"value\":[1,\"2\"]}]}}",
                           &v, &err),
                     PFI_EINVAL);
    assert_non_null(strstr(err.msg, "2 series"));
    assert_int_equal(parse("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":"
                           "[{\"value\":[1,\"NaN\"]}]}}",
                           &v, &err),
                     PFI_EINVAL);
    assert_int_equal(
        parse("{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}", &v,
              &err),
        PFI_EINVAL);
    assert_int_equal(parse("<html>", &v, &err), PFI_EPARSE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_shapes),
                                       cmocka_unit_test(test_errors)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
