/* The control period's plan: prior curves, budgets, caps, the infeasible
 * case, measured points, the supply curve, the bands. Hand-computed
 * expectations; the prior's figures from tests/unit/plan_prior_ref.py, which
 * computes the kernel prior from data/'s CSVs directly (not from the
 * generated table); the command is beside the numbers. */
#include "test_util.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "pfi/plan.h"
#include "pfi/sla_file.h"

static pfi_plan_job job8(const char *id, double pfi)
{
    return (pfi_plan_job){.id = id,
                          .n_gpus = 8,
                          .min_w = 200,
                          .max_w = 700,
                          .pmax_w = 5600,
                          .tmax = 100,
                          .pfi = pfi,
                          .pfi_sd = 0.2};
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

/* Supply curve of one prior job (PFI 1.5 +- 0.2, 5600 W, Tmax 100) in 3
 * steps: 5600, 3600 and 1600 W, interpolated on the prior's 8 points
 * (caps 200 + 500 k / 7, P = 8 cap):
 *   python3 -c "import sys; sys.path.insert(0, 'tests/unit'); from plan_prior_ref import prior;
 *     P=[8*(200+500*k/7) for k in range(8)]; T=[100*prior(1.5,0.2,p/5600)[0] for p in P]; ..."
 * T(3600) = 73.7014918113515 (linear between 3314.29 and 3885.71 W),
 * T(1600) = 28.08592231476508; its SD the prior's (far from any measured
 * point), linear between the grid's SDs: a, b = prior(1.5, 0.2, 0.25)[1],
 * prior(1.5, 0.2, 0.30)[1]; 100 (a + (b - a) (1600 / 5600 - 0.25) / 0.05) =
 * 8.022423322350582, so at 90% (z = 1.2815515655446004) the bound is
 * 28.0859 - 1.28155 x 8.02242 = 17.8047. */
static void test_flexibility(void **st)
{
    pfi_plan *p;
    pfi_plan_create(&p);
    pfi_plan_job j[1] = {job8("a", 1.5)};
    pfi_error err;
    assert_int_equal(pfi_plan_set_jobs(p, j, 1, &err), PFI_OK);
    pfi_plan_flex f[3];
    assert_int_equal(pfi_plan_flexibility(p, PFI_PLAN_EQUAL, 3, f, &err), PFI_OK);
    assert_near(f[0].gpu_power_w, 5600, 1e-6);
    assert_near(f[0].kept, 1, 1e-12);
    assert_near(f[0].kept_lo, 1, 1e-12); /* uncapped: measured, no band */
    assert_near(f[1].gpu_power_w, 3600, 1e-6);
    assert_near(f[1].tput, 73.7014918113515, 1e-6);
    assert_near(f[2].gpu_power_w, 1600, 1e-6);
    assert_near(f[2].tput, 28.08592231476508, 1e-6);
    assert_near(f[2].tput_sd, 8.022423322350582, 1e-6);
    assert_near(f[2].tput_lo, 28.08592231476508 - 1.2815515655446004 * 8.022423322350582, 1e-6);
    /* a stated confidence moves the bound: 50% is the expected value */
    pfi_plan_set_confidence(p, 0.5);
    assert_int_equal(pfi_plan_flexibility(p, PFI_PLAN_EQUAL, 3, f, &err), PFI_OK);
    assert_near(f[2].tput_lo, f[2].tput, 1e-9);
    pfi_plan_destroy(p);
}

/* Without an estimate the job is planned on the dataset's least flexible
 * curve: its lower envelope, the min over the 35 groups of T / Tmax on the
 * grid, linear between (python3, plan_prior_ref.py's groups and y_of:
 * e = lambda u: min(y_of(pts, u) for _, pts in groups()); at x = 1600 /
 * 5600 between e(0.25) and e(0.30): 0.190125), a bound equal to it; the old
 * flat default promised 100 sqrt(1600 / 5600) = 53.5. */
#define ENVELOPE_1600 19.012500079758336
static void test_no_estimate(void **st)
{
    pfi_plan *p;
    pfi_plan_create(&p);
    pfi_plan_job j[1] = {job8("a", NAN)};
    pfi_error err;
    assert_int_equal(pfi_plan_set_jobs(p, j, 1, &err), PFI_OK);
    pfi_plan_flex f[2];
    assert_int_equal(pfi_plan_flexibility(p, PFI_PLAN_EQUAL, 2, f, &err), PFI_OK);
    assert_near(f[1].tput, ENVELOPE_1600, 1e-4);
    assert_near(f[1].tput_lo, f[1].tput, 1e-9);
    pfi_plan_destroy(p);
}

/* An SLA floor (90% of Tmax) holds job a at the power where its prior curve
 * keeps 90 tokens/s, 4675.91 W (PFI 1.5 +- 0.2, the points of
 * test_flexibility's command: [P[i]+(90-T[i])*(P[i+1]-P[i])/(T[i+1]-T[i])
 * for i in range(7) if T[i]<=90<=T[i+1]] -> 4675.905361186331)
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
    pfi_plan_job j[2] = {job8("a", 1.5), job8("b", 1.5)};
    j[0].sla_frac = pfi_sla_of(s, n, "a");
    j[1].sla_frac = pfi_sla_of(s, n, "b");
    assert_near(pfi_sla_of(s, n, "nope"), 0, 0);
    free(s);
    pfi_plan_cap c[2];
    pfi_plan_result r;
    run(j, 2, PFI_PLAN_EQUAL, 8000, 0, 0, c, &r);
    assert_near(c[0].power_w, 4675.905361186331, 1e-6);
    assert_true(c[0].at_floor);
    assert_near(c[1].power_w, 8000 - 4675.905361186331, 1e-6);
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

/* A measurement pins the prior: job a (SLA 0.75, PFI 1.5 +- 0.2) was
 * measured at cap 400 W: 3200 W, 55 tokens/s. The prior points keep the
 * prior's shape s(P) between that point and the uncapped one: T = 55 + 45
 * (s - s(3200)) / (1 - s(3200)): 72.6605 at 3885.7 W (cap 485.7), 83.6017
 * at 4457.1 W; its floor (75 tokens/s) 4007.90 W between them
 * (plan_prior_ref.py's prior as s, linear between the points). */
static void test_measured_pins_prior(void **st)
{
    pfi_plan_obs obs[1] = {{400, 3200, 55, 0}};
    pfi_plan_job j[2] = {job8("a", 1.5), job8("b", 1.5)};
    j[0].obs = obs;
    j[0].n_obs = 1;
    j[0].sla_frac = 0.75;
    pfi_plan_cap c[2];
    pfi_plan_result r;
    run(j, 2, PFI_PLAN_EQUAL, 6000, 0, 0, c, &r);
    assert_true(c[0].at_floor);
    assert_near(c[0].power_w, 4007.8975397556987, 0.01);
    /* at its floor the cap is rounded up (never below the SLA) */
    assert_true(c[0].cap_w >= 485.71 + (4007.90 - 3885.71) / (4457.14 - 3885.71) * 71.43 - 0.01);
    /* its band near the measured point is the reading's and the wander's
     * (0.5%), not the prior's: at 3200 W exactly, 0.005 x 55 */
    pfi_plan *p;
    pfi_plan_create(&p);
    pfi_error err;
    j[0].sla_frac = 0;
    assert_int_equal(pfi_plan_set_jobs(p, j, 1, &err), PFI_OK);
    assert_int_equal(pfi_plan_run(p, PFI_PLAN_EQUAL, 3200, 0, 0, c, &r, &err), PFI_OK);
    assert_near(c[0].tput, 55, 1e-6);
    assert_near(c[0].tput_sd, 0.005 * 55, 1e-6);
    pfi_plan_destroy(p);
}

/* Classes (issue 29). Jobs a and b (PFI 1.5 +- 0.2, 5600 W, Tmax 100) share
 * class "c"; a was measured at cap 400: 3200 W, 55 tokens/s. Equal gives
 * both 3200 W (cap 400). b, unmeasured, takes a's point: 55 tokens/s, its
 * SD the spread assumed between a class's jobs from one job, 0.02 x
 * sqrt(1 + 1/1) x 100 = 2.8284; its bound 55 - 1.28155 x 2.8284 = 51.375 is
 * under its prior's (plan_prior_ref.py at x = 3200 / 5600, linear between
 * the grid's 0.55 and 0.60: 100 (0.657163 - 1.28155 x 0.062807) = 57.667),
 * so it stands (a's point at cap 500 enters b's curve too). Then b reads
 * 75 tokens/s at cap 400 itself: 0.20 of Tmax from a, over 3 SD
 * (3 sqrt(2 x 0.02^2 + 0.005^2) = 0.087): both are split out, each on its
 * own points (b no longer takes a's at cap 500). */
static void test_class(void **st)
{
    pfi_plan_obs oa[2] = {{400, 3200, 55, 0}, {500, 4000, 70, 0}}, ob[1] = {{400, 3200, 75, 0.5}};
    pfi_plan_job j[2] = {job8("a", 1.5), job8("b", 1.5)};
    j[0].obs = oa;
    j[0].n_obs = 2;
    j[0].job_class = j[1].job_class = "c";
    pfi_plan_cap c[2];
    pfi_plan_result r;
    run(j, 2, PFI_PLAN_EQUAL, 6400, 0, 0, c, &r);
    assert_near(c[1].power_w, 3200, 1e-6);
    assert_near(c[1].tput, 55, 1e-6);
    assert_true(c[1].class_used);
    assert_near(c[1].tput_sd, 0.02 * sqrt(2) * 100, 1e-6);
    assert_near(c[1].tput_lo, 55 - 1.2815515655446004 * 0.02 * sqrt(2) * 100, 1e-6);
    /* without the class b is on its prior there, linear between the prior's
     * points at 3085.7 and 3657.1 W (test_flexibility's command): 65.657 */
    j[1].job_class = NULL;
    run(j, 2, PFI_PLAN_EQUAL, 6400, 0, 0, c, &r);
    assert_false(c[1].class_used);
    assert_near(c[1].tput, 65.65718227143401, 1e-6);
    /* disagreeing readings split the class */
    j[1].job_class = "c";
    j[1].obs = ob;
    j[1].n_obs = 1;
    run(j, 2, PFI_PLAN_EQUAL, 6400, 0, 0, c, &r);
    assert_false(c[0].class_used);
    assert_false(c[1].class_used);
    assert_near(c[1].tput, 75, 1e-6);
    assert_near(c[0].tput, 55, 1e-6);
}

/* Cliffs (plan_cliff.h): four jobs measured at 5000 W (x 0.89) read at
 * the prior's cap 342.857 W (2742.9 W, x 0.49, where the curve is the
 * prior's shape scaled to the point, as a sample's base is) 40% of what
 * their curve says there: four samples at x 0.49 of shortfall 0.6, so mean
 * and 90% quantile 0.6 at every grid point. At that cap the expected
 * throughput is then 0.4 of the curve's (the job's own reading) and so is
 * the lower bound (depth 0.39, full ramp), less the reading's own spread. A fifth job measured at
 * 2240 W (x 0.4) is not under its own deepest point there: as it was. A reading 1% of Pmax under a
 * measured point is no sample. Then job a is measured at the prior's cap 414.286 W (3314.3 W, x
 * 0.59) at 90 tokens/s, where its curve said t414: its sample is taken again against the curve that
 * point pins, 90 t_curve / t414 at x 0.49 (the shapes' ratio is t_curve / t414), so its shortfall
 * is 1 - 0.4 t414 / 90, and a sixth job measured at 5000 W only, never read, is priced at 1 - (3 x
 * 0.6 + that) / 4 of its curve there; job a itself at its own reading. */
static void test_cliff(void **st)
{
    (void)st;
    const double c3 = 200 + 500.0 * 2 / 7, c4 = 200 + 500.0 * 3 / 7; /* the prior's caps */
    pfi_plan_obs hi = {625, 5000, 95, 0.5}, lo = {280, 2240, 60, 0.5};
    pfi_plan_obs a2[2] = {hi, {c4, 8 * c4, 90, 0.5}};
    pfi_plan_job j[6];
    for (int i = 0; i < 6; i++) {
        static const char *const id[] = {"a", "b", "c", "d", "e", "f"};
        j[i] = job8(id[i], 0.8);
        j[i].obs = i == 4 ? &lo : &hi;
        j[i].n_obs = 1;
    }
    pfi_plan *p;
    assert_int_equal(pfi_plan_create(&p), PFI_OK);
    pfi_error err;
    pfi_error_clear(&err);
    pfi_plan_cap caps[6];
    pfi_plan_result res;
    if (pfi_plan_set_jobs(p, j, 6, &err) != PFI_OK) fail_msg("%s", err.msg);
    for (int i = 0; i < 6; i++)
        caps[i] = (pfi_plan_cap){.cap_w = i == 5 ? c4 : c3};
    pfi_plan_eval(p, caps, &res);
    double t_curve = caps[0].tput, t_e = caps[4].tput, lo_e = caps[4].tput_lo, t414 = caps[5].tput;
    pfi_plan_flex before[2], after[2];
    if (pfi_plan_flexibility(p, PFI_PLAN_PFI, 2, before, &err) != PFI_OK) fail_msg("%s", err.msg);
    assert_true(fabs(caps[0].power_w - 8 * c3) < 1e-9);
    assert_true(caps[0].tput_lo < t_curve && caps[0].tput_lo > 0.4 * t_curve);
    /* a shallow reading (x 0.88, 1% under) changes nothing */
    for (int i = 0; i < 4; i++)
        j[i].reading = (pfi_plan_obs){620, 4944, 50, 0.5};
    if (pfi_plan_set_jobs(p, j, 6, &err) != PFI_OK) fail_msg("%s", err.msg);
    caps[5].cap_w = c3;
    pfi_plan_eval(p, caps, &res);
    assert_true(fabs(caps[0].tput - t_curve) < 1e-9);
    for (int i = 0; i < 4; i++)
        j[i].reading = (pfi_plan_obs){c3, 8 * c3, 0.4 * t_curve, 0.5};
    if (pfi_plan_set_jobs(p, j, 6, &err) != PFI_OK) fail_msg("%s", err.msg);
    pfi_plan_eval(p, caps, &res);
    for (int i = 0; i < 4; i++) {
        assert_true(fabs(caps[i].tput - 0.4 * t_curve) < 1e-9 * t_curve);
        /* the reading part is the job's own reading's spread (0.5 and 0.5%
         * wander of it: 0.511), over the measured point's (0.5 and 0.5% of
         * 95) scaled with the curve below it (0.386): lo is 0.4 of the
         * curve less z of it */
        double r = 0.4 * t_curve, sdi = sqrt(0.5 * 0.5 + 0.005 * r * 0.005 * r);
        assert_true(sdi > sqrt(0.5 * 0.5 + 0.475 * 0.475) * t_curve / 95);
        assert_true(fabs(caps[i].tput_sd - sdi) < 1e-9);
        assert_true(fabs(caps[i].tput_lo - (0.4 * t_curve - 1.2815515655446004 * sdi)) < 1e-9);
    }
    assert_true(fabs(caps[4].tput - t_e) < 1e-9 && fabs(caps[4].tput_lo - lo_e) < 1e-9);
    assert_true(fabs(caps[5].tput - 0.4 * t_curve) < 1e-9 * t_curve); /* the fleet's 0.6 */
    /* the supply curve (GET /v1/flexibility, pfi control plan) says the
     * same: at the floors (x 0.29, under every job's measured point) 0.4 */
    if (pfi_plan_flexibility(p, PFI_PLAN_PFI, 2, after, &err) != PFI_OK) fail_msg("%s", err.msg);
    assert_true(fabs(after[1].tput - 0.4 * before[1].tput) < 1e-9 * before[1].tput);
    assert_true(after[1].tput_lo <= 0.4 * before[1].tput);
    /* a's sample re-based on its new point; no new readings */
    j[0].obs = a2;
    j[0].n_obs = 2;
    for (int i = 0; i < 4; i++)
        j[i].reading = (pfi_plan_obs){0};
    if (pfi_plan_set_jobs(p, j, 6, &err) != PFI_OK) fail_msg("%s", err.msg);
    pfi_plan_eval(p, caps, &res);
    double s_a = 1 - 0.4 * t414 / 90, mean = (3 * 0.6 + s_a) / 4;
    print_message("cliff re-based: t_curve %.4f t414 %.4f s_a %.4f mean %.4f\n", t_curve, t414, s_a,
                  mean);
    assert_true(fabs(caps[5].tput - (1 - mean) * t_curve) < 1e-9 * t_curve);
    assert_true(fabs(caps[0].tput - 0.4 * t_curve) < 1e-9 * t_curve);
    pfi_plan_destroy(p);
}

/* A job's own reading between two of its curve's caps becomes a point
 * (plan_cliff.h, PLAN_CLIFF_PTS): a job measured at 5000 W read at 380 W
 * per GPU (3040 W, x 0.54, between the prior's caps 342.9 and 414.3 W) at
 * half its curve there is priced at that reading at 380 W, at 3040 W
 * still (the point on the line of cap and power), at 414.3 W as before
 * (above its reading: the fleet's, which has too few samples to say
 * anything), and linearly between. */
static void test_cliff_points(void **st)
{
    (void)st;
    const double c4 = 200 + 500.0 * 3 / 7, mid = (380 + c4) / 2;
    pfi_plan_obs hi = {625, 5000, 95, 0.5};
    pfi_plan_job j = job8("a", 0.8);
    j.obs = &hi;
    j.n_obs = 1;
    pfi_plan *p;
    assert_int_equal(pfi_plan_create(&p), PFI_OK);
    pfi_error err;
    pfi_error_clear(&err);
    pfi_plan_cap caps[1];
    pfi_plan_result res;
    double t[3];
    const double cap[3] = {380, c4, mid};
    if (pfi_plan_set_jobs(p, &j, 1, &err) != PFI_OK) fail_msg("%s", err.msg);
    for (int k = 0; k < 3; k++) {
        caps[0] = (pfi_plan_cap){.cap_w = cap[k]};
        pfi_plan_eval(p, caps, &res);
        t[k] = caps[0].tput;
    }
    double r = 0.5 * t[0];
    j.reading = (pfi_plan_obs){380, 3040, r, 0.5};
    if (pfi_plan_set_jobs(p, &j, 1, &err) != PFI_OK) fail_msg("%s", err.msg);
    caps[0] = (pfi_plan_cap){.cap_w = 380};
    pfi_plan_eval(p, caps, &res);
    assert_near(caps[0].tput, r, 1e-9);
    assert_near(caps[0].power_w, 3040, 1e-9);
    caps[0] = (pfi_plan_cap){.cap_w = c4};
    pfi_plan_eval(p, caps, &res);
    assert_near(caps[0].tput, t[1], 1e-9);
    caps[0] = (pfi_plan_cap){.cap_w = mid};
    pfi_plan_eval(p, caps, &res);
    assert_near(caps[0].tput, (r + t[1]) / 2, 1e-9);
    assert_near(caps[0].power_w, 8 * mid, 1e-9);
    pfi_plan_destroy(p);
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
        cmocka_unit_test(test_equal),           cmocka_unit_test(test_pfi),
        cmocka_unit_test(test_uncut),           cmocka_unit_test(test_infeasible),
        cmocka_unit_test(test_measured),        cmocka_unit_test(test_flexibility),
        cmocka_unit_test(test_no_estimate),     cmocka_unit_test(test_sla),
        cmocka_unit_test(test_learn_needs_use), cmocka_unit_test(test_measured_pins_prior),
        cmocka_unit_test(test_class),           cmocka_unit_test(test_cliff),
        cmocka_unit_test(test_cliff_points),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
