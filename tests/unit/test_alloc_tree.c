/* Nested budgets (alloc.h, issue 28): hand-computed oracle and proportional
 * allocations under a tree, the case where greedy by slope is not optimal
 * (a job spread over two racks), infeasible domains named, the tree's
 * validation and life across reset, ties, counts, and a one-domain tree
 * giving the flat allocation. The comparison with scipy's linprog and a
 * brute force is test_alloc_tree_lp.c. */
#include "test_util.h"

#include <gsl/gsl_rng.h>
#include <string.h>

#include "pfi/alloc.h"

#define NP PFI_ALLOC_NO_PARENT

/* Two-point curves from (lo, 0) to (hi, t): one segment of slope t / (hi - lo). */
static double P2[][2] = {{100, 200}, {100, 200}, {100, 200}, {100, 300}};
static double T2[][2] = {{0, 100}, {0, 50}, {0, 80}, {0, 100}};

static pfi_alloc_problem *make(size_t n, const int *curve)
{
    pfi_alloc_job j[8];
    memset(j, 0, sizeof j);
    static const char *names[] = {"A", "B", "C", "D", "E", "F", "G", "H"};
    for (size_t i = 0; i < n; i++)
        j[i] = (pfi_alloc_job){.name = names[i],
                               .P = P2[curve[i]],
                               .T = T2[curve[i]],
                               .n = 2,
                               .pfi = NAN,
                               .dram_copy = NAN};
    pfi_alloc_problem *p = NULL;
    pfi_error err;
    if (pfi_alloc_problem_create(j, n, &p, &err)) fail_msg("create: %s", err.msg);
    return p;
}

static void set_tree(pfi_alloc_problem *p, const pfi_alloc_domain *d, size_t nd,
                     const pfi_alloc_span *s, size_t ns)
{
    pfi_error err;
    if (pfi_alloc_problem_set_tree(p, d, nd, s, ns, &err)) fail_msg("set_tree: %s", err.msg);
}

static void run(pfi_alloc_problem *p, pfi_alloc_policy pol, double budget, const double *want,
                size_t n)
{
    pfi_alloc_out o[8];
    pfi_alloc_result r;
    pfi_error err;
    if (pfi_alloc_run(p, pol, budget, o, &r, &err))
        fail_msg("%s: %s", pfi_alloc_policy_name(pol), err.msg);
    for (size_t i = 0; i < n; i++)
        if (fabs(o[i].power_w - want[i]) > 1e-9)
            fail_msg("%s: job %zu power %.12g, want %.12g", pfi_alloc_policy_name(pol), i,
                     o[i].power_w, want[i]);
}

/* A and B in rack-1 (limit 250 W), C in rack-2; budget 500 W. Floors 300 W.
 * Flat, the oracle gives A (slope 1) and C (0.8) their 100 W each. With the
 * tree rack-1 has 50 W above its floors: A takes them, C its 100 W, B none. */
static void oracle_hand(void **state)
{
    (void)state;
    pfi_alloc_problem *p = make(3, (int[]){0, 1, 2});
    run(p, PFI_POLICY_ORACLE, 500, (double[]){200, 100, 200}, 3);
    pfi_alloc_domain d[] = {
        {"site", NP, INFINITY, 0}, {"rack-1", 0, 250, 0}, {"rack-2", 0, INFINITY, 0}};
    pfi_alloc_span s[] = {{0, 1, 1}, {1, 1, 1}, {2, 2, 1}};
    set_tree(p, d, 3, s, 3);
    assert_int_equal(pfi_alloc_problem_domains(p), 3);
    run(p, PFI_POLICY_ORACLE, 500, (double[]){150, 100, 200}, 3);
    assert_near(pfi_alloc_problem_domain_power(p, 0), 450, 1e-9);
    assert_near(pfi_alloc_problem_domain_power(p, 1), 250, 1e-9);
    assert_near(pfi_alloc_problem_domain_power(p, 2), 200, 1e-9);
    assert_true(isnan(pfi_alloc_problem_domain_power(p, 3)));
    /* fixed power in rack-2 (30 W) and a site limit of 420 W: the site has
     * 420 - 30 - 300 = 90 W above the floors; A takes 50 (rack-1 full), C 40 */
    d[0].limit_w = 420;
    d[2].fixed_w = 30;
    set_tree(p, d, 3, s, 3);
    run(p, PFI_POLICY_ORACLE, 500, (double[]){150, 100, 140}, 3);
    assert_near(pfi_alloc_problem_domain_power(p, 0), 420, 1e-9);
    assert_near(pfi_alloc_problem_domain_power(p, 2), 170, 1e-9);
    /* the budget is on the jobs alone: 380 W binds over the site's 420 */
    run(p, PFI_POLICY_ORACLE, 380, (double[]){150, 100, 130}, 3);
    /* pfi_alloc_oracle honours the tree too (learn calls it) */
    double pw[3], tput;
    pfi_error err;
    assert_int_equal(pfi_alloc_oracle(p, 500, pw, &tput, &err), PFI_OK);
    assert_near(pw[0], 150, 1e-9);
    assert_near(pw[2], 140, 1e-9);
    assert_near(tput, 50 + 0 + 32, 1e-9);
    pfi_alloc_problem_destroy(p);
}

/* Equal weights (Pmax, all 200 W): rack-1 (A, B) at 300 W sheds 50 W each.
 * A budget of 400 W then sheds 100 W more: C sheds 200 l, A and B
 * max(50, 200 l) each: 600 l - 100 = 100, l = 1/3: all at 133.3 W. */
static void equal_hand(void **state)
{
    (void)state;
    pfi_alloc_problem *p = make(3, (int[]){0, 1, 2});
    pfi_alloc_domain d[] = {
        {"site", NP, INFINITY, 0}, {"rack-1", 0, 300, 0}, {"rack-2", 0, INFINITY, 0}};
    pfi_alloc_span s[] = {{0, 1, 1}, {1, 1, 1}, {2, 2, 1}};
    set_tree(p, d, 3, s, 3);
    run(p, PFI_POLICY_EQUAL, 600, (double[]){150, 150, 200}, 3);
    assert_near(pfi_alloc_problem_domain_power(p, 1), 300, 1e-9);
    run(p, PFI_POLICY_EQUAL, 450, (double[]){150, 150, 150}, 3);
    double t = 400.0 / 3;
    run(p, PFI_POLICY_EQUAL, 400, (double[]){t, t, t}, 3);
    /* moe-ft with no MoE job is equal; pfi weights Pmax PFI / Tmax: without
     * a PFI the policy refuses, as flat */
    run(p, PFI_POLICY_MOE_FT, 400, (double[]){t, t, t}, 3);
    pfi_alloc_out o[3];
    pfi_error err;
    assert_int_equal(pfi_alloc_run(p, PFI_POLICY_PFI, 400, o, NULL, &err), PFI_EINVAL);
    /* caller weights: B weight 0 in rack-1 keeps Pmax while A can shed; A
     * alone sheds rack-1's 100 W (to its floor, 100 W) */
    double w[3] = {1, 0, 1}, pw[3];
    assert_int_equal(pfi_alloc_proportional(p, w, 600, pw, &err), PFI_OK);
    assert_near(pw[0], 100, 1e-9);
    assert_near(pw[1], 200, 1e-9);
    assert_near(pw[2], 200, 1e-9);
    /* rack-1 at 250 W: A at its floor, the zero-weight B sheds the other 50 */
    d[1].limit_w = 250;
    set_tree(p, d, 3, s, 3);
    assert_int_equal(pfi_alloc_proportional(p, w, 600, pw, &err), PFI_OK);
    assert_near(pw[0], 100, 1e-9);
    assert_near(pw[1], 150, 1e-9);
    pfi_alloc_problem_destroy(p);
}

/* D spreads half its power over each rack (P 100-300 W, slope 0.5); B sits in
 * rack-1 (slope 0.6). Rack-1 (limit 200 W) has 200 - 50 - 100 = 50 W above
 * the floors. Greedy by slope gives B those 50 W (30 tokens/s); but D costs
 * rack-1 half a watt per watt, 1 token/s per rack-1 watt: D takes 100 W (50
 * tokens/s) and B none. The oracle must find the second. */
static void spread_beats_greedy(void **state)
{
    (void)state;
    double PB[] = {100, 200}, TB[] = {0, 60};
    pfi_alloc_job j[2] = {{.name = "D", .P = P2[3], .T = T2[3], .n = 2},
                          {.name = "B", .P = PB, .T = TB, .n = 2}};
    pfi_alloc_problem *p = NULL;
    pfi_error err;
    assert_int_equal(pfi_alloc_problem_create(j, 2, &p, &err), PFI_OK);
    pfi_alloc_domain d[] = {
        {"site", NP, INFINITY, 0}, {"rack-1", 0, 200, 0}, {"rack-2", 0, INFINITY, 0}};
    pfi_alloc_span s[] = {{0, 1, 0.5}, {0, 2, 0.5}, {1, 1, 1}};
    set_tree(p, d, 3, s, 3);
    pfi_alloc_out o[2];
    pfi_alloc_result r;
    assert_int_equal(pfi_alloc_run(p, PFI_POLICY_ORACLE, 1000, o, &r, &err), PFI_OK);
    assert_near(o[0].power_w, 200, 1e-6);
    assert_near(o[1].power_w, 100, 1e-6);
    assert_near(r.total_tput, 50, 1e-6);
    assert_near(pfi_alloc_problem_domain_power(p, 1), 200, 1e-6);
    assert_near(pfi_alloc_problem_domain_power(p, 2), 100, 1e-6);
    /* equal weights: rack-1 draws 150 + 200 at Pmax, sheds 150 W: D by 300 l
     * (counting half in rack-1: 150 l), B by 200 l; 350 l = 150 */
    assert_int_equal(pfi_alloc_run(p, PFI_POLICY_EQUAL, 1000, o, &r, &err), PFI_OK);
    double l = 150.0 / 350;
    assert_near(o[0].power_w, 300 - 300 * l, 1e-9);
    assert_near(o[1].power_w, 200 - 200 * l, 1e-9);
    assert_near(pfi_alloc_problem_domain_power(p, 1), 200, 1e-9);
    pfi_alloc_problem_destroy(p);
}

/* The LP's window (alloc_tree_lp.c) must widen: 200 one-segment jobs in
 * rack-1 (10 W each, slopes 1 + 0.001 j) and S, half in rack-1 and half in
 * rack-2, 1200 W of slope 5 (10 tokens/s per rack-1 W). Rack-1 has 1000 W
 * above the floors. The greedy with S at its floor fills the top 100 jobs;
 * the optimum gives S its 1200 W (600 W of rack-1) and the top 40 jobs the
 * other 400 W: the threshold moves 60 segments, past the first window, and
 * a window not widened (its top fixed full) leaves S 320 W. */
static void spread_moves_threshold(void **state)
{
    (void)state;
    enum { NJ = 200 };
    static double P[NJ + 1][2], T[NJ + 1][2];
    pfi_alloc_job j[NJ + 1];
    pfi_alloc_span s[NJ + 2];
    memset(j, 0, sizeof j);
    for (size_t i = 0; i < NJ; i++) {
        P[i][0] = 100;
        P[i][1] = 110;
        T[i][0] = 0;
        T[i][1] = 10 * (1 + 0.001 * (double)i);
        j[i] = (pfi_alloc_job){.P = P[i], .T = T[i], .n = 2, .pfi = NAN, .dram_copy = NAN};
        s[i] = (pfi_alloc_span){i, 1, 1};
    }
    P[NJ][0] = 100;
    P[NJ][1] = 1300;
    T[NJ][0] = 0;
    T[NJ][1] = 6000;
    j[NJ] =
        (pfi_alloc_job){.name = "S", .P = P[NJ], .T = T[NJ], .n = 2, .pfi = NAN, .dram_copy = NAN};
    s[NJ] = (pfi_alloc_span){NJ, 1, 0.5};
    s[NJ + 1] = (pfi_alloc_span){NJ, 2, 0.5};
    pfi_alloc_problem *p = NULL;
    pfi_error err;
    assert_int_equal(pfi_alloc_problem_create(j, NJ + 1, &p, &err), PFI_OK);
    pfi_alloc_domain d[] = {{"site", NP, INFINITY, 0},
                            {"rack-1", 0, NJ * 100 + 50 + 1000, 0},
                            {"rack-2", 0, INFINITY, 0}};
    set_tree(p, d, 3, s, NJ + 2);
    double pw[NJ + 1], tput;
    if (pfi_alloc_oracle(p, 1e6, pw, &tput, &err)) fail_msg("oracle: %s", err.msg);
    assert_near(pw[NJ], 1300, 1e-6);
    for (size_t i = 0; i < NJ; i++)
        if (fabs(pw[i] - (i >= NJ - 40 ? 110 : 100)) > 1e-6)
            fail_msg("job %zu: %.9g W, want %d", i, pw[i], i >= NJ - 40 ? 110 : 100);
    assert_near(pfi_alloc_problem_domain_power(p, 1), NJ * 100 + 50 + 1000, 1e-6);
    double want = 6000;
    for (size_t i = NJ - 40; i < NJ; i++)
        want += 10 * (1 + 0.001 * (double)i);
    assert_near(tput, want, 1e-6);
    pfi_alloc_problem_destroy(p);
}

static void infeasible(void **state)
{
    (void)state;
    pfi_alloc_problem *p = make(3, (int[]){0, 1, 2});
    pfi_alloc_domain d[] = {
        {"site", NP, INFINITY, 0}, {"rack-1", 0, 150, 0}, {"rack-2", 0, 240, 150}};
    pfi_alloc_span s[] = {{0, 1, 1}, {1, 1, 1}, {2, 2, 1}};
    set_tree(p, d, 3, s, 3);
    pfi_alloc_out o[3];
    pfi_error err;
    for (int pol = 0; pol < PFI_POLICY_COUNT; pol++) {
        if (pol == PFI_POLICY_PFI || pol == PFI_POLICY_DRAM_COPY) continue;
        assert_int_equal(pfi_alloc_run(p, (pfi_alloc_policy)pol, 1000, o, NULL, &err),
                         PFI_EINFEASIBLE);
        /* rack-1 comes first in pre-order: its floors are 200 W over 150 */
        assert_non_null(strstr(err.msg, "domain rack-1"));
        assert_non_null(strstr(err.msg, "200.0 W over its limit 150.0 W"));
    }
    d[1].limit_w = 200; /* rack-2 next: 100 W floor + 150 W fixed over 240 */
    set_tree(p, d, 3, s, 3);
    assert_int_equal(pfi_alloc_run(p, PFI_POLICY_ORACLE, 1000, o, NULL, &err), PFI_EINFEASIBLE);
    assert_non_null(strstr(err.msg, "domain rack-2"));
    d[2].limit_w = 250; /* exactly at the floors: feasible, everyone at the floor */
    set_tree(p, d, 3, s, 3);
    assert_int_equal(pfi_alloc_run(p, PFI_POLICY_ORACLE, 1000, o, NULL, &err), PFI_OK);
    assert_near(o[2].power_w, 100, 1e-9);
    assert_int_equal(pfi_alloc_run(p, PFI_POLICY_EQUAL, 1000, o, NULL, &err), PFI_OK);
    assert_near(o[0].power_w + o[1].power_w, 200, 1e-9);
    assert_near(o[2].power_w, 100, 1e-9);
    /* a limit of 0 on a domain with no jobs and no fixed power is fine */
    pfi_alloc_problem_destroy(p);
}

static void bad_trees(void **state)
{
    (void)state;
    pfi_alloc_problem *p = make(2, (int[]){0, 1});
    pfi_error err;
    static const struct {
        pfi_alloc_domain d[4];
        size_t nd;
        pfi_alloc_span s[3];
        size_t ns;
        const char *want;
    } cases[] = {
        {{{"r", 0, 1, 0}}, 1, {{0}}, 0, "domain r: parent out of order"},
        {{{"r", NP, 1, 0}, {"a", 1, 1, 0}}, 2, {{0}}, 0, "domain a: parent out of order"},
        /* c's parent a was closed by b: not pre-order */
        {{{"r", NP, 1, 0}, {"a", 0, 1, 0}, {"b", 0, 1, 0}, {"c", 1, 1, 0}},
         4,
         {{0}},
         0,
         "domain c: not in pre-order"},
        {{{"r", NP, NAN, 0}}, 1, {{0}}, 0, "domain r: limit nan W"},
        {{{"r", NP, -1, 0}}, 1, {{0}}, 0, "domain r: limit -1 W"},
        {{{"r", NP, 1, INFINITY}}, 1, {{0}}, 0, "domain r: fixed power inf W"},
        {{{"r", NP, 1, 0}}, 1, {{2, 0, 1}}, 1, "span 0: job 2 out of range"},
        {{{"r", NP, 1, 0}}, 1, {{1, 1, 1}}, 1, "job B: domain 1 out of range"},
        {{{"r", NP, 1, 0}}, 1, {{1, 0, 0}}, 1, "job B: share 0 outside (0, 1]"},
        {{{"r", NP, 1, 0}, {"a", 0, 1, 0}}, 2, {{1, 0, 0.5}, {1, 1, 0.4}}, 2, "sum to 0.9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pfi_error_clear(&err);
        int rc =
            pfi_alloc_problem_set_tree(p, cases[i].d, cases[i].nd, cases[i].s, cases[i].ns, &err);
        if (rc != PFI_EINVAL || !strstr(err.msg, cases[i].want))
            fail_msg("case %zu: rc %d '%s', want '%s'", i, rc, err.msg, cases[i].want);
        assert_int_equal(pfi_alloc_problem_domains(p), 0); /* a refused tree is no tree */
    }
    pfi_alloc_problem_destroy(p);
}

/* The tree outlives a reset with the same job count, not one with another;
 * nd 0 clears it. */
static void tree_life(void **state)
{
    (void)state;
    pfi_alloc_problem *p = make(3, (int[]){0, 1, 2});
    pfi_alloc_domain d[] = {
        {"site", NP, INFINITY, 0}, {"rack-1", 0, 250, 0}, {"rack-2", 0, INFINITY, 0}};
    pfi_alloc_span s[] = {{0, 1, 1}, {1, 1, 1}, {2, 2, 1}};
    set_tree(p, d, 3, s, 3);
    pfi_alloc_job j[3] = {{.P = P2[0], .T = T2[0], .n = 2},
                          {.P = P2[1], .T = T2[1], .n = 2},
                          {.P = P2[2], .T = T2[2], .n = 2}};
    pfi_error err;
    assert_int_equal(pfi_alloc_problem_reset(p, j, 3, &err), PFI_OK);
    assert_int_equal(pfi_alloc_problem_domains(p), 3);
    assert_true(isnan(pfi_alloc_problem_domain_power(p, 0))); /* no run since */
    run(p, PFI_POLICY_ORACLE, 500, (double[]){150, 100, 200}, 3);
    size_t changed = 1;
    assert_int_equal(pfi_alloc_problem_update(p, j, 3, &changed, 1, &err), PFI_OK);
    assert_int_equal(pfi_alloc_problem_domains(p), 3);
    assert_int_equal(pfi_alloc_problem_reset(p, j, 2, &err), PFI_OK);
    assert_int_equal(pfi_alloc_problem_domains(p), 0);
    run(p, PFI_POLICY_ORACLE, 500, (double[]){200, 200}, 2);
    assert_int_equal(pfi_alloc_problem_reset(p, j, 3, &err), PFI_OK);
    set_tree(p, d, 3, s, 3);
    set_tree(p, d, 0, NULL, 0);
    assert_int_equal(pfi_alloc_problem_domains(p), 0);
    run(p, PFI_POLICY_ORACLE, 500, (double[]){200, 100, 200}, 3);
    pfi_alloc_problem_destroy(p);
}

/* Ties: four equal jobs, two in each rack, rack-1 with room for 40 W above
 * the floors, the site for 100: each of rack-1's gets 20, rack-2's the
 * other 60, 30 each. An entry with count 2 in rack-1 gets what its two
 * copies got. */
static void ties_and_counts(void **state)
{
    (void)state;
    pfi_alloc_problem *p = make(4, (int[]){0, 0, 0, 0});
    pfi_alloc_domain d[] = {{"site", NP, 500, 0}, {"rack-1", 0, 240, 0}, {"rack-2", 0, 1e6, 0}};
    pfi_alloc_span s[] = {{0, 1, 1}, {1, 1, 1}, {2, 2, 1}, {3, 2, 1}};
    set_tree(p, d, 3, s, 4);
    run(p, PFI_POLICY_ORACLE, 1e6, (double[]){120, 120, 130, 130}, 4);
    /* rack-1 roomier (300 W: 100 W above floors): the site's 100 W shared
     * by all four alike */
    d[1].limit_w = 300;
    set_tree(p, d, 3, s, 4);
    run(p, PFI_POLICY_ORACLE, 1e6, (double[]){125, 125, 125, 125}, 4);
    pfi_alloc_problem_destroy(p);
    d[1].limit_w = 240;
    pfi_alloc_job j[3] = {{.P = P2[0], .T = T2[0], .n = 2, .count = 2},
                          {.P = P2[0], .T = T2[0], .n = 2},
                          {.P = P2[0], .T = T2[0], .n = 2}};
    pfi_error err;
    assert_int_equal(pfi_alloc_problem_create(j, 3, &p, &err), PFI_OK);
    pfi_alloc_span s3[] = {{0, 1, 1}, {1, 2, 1}, {2, 2, 1}};
    set_tree(p, d, 3, s3, 3);
    run(p, PFI_POLICY_ORACLE, 1e6, (double[]){120, 130, 130}, 3);
    assert_near(pfi_alloc_problem_domain_power(p, 1), 240, 1e-9);
    assert_near(pfi_alloc_problem_domain_power(p, 0), 500, 1e-9);
    /* equal: rack-1 sheds 80 a copy; the site 140 more, from rack-2's jobs
     * (200 l each, l = 0.35 < rack-1's 0.4) */
    run(p, PFI_POLICY_EQUAL, 1e6, (double[]){120, 130, 130}, 3);
    pfi_alloc_problem_destroy(p);
}

/* Large problems, where the oracle's greedy works on buckets of slopes
 * (alloc_tree_oracle.c): the same total as a plain greedy written here
 * (every envelope segment sorted by slope, each taken as far as the rooms
 * on its path allow, which test_alloc_tree_lp proves optimal against the
 * LP), every limit held. 3000 random concave jobs (counts 1-3) and 600 of
 * one curve (ties across racks), a 3-level tree of 21 domains. */
typedef struct {
    double slope, width;
    size_t job;
} rseg;

static int cmp_rseg(const void *a, const void *b)
{
    double x = ((const rseg *)a)->slope, y = ((const rseg *)b)->slope;
    return (x < y) - (x > y);
}

static void large_vs_sorted_greedy(void **state)
{
    (void)state;
    enum { NJ = 3600, NPT = 6, ND = 21 };
    static double P[NJ][NPT], T[NJ][NPT];
    static pfi_alloc_job j[NJ];
    static pfi_alloc_span s[NJ];
    static rseg seg[NJ * NPT];
    static double pw[NJ];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (int trial = 0; trial < 4; trial++) {
        gsl_rng_set(r, 7 + (unsigned long)trial);
        pfi_alloc_domain d[ND];
        d[0] = (pfi_alloc_domain){"site", NP, INFINITY, 0};
        size_t nd = 1, rack[16];
        for (int q = 0; q < 4; q++) {
            size_t pd = nd;
            d[nd++] = (pfi_alloc_domain){"pdu", 0, INFINITY, 0};
            for (int k = 0; k < 4; k++) {
                rack[q * 4 + k] = nd;
                d[nd++] = (pfi_alloc_domain){"rack", pd, INFINITY, 0};
            }
        }
        double pm[ND] = {0};
        for (size_t i = 0; i < NJ; i++) {
            double p0 = 800 + 800 * gsl_rng_uniform(r), t0 = 100 * gsl_rng_uniform(r),
                   sl = 0.5 + gsl_rng_uniform(r);
            for (int k = 0; k < NPT; k++) {
                int same = i >= 3000; /* one curve for the last 600 */
                P[i][k] = same ? 1000 + 200 * k : p0 + 150 * k + 50 * gsl_rng_uniform(r);
                T[i][k] = same ? 10 * k - 0.5 * k * k
                               : (k ? T[i][k - 1] + sl * (P[i][k] - P[i][k - 1]) : t0);
                sl *= 0.5 + 0.4 * gsl_rng_uniform(r);
            }
            j[i] = (pfi_alloc_job){.P = P[i], .T = T[i], .n = NPT, .count = i % 3 + 1};
            s[i] = (pfi_alloc_span){i, rack[gsl_rng_uniform_int(r, 16)], 1};
            for (size_t a = s[i].domain; a != NP; a = d[a].parent)
                pm[a] += (double)j[i].count * P[i][NPT - 1];
        }
        for (size_t a = 1; a < nd; a++)
            d[a].limit_w = pm[a] * (0.6 + 0.35 * gsl_rng_uniform(r));
        double budget = 0.75 * pm[0];
        pfi_alloc_problem *p = NULL;
        pfi_error err;
        assert_int_equal(pfi_alloc_problem_create(j, NJ, &p, &err), PFI_OK);
        set_tree(p, d, nd, s, NJ);
        double tput;
        if (pfi_alloc_oracle(p, budget, pw, &tput, &err)) fail_msg("%s", err.msg);
        /* the reference greedy (curves concave: the envelope is the curve) */
        double room[ND], fl[ND] = {0};
        size_t ns = 0;
        double ref = 0;
        for (size_t i = 0; i < NJ; i++) {
            double c = (double)j[i].count;
            for (size_t a = s[i].domain; a != NP; a = d[a].parent)
                fl[a] += c * P[i][0];
            ref += c * T[i][0];
            for (int k = 1; k < NPT; k++)
                seg[ns++] = (rseg){(T[i][k] - T[i][k - 1]) / (P[i][k] - P[i][k - 1]),
                                   c * (P[i][k] - P[i][k - 1]), i};
        }
        for (size_t a = 0; a < nd; a++)
            room[a] = d[a].limit_w - fl[a];
        room[0] = budget - fl[0];
        qsort(seg, ns, sizeof *seg, cmp_rseg);
        for (size_t k = 0; k < ns; k++) {
            double m = seg[k].width;
            for (size_t a = s[seg[k].job].domain; a != NP; a = d[a].parent)
                m = fmin(m, room[a]);
            if (!(m > 0)) continue;
            for (size_t a = s[seg[k].job].domain; a != NP; a = d[a].parent)
                room[a] -= m;
            ref += m * seg[k].slope;
        }
        if (fabs(tput - ref) > 1e-9 * ref)
            fail_msg("trial %d: oracle %.12g, sorted greedy %.12g", trial, tput, ref);
        for (size_t a = 0; a < nd; a++) {
            double drawn = 0;
            for (size_t i = 0; i < NJ; i++)
                for (size_t e = s[i].domain; e != NP; e = d[e].parent)
                    if (e == a) drawn += (double)j[i].count * pw[i];
            assert_true(drawn <= (a ? d[a].limit_w : budget) * (1 + 1e-12));
        }
        pfi_alloc_problem_destroy(p);
    }
    gsl_rng_free(r);
}

/* The proportional policies on large trees (alloc_tree_share.c's bucketed
 * search): a one-domain tree whose limit is the budget gives flat equal's
 * powers; racks alone binding give each rack flat equal under its limit (a
 * problem of its jobs alone); with the site binding too, every domain stays
 * under its limit and the site is spent to the budget. 2000 random jobs in
 * 8 racks. */
static void proportional_large_vs_flat(void **state)
{
    (void)state;
    enum { NJ = 2000, NPT = 4, NR = 8 };
    static double P[NJ][NPT], T[NJ][NPT], pw[NJ], ref[NJ];
    static pfi_alloc_job j[NJ], sub[NJ];
    static pfi_alloc_span s[NJ];
    static size_t idx[NJ];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    for (size_t i = 0; i < NJ; i++) {
        double p0 = 500 + 1000 * gsl_rng_uniform(r);
        for (int k = 0; k < NPT; k++) {
            P[i][k] = p0 + 300 * k * (0.5 + gsl_rng_uniform(r) * 0.1);
            T[i][k] = 100 * k + 50 * gsl_rng_uniform(r);
        }
        j[i] = (pfi_alloc_job){.P = P[i], .T = T[i], .n = NPT, .count = i % 2 + 1};
        s[i] = (pfi_alloc_span){i, 1 + i % NR, 1};
    }
    pfi_alloc_problem *p = NULL;
    pfi_error err;
    assert_int_equal(pfi_alloc_problem_create(j, NJ, &p, &err), PFI_OK);
    double pm = pfi_alloc_problem_pmax_total(p), fl = pfi_alloc_problem_floor_total(p);
    double budget = fl + 0.4 * (pm - fl);
    /* one domain: flat equal */
    double wt[NJ];
    for (size_t i = 0; i < NJ; i++)
        pfi_alloc_problem_job_range(p, i, &wt[i], NULL, NULL);
    assert_int_equal(pfi_alloc_proportional(p, wt, budget, ref, &err), PFI_OK);
    pfi_alloc_domain one[] = {{"site", NP, budget, 0}};
    pfi_alloc_span s0[NJ];
    for (size_t i = 0; i < NJ; i++)
        s0[i] = (pfi_alloc_span){i, 0, 1};
    set_tree(p, one, 1, s0, NJ);
    assert_int_equal(pfi_alloc_proportional(p, wt, 1e15, pw, &err), PFI_OK);
    for (size_t i = 0; i < NJ; i++)
        if (fabs(pw[i] - ref[i]) > 1e-9 * ref[i])
            fail_msg("job %zu: %.12g, flat %.12g", i, pw[i], ref[i]);
    /* racks alone bind: each as flat equal over its own jobs */
    pfi_alloc_domain d[1 + NR];
    d[0] = (pfi_alloc_domain){"site", NP, INFINITY, 0};
    double rack_pm[NR] = {0}, rack_fl[NR] = {0};
    for (size_t i = 0; i < NJ; i++) {
        double a, b;
        pfi_alloc_problem_job_range(p, i, &a, NULL, &b);
        rack_pm[i % NR] += (double)j[i].count * a;
        rack_fl[i % NR] += (double)j[i].count * b;
    }
    for (size_t k = 0; k < NR; k++)
        d[1 + k] = (pfi_alloc_domain){
            "rack", 0, rack_fl[k] + (0.2 + 0.08 * (double)k) * (rack_pm[k] - rack_fl[k]), 0};
    set_tree(p, d, 1 + NR, s, NJ);
    assert_int_equal(pfi_alloc_proportional(p, wt, 1e15, pw, &err), PFI_OK);
    for (size_t k = 0; k < NR; k++) {
        size_t m = 0;
        double w2[NJ], out2[NJ];
        for (size_t i = k; i < NJ; i += NR) {
            idx[m] = i;
            w2[m] = wt[i];
            sub[m++] = j[i];
        }
        pfi_alloc_problem *q = NULL;
        assert_int_equal(pfi_alloc_problem_create(sub, m, &q, &err), PFI_OK);
        assert_int_equal(pfi_alloc_proportional(q, w2, d[1 + k].limit_w, out2, &err), PFI_OK);
        for (size_t a = 0; a < m; a++)
            if (fabs(pw[idx[a]] - out2[a]) > 1e-9 * out2[a])
                fail_msg("rack %zu job %zu: %.12g, flat %.12g", k, idx[a], pw[idx[a]], out2[a]);
        pfi_alloc_problem_destroy(q);
    }
    /* and the site binding over them: limits held, the budget spent */
    double lim = 0;
    for (size_t k = 0; k < NR; k++)
        lim += d[1 + k].limit_w;
    pfi_alloc_result res;
    double b2 = fl + 0.5 * (lim - fl);
    assert_int_equal(pfi_alloc_run(p, PFI_POLICY_EQUAL, b2, NULL, &res, &err), PFI_OK);
    assert_near(res.total_power_w, b2, 1e-9 * lim);
    for (size_t k = 0; k < NR; k++)
        assert_true(pfi_alloc_problem_domain_power(p, 1 + k) <= d[1 + k].limit_w * (1 + 1e-12));
    pfi_alloc_problem_destroy(p);
    gsl_rng_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(oracle_hand),
        cmocka_unit_test(equal_hand),
        cmocka_unit_test(spread_beats_greedy),
        cmocka_unit_test(spread_moves_threshold),
        cmocka_unit_test(infeasible),
        cmocka_unit_test(bad_trees),
        cmocka_unit_test(tree_life),
        cmocka_unit_test(ties_and_counts),
        cmocka_unit_test(large_vs_sorted_greedy),
        cmocka_unit_test(proportional_large_vs_flat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
