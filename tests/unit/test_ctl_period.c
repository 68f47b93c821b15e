/* The learn reading ctl_period.c hands the plan, built from two agents'
 * listings (their GET /v1/gpus and GET /v1/jobs answers, parsed as the
 * controller parses them) through the period's own seam: ctl_merge_node
 * per agent, then ctl_job_reading per job. Hand values:
 *
 *   span  on both nodes, tokens/s 1000 (SD 3) and 2000 (SD 4): the reading
 *         3000 tokens/s, SD sqrt(9 + 16) = 5 (variances add, SDs do not: 7);
 *   half  on both, SD 6 on node 0, node 1 listed without a report yet: a
 *         node without tokens/s adds neither (500, SD 6);
 *   mixed on both, SD 3 on node 0, node 1 with a report but no spread (one
 *         report at its cap): unknown, given to learn as 0 (not 3, the
 *         known part);
 *   solo  on node 0 only, no spread: 0.
 * Each node's GPUs draw 100, 200, 300, ... W: a job's power is its GPUs' sum. */
#include "test_util.h"

#include <string.h>

#include "control/ctl_internal.h"
#include "pfi/cluster.h"

#define GPU(i, w)                                                                                  \
    "{\"gpu\":" #i ",\"up\":true,\"sample\":{\"power_watts\":" #w "},\"limits\":"                  \
    "{\"enforced_w\":700,\"default_w\":700,\"min_w\":200,\"max_w\":700},\"cap\":null}"
static const char *const GPUS =
    "{\"gpus\":[" GPU(0, 100) "," GPU(1, 200) "," GPU(2, 300) "," GPU(3, 400) "]}";

/* One training job of pfid's listing on GPU g, tokens/s t, SD sd (null: none). */
#define JOB(id, g, t, sd)                                                                          \
    "{\"id\":\"" id "\",\"gpus\":[" #g "],\"phase\":\"training\",\"tokens_per_s\":" #t             \
    ",\"tokens_sd\":" #sd "}"
static const char *const JOBS0 = "{\"jobs\":[" JOB("span", 0, 1000, 3) "," JOB(
    "half", 1, 500, 6) "," JOB("mixed", 2, 100, 3) "," JOB("solo", 3, 50, null) "]}";
static const char *const JOBS1 = "{\"jobs\":[" JOB("span", 0, 2000, 4) "," JOB(
    "half", 1, null, null) "," JOB("mixed", 2, 200, null) "]}";

/* The period's job table from node 0's listing (JOBS0) and node 1's
 * (jobs1), as merge builds it; *fixed_w and *live_w its sums. Every job's
 * last cap 450 W, planned and pushed: a reading is due. */
static void merge_two(ctl *c, const char *jobs1, double *fixed_w, double *live_w)
{
    pfi_cl_node n[2] = {{0}};
    pfi_error err;
    pfi_error_clear(&err);
    for (size_t a = 0; a < 2; a++) {
        const char *jobs = a ? jobs1 : JOBS0;
        if (pfi_cl_parse_gpus(GPUS, strlen(GPUS), &n[a], &err) != PFI_OK ||
            pfi_cl_parse_jobs(jobs, strlen(jobs), &n[a], &err) != PFI_OK)
            fail_msg("%s", err.msg);
    }
    memset(c, 0, sizeof *c);
    double measured_w = 0;
    *fixed_w = *live_w = 0;
    ctl_carry *carry = ctl_jobs_begin(&c->jobs);
    for (size_t a = 0; a < 2; a++)
        ctl_merge_node(&c->jobs, NULL, carry, a, &n[a], fixed_w, &measured_w, live_w);
    ctl_jobs_end(carry);
    for (size_t a = 0; a < 2; a++)
        pfi_cl_node_clear(&n[a]);
    c->prev_active = c->prev_push_ok = 1;
    for (size_t i = 0; i < c->jobs.n; i++)
        c->jobs.v[i].last_cap_w = 450;
}

static void free_jobs(ctl *c)
{
    ctl_jobs_free(&c->jobs);
}

static pfi_plan_obs reading(const ctl *c, const char *id)
{
    for (size_t i = 0; i < c->jobs.n; i++)
        if (strcmp(c->jobs.v[i].id, id) == 0)
            return ctl_job_reading(&c->jobs.v[i], c->prev_active && c->prev_push_ok);
    fail_msg("no job %s", id);
    return (pfi_plan_obs){0};
}

static void test_reading_sd_from_listings(void **st)
{
    (void)st;
    ctl c;
    double fixed, live;
    merge_two(&c, JOBS1, &fixed, &live);
    assert_int_equal(c.jobs.n, 4);
    assert_near(live, 2000, 0);
    assert_near(fixed, 400, 0); /* node 1's GPU 3: in no job */
    pfi_plan_obs r = reading(&c, "span");
    assert_near(r.cap_w, 450, 0);
    assert_near(r.power_w, 200, 0); /* GPU 0 of each node */
    assert_near(r.tput, 3000, 0);
    assert_near(r.tput_sd, 5, 1e-12);
    r = reading(&c, "half");
    assert_near(r.tput, 500, 0);
    assert_near(r.tput_sd, 6, 1e-12);
    r = reading(&c, "mixed");
    assert_near(r.tput, 300, 0);
    assert_near(r.power_w, 600, 0);
    assert_near(r.tput_sd, 0, 0);
    r = reading(&c, "solo");
    assert_near(r.tput, 50, 0);
    assert_near(r.tput_sd, 0, 0);
    /* last period's push failed: no reading (power 0) */
    c.prev_push_ok = 0;
    assert_near(reading(&c, "span").power_w, 0, 0);
    free_jobs(&c);
}

/* A job not in training on one node: nothing to learn from, no reading. */
static void test_no_reading_outside_training(void **st)
{
    (void)st;
    ctl c;
    double fixed, live;
    merge_two(&c,
              "{\"jobs\":[{\"id\":\"span\",\"gpus\":[0],\"phase\":\"startup\","
              "\"tokens_per_s\":2000,\"tokens_sd\":4}]}",
              &fixed, &live);
    assert_near(reading(&c, "span").power_w, 0, 0);
    assert_near(reading(&c, "half").tput, 500, 0); /* the others as before */
    free_jobs(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_reading_sd_from_listings),
                                       cmocka_unit_test(test_no_reading_outside_training)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
