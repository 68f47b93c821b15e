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

#define GPU(i, w)                                                                            \
    "{\"gpu\":" #i ",\"up\":true,\"sample\":{\"power_watts\":" #w "},\"limits\":"             \
    "{\"enforced_w\":700,\"default_w\":700,\"min_w\":200,\"max_w\":700},\"cap\":null}"
static const char *const GPUS =
    "{\"gpus\":[" GPU(0, 100) "," GPU(1, 200) "," GPU(2, 300) "," GPU(3, 400) "]}";

/* One training job of pfid's listing on GPU g, tokens/s t, SD sd (null: none). */
#define JOB(id, g, t, sd)                                                                    \
    "{\"id\":\"" id "\",\"gpus\":[" #g "],\"phase\":\"training\",\"tokens_per_s\":" #t      \
    ",\"tokens_sd\":" #sd "}"
static const char *const JOBS0 = "{\"jobs\":[" JOB("span", 0, 1000, 3) ","
    JOB("half", 1, 500, 6) "," JOB("mixed", 2, 100, 3) "," JOB("solo", 3, 50, null) "]}";
static const char *const JOBS1 = "{\"jobs\":[" JOB("span", 0, 2000, 4) ","
    JOB("half", 1, null, null) "," JOB("mixed", 2, 200, null) "]}";

static void node(pfi_cl_node *n, const char *jobs)
{
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_cl_parse_gpus(GPUS, strlen(GPUS), n, &err) != PFI_OK ||
        pfi_cl_parse_jobs(jobs, strlen(jobs), n, &err) != PFI_OK)
        fail_msg("%s", err.msg);
}

static ctl_job *job(ctl *c, const char *id)
{
    for (size_t i = 0; i < c->n_jobs; i++)
        if (strcmp(c->jobs[i].id, id) == 0) return &c->jobs[i];
    fail_msg("no job %s", id);
    return NULL;
}

static void free_jobs(ctl *c)
{
    for (size_t i = 0; i < c->n_jobs; i++) {
        free(c->jobs[i].gpu_agent);
        free(c->jobs[i].gpu_idx);
    }
    free(c->jobs);
    ctl_index_free(&c->job_ix);
}

static void test_reading_sd_from_listings(void **st)
{
    (void)st;
    pfi_cl_node n[2] = {{0}};
    node(&n[0], JOBS0);
    node(&n[1], JOBS1);
    ctl c;
    memset(&c, 0, sizeof c);
    double fixed = 0, measured = 0, live = 0;
    ctl_carry *carry = ctl_jobs_begin(&c);
    for (size_t a = 0; a < 2; a++) ctl_merge_node(&c, carry, a, &n[a], &fixed, &measured, &live);
    ctl_jobs_end(carry);
    assert_int_equal(c.n_jobs, 4);
    assert_near(live, 2000, 0);
    assert_near(fixed, 400, 0); /* node 1's GPU 3: in no job */

    /* last period's caps planned and pushed: the reading is taken */
    c.prev_active = c.prev_push_ok = 1;
    for (size_t i = 0; i < c.n_jobs; i++) c.jobs[i].last_cap_w = 450;
    pfi_plan_obs r = ctl_job_reading(&c, job(&c, "span"));
    assert_near(r.cap_w, 450, 0);
    assert_near(r.power_w, 200, 0); /* GPU 0 of each node */
    assert_near(r.tput, 3000, 0);
    assert_near(r.tput_sd, 5, 1e-12);
    r = ctl_job_reading(&c, job(&c, "half"));
    assert_near(r.tput, 500, 0);
    assert_near(r.tput_sd, 6, 1e-12);
    r = ctl_job_reading(&c, job(&c, "mixed"));
    assert_near(r.tput, 300, 0);
    assert_near(r.power_w, 600, 0);
    assert_near(r.tput_sd, 0, 0);
    r = ctl_job_reading(&c, job(&c, "solo"));
    assert_near(r.tput, 50, 0);
    assert_near(r.tput_sd, 0, 0);

    /* last period's push failed: no reading (power 0) */
    c.prev_push_ok = 0;
    r = ctl_job_reading(&c, job(&c, "span"));
    assert_near(r.power_w, 0, 0);
    free_jobs(&c);
    pfi_cl_node_clear(&n[0]);
    pfi_cl_node_clear(&n[1]);
}

/* A job not in training on one node: nothing to learn from, no reading. */
static void test_no_reading_outside_training(void **st)
{
    (void)st;
    pfi_cl_node n[2] = {{0}};
    node(&n[0], JOBS0);
    node(&n[1], "{\"jobs\":[{\"id\":\"span\",\"gpus\":[0],\"phase\":\"startup\","
                "\"tokens_per_s\":2000,\"tokens_sd\":4}]}");
    ctl c;
    memset(&c, 0, sizeof c);
    double fixed = 0, measured = 0, live = 0;
    ctl_carry *carry = ctl_jobs_begin(&c);
    for (size_t a = 0; a < 2; a++) ctl_merge_node(&c, carry, a, &n[a], &fixed, &measured, &live);
    ctl_jobs_end(carry);
    c.prev_active = c.prev_push_ok = 1;
    job(&c, "span")->last_cap_w = 450;
    pfi_plan_obs r = ctl_job_reading(&c, job(&c, "span"));
    assert_near(r.power_w, 0, 0);
    free_jobs(&c);
    pfi_cl_node_clear(&n[0]);
    pfi_cl_node_clear(&n[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_reading_sd_from_listings),
                                       cmocka_unit_test(test_no_reading_outside_training)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
