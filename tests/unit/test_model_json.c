/* Model files: save/load round trip and every kind of bad file. */
#include "test_util.h"

#include <string.h>
#include <unistd.h>

#include "pfi/model_json.h"

static pfi_model_file sample_model(void)
{
    pfi_model_file m;
    memset(&m, 0, sizeof m);
    pfi_error err;
    assert_int_equal(pfi_analysis_parse_set("dram_copy_product,log2_gpus", &m.set, &err), PFI_OK);
    m.ols.p = 2;
    m.ols.n = 25;
    m.ols.coef[0] = 0.1 + 1.0 / 3; /* not a short decimal: tests full precision */
    m.ols.coef[1] = 0.047123456789;
    m.ols.coef[2] = -1e-3;
    m.ols.r2 = 0.65;
    m.ols.rmse = 0.2;
    m.boost_mhz = 1980;
    return m;
}

static void round_trip(void **state)
{
    char path[] = "/tmp/pfi-test-model-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    pfi_model_file m = sample_model(), back;
    pfi_error err;
    assert_int_equal(pfi_model_save(path, &m, &err), PFI_OK);
    assert_int_equal(pfi_model_load(path, &back, &err), PFI_OK);
    unlink(path);
    assert_int_equal(back.set.p, 2);
    assert_int_equal(back.set.ids[0], PFI_FEAT_DRAM_COPY_PRODUCT);
    assert_int_equal(back.set.ids[1], PFI_FEAT_LOG2_GPUS);
    assert_string_equal(back.set.name, "dram_copy_product+log2_gpus");
    for (int j = 0; j < 3; j++)
        assert_true(back.ols.coef[j] == m.ols.coef[j]); /* bit-exact */
    assert_int_equal(back.ols.n, 25);
    assert_near(back.boost_mhz, 1980, 0);
    double x[] = {20, 3};
    assert_true(pfi_model_predict(&back.ols, x) == pfi_model_predict(&m.ols, x));
}

static void bad_files(void **state)
{
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"[1]", "not a JSON object"},
        {"{\"format\":\"other\"}", "format"},
        {"{\"format\":\"pfi-model\",\"version\":2}", "version"},
        {"{\"format\":\"pfi-model\",\"version\":1,\"kind\":\"gbm\"}", "kind"},
        {"{\"format\":\"pfi-model\",\"version\":1,\"kind\":\"ols\",\"features\":[],"
         "\"coefficients\":[]}",
         "features"},
        {"{\"format\":\"pfi-model\",\"version\":1,\"kind\":\"ols\",\"features\":[\"x\"],"
         "\"coefficients\":[1],\"intercept\":0}",
         "unknown feature"},
        {"{\"format\":\"pfi-model\",\"version\":1,\"kind\":\"ols\",\"features\":[\"sm_active\","
         "\"sm_active\"],\"coefficients\":[1,2],\"intercept\":0}",
         "twice"},
        {"{\"format\":\"pfi-model\",\"version\":1,\"kind\":\"ols\",\"features\":[\"sm_active\"],"
         "\"coefficients\":[1,2],\"intercept\":0}",
         "one number per feature"},
        {"{\"format\":\"pfi-model\",\"version\":1,\"kind\":\"ols\",\"features\":[\"sm_active\"],"
         "\"coefficients\":[null],\"intercept\":0}",
         "coefficient 1"},
        {"{\"format\":\"pfi-model\",\"version\":1,\"kind\":\"ols\",\"features\":[\"sm_active\"],"
         "\"coefficients\":[1]}",
         "intercept"},
        {"{\"format\":\"pfi-model\",\"version\":1,\"kind\":\"ols\",\"features\":[\"sm_active\"],"
         "\"coefficients\":[1],\"intercept\":0,\"boost_mhz\":-5}",
         "boost_mhz"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_error_t je;
        json_t *j = json_loads(cases[i].json, 0, &je);
        assert_non_null(j);
        pfi_model_file m;
        pfi_error err;
        pfi_error_clear(&err);
        int rc = pfi_model_from_json(j, &m, &err);
        json_decref(j);
        if (rc == PFI_OK || !strstr(err.msg, cases[i].want))
            fail_msg("case %zu: rc %d, message '%s', want '%s'", i, rc, err.msg, cases[i].want);
    }
    /* a file that is not JSON names the line; a missing file is an I/O error */
    pfi_model_file m;
    pfi_error err;
    char path[512];
    test_path(path, sizeof path, PFI_SOURCE_DIR, "tests/data/fit-sweeps.csv");
    assert_int_equal(pfi_model_load(path, &m, &err), PFI_EPARSE);
    assert_int_equal(err.line, 1);
    assert_int_equal(pfi_model_load("/nonexistent/m.json", &m, &err), PFI_EIO);
    /* an unwritable destination leaves nothing behind */
    pfi_model_file good = sample_model();
    assert_int_not_equal(pfi_model_save("/nonexistent/m.json", &good, &err), PFI_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(bad_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
