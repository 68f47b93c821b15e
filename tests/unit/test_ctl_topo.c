/* The power tree's period arithmetic in the controller (src/control/ctl_topo.h,
 * ctl_ceiling.c), against hand values. The tree (margin 100 W):
 *
 *   site 10000            own other 1000 - 700 = 300 (the site's 1000 W less its domains')
 *     feed-a 6000
 *       rack-1 3000       agents a0, a1; other 200
 *       rack-2 (no rating) agent a2
 *     feed-b 5000         other 500
 *       rack-3 4000       agents a3, a4 (a4 dead: 2800 W, its GPUs' maximum)
 *
 * Jobs: j0 4 GPUs on a0, a1 (rack-1), Pmax 2800; j1 2 GPUs on a1 and 2 on
 * a2 (half rack-1, half rack-2), Pmax 2000; j2 2 GPUs on a3, Pmax 1400.
 * a0 has an idle GPU at 100 W (fixed). Measured GPUs: a0 1500, a1 1300,
 * a2 600, a3 1300, a4 2800.
 *
 * Demand with every job uncapped (jobs' Pmax shares + fixed + other):
 *   rack-1 2800 + 1000 + 100 + 200 = 4100 > 2900: binding
 *   rack-2 1000 (no limit); feed-a 4800 + 100 + 200 = 5100 < 5900
 *   rack-3 1400 + 2800 = 4200 > 3900: binding
 *   feed-b 4200 + 500 = 4700 < 4900; site 6200 + 2900 + 1000 = 10100 > 9900
 * The plan's domains carry their own fixed power and other load: site 300,
 * rack-1 300, feed-b 500, rack-3 2800. */
#include "test_util.h"

#include <string.h>
#include <unistd.h>

#include "control/ctl_internal.h"

static const char *TREE =
    "{\"name\":\"site\",\"limit_w\":10000,\"children\":["
    " {\"name\":\"feed-a\",\"limit_w\":6000,\"children\":["
    "  {\"name\":\"rack-1\",\"limit_w\":3000,\"other_load_w\":200,"
    "   \"agents\":[\"http://a0\",\"http://a1/\"]},"
    "  {\"name\":\"rack-2\",\"agents\":[\"http://a2\"]}]},"
    " {\"name\":\"feed-b\",\"limit_w\":5000,\"other_load_w\":500,\"children\":["
    "  {\"name\":\"rack-3\",\"limit_w\":4000,\"agents\":[\"http://a3\",\"http://a4\"]}]}]}";

enum { SITE, FEED_A, RACK_1, RACK_2, FEED_B, RACK_3 };

/* The tree for agents a0..a4 (a2 not given: the file adds it), with the
 * agents' figures of the period. */
static void setup_tree(ctl_topo *T)
{
    char path[] = "/tmp/test_ctl_topo_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    test_write_file(path, TREE);
    const char *given[] = {"http://a0", "http://a1", "http://a3", "http://a4"};
    char **extra;
    size_t n_extra;
    pfi_error err;
    pfi_error_clear(&err);
    if (ctl_topo_init(T, path, given, 4, &extra, &n_extra, &err) != PFI_OK) fail_msg("%s", err.msg);
    unlink(path);
    assert_int_equal(T->n, 6);
    assert_int_equal(n_extra, 1);
    assert_string_equal(extra[0], "http://a2");
    free(extra[0]);
    free(extra);
    const char *all[] = {"http://a0", "http://a1", "http://a2", "http://a3", "http://a4"};
    if (ctl_topo_agents(T, all, 5, &err) != PFI_OK) fail_msg("%s", err.msg);
    size_t want_leaf[] = {RACK_1, RACK_1, RACK_2, RACK_3, RACK_3};
    for (size_t a = 0; a < 5; a++)
        assert_int_equal(T->leaf[a], want_leaf[a]);
    double fixed[] = {100, 0, 0, 0, 2800}, gpu[] = {1500, 1300, 600, 1300, 2800};
    for (size_t a = 0; a < 5; a++) {
        T->ag_fixed_w[a] = fixed[a];
        T->ag_gpu_w[a] = gpu[a];
        T->ag_down[a] = a == 4;
    }
}

static const size_t G0[] = {0, 0, 1, 1}, G1[] = {1, 1, 2, 2}, G2[] = {3, 3};
static const size_t *const GA[] = {G0, G1, G2};
static const size_t NG[] = {4, 4, 2};
static const double PMAX[] = {2800, 2000, 1400};

static void build(ctl_topo *T, int fresh, int pushed)
{
    ctl_topo_other(T, NULL, 1000, 0);
    assert_int_equal(ctl_topo_build(T, 3, GA, NG, PMAX, 100, fresh, pushed), PFI_OK);
}

static void test_period(void **st)
{
    ctl_topo T;
    setup_tree(&T);
    build(&T, 1, 0);
    /* other load: own and subtree */
    assert_near(T.d[SITE].own_other_w, 300, 1e-9);
    assert_near(T.d[SITE].sub_other_w, 1000, 1e-9);
    assert_near(T.d[FEED_A].sub_other_w, 200, 1e-9);
    assert_near(T.d[FEED_B].sub_other_w, 500, 1e-9);
    /* spans: j0 all in rack-1, j1 half and half, j2 in rack-3 */
    assert_int_equal(T.joff[1] - T.joff[0], 1);
    assert_int_equal(T.jdom[T.joff[0]], RACK_1);
    assert_int_equal(T.joff[2] - T.joff[1], 2);
    assert_int_equal(T.jdom[T.joff[1]], RACK_1);
    assert_near(T.jshare[T.joff[1]], 0.5, 1e-12);
    assert_int_equal(T.jdom[T.joff[1] + 1], RACK_2);
    assert_near(T.jshare[T.joff[1] + 1], 0.5, 1e-12);
    assert_int_equal(T.jdom[T.joff[2]], RACK_3);
    /* demand, limits (rating - margin), binding */
    double demand[] = {10100, 5100, 4100, 1000, 4700, 4200};
    double limit[] = {9900, 5900, 2900, INFINITY, 4900, 3900};
    int binding[] = {1, 0, 1, 0, 0, 1};
    for (size_t d = 0; d < 6; d++) {
        assert_near(T.d[d].sub_demand_w, demand[d], 1e-9);
        if (isfinite(limit[d]))
            assert_near(T.d[d].limit_w, limit[d], 1e-9);
        else
            assert_true(isinf(T.d[d].limit_w));
        assert_int_equal(T.d[d].binding, binding[d]);
    }
    assert_true(T.binding);
    /* measured: GPUs (the dead agent at its maximum) plus other load */
    assert_near(T.d[SITE].sub_gpu_w, 7500, 1e-9);
    assert_near(T.d[RACK_3].sub_gpu_w, 4100, 1e-9);
    assert_int_equal(T.d[RACK_3].sub_dead, 1);
    assert_int_equal(T.d[FEED_B].sub_dead, 1);
    assert_int_equal(T.d[SITE].sub_dead, 1);
    assert_int_equal(T.d[FEED_A].sub_dead, 0);
    assert_int_equal(T.d[SITE].sub_agents, 5);
    /* the plan's tree: parents, limits, own fixed */
    double pfixed[] = {300, 0, 300, 0, 500, 2800};
    size_t parent[] = {PFI_ALLOC_NO_PARENT, SITE, FEED_A, FEED_A, SITE, FEED_B};
    for (size_t d = 0; d < 6; d++) {
        assert_near(T.pd[d].fixed_w, pfixed[d], 1e-9);
        assert_int_equal(T.pd[d].parent, parent[d]);
    }
    assert_near(T.pd[RACK_1].limit_w, 2900, 1e-9);
    assert_string_equal(T.pd[FEED_B].name, "feed-b");
    assert_int_equal(ctl_topo_domain_of(&T, ""), SITE);
    assert_int_equal(ctl_topo_domain_of(&T, "site"), SITE);
    assert_int_equal(ctl_topo_domain_of(&T, "rack-2"), RACK_2);
    assert_int_equal(ctl_topo_domain_of(&T, "rack-9"), PFI_TOPO_NONE);

    /* Trim, per domain: rack-1 measured 2800 + 200 = 3000 over its 2900;
     * once settled (its limit held and pushed), the 100 W excess is taken
     * off its plan limit; a domain under its limit keeps none. */
    build(&T, 1, 1);
    assert_near(T.d[RACK_1].trim.w, 100, 1e-9);
    assert_near(T.pd[RACK_1].limit_w, 2800, 1e-9);
    assert_near(T.d[FEED_A].trim.w, 0, 1e-9);
    /* rack-3 measured 4100 > 3900 (the dead agent at its maximum) */
    assert_near(T.d[RACK_3].trim.w, 200, 1e-9);
    ctl_topo_free(&T);
}

/* Targets per domain: a site limit on feed-b (4000 W: 3900 after the
 * margin) and a GPU limit on rack-2 (500 W of GPUs, + its 0 W other); a
 * site target ("") is not a domain's; an ended one counts for nothing. */
static void test_targets(void **st)
{
    ctl_topo T;
    setup_tree(&T);
    ctl_topo_other(&T, NULL, 1000, 0);
    pfi_target ts[] = {
        {.id = "fb",
         .kind = PFI_TARGET_SITE,
         .limit_w = 4000,
         .start = 0,
         .end = 100,
         .priority = PFI_TARGET_NO_PRIORITY,
         .domain = "feed-b"},
        {.id = "r2",
         .kind = PFI_TARGET_GPU,
         .limit_w = 500,
         .start = 0,
         .end = 100,
         .priority = PFI_TARGET_NO_PRIORITY,
         .domain = "rack-2"},
        {.id = "fa-gpu",
         .kind = PFI_TARGET_GPU,
         .limit_w = 4000,
         .start = 0,
         .end = 100,
         .priority = PFI_TARGET_NO_PRIORITY,
         .domain = "feed-a"},
        {.id = "site",
         .kind = PFI_TARGET_SITE,
         .limit_w = 1,
         .start = 0,
         .end = 100,
         .priority = PFI_TARGET_NO_PRIORITY},
        {.id = "old",
         .kind = PFI_TARGET_SITE,
         .limit_w = 1,
         .start = 0,
         .end = 10,
         .priority = PFI_TARGET_NO_PRIORITY,
         .domain = "rack-3"},
    };
    ctl_topo_targets(&T, ts, 5, 50, 5, 0, 100, 100);
    assert_int_equal(ctl_topo_build(&T, 3, GA, NG, PMAX, 100, 1, 0), PFI_OK);
    assert_true(T.d[FEED_B].active);
    assert_string_equal(T.d[FEED_B].win.id, "fb");
    assert_near(T.d[FEED_B].target_w, 4000, 1e-9);
    assert_near(T.d[FEED_B].limit_w, 3900, 1e-9); /* below its 4900 rating */
    assert_true(T.d[FEED_B].binding);             /* 4700 > 3900 */
    assert_near(T.d[RACK_2].target_w, 500, 1e-9);
    assert_near(T.d[RACK_2].limit_w, 400, 1e-9);
    assert_true(T.d[RACK_2].binding); /* 1000 > 400 */
    /* a GPU limit on feed-a: 4000 of GPUs + its 200 W other, less the margin */
    assert_near(T.d[FEED_A].target_w, 4200, 1e-9);
    assert_near(T.d[FEED_A].limit_w, 4100, 1e-9);
    assert_false(T.d[RACK_3].active);
    assert_false(T.d[SITE].active); /* the site's targets are the controller's flat path */
    /* every target over: the budgets ramp up at 100 W/s from where they were */
    ctl_topo_targets(&T, ts, 5, 200, 5, 0, 100, 100);
    assert_int_equal(ctl_topo_build(&T, 3, GA, NG, PMAX, 100, 1, 0), PFI_OK);
    assert_false(T.d[FEED_B].active);
    assert_near(T.d[FEED_B].limit_w, 4400, 1e-9); /* 3900 + 500 */
    assert_near(T.d[RACK_2].limit_w, 900, 1e-9);  /* 400 + 500 */
    /* once a ramp covers every job uncapped it ends */
    ctl_topo_targets(&T, ts, 5, 205, 5, 0, 100, 100);
    assert_int_equal(ctl_topo_build(&T, 3, GA, NG, PMAX, 100, 1, 0), PFI_OK);
    assert_near(T.d[FEED_B].limit_w, 4900, 1e-9); /* min(4900 rating, 4900 ramped) */
    assert_true(isnan(T.d[RACK_2].tbudget_w));    /* 1400 >= 1000: done */
    assert_true(isinf(T.d[RACK_2].limit_w));
    ctl_topo_free(&T);
}

/* Node ceilings: a node's planned power and fixed, plus each limited
 * domain's headroom (limit - other - what its nodes are planned) shared by
 * GPU count, the lowest over its domains; a domain planned over its room
 * scales its nodes down to it. Planned: j0 2000 W (500 a GPU), j1 1600
 * (400), j2 1000; a0 has 3 GPUs (one idle), a1 4, a2 2, a3 2, a4 4.
 * Per node planned + fixed: a0 1100, a1 1800, a2 800, a3 1000, a4 2800.
 * Room (limit - other) and headroom: rack-1 2700, planned 2900 over it:
 * scaled by 27/29; feed-a 5700 - 3700 = 2000; rack-3 3900 - 3800 = 100;
 * feed-b 4400 - 3800 = 600; site 8900 - 7500 = 1400.
 *   a0 min(1100 27/29, 1100 + 2000 3/9, 1100 + 1400 3/15) = 1024.14
 *   a1 1800 27/29 = 1675.86
 *   a2 min(800 + 2000 2/9, 800 + 1400 2/15) = 986.67 (rack-2 has no rating)
 *   a3 min(1000 + 100 2/6, 1000 + 600 2/6, 1000 + 1400 2/15) = 1033.33
 *   a4 2800 + 100 4/6 = 2866.67 */
static void test_ceilings(void **st)
{
    ctl_topo T;
    setup_tree(&T);
    build(&T, 1, 0);
    double planned[] = {1000, 1800, 800, 1000, 0}, gpus[] = {3, 4, 2, 2, 4}, out[5];
    ctl_ceilings(&T, planned, gpus, out);
    double want[] = {1100 * 27.0 / 29, 1800 * 27.0 / 29, 800 + 1400 * 2.0 / 15,
                     1000 + 100 * 2.0 / 6, 2800 + 100 * 4.0 / 6};
    for (size_t a = 0; a < 5; a++)
        assert_near(out[a], want[a], 1e-9);
    /* a rack's nodes' ceilings add up to its limit less its other load */
    assert_near(out[3] + out[4], 3900, 1e-9);
    assert_near(out[0] + out[1], 2700, 1e-9);
    /* the site's target (8900 W on its power) leaves the site 400 W of
     * headroom: a2 800 + 400 2/15 */
    T.site_w = 8900;
    ctl_ceilings(&T, planned, gpus, out);
    assert_near(out[2], 800 + 400 * 2.0 / 15, 1e-9);
    assert_near(out[0], 1100 * 27.0 / 29, 1e-9);
    ctl_topo_free(&T);
}

/* Without --topology: one domain, the site, every agent in it, nothing
 * limited (the controller as before); a leaf of jobs is refused. */
static void test_site_alone(void **st)
{
    ctl_topo T;
    char **extra;
    size_t n_extra;
    pfi_error err;
    pfi_error_clear(&err);
    const char *urls[] = {"http://x", "http://y"};
    assert_int_equal(ctl_topo_init(&T, NULL, urls, 2, &extra, &n_extra, &err), PFI_OK);
    assert_int_equal(ctl_topo_agents(&T, urls, 2, &err), PFI_OK);
    assert_int_equal(T.n, 1);
    assert_int_equal(n_extra, 0);
    assert_false(T.has_limits);
    assert_string_equal(ctl_topo_name(&T, 0), "site");
    ctl_topo_other(&T, NULL, 700, 0);
    size_t ga[] = {0, 1};
    const size_t *GAs[] = {ga};
    size_t ng[] = {2};
    double pm[] = {1400};
    T.ag_gpu_w[0] = T.ag_gpu_w[1] = 600;
    assert_int_equal(ctl_topo_build(&T, 1, GAs, ng, pm, 100, 1, 1), PFI_OK);
    assert_false(T.binding);
    assert_near(T.d[0].sub_other_w, 700, 1e-9);
    assert_near(T.d[0].sub_demand_w, 2100, 1e-9);
    assert_true(isinf(T.d[0].limit_w));
    ctl_topo_free(&T);

    char path[] = "/tmp/test_ctl_topo_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    test_write_file(path, "{\"name\":\"s\",\"children\":[{\"name\":\"r\",\"jobs\":[\"g\"]}]}");
    assert_int_equal(ctl_topo_init(&T, path, urls, 2, &extra, &n_extra, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "jobs"));
    ctl_topo_free(&T);
    test_write_file(path,
                    "{\"name\":\"s\",\"children\":[{\"name\":\"r\",\"agents\":[\"http://x\"]}]}");
    assert_int_equal(ctl_topo_init(&T, path, urls, 2, &extra, &n_extra, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "http://y is in no leaf"));
    ctl_topo_free(&T);
    unlink(path);
}

/* An OpenADR event targets the domain whose openadr.resource it names (the
 * first of its targets that one has), else the domain whose openadr.program
 * is its program (by id or as --program names it), else the site. */
static void test_openadr_domain(void **st)
{
    char path[] = "/tmp/test_ctl_topo_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    test_write_file(path, "{\"name\":\"site\",\"children\":["
                          "{\"name\":\"feed-a\",\"openadr\":{\"resource\":\"FEED-A\"},"
                          " \"agents\":[\"http://a\"]},"
                          "{\"name\":\"feed-b\",\"openadr\":{\"program\":\"dr-b\"},"
                          " \"agents\":[\"http://b\"]}]}");
    ctl_topo T;
    char **extra;
    size_t n_extra;
    pfi_error err;
    pfi_error_clear(&err);
    if (ctl_topo_init(&T, path, NULL, 0, &extra, &n_extra, &err) != PFI_OK) fail_msg("%s", err.msg);
    unlink(path);
    pfi_agents_free_urls(extra, n_extra);
    pfi_oadr_event e;
    memset(&e, 0, sizeof e);
    snprintf(e.program_id, sizeof e.program_id, "p-17");
    assert_int_equal(ctl_topo_oadr_domain(&T, &e, "dr-site"), 0);
    snprintf(e.targets[0], sizeof e.targets[0], "ven-1");
    snprintf(e.targets[1], sizeof e.targets[1], "FEED-A");
    e.n_targets = 2;
    assert_int_equal(ctl_topo_oadr_domain(&T, &e, "dr-site"), 1);
    e.n_targets = 1;
    assert_int_equal(ctl_topo_oadr_domain(&T, &e, "dr-b"), 2); /* --program as given */
    snprintf(e.program_id, sizeof e.program_id, "dr-b");
    assert_int_equal(ctl_topo_oadr_domain(&T, &e, NULL), 2); /* the event's programID */
    ctl_topo_free(&T);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_period),         cmocka_unit_test(test_targets),
        cmocka_unit_test(test_ceilings),       cmocka_unit_test(test_site_alone),
        cmocka_unit_test(test_openadr_domain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
