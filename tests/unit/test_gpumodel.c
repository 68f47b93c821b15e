/* The GPU power-cap model: hand-computed formulas, invariants, the real H200
 * probe (../shared/data/h200-probe) and the constant fit. */
#include "test_util.h"

#include <string.h>

#include "pfi/gpumodel.h"
#include "pfi/gpumodel_fit.h"
#include "pfi/probe_trace.h"

static void test_step_time_and_power_by_hand(void **state)
{
    (void)state;
    pfi_job_model j = {.compute_frac = 0.5,
                       .sm_activity = 0.8,
                       .dram_activity = 0.3,
                       .tensor_ratio = 0.5,
                       .tput_per_gpu = 100};
    /* t(0.5) = 0.5 / 0.5 + 0.5 = 1.5 */
    assert_near(pfi_gpumodel_step_time(&j, 0.5), 1.5, 1e-12);
    pfi_gpu_spec g = *pfi_gpumodel_h200();
    g.static_w = 50, g.mem_w_per_util = 200, g.dyn_w = 400, g.tensor_w = 600, g.dyn_exp = 2;
    /* x = 0.5: dram 0.3 / 1.5 = 0.2 -> 40 W; tensor 0.5 * 0.8 / (0.5 + 0.25) = 0.5333;
     * dyn (400 * 0.8 + 600 * 0.5333) * 0.25 = 160 W; total 50 + 40 + 160 = 250 W. */
    assert_near(pfi_gpumodel_power_at(&g, &j, 0.5), 250.0, 1e-9);
    /* A cap of 250 / 0.993 W puts the clock exactly at x = 0.5 (990 MHz). */
    pfi_gpumodel_point p;
    assert_int_equal(pfi_gpumodel_eval(&g, &j, 250.0 / g.cap_tracking, &p), PFI_OK);
    assert_near(p.sm_clock_mhz, 990.0, 1e-6);
    assert_near(p.power_w, 250.0, 1e-6);
    assert_near(p.tput, 100 / 1.5, 1e-6);
    assert_near(p.dram_active, 0.2, 1e-9);
}

/* The probe's loads at the default 700 W limit (README of h200-probe:
 * gemm 1467 MHz and 695 W top-10%, stream 1980 MHz, dense_train 1759 MHz,
 * memory clock 3201 MHz throughout). */
static void test_probe_loads(void **state)
{
    (void)state;
    const pfi_gpu_spec *g = pfi_gpumodel_h200();
    pfi_gpumodel_point p;
    assert_int_equal(pfi_gpumodel_eval(g, pfi_gpumodel_preset("gemm"), 700, &p), PFI_OK);
    assert_near(p.sm_clock_mhz, 1467, 40);
    assert_near(p.power_w, 695, 3);
    assert_near(p.mem_clock_mhz, 3201, 0);
    assert_int_equal(pfi_gpumodel_eval(g, pfi_gpumodel_preset("stream"), 700, &p), PFI_OK);
    assert_near(p.sm_clock_mhz, 1980, 0);
    assert_true(p.power_w < 700);
    assert_near(p.power_w, 614, 30);
    assert_near(p.mem_clock_mhz, 3201, 0);
    assert_int_equal(pfi_gpumodel_eval(g, pfi_gpumodel_preset("dense_train"), 700, &p), PFI_OK);
    assert_near(p.sm_clock_mhz, 1759, 40);
    assert_int_equal(pfi_gpumodel_eval(g, pfi_gpumodel_preset("moe_train"), 700, &p), PFI_OK);
    assert_near(p.sm_clock_mhz, 1980, 0);
    assert_near(p.power_w, 396, 40); /* the fit's largest misfit */
    assert_null(pfi_gpumodel_preset("nope"));
    assert_string_equal(pfi_gpumodel_preset_name(0), "gemm");
    assert_null(pfi_gpumodel_preset_name(4));
}

/* Every preset and a grid of jobs: power <= cap, power and throughput never
 * fall as the cap rises, memory clock fixed, activities within [0, 1]. */
static void check_monotone(const pfi_gpu_spec *g, const pfi_job_model *j)
{
    pfi_gpumodel_point prev = {0}, p;
    for (double cap = g->min_limit_w; cap <= g->max_limit_w + 1e-9; cap += 10) {
        assert_int_equal(pfi_gpumodel_eval(g, j, cap, &p), PFI_OK);
        assert_true(p.power_w <= cap + 1e-9);
        assert_true(p.power_w >= prev.power_w - 1e-9);
        assert_true(p.tput >= prev.tput - 1e-9 * p.tput);
        assert_true(p.sm_clock_mhz <= g->sm_clock_max_mhz + 1e-9);
        assert_near(p.mem_clock_mhz, g->mem_clock_mhz, 0);
        assert_true(p.sm_active >= 0 && p.sm_active <= 1 && p.tensor_active <= p.sm_active + 1e-12);
        assert_true(p.dram_active >= 0 && p.dram_active <= 1);
        assert_true(p.mem_copy_util_pct >= 0 && p.mem_copy_util_pct <= 100);
        prev = p;
    }
}

static void test_monotone_in_cap(void **state)
{
    (void)state;
    for (size_t i = 0; pfi_gpumodel_preset_name(i); i++) {
        check_monotone(pfi_gpumodel_h200(), pfi_gpumodel_preset(pfi_gpumodel_preset_name(i)));
        check_monotone(pfi_gpumodel_h100(), pfi_gpumodel_preset(pfi_gpumodel_preset_name(i)));
    }
    for (double c = 0.1; c <= 1.0; c += 0.3)
        for (double fl = 0; fl <= 1600; fl += 800)
            for (double s = 0; s <= 0.1; s += 0.05) {
                pfi_job_model j = {c, 0.9, 0.4, 0.4, 1000, s, fl, 20};
                check_monotone(pfi_gpumodel_h200(), &j);
            }
}

static void test_bad_input(void **state)
{
    (void)state;
    const pfi_gpu_spec *g = pfi_gpumodel_h200();
    pfi_gpumodel_point p;
    pfi_job_model j = *pfi_gpumodel_preset("gemm");
    assert_int_equal(pfi_gpumodel_eval(g, &j, 150, &p), PFI_ERANGE);
    assert_int_equal(pfi_gpumodel_eval(g, &j, 701, &p), PFI_ERANGE);
    assert_int_equal(pfi_gpumodel_eval(g, &j, NAN, &p), PFI_ERANGE);
    j.compute_frac = 1.5;
    assert_int_equal(pfi_gpumodel_eval(g, &j, 500, &p), PFI_EINVAL);
    j = *pfi_gpumodel_preset("gemm");
    j.clock_spread = 0.3;
    assert_int_equal(pfi_gpumodel_eval(g, &j, 500, &p), PFI_EINVAL);
    assert_int_equal(pfi_gpumodel_eval(NULL, &j, 500, &p), PFI_EINVAL);
    /* NULL job: an idle GPU at its idle clock and power. */
    assert_int_equal(pfi_gpumodel_eval(g, NULL, 500, &p), PFI_OK);
    assert_near(p.power_w, g->idle_w, 0);
    assert_near(p.tput, 0, 0);
}

/* Noise-free samples made from known constants: the fit recovers them. */
static void test_fit_recovers_constants(void **state)
{
    (void)state;
    const double truth[5] = {70, 200, 380, 650, 2.2};
    pfi_gpumodel_sample s[40];
    for (int i = 0; i < 40; i++) {
        double sm = 0.5 + 0.012 * i, ten = (i % 5) * 0.2, dram = ((i * 7) % 10) * 0.09;
        double f = 900 + 27 * i;
        s[i] = (pfi_gpumodel_sample){0, f, sm, ten, dram, NAN, NAN, 0};
        s[i].power_w = truth[0] + truth[1] * dram +
                       (truth[2] * sm + truth[3] * ten) * pow(f / 1980.0, truth[4]);
    }
    pfi_gpumodel_fit fit;
    assert_int_equal(pfi_gpumodel_fit_power(s, 40, 1980, NULL, &fit, NULL), PFI_OK);
    for (int k = 0; k < 5; k++)
        assert_near(fit.p[k], truth[k], 1e-4 * fabs(truth[k]));
    assert_true(fit.rmse_w < 1e-6);
    /* Too few samples, and a bad sample, are errors. */
    pfi_error err;
    assert_int_equal(pfi_gpumodel_fit_power(s, 4, 1980, NULL, &fit, &err), PFI_ENODATA);
    s[3].sm_active = 1.5;
    assert_int_equal(pfi_gpumodel_fit_power(s, 40, 1980, NULL, &fit, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "sample 3"));
}

/* The probe trace reads and the committed H200 constants are the fit's
 * (pfi model --fit-probe reduces to load means first; the per-sample
 * telemetry maps must match the committed copy_per_dram and gpu_util_exp). */
static void test_probe_trace_read(void **state)
{
    (void)state;
    char path[4096];
    static const char *const phases[] = {"gemm", "stream", "dense_train", "moe_train", NULL};
    pfi_gpumodel_sample *s = NULL;
    size_t *ph = NULL, n = 0;
    assert_int_equal(pfi_probe_trace_read(
                         test_path(path, sizeof path, PFI_SHARED_DIR, "data/h200-probe/trace.csv"),
                         phases, &s, &ph, &n, NULL),
                     PFI_OK);
    assert_int_equal(n, 142 + 135 + 143 + 142);
    assert_int_equal(ph[0], 0);
    /* The committed H200 constants are this fit's output (to the 4 decimals
     * written into gpumodel.c). */
    pfi_gpumodel_fit fit;
    pfi_gpumodel_sample loads[4];
    size_t which[4], nl = 0;
    assert_int_equal(pfi_gpumodel_fit_probe(s, ph, n, 4, 1980, loads, which, &nl, &fit, NULL),
                     PFI_OK);
    assert_int_equal(nl, 4);
    const pfi_gpu_spec *g = pfi_gpumodel_h200();
    const double committed[5] = {g->static_w, g->mem_w_per_util, g->dyn_w, g->tensor_w, g->dyn_exp};
    for (int k = 0; k < 5; k++)
        assert_near(fit.p[k], committed[k], 1e-4);
    assert_near(fit.copy_per_dram, g->copy_per_dram, 1e-4);
    assert_near(fit.gpu_util_exp, g->gpu_util_exp, 1e-4);
    /* Physical signs and the steady gemm load near the README's numbers. */
    for (int k = 0; k < 5; k++)
        assert_true(fit.p[k] > 0);
    assert_near(loads[0].sm_clock_mhz, 1467, 15);
    assert_near(loads[0].power_w, 692, 5);
    free(s);
    free(ph);
    pfi_error err;
    assert_int_not_equal(pfi_probe_trace_read("/nonexistent/trace.csv", phases, &s, &ph, &n, &err),
                         PFI_OK);
}

static void test_probe_trace_bad_input(void **state)
{
    (void)state;
    static const char *const phases[] = {"gemm", NULL};
    pfi_gpumodel_sample *s = NULL;
    size_t *ph = NULL, n = 0;
    pfi_error err;
    const char *no_col = "phase,power_mW,sm_clock\ngemm,1,2\n";
    assert_int_not_equal(
        pfi_probe_trace_parse(no_col, strlen(no_col), "t.csv", phases, &s, &ph, &n, &err), PFI_OK);
    assert_non_null(strstr(err.msg, "sm_util"));
    const char *bad = "phase,power_mW,sm_clock,sm_util,tensor_util,dram_bw_util,util_mem,"
                      "util_gpu\nidle,x,1,1,1,1,1,1\ngemm,695000,abc,1,1,1,1,1\n";
    assert_int_not_equal(
        pfi_probe_trace_parse(bad, strlen(bad), "t.csv", phases, &s, &ph, &n, &err), PFI_OK);
    assert_int_equal(err.line, 3); /* the idle row is skipped, not parsed */
    assert_null(s);
    /* Units: mW to W, percent to ratios. */
    const char *ok = "phase,power_mW,sm_clock,sm_util,tensor_util,dram_bw_util,util_mem,"
                     "util_gpu\ngemm,695000,1467,95,92,17,24,97\n";
    assert_int_equal(pfi_probe_trace_parse(ok, strlen(ok), "t.csv", phases, &s, &ph, &n, &err),
                     PFI_OK);
    assert_int_equal(n, 1);
    assert_near(s[0].power_w, 695, 1e-12);
    assert_near(s[0].sm_active, 0.95, 1e-12);
    assert_near(s[0].dram_active, 0.17, 1e-12);
    assert_near(s[0].mem_copy_util, 24, 0);
    free(s);
    free(ph);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_time_and_power_by_hand),
        cmocka_unit_test(test_probe_loads),
        cmocka_unit_test(test_monotone_in_cap),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_fit_recovers_constants),
        cmocka_unit_test(test_probe_trace_read),
        cmocka_unit_test(test_probe_trace_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
