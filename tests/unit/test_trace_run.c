/* pfi trace's pieces: the trace readers (wide CSV, h200-probe, concatenated
 * dcgm-exporter pages) and a run's steady-state summary.
 *
 * References: hand-computed fixtures (tests/data/trace-wide.csv and
 * trace-dcgm-scrapes.prom describe the same 2-GPU run: fb 2000 MiB at t=0,1,
 * 30000 after; util 0 until t=3, 95 from t=4; per-GPU power 100 + 100 g +
 * 10 t in training, so the top 10% of 12 training samples is t=15 and 14:
 * totals 600 and 580 W, mean 590, sd 14.142, SEM 10); and the real H200
 * traces, whose top-10% powers were computed independently with
 *   python3 -c "import csv,math; r=list(csv.DictReader(open('trace.csv')));
 *     p=sorted([float(x['power_mW'])/1000 for x in r if x['phase']=='gemm'],
 *     reverse=True); k=math.ceil(0.1*len(p)); print(sum(p[:k])/k)"
 * (gemm 694.8342667, stream 635.8146429, dense_train 696.5408, moe_train
 * 417.0453333; README: gemm top-10% 695 W), and whose run_trace.csv phases
 * are test_trace.c's. */
#include "test_util.h"

#include <string.h>

#include "pfi/tm_aggregate.h"
#include "pfi/trace_read.h"
#include "pfi/trace_run.h"

static const pfi_trace_run *find(const pfi_trace_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->runs[i].name, name) == 0) return &s->runs[i];
    fail_msg("no run %s", name);
    return NULL;
}

static void check_fixture(const char *rel, const char *run, double t0)
{
    char path[512];
    test_path(path, sizeof path, PFI_SOURCE_DIR, rel);
    pfi_trace_set set = {0};
    pfi_error err;
    if (pfi_trace_read(path, &set, &err) != PFI_OK) fail_msg("%s: %s", path, err.msg);
    assert_int_equal(set.n, 1);
    const pfi_trace_run *r = find(&set, run);
    assert_int_equal(r->n, 16);
    assert_int_equal(r->gpus, 2);
    assert_near(r->cap_w, 500, 0);
    assert_null(r->label);
    pfi_trace_summary s;
    assert_int_equal(pfi_trace_run_summarize(r, NULL, 0.1, &s, &err), PFI_OK);
    assert_near(s.start[PFI_PHASE_WARMUP], t0, 1e-9);
    assert_near(s.start[PFI_PHASE_STARTUP], t0 + 2, 1e-9);
    assert_near(s.start[PFI_PHASE_TRAINING], t0 + 4, 1e-9);
    assert_int_equal(s.training_samples, 12);
    assert_int_equal(s.top_samples, 2);
    assert_near(s.power_w, 590, 1e-9);
    assert_near(s.power_sem_w, 10, 1e-9);
    assert_near(s.telemetry.v[PFI_TM_POWER], 295, 1e-9); /* per GPU */
    assert_near(s.telemetry.v[PFI_TM_SM_ACTIVE], 0.645, 1e-12);
    assert_near(s.telemetry.v[PFI_TM_GPU_UTIL], 95, 0);
    assert_false(s.telemetry.valid >> PFI_TM_NVLINK_TX & 1u);
    assert_true(isnan(s.tput));
    pfi_trace_set_free(&set);
}

static void test_wide_csv(void **state)
{
    check_fixture("tests/data/trace-wide.csv", "trace-wide", 0);
}

/* The MIG series (999 W) and the blank sentinels must be left out, or the
 * power and SM activity would differ. */
static void test_dcgm_scrapes(void **state)
{
    check_fixture("tests/data/trace-dcgm-scrapes.prom", "trace-dcgm-scrapes", 1700000000.5);
}

static void test_probe_trace(void **state)
{
    char path[512];
    test_path(path, sizeof path, PFI_SHARED_DIR, "data/h200-probe/trace.csv");
    pfi_trace_set set = {0};
    pfi_error err;
    if (pfi_trace_read(path, &set, &err) != PFI_OK) fail_msg("%s: %s", path, err.msg);
    assert_int_equal(set.n, 4); /* idle is not a run */
    static const struct {
        const char *run;
        double top_w;
        size_t n_load;
    } want[] = {{"gemm", 694.8342667, 142},
                {"stream", 635.8146429, 135},
                {"dense_train", 696.5408, 143},
                {"moe_train", 417.0453333, 142}};
    for (size_t k = 0; k < 4; k++) {
        const pfi_trace_run *r = find(&set, want[k].run);
        assert_non_null(r->label);
        pfi_trace_summary s;
        assert_int_equal(pfi_trace_run_summarize(r, NULL, 0.1, &s, &err), PFI_OK);
        assert_int_equal(s.training_samples, want[k].n_load);
        assert_near(s.power_w, want[k].top_w, 1e-6);
        /* the load's first sample starts training; its warm samples precede */
        assert_true(s.start[PFI_PHASE_WARMUP] <= s.start[PFI_PHASE_TRAINING]);
    }
    pfi_trace_set_free(&set);
}

static void test_run_trace_and_steps(void **state)
{
    char path[512], steps[512];
    test_path(path, sizeof path, PFI_SHARED_DIR, "data/h200-probe/run_trace.csv");
    test_path(steps, sizeof steps, PFI_SHARED_DIR, "data/h200-probe/run_steps.csv");
    pfi_trace_set set = {0};
    pfi_error err;
    assert_int_equal(pfi_trace_read(path, &set, &err), PFI_OK);
    assert_int_equal(pfi_trace_steps_read(steps, &set, &err), PFI_OK);
    assert_int_equal(set.n, 2);
    const struct {
        const char *run;
        double w, s, t, lo, hi;
    } want[] = {{"dense_pt", 3.036, 12.108, 23.702, 690, 700},
                {"moe_ft", 83.841, 86.861, 95.944, 395, 420}};
    for (int k = 0; k < 2; k++) {
        const pfi_trace_run *r = find(&set, want[k].run);
        assert_null(r->label);
        pfi_trace_summary s;
        assert_int_equal(pfi_trace_run_summarize(r, NULL, 0.1, &s, &err), PFI_OK);
        assert_near(s.start[PFI_PHASE_WARMUP], want[k].w, 1e-9);
        assert_near(s.start[PFI_PHASE_STARTUP], want[k].s, 1e-9);
        assert_near(s.start[PFI_PHASE_TRAINING], want[k].t, 1e-9);
        assert_true(s.power_w >= want[k].lo && s.power_w <= want[k].hi);
        /* a report every second step: rates of 32768 tokens per interval */
        assert_true(s.tput_samples > 50);
        assert_true(s.tput > 0 && isfinite(s.tput_sem));
    }
    pfi_trace_set_free(&set);
}

/* Rates from cumulative tokens, by hand; their top 10% of 10 is the largest. */
static void test_steps_rates(void **state)
{
    pfi_trace_run r = {.name = "x", .cap_w = NAN};
    double t[] = {0, 1, 2, 2.5, 4}, k[] = {0, 100, 250, 300, 300};
    pfi_error err;
    assert_int_equal(pfi_trace_run_add_steps(&r, t, k, 5, &err), PFI_OK);
    assert_int_equal(r.n_tput, 4);
    assert_near(r.tput[0], 100, 0);
    assert_near(r.tput[1], 150, 0);
    assert_near(r.tput[2], 100, 0);
    assert_near(r.tput[3], 0, 0);
    double back[] = {0, 1, 1}, kk[] = {0, 1, 2};
    assert_int_equal(pfi_trace_run_add_steps(&r, back, kk, 3, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "step 3"));
    double down[] = {0, 5};
    assert_int_equal(pfi_trace_run_add_steps(&r, t, down, 2, &err), PFI_OK);
    double down2[] = {5, 0};
    assert_int_equal(pfi_trace_run_add_steps(&r, t, down2, 2, &err), PFI_EINVAL);
    r.name = NULL;
    pfi_trace_run_free(&r);
}

/* A labelled run: training is the labelled samples only (an idle sample
 * labelled warm in the middle is not averaged); throughput reports outside
 * training are left out. */
static void test_summary_labels_and_tput(void **state)
{
    pfi_trace_run r = {.gpus = 2, .cap_w = NAN, .n = 6};
    double t[6] = {0, 1, 2, 3, 4, 5};
    signed char lab[6] = {PFI_PHASE_WARMUP,   PFI_PHASE_WARMUP, PFI_PHASE_TRAINING,
                          PFI_PHASE_TRAINING, PFI_PHASE_WARMUP, PFI_PHASE_TRAINING};
    pfi_tm_row tm[6] = {0};
    double pw[6] = {50, 60, 300, 310, 900, 320};
    for (int i = 0; i < 6; i++) {
        tm[i].v[PFI_TM_POWER] = pw[i];
        tm[i].valid = 1u << PFI_TM_POWER;
    }
    r.t = t, r.label = lab, r.tm = tm;
    pfi_trace_summary s;
    pfi_error err;
    assert_int_equal(pfi_trace_run_summarize(&r, NULL, 0.5, &s, &err), PFI_OK);
    assert_near(s.start[PFI_PHASE_STARTUP], 2, 0); /* skipped: starts with training */
    assert_int_equal(s.training_samples, 3);
    assert_int_equal(s.top_samples, 2);
    assert_near(s.power_w, 2 * 315, 1e-9); /* (320 + 310) / 2 per GPU, two GPUs */
    assert_near(s.power_sem_w, 10, 1e-9);
    double tt[] = {1, 2.5, 3, 4, 6}, tv[] = {1e9, 100, 200, 300, 1e9};
    r.tput_t = tt, r.tput = tv, r.n_tput = 5;
    assert_int_equal(pfi_trace_run_summarize(&r, NULL, 0.5, &s, &err), PFI_OK);
    assert_int_equal(s.tput_samples, 3); /* 2.5, 3, 4: from training start to the last sample */
    assert_near(s.tput, 250, 1e-9);
    assert_int_equal(pfi_trace_run_summarize(&r, NULL, 0, &s, &err), PFI_EINVAL);
    /* never training */
    for (int i = 0; i < 6; i++)
        lab[i] = PFI_PHASE_WARMUP;
    r.name = "cold";
    assert_int_equal(pfi_trace_run_summarize(&r, NULL, 0.1, &s, &err), PFI_ENODATA);
    assert_non_null(strstr(err.msg, "cold"));
}

static void expect_error(const char *text, const char *name, int code, long line, const char *msg)
{
    pfi_trace_set set = {0};
    pfi_error err;
    pfi_error_clear(&err);
    int rc = pfi_trace_parse(text, strlen(text), name, &set, &err);
    if (rc != code) fail_msg("%s: rc %d, expected %d (%s)", name, rc, code, err.msg);
    if (line >= 0) assert_int_equal(err.line, line);
    if (!strstr(err.msg, msg)) fail_msg("%s: message '%s' lacks '%s'", name, err.msg, msg);
    pfi_trace_set_free(&set);
}

static void test_bad_input(void **state)
{
    expect_error("gpu,power_w\n0,1\n", "notime.csv", PFI_EPARSE, 1, "no time column");
    expect_error("time_s,gpu\n0,1\n", "nopower.csv", PFI_EPARSE, 1, "no power column");
    expect_error("time_s,power_w\n0,abc\n", "text.csv", PFI_EPARSE, 2, "");
    expect_error("time_s,gpu,power_w\n0,0,1\n0,0,2\n", "dup.csv", PFI_EPARSE, 3,
                 "a second sample of GPU 0");
    expect_error("time_s,gpu,power_w\n0,-1,1\n", "neg.csv", PFI_EPARSE, 2, "device index");
    expect_error("time_s,run,power_w\n0,idle,1\n", "idle.csv", PFI_ENODATA, 0, "no samples");
    expect_error("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 5\n", "notime.prom", PFI_EPARSE, 1,
                 "without a time");
    expect_error("# time 1\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 5\n# time 2\n"
                 "DCGM_FI_DEV_POWER_USAGE{gpu=\"x\"} 5\n",
                 "badgpu.prom", PFI_EPARSE, 4, "no numeric gpu label");
    expect_error("# time 1\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 5\n# time 2\n"
                 "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\" 5\n",
                 "syntax.prom", PFI_EPARSE, 4, "");
    /* A second HELP within one page is the parser's error; across pages it is fine. */
    expect_error("# time 1\n# HELP a x\n# HELP a y\n", "help.prom", PFI_EPARSE, 3, "");
    /* Two files of one run. */
    pfi_trace_set set = {0};
    pfi_error err;
    const char *a = "time_s,power_w\n0,1\n";
    assert_int_equal(pfi_trace_parse(a, strlen(a), "dir/r.csv", &set, &err), PFI_OK);
    assert_string_equal(set.runs[0].name, "r");
    assert_int_equal(pfi_trace_parse(a, strlen(a), "other/r.csv", &set, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "already"));
    pfi_trace_set_free(&set);
}

/* A job's GPUs at one time (what pfi sweep and pfi export average), by hand:
 * SI in, telemetry.csv units out; a field one GPU lacks is the other's. */
static void test_gpu_samples_mean(void **state)
{
    pfi_gpu_sample a = {0}, b = {0};
    pfi_gpu_sample_set(&a, PFI_GF_POWER, 300);
    pfi_gpu_sample_set(&b, PFI_GF_POWER, 500);
    pfi_gpu_sample_set(&a, PFI_GF_SM_CLOCK, 1.5e9);
    pfi_gpu_sample_set(&b, PFI_GF_SM_CLOCK, 1.7e9);
    pfi_gpu_sample_set(&a, PFI_GF_UTIL_GPU, 0.9);
    pfi_gpu_sample_set(&b, PFI_GF_FB_USED, 2.0 * 1048576 * 1024); /* 2 GiB */
    const pfi_gpu_sample *x[3] = {&a, &b, NULL};
    pfi_tm_row r;
    double total;
    pfi_tm_from_gpu_samples(x, 2, &r, &total);
    assert_near(r.v[PFI_TM_POWER], 400, 1e-12);
    assert_near(total, 800, 1e-12);
    assert_near(r.v[PFI_TM_SM_CLOCK], 1600, 1e-9); /* MHz */
    assert_near(r.v[PFI_TM_GPU_UTIL], 90, 1e-12);  /* percent, one GPU */
    assert_near(r.v[PFI_TM_FB_USED], 2048, 1e-9);  /* MiB */
    assert_false(r.valid >> PFI_TM_PCIE_TX & 1u);
    pfi_tm_from_gpu_samples(x, 3, &r, &total); /* a GPU not read: no total */
    assert_true(isnan(total));
    assert_near(r.v[PFI_TM_POWER], 400, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wide_csv),    cmocka_unit_test(test_dcgm_scrapes),
        cmocka_unit_test(test_probe_trace), cmocka_unit_test(test_run_trace_and_steps),
        cmocka_unit_test(test_steps_rates), cmocka_unit_test(test_summary_labels_and_tput),
        cmocka_unit_test(test_bad_input),   cmocka_unit_test(test_gpu_samples_mean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
