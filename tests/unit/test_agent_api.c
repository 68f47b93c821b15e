/* pfid's JSON request bodies: accepted shapes and every rejection. */
#include "test_util.h"

#include <string.h>

#include "pfi/agent_api.h"

static int job(const char *body, pfi_store_job *j, pfi_error *err)
{
    return pfi_api_parse_job(body, strlen(body), j, err);
}

static void test_job_ok(void **state)
{
    pfi_store_job j;
    pfi_error err;
    assert_int_equal(job("{\"id\":\"llama-70b.pt:1\",\"gpus\":[3,0,7],\"arch\":\"dense\","
                         "\"task\":\"pt\"}",
                         &j, &err),
                     PFI_OK);
    assert_string_equal(j.id, "llama-70b.pt:1");
    assert_int_equal(j.n_gpus, 3);
    assert_int_equal(j.gpus[0], 3);
    assert_int_equal(j.gpus[2], 7);
    assert_string_equal(j.arch, "dense");
    assert_string_equal(j.task, "pt");
    /* arch and task are optional (null = absent) */
    assert_int_equal(job("{\"id\":\"x\",\"gpus\":[0],\"arch\":null}", &j, &err), PFI_OK);
    assert_string_equal(j.arch, "");
    assert_string_equal(j.task, "");
    /* no SLA floor, not exempt unless said */
    assert_true(j.sla_floor == 0);
    assert_int_equal(j.exempt, 0);
    assert_int_equal(job("{\"id\":\"s\",\"gpus\":[1],\"sla_floor\":0.8,\"exempt\":true}", &j, &err),
                     PFI_OK);
    assert_true(j.sla_floor == 0.8);
    assert_int_equal(j.exempt, 1);
    assert_int_equal(job("{\"id\":\"s\",\"gpus\":[1],\"sla_floor\":1,\"exempt\":false}", &j, &err),
                     PFI_OK);
    assert_true(j.sla_floor == 1);
    assert_int_equal(j.exempt, 0);
    assert_int_equal(job("{\"id\":\"s\",\"gpus\":[1],\"sla_floor\":null}", &j, &err), PFI_OK);
    assert_true(j.sla_floor == 0);
    /* a class (issue 29): none unless given, null is none */
    assert_string_equal(j.job_class, "");
    assert_int_equal(job("{\"id\":\"s\",\"gpus\":[1],\"class\":\"llama-70b.pt\"}", &j, &err),
                     PFI_OK);
    assert_string_equal(j.job_class, "llama-70b.pt");
    assert_int_equal(job("{\"id\":\"s\",\"gpus\":[1],\"class\":null}", &j, &err), PFI_OK);
    assert_string_equal(j.job_class, "");
}

static void test_job_rejected(void **state)
{
    static const struct {
        const char *body;
        int rc;
        const char *msg;
    } cases[] = {
        {"", PFI_EPARSE, "bad JSON"},
        {"{\"id\":", PFI_EPARSE, "bad JSON"},
        {"[1,2]", PFI_EINVAL, "must be a JSON object"},
        {"{\"gpus\":[0]}", PFI_EINVAL, "\"id\" must be a string"},
        {"{\"id\":7,\"gpus\":[0]}", PFI_EINVAL, "\"id\" must be a string"},
        {"{\"id\":\"\",\"gpus\":[0]}", PFI_EINVAL, "\"id\" must be 1-128"},
        {"{\"id\":\"a/b\",\"gpus\":[0]}", PFI_EINVAL, "\"id\" must be 1-128"},
        {"{\"id\":\"a b\",\"gpus\":[0]}", PFI_EINVAL, "\"id\" must be 1-128"},
        {"{\"id\":\"a\\u0000b\",\"gpus\":[0]}", PFI_EPARSE,
         "JSON_ALLOW_NUL"}, /* Jansson refuses NUL */
        {"{\"id\":\"a\",\"gpus\":[]}", PFI_EINVAL, "\"gpus\" must be an array"},
        {"{\"id\":\"a\",\"gpus\":3}", PFI_EINVAL, "\"gpus\" must be an array"},
        {"{\"id\":\"a\",\"gpus\":[0,-1]}", PFI_EINVAL, "\"gpus\"[1]"},
        {"{\"id\":\"a\",\"gpus\":[1.5]}", PFI_EINVAL, "\"gpus\"[0]"},
        {"{\"id\":\"a\",\"gpus\":[2,2]}", PFI_EINVAL, "GPU 2 listed twice"},
        {"{\"id\":\"a\",\"gpus\":[0],\"arch\":\"transformer\"}", PFI_EINVAL, "\"arch\" must be"},
        {"{\"id\":\"a\",\"gpus\":[0],\"task\":1}", PFI_EINVAL, "\"task\" must be"},
        {"{\"id\":\"a\",\"gpus\":[0],\"gpu\":[1]}", PFI_EINVAL, "unknown key \"gpu\""},
        {"{\"id\":\"a\",\"id\":\"b\",\"gpus\":[0]}", PFI_EPARSE, "duplicate"},
        {"{\"id\":\"a\",\"gpus\":[0],\"sla_floor\":0}", PFI_EINVAL,
         "\"sla_floor\" must be in (0, 1]"},
        {"{\"id\":\"a\",\"gpus\":[0],\"sla_floor\":1.01}", PFI_EINVAL,
         "\"sla_floor\" must be in (0, 1]"},
        {"{\"id\":\"a\",\"gpus\":[0],\"sla_floor\":-0.5}", PFI_EINVAL,
         "\"sla_floor\" must be in (0, 1]"},
        {"{\"id\":\"a\",\"gpus\":[0],\"sla_floor\":\"0.8\"}", PFI_EINVAL,
         "\"sla_floor\" must be a number"},
        {"{\"id\":\"a\",\"gpus\":[0],\"exempt\":1}", PFI_EINVAL,
         "\"exempt\" must be true or false"},
        {"{\"id\":\"a\",\"gpus\":[0],\"exempt\":\"yes\"}", PFI_EINVAL,
         "\"exempt\" must be true or false"},
        {"{\"id\":\"a\",\"gpus\":[0],\"class\":\"a b\"}", PFI_EINVAL,
         "\"class\" must be 1-64 characters"},
        {"{\"id\":\"a\",\"gpus\":[0],\"class\":\"\"}", PFI_EINVAL,
         "\"class\" must be 1-64 characters"},
        {"{\"id\":\"a\",\"gpus\":[0],\"class\":7}", PFI_EINVAL,
         "\"class\" must be 1-64 characters"},
        {"{\"id\":\"a\",\"gpus\":[0],\"class\":"
         "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
         PFI_EINVAL, "\"class\" must be 1-64 characters"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pfi_store_job j;
        pfi_error err;
        pfi_error_clear(&err);
        int rc = job(cases[i].body, &j, &err);
        if (rc != cases[i].rc || !strstr(err.msg, cases[i].msg))
            fail_msg("case %zu %s: rc %d msg '%s'", i, cases[i].body, rc, err.msg);
    }
    /* 129 characters: one too many */
    char body[300];
    char id[130];
    memset(id, 'a', 129);
    id[129] = '\0';
    snprintf(body, sizeof body, "{\"id\":\"%s\",\"gpus\":[0]}", id);
    pfi_store_job j;
    assert_int_equal(job(body, &j, NULL), PFI_EINVAL);
    id[128] = '\0';
    snprintf(body, sizeof body, "{\"id\":\"%s\",\"gpus\":[0]}", id);
    assert_int_equal(job(body, &j, NULL), PFI_OK);
}

static void test_throughput(void **state)
{
    double v = -1;
    pfi_error err;
    const char *ok = "{\"tokens_per_s\": 131072.5}";
    assert_int_equal(pfi_api_parse_throughput(ok, strlen(ok), &v, &err), PFI_OK);
    assert_near(v, 131072.5, 0);
    const char *zero = "{\"tokens_per_s\":0}";
    assert_int_equal(pfi_api_parse_throughput(zero, strlen(zero), &v, &err), PFI_OK);
    assert_near(v, 0, 0);
    const char *bad[] = {"{\"tokens_per_s\":-1}",           "{\"tokens_per_s\":\"5\"}", "{}",
                         "{\"tokens_per_s\":1,\"step\":3}", "{\"tokens_per_s\":1e400}", "null"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (pfi_api_parse_throughput(bad[i], strlen(bad[i]), &v, &err) == PFI_OK)
            fail_msg("accepted %s", bad[i]);
}

static void test_limit(void **state)
{
    double w = 0, e = 0;
    pfi_error err;
    const char *ok = "{\"watts\":450,\"expires_s\":3600}";
    assert_int_equal(pfi_api_parse_limit(ok, strlen(ok), &w, &e, &err), PFI_OK);
    assert_near(w, 450, 0);
    assert_near(e, 3600, 0);
    static const struct {
        const char *body, *msg;
    } bad[] = {
        {"{\"watts\":450}", "missing \"expires_s\""},
        {"{\"expires_s\":60}", "missing \"watts\""},
        {"{\"watts\":0,\"expires_s\":60}", "\"watts\" must be > 0"},
        {"{\"watts\":-5,\"expires_s\":60}", "\"watts\" must be > 0"},
        {"{\"watts\":450,\"expires_s\":0}", "\"expires_s\" must be > 0"},
        {"{\"watts\":450,\"expires_s\":604801}", "at most 604800"},
        {"{\"watts\":true,\"expires_s\":60}", "\"watts\" must be a number"},
        {"{\"watts\":450,\"expires_s\":60,\"force\":true}", "unknown key \"force\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pfi_error_clear(&err);
        if (pfi_api_parse_limit(bad[i].body, strlen(bad[i].body), &w, &e, &err) == PFI_OK ||
            !strstr(err.msg, bad[i].msg))
            fail_msg("case %s: '%s'", bad[i].body, err.msg);
    }
    /* a body over the bound is refused before parsing */
    size_t big = PFI_API_MAX_BODY + 1;
    char *b = malloc(big);
    memset(b, ' ', big);
    assert_int_equal(pfi_api_parse_limit(b, big, &w, &e, &err), PFI_EINVAL);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_ok),
        cmocka_unit_test(test_job_rejected),
        cmocka_unit_test(test_throughput),
        cmocka_unit_test(test_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
