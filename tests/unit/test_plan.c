/* The control period's plan: prior curves, budgets, caps, the infeasible
 * case, measured points, the supply curve. Hand-computed expectations; the
 * supply curve's interpolated throughputs from Python's math (the command is
 * beside the numbers). */
#include "test_util.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "pfi/plan.h"
#include "pfi/sla_file.h"

static pfi_plan_job job8(const char *id, double pfi)
{
    return (pfi_plan_job){
        .id = id, .n_gpus = 8, .min_w = 200, .max_w = 700, .pmax_w = 5600, .tmax = 100, .pfi = pfi};
}

static void run(const pfi_plan_job *j, size_t n, pfi_plan_policy pol, double budget, double fixed,
                double trim, pfi_plan_cap *caps, pfi_plan_result *res)
{
    pfi_plan *p;
    assert_int_equal(pfi_plan_create(&p), PFI_OK);
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_plan_set_jobs(p, j, n, &err) != PFI_OK) fail_msg("%s", err.msg);
    if (pfi_plan_run(p, pol, budget, fixed, trim, caps, res, &err) != PFI_OK)
        fail_msg("%s", err.msg);
    pfi_plan_destroy(p);
}

/* Equal: two 8-GPU jobs of 5600 W share 8000 W: each sheds 1600 W, draws
 * 4000 W, capped at 4000 / 8 = 500 W per GPU. */
static void test_equal(void **st)
{
    pfi_plan_job j[2] = {job8("a", 0.8), job8("b", 0.2)};
    pfi_plan_cap c[2];
    pfi_plan_result r;
    run(j, 2, PFI_PLAN_EQUAL, 8000, 0, 0, c, &r);
    assert_near(c[0].power_w, 4000, 1e-6);
    assert_near(c[0].cap_w, 500, 0);
    assert_near(c[1].cap_w, 500, 0);
    assert_near(r.total_power_w, 8000, 1e-6);
    assert_false(r.infeasible);
    assert_near(r.uncapped_tput, 200, 1e-9);
    /* The same with 1000 W fixed and a 1000 W trim out of 10000 W. */
    run(j, 2, PFI_PLAN_EQUAL, 10000, 1000, 1000, c, &r);
    assert_near(r.jobs_budget_w, 8000, 0);
    assert_near(c[1].cap_w, 500, 0);
}

/* PFI (Eq. 2): shed in proportion to Pmax PFI / Tmax, 0.8 : 0.2 of 3200 W:
 * 2560 and 640 W, powers 3040 and 4960 W, caps 380 and 620 W. */
static void test_pfi(void **st)
{
    pfi_plan_job j[2] = {job8("a", 0.8), job8("b", 0.2)};
    pfi_plan_cap c[2];
    pfi_plan_result r;
    run(j, 2, PFI_PLAN_PFI, 8000, 0, 0, c, &r);
    assert_near(c[0].power_w, 3040, 1e-6);
    assert_near(c[1].power_w, 4960, 1e-6);
    assert_near(c[0].cap_w, 380, 0);
    assert_near(c[1].cap_w, 620, 0);
}

/* A budget above the jobs' Pmax leaves them at the top of their range. */
static void test_uncut(void **st)
{
    pfi_plan_job j[1] = {job8("a", 0.5)};
    j[0].pmax_w = 4000; /* draws 4000 W uncapped, under 8 x 700 */
    pfi_plan_cap c[1];
    pfi_plan_result r;
    run(j, 1, PFI_PLAN_EQUAL, 1e6, 0, 0, c, &r);
    assert_near(c[0].cap_w, 700, 0);
    assert_near(c[0].power_w, 4000, 1e-6);
    /* 3000 W: 3000 / 8 = 375 W per GPU on the prior. */
    run(j, 1, PFI_PLAN_EQUAL, 3000, 0, 0, c, &r);
    assert_near(c[0].cap_w, 375, 0);
}

/* Infeasible: floors (8 x 200 W each) above the budget: every job at its
 * floor, the shortfall said. */
static void test_infeasible(void **st)
{
    pfi_plan_job j[2] = {job8("a", 0.8), job8("b", 0.2)};
    pfi_plan_cap c[2];
    pfi_plan_result r;
    run(j, 2, PFI_PLAN_PFI, 3000, 1000, 0, c, &r);
    assert_true(r.infeasible);
    assert_near(r.shortfall_w, 1200, 1e-6);
    assert_near(c[0].cap_w, 200, 0);
    assert_near(c[1].cap_w, 200, 0);
    assert_true(c[0].at_floor && c[1].at_floor);
}

/* A measured point replaces the prior: the job drew 3000 W at a 500 W cap
 * (not the prior's 4000 W), so 3000 W is reached at 500 W. */
static void test_measured(void **st)
{
    pfi_plan_obs obs[2] = {{700, 3600, 100, 0}, {500, 3000, 95, 0}};
    pfi_plan_job j[1] = {job8("a", 0.5)};
    j[0].pmax_w = 3600;
    j[0].obs = obs;
    j[0].n_obs = 2;
    pfi_plan_cap c[1];
    pfi_plan_result r;
    run(j, 1, PFI_PLAN_EQUAL, 3000, 0, 0, c, &r);
    assert_near(c[0].cap_w, 500, 0);
    assert_near(c[0].tput, 95, 1e-9);
}

/* Supply curve of one prior job (PFI 0.5, 5600 W, Tmax 100) in 3 steps:
 * 5600, 3600 and 1600 W. Interpolated on the prior's 8 points:
 *   python3 -c "import math; c=[200+500*k/7 for k in range(8)]; P=[8*x for x in c];
 *     T=[100*math.sqrt(p/5600) for p in P]; ..." -> T(3400) = 77.88618386130176
 * (3600 W is between the same two points: computed the same way). */
static void test_flexibility(void **st)
{
    pfi_plan *p;
    pfi_plan_create(&p);
    pfi_plan_job j[1] = {job8("a", 0.5)};
    pfi_error err;
    assert_int_equal(pfi_plan_set_jobs(p, j, 1, &err), PFI_OK);
    pfi_plan_flex f[3];
    assert_int_equal(pfi_plan_flexibility(p, PFI_PLAN_EQUAL, 3, f, &err), PFI_OK);
    assert_near(f[0].gpu_power_w, 5600, 1e-6);
    assert_near(f[0].kept, 1, 1e-12);
    assert_near(f[1].gpu_power_w, 3600, 1e-6);
    /* 3600 lies in [3314.29, 3885.71]: T = 76.93 + (83.30 - 76.93) * 0.5 */
    double t1 = 100 * sqrt((8 * (200 + 500 * 3 / 7.0)) / 5600),
           t2 = 100 * sqrt((8 * (200 + 500 * 4 / 7.0)) / 5600);
    assert_near(f[1].tput, t1 + (t2 - t1) * (3600 - 8 * (200 + 500 * 3 / 7.0)) / (8 * 500 / 7.0),
                1e-9);
    assert_near(f[2].gpu_power_w, 1600, 1e-6);
    assert_near(f[2].tput, 53.45224838248488, 1e-9);
    pfi_plan_destroy(p);
}

/* An SLA floor (90% of Tmax) holds job a at the power where its prior curve
 * keeps 90 tokens/s, 4538.09 W:
 *   python3 -c "import math; c=[200+500*k/7 for k in range(8)]; P=[8*x for x in c];
 *     T=[100*math.sqrt(p/5600) for p in P]; [print(P[i]+(90-T[i])*(P[i+1]-P[i])/(T[i+1]-T[i]))
 *     for i in range(7) if T[i]<=90<=T[i+1]]"   -> 4538.094787882513
 * and b takes the rest of 8000 W. The floors file is read with its errors. */
static void test_sla(void **st)
{
    char path[] = "/tmp/test_plan_sla_XXXXXX";
    int fd = mkstemp(path);
    const char *text = "job,sla\na,0.9\nb,0\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    pfi_sla *s;
    size_t n;
    pfi_error err;
    pfi_error_clear(&err);
    assert_int_equal(pfi_sla_read(path, &s, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    pfi_plan_job j[2] = {job8("a", 0.5), job8("b", 0.5)};
    j[0].sla_frac = pfi_sla_of(s, n, "a");
    j[1].sla_frac = pfi_sla_of(s, n, "b");
    assert_near(pfi_sla_of(s, n, "nope"), 0, 0);
    free(s);
    pfi_plan_cap c[2];
    pfi_plan_result r;
    run(j, 2, PFI_PLAN_EQUAL, 8000, 0, 0, c, &r);
    assert_near(c[0].power_w, 4538.094787882513, 1e-6);
    assert_true(c[0].at_floor);
    assert_near(c[1].power_w, 8000 - 4538.094787882513, 1e-6);
    fd = open(path, O_WRONLY | O_TRUNC);
    text = "job,sla\na,0.9\na,0.5\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(pfi_sla_read(path, &s, &n, &err), PFI_EINVAL);
    assert_int_equal(err.line, 3);
    fd = open(path, O_WRONLY | O_TRUNC);
    text = "job,sla\na,1.5\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(pfi_sla_read(path, &s, &n, &err), PFI_EINVAL);
    assert_int_equal(err.line, 2);
    unlink(path);
}

/* A measurement pins the prior: job a (SLA 0.75, PFI 0.5) was measured at
 * cap 400 W: 3200 W, 55 tokens/s, where the prior says 100 sqrt(3200 / 5600)
 * = 75.6. The prior points keep the prior's shape s = sqrt(P / 5600)
 * between that point and the uncapped one: T = 55 + 45 (s - s(3200)) /
 * (1 - s(3200)): 69.2085 at 3885.7 W (cap 485.7), 80.1141 at 4457.1 W; its
 * floor (75 tokens/s) 4189.18 W between them (python3, the command in the
 * commit that added this). On the unpinned prior the floor would be
 * 0.75^2 5600 = 3150 W. */
static void test_measured_pins_prior(void **st)
{
    pfi_plan_obs obs[1] = {{400, 3200, 55, 0}};
    pfi_plan_job j[2] = {job8("a", 0.5), job8("b", 0.5)};
    j[0].obs = obs;
    j[0].n_obs = 1;
    j[0].sla_frac = 0.75;
    pfi_plan_cap c[2];
    pfi_plan_result r;
    run(j, 2, PFI_PLAN_EQUAL, 6000, 0, 0, c, &r);
    assert_true(c[0].at_floor);
    assert_near(c[0].power_w, 4189.18, 0.01);
    /* at its floor the cap is rounded up (never below the SLA) */
    assert_true(c[0].cap_w >= 485.7 + (4189.18 - 3885.71) / (4457.14 - 3885.71) * 71.43 - 1e-6);
}

static void test_learn_needs_use(void **st)
{
    pfi_plan *p;
    pfi_plan_create(&p);
    pfi_plan_job j[1] = {job8("a", 0.5)};
    pfi_error err;
    pfi_plan_set_jobs(p, j, 1, &err);
    pfi_plan_cap c[1];
    pfi_plan_result r;
    assert_int_equal(pfi_plan_run(p, PFI_PLAN_LEARN, 3000, 0, 0, c, &r, &err), PFI_EINVAL);
    j[0].min_w = 0;
    assert_int_equal(pfi_plan_set_jobs(p, j, 1, &err), PFI_EINVAL);
    pfi_plan_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal),
        cmocka_unit_test(test_pfi),
        cmocka_unit_test(test_uncut),
        cmocka_unit_test(test_infeasible),
        cmocka_unit_test(test_measured),
        cmocka_unit_test(test_flexibility),
        cmocka_unit_test(test_sla),
        cmocka_unit_test(test_learn_needs_use),
        cmocka_unit_test(test_measured_pins_prior),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
