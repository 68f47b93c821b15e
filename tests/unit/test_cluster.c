/* pfid's listings as the controller reads them: the registration's SLA
 * floor and exempt flag, and a job's observed curve (GET /v1/jobs/ID/curve,
 * docs/pfid.md's example). */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/cluster.h"

static int jobs(const char *text, pfi_cl_node *n)
{
    pfi_error err;
    pfi_error_clear(&err);
    return pfi_cl_parse_jobs(text, strlen(text), n, &err);
}

static void test_sla_and_exempt(void **st)
{
    pfi_cl_node n = {0};
    assert_int_equal(
        jobs("{\"jobs\":[{\"id\":\"a\",\"gpus\":[0],\"sla_floor\":0.8,\"exempt\":false},"
             "{\"id\":\"b\",\"gpus\":[1],\"sla_floor\":null,\"exempt\":true},"
             "{\"id\":\"c\",\"gpus\":[2]}]}",
             &n),
        PFI_OK);
    assert_int_equal(n.n_jobs, 3);
    assert_near(n.jobs[0].sla_floor, 0.8, 0);
    assert_false(n.jobs[0].exempt);
    assert_true(isnan(n.jobs[1].sla_floor));
    assert_true(n.jobs[1].exempt);
    assert_true(isnan(n.jobs[2].sla_floor));
    assert_false(n.jobs[2].exempt);
    /* outside (0, 1]: no floor (pfid refuses those at registration) */
    assert_int_equal(jobs("{\"jobs\":[{\"id\":\"a\",\"gpus\":[0],\"sla_floor\":1.5}]}", &n),
                     PFI_OK);
    assert_true(isnan(n.jobs[0].sla_floor));
    /* mistyped: refused, not read as "not exempt" */
    assert_int_equal(jobs("{\"jobs\":[{\"id\":\"a\",\"gpus\":[0],\"exempt\":\"yes\"}]}", &n),
                     PFI_EINVAL);
    assert_int_equal(jobs("{\"jobs\":[{\"id\":\"a\",\"gpus\":[0],\"sla_floor\":\"0.8\"}]}", &n),
                     PFI_EINVAL);
    pfi_cl_node_clear(&n);
}

/* tokens_sd: the spread of one report at the cap in force; null, absent (an
 * older pfid) or negative is unknown (NaN), a string is refused. */
static void test_tokens_sd(void **st)
{
    (void)st;
    pfi_cl_node n = {0};
    assert_int_equal(
        jobs("{\"jobs\":[{\"id\":\"a\",\"gpus\":[0],\"tokens_per_s\":100,\"tokens_sd\":10},"
             "{\"id\":\"b\",\"gpus\":[1],\"tokens_sd\":null},"
             "{\"id\":\"c\",\"gpus\":[2]},"
             "{\"id\":\"d\",\"gpus\":[3],\"tokens_sd\":-1}]}",
             &n),
        PFI_OK);
    assert_near(n.jobs[0].tokens_sd, 10, 0);
    assert_true(isnan(n.jobs[1].tokens_sd));
    assert_true(isnan(n.jobs[2].tokens_sd));
    assert_true(isnan(n.jobs[3].tokens_sd));
    assert_int_equal(jobs("{\"jobs\":[{\"id\":\"a\",\"gpus\":[0],\"tokens_sd\":\"10\"}]}", &n),
                     PFI_EINVAL);
    pfi_cl_node_clear(&n);
}

/* class and pfi_sd (issue 29): a class over 64 characters, or not a
 * string, is none; an SD null, absent or not positive is unknown. */
static void test_class_and_pfi_sd(void **st)
{
    (void)st;
    pfi_cl_node n = {0};
    assert_int_equal(
        jobs("{\"jobs\":[{\"id\":\"a\",\"gpus\":[0],\"class\":\"llama\",\"pfi_sd\":0.22},"
             "{\"id\":\"b\",\"gpus\":[1],\"class\":null,\"pfi_sd\":null},"
             "{\"id\":\"c\",\"gpus\":[2],\"class\":"
             "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"},"
             "{\"id\":\"d\",\"gpus\":[3],\"class\":[1],\"pfi_sd\":0}]}",
             &n),
        PFI_OK);
    assert_string_equal(n.jobs[0].job_class, "llama");
    assert_near(n.jobs[0].pfi_sd, 0.22, 0);
    assert_string_equal(n.jobs[1].job_class, "");
    assert_true(isnan(n.jobs[1].pfi_sd));
    assert_string_equal(n.jobs[2].job_class, "");
    assert_true(isnan(n.jobs[2].pfi_sd));
    assert_string_equal(n.jobs[3].job_class, "");
    assert_true(isnan(n.jobs[3].pfi_sd));
    assert_int_equal(jobs("{\"jobs\":[{\"id\":\"a\",\"gpus\":[0],\"pfi_sd\":\"1\"}]}", &n),
                     PFI_EINVAL);
    pfi_cl_node_clear(&n);
}

static void test_curve(void **st)
{
    const char *t =
        "{\"job\":\"llm\",\"running\":true,\"level_w\":500,\"steady\":true,\"hold_ticks\":3,"
        "\"points\":[{\"cap_w\":300,\"power_w\":595.8,\"tokens_per_s\":16691.2,\"tokens_sd\":192.7,"
        "\"n\":4,\"t_first\":1796117817.77,\"t_last\":1796117819.65},"
        "{\"cap_w\":700,\"power_w\":1390,\"tokens_per_s\":20000,\"tokens_sd\":0,\"n\":1}]}";
    pfi_cl_point *p;
    size_t n;
    pfi_error err;
    assert_int_equal(pfi_cl_parse_curve(t, strlen(t), &p, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    assert_near(p[0].cap_w, 300, 0);
    assert_near(p[0].power_w, 595.8, 0);
    assert_near(p[0].tput, 16691.2, 0);
    assert_near(p[0].tput_sd, 192.7, 0);
    assert_near(p[0].n, 4, 0);
    free(p);
    const char *bad[] = {"{\"points\":[{\"cap_w\":300,\"power_w\":0,\"tokens_per_s\":1}]}",
                         "{\"points\":[{\"cap_w\":300,\"power_w\":5,\"tokens_per_s\":-1}]}",
                         "{\"points\":[{\"cap_w\":300,\"tokens_per_s\":1}]}",
                         "{\"points\":[7]}",
                         "{\"points\":{}}",
                         "[",
                         NULL};
    for (size_t i = 0; bad[i]; i++) {
        pfi_error_clear(&err);
        assert_int_not_equal(pfi_cl_parse_curve(bad[i], strlen(bad[i]), &p, &n, &err), PFI_OK);
        assert_true(err.msg[0] != '\0');
        assert_null(p);
    }
    assert_int_equal(pfi_cl_parse_curve("{\"points\":[]}", 13, &p, &n, &err), PFI_OK);
    assert_int_equal(n, 0);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens_sd), cmocka_unit_test(test_class_and_pfi_sd),
        cmocka_unit_test(test_sla_and_exempt), cmocka_unit_test(test_curve)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
