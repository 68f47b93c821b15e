/* Phase segmentation and top-10% aggregates, on hand-made traces and on the
 * real H200 trace ../shared/data/h200-probe/run_trace.csv (README there: each
 * job has a few seconds with the frame buffer under 10 GiB, about 8 s loaded
 * and idle, then 60 s of training with a 4 s eval at ~35% and a 3 s
 * checkpoint pause at ~70%). */
#include "test_util.h"

#include <string.h>

#include "pfi/csv.h"
#include "pfi/trace.h"

static void test_names_and_defaults(void **state)
{
    assert_string_equal(pfi_trace_phase_name(PFI_PHASE_WARMUP), "warmup");
    assert_string_equal(pfi_trace_phase_name(PFI_PHASE_STARTUP), "startup");
    assert_string_equal(pfi_trace_phase_name(PFI_PHASE_TRAINING), "training");
    pfi_trace_params p;
    pfi_trace_params_default(&p);
    assert_near(p.loaded_fb_mib, 10240, 0); /* the paper's 10 GiB */
    assert_near(p.train_util_pct, 50, 0);
}

/* 1 s samples: fb 2 GiB for 3 s, then 20 GiB; util 0 until t=10 with one
 * busy spike at t=6 (a compile step: not sustained), then 100% from t=10. */
static void test_hand_trace(void **state)
{
    double t[30], fb[30], util[30];
    for (int i = 0; i < 30; i++) {
        t[i] = i;
        fb[i] = i < 3 ? 2048 : 20480;
        util[i] = i >= 10 ? 100 : (i == 6 ? 100 : 0);
    }
    pfi_trace_params p;
    pfi_trace_params_default(&p);
    pfi_phase ph[30];
    double start[PFI_PHASE_COUNT];
    pfi_error err;
    assert_int_equal(pfi_trace_segment(t, fb, util, 30, &p, ph, start, &err), PFI_OK);
    assert_near(start[PFI_PHASE_WARMUP], 0, 0);
    assert_near(start[PFI_PHASE_STARTUP], 3, 0);
    assert_near(start[PFI_PHASE_TRAINING], 10, 0);
    assert_int_equal(ph[2], PFI_PHASE_WARMUP);
    assert_int_equal(ph[3], PFI_PHASE_STARTUP);
    assert_int_equal(ph[6], PFI_PHASE_STARTUP); /* the spike */
    assert_int_equal(ph[9], PFI_PHASE_STARTUP);
    assert_int_equal(ph[10], PFI_PHASE_TRAINING);

    /* Streaming: training is known only after sustain_s (t=20), then dated back. */
    pfi_trace_seg *s;
    assert_int_equal(pfi_trace_seg_create(&p, &s), PFI_OK);
    for (int i = 0; i < 20; i++)
        assert_int_equal(pfi_trace_seg_push(s, t[i], fb[i], util[i]),
                         i < 3 ? PFI_PHASE_WARMUP : PFI_PHASE_STARTUP);
    assert_true(isnan(pfi_trace_seg_start(s, PFI_PHASE_TRAINING)));
    assert_int_equal(pfi_trace_seg_push(s, 20, 20480, 100), PFI_PHASE_TRAINING);
    assert_near(pfi_trace_seg_start(s, PFI_PHASE_TRAINING), 10, 0);
    /* An idle stretch later (checkpoint) does not leave training. */
    assert_int_equal(pfi_trace_seg_push(s, 21, 20480, 0), PFI_PHASE_TRAINING);
    assert_int_equal(pfi_trace_seg_push(s, 22, 2048, 0), PFI_PHASE_TRAINING);
    /* Time going backwards is ignored. */
    assert_int_equal(pfi_trace_seg_push(s, 5, 2048, 0), PFI_PHASE_TRAINING);
    pfi_trace_seg_destroy(s);
    pfi_trace_seg_destroy(NULL);
}

/* An MoE-like job alternates 100% and 20%: mean 60% >= 50%, sustained. A
 * job alternating 100% and 0% for 3 samples then idle is not. */
static void test_sustained_mean(void **state)
{
    pfi_trace_params p;
    pfi_trace_params_default(&p);
    p.sustain_s = 4;
    double t[20], fb[20], u[20];
    for (int i = 0; i < 20; i++) {
        t[i] = i;
        fb[i] = 30000;
        u[i] = i < 5 ? 0 : (i % 2 ? 100 : 20);
    }
    double start[PFI_PHASE_COUNT];
    assert_int_equal(pfi_trace_segment(t, fb, u, 20, &p, NULL, start, NULL), PFI_OK);
    assert_near(start[PFI_PHASE_WARMUP], 0, 0);
    assert_near(start[PFI_PHASE_STARTUP], 0, 0);  /* loaded from the first sample */
    assert_near(start[PFI_PHASE_TRAINING], 5, 0); /* t=5 is the first busy sample */

    for (int i = 0; i < 20; i++)
        u[i] = (i >= 2 && i <= 4) ? (i % 2 ? 0 : 100) : 0;
    assert_int_equal(pfi_trace_segment(t, fb, u, 20, &p, NULL, start, NULL), PFI_OK);
    assert_true(isnan(start[PFI_PHASE_TRAINING]));

    /* A dip below the mean restarts the candidate at the next busy sample:
     * 100 at t=2, then 0,0,0 (mean 25 < 50), then 100 from t=8. */
    for (int i = 0; i < 20; i++)
        u[i] = (i == 2 || i >= 8) ? 100 : 0;
    assert_int_equal(pfi_trace_segment(t, fb, u, 20, &p, NULL, start, NULL), PFI_OK);
    assert_near(start[PFI_PHASE_TRAINING], 8, 0);
}

static void test_nan_and_bad_time(void **state)
{
    double t[3] = {0, 1, 1}, fb[3] = {NAN, NAN, NAN}, u[3] = {NAN, 0, 0};
    double start[PFI_PHASE_COUNT];
    pfi_error err;
    assert_int_equal(pfi_trace_segment(t, fb, u, 3, NULL, NULL, start, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "sample 3"));
    t[2] = 2;
    assert_int_equal(pfi_trace_segment(t, fb, u, 3, NULL, NULL, start, &err), PFI_OK);
    /* A frame buffer that could not be read counts as loaded. */
    assert_near(start[PFI_PHASE_STARTUP], 0, 0);
    assert_true(isnan(start[PFI_PHASE_TRAINING]));
}

static void test_top_mean(void **state)
{
    double v[20], scratch[20], out;
    for (int i = 0; i < 20; i++)
        v[i] = i + 1; /* 1..20 */
    /* top 10% of 20 values = the 2 largest: (20 + 19) / 2 */
    assert_int_equal(pfi_trace_top_mean(v, 20, 0.1, scratch, &out), PFI_OK);
    assert_near(out, 19.5, 1e-12);
    /* of 10 values: 1 value, the maximum */
    assert_int_equal(pfi_trace_top_mean(v, 10, 0.1, scratch, &out), PFI_OK);
    assert_near(out, 10, 1e-12);
    /* 15% of 10 = 1.5, rounded up: 2 values (10 + 9) / 2 */
    assert_int_equal(pfi_trace_top_mean(v, 10, 0.15, scratch, &out), PFI_OK);
    assert_near(out, 9.5, 1e-12);
    /* NaN skipped: {NaN, 5, 3} top 50% of 2 finite = 5 */
    double w[3] = {NAN, 3, 5};
    assert_int_equal(pfi_trace_top_mean(w, 3, 0.5, scratch, &out), PFI_OK);
    assert_near(out, 5, 0);
    assert_int_equal(pfi_trace_top_mean(w, 1, 0.1, scratch, &out), PFI_ENODATA);
    assert_int_equal(pfi_trace_top_mean(v, 10, 0, scratch, &out), PFI_EINVAL);
    assert_int_equal(pfi_trace_top_mean(v, 10, 1.5, scratch, &out), PFI_EINVAL);
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* The selection-based mean equals the sorted definition on random data
 * with ties, for every size up to 300 and several shares. */
static void test_top_mean_vs_sort(void **state)
{
    static double v[300], sorted[300], scratch[300];
    unsigned long x = 12345;
    for (size_t n = 1; n <= 300; n++) {
        for (size_t i = 0; i < n; i++) {
            x = x * 6364136223846793005UL + 1442695040888963407UL;
            v[i] = (double)((x >> 33) % 50); /* many ties */
        }
        const double fracs[] = {0.1, 0.25, 0.5, 1.0};
        for (size_t f = 0; f < 4; f++) {
            memcpy(sorted, v, n * sizeof *v);
            qsort(sorted, n, sizeof *sorted, cmp_desc);
            size_t k = (size_t)ceil(fracs[f] * (double)n - 1e-9);
            if (k < 1) k = 1;
            double want = 0;
            for (size_t i = 0; i < k; i++)
                want += sorted[i];
            want /= (double)k;
            double got;
            assert_int_equal(pfi_trace_top_mean(v, n, fracs[f], scratch, &got), PFI_OK);
            assert_near(got, want, 1e-9);
        }
    }
}

static void test_roll(void **state)
{
    pfi_trace_roll *r;
    assert_int_equal(pfi_trace_roll_create(2, 0, 10, &r), PFI_EINVAL);
    assert_int_equal(pfi_trace_roll_create(2, 10, 5, &r), PFI_OK);
    double v[2];
    for (int i = 0; i < 4; i++) {
        v[0] = i;
        v[1] = i % 2 ? NAN : 100 + i;
        pfi_trace_roll_push(r, i, v);
    }
    double out;
    size_t used;
    assert_int_equal(pfi_trace_roll_count(r), 4);
    assert_int_equal(pfi_trace_roll_mean(r, 0, -INFINITY, &out, &used), PFI_OK);
    assert_near(out, 1.5, 1e-12);
    assert_int_equal(used, 4);
    assert_int_equal(pfi_trace_roll_mean(r, 1, -INFINITY, &out, &used), PFI_OK);
    assert_near(out, 101, 1e-12); /* (100 + 102) / 2 */
    assert_int_equal(used, 2);
    assert_int_equal(pfi_trace_roll_top_mean(r, 0, 2, 0.5, &out, &used), PFI_OK);
    assert_near(out, 3, 0); /* samples t>=2: {2,3}, top half = 3 */
    assert_int_equal(used, 2);
    assert_int_equal(pfi_trace_roll_top_mean(r, 2, 0, 0.5, &out, &used), PFI_EINVAL);
    /* Capacity 5: the sixth push evicts t=0. */
    for (int i = 4; i < 6; i++) {
        v[0] = i;
        pfi_trace_roll_push(r, i, v);
    }
    assert_int_equal(pfi_trace_roll_count(r), 5);
    assert_int_equal(pfi_trace_roll_mean(r, 0, -INFINITY, &out, &used), PFI_OK);
    assert_near(out, 3, 1e-12); /* 1..5 */
    /* Window 10 s: a sample at t=14 drops everything before t=4. */
    v[0] = 14;
    pfi_trace_roll_push(r, 14, v);
    assert_int_equal(pfi_trace_roll_count(r), 3); /* 4, 5, 14 */
    assert_int_equal(pfi_trace_roll_top_mean(r, 0, 100, 0.1, &out, &used), PFI_ENODATA);
    pfi_trace_roll_destroy(r);
    pfi_trace_roll_destroy(NULL);
}

/* The ring grows as samples come (pfid's jobs start small) and keeps every
 * sample up to max_samples across the growth, wrapped or not. */
static void test_roll_grows(void **state)
{
    pfi_trace_roll *r;
    assert_int_equal(pfi_trace_roll_create(1, 1e9, 40, &r), PFI_OK);
    double out;
    size_t used;
    for (int i = 0; i < 100; i++) {
        double v = i;
        pfi_trace_roll_push(r, i, &v);
        if (i == 20) {
            /* mid-growth: all 21 samples there */
            assert_int_equal(pfi_trace_roll_count(r), 21);
            assert_int_equal(pfi_trace_roll_mean(r, 0, -INFINITY, &out, &used), PFI_OK);
            assert_near(out, 10, 1e-12);
        }
    }
    assert_int_equal(pfi_trace_roll_count(r), 40); /* 60..99 */
    assert_int_equal(pfi_trace_roll_mean(r, 0, -INFINITY, &out, &used), PFI_OK);
    assert_near(out, 79.5, 1e-12);
    assert_int_equal(pfi_trace_roll_top_mean(r, 0, -INFINITY, 0.1, &out, &used), PFI_OK);
    assert_near(out, 97.5, 1e-12); /* 96..99 */
    assert_int_equal(used, 40);
    pfi_trace_roll_destroy(r);
    /* The window drops old samples of a grown ring too. */
    assert_int_equal(pfi_trace_roll_create(1, 10, 1000, &r), PFI_OK);
    for (int i = 0; i < 100; i++) {
        double v = i;
        pfi_trace_roll_push(r, i, &v);
    }
    assert_int_equal(pfi_trace_roll_count(r), 11); /* 89..99 */
    assert_int_equal(pfi_trace_roll_top_mean(r, 0, 95, 0.5, &out, &used), PFI_OK);
    assert_near(out, 98, 1e-12); /* 95..99, top half of 5 -> 3 values 97..99 */
    pfi_trace_roll_destroy(r);
}

typedef struct {
    size_t n;
    double t[400], fb[400], util[400], power[400];
    char run[400][16];
} trace;

static void load_trace(trace *tr)
{
    char path[512];
    test_path(path, sizeof path, PFI_SHARED_DIR, "data/h200-probe/run_trace.csv");
    pfi_csv *c;
    pfi_error err;
    if (pfi_csv_read_file(path, &c, &err) != PFI_OK) fail_msg("%s: %s", path, err.msg);
    int ct = pfi_csv_col(c, "time_s"), cr = pfi_csv_col(c, "run"),
        cf = pfi_csv_col(c, "fb_used_mib"), cu = pfi_csv_col(c, "gpu_util"),
        cp = pfi_csv_col(c, "power_w");
    assert_true(ct >= 0 && cr >= 0 && cf >= 0 && cu >= 0 && cp >= 0);
    tr->n = pfi_csv_rows(c);
    assert_true(tr->n > 300 && tr->n <= 400);
    for (size_t i = 0; i < tr->n; i++) {
        assert_int_equal(pfi_csv_number(c, i, (size_t)ct, 0, 0, &tr->t[i], &err), PFI_OK);
        assert_int_equal(pfi_csv_number(c, i, (size_t)cf, 0, 0, &tr->fb[i], &err), PFI_OK);
        assert_int_equal(pfi_csv_number(c, i, (size_t)cu, 0, 0, &tr->util[i], &err), PFI_OK);
        assert_int_equal(pfi_csv_number(c, i, (size_t)cp, 0, 0, &tr->power[i], &err), PFI_OK);
        snprintf(tr->run[i], sizeof tr->run[i], "%s", pfi_csv_field(c, i, (size_t)cr));
    }
    pfi_csv_destroy(c);
}

/* The slice of the trace labelled `run` (what pfid sees between a job's
 * registration and its end), every `stride`-th sample. */
static size_t slice(const trace *tr, const char *run, size_t stride, double *t, double *fb,
                    double *u, double *pw)
{
    size_t m = 0, k = 0;
    for (size_t i = 0; i < tr->n; i++) {
        if (strcmp(tr->run[i], run) != 0) continue;
        if (k++ % stride) continue;
        t[m] = tr->t[i];
        fb[m] = tr->fb[i];
        u[m] = tr->util[i];
        pw[m] = tr->power[i];
        m++;
    }
    return m;
}

static void check_run(const trace *tr, const char *run, double warm0, double start0, double train0,
                      double top_lo, double top_hi)
{
    double t[400], fb[400], u[400], pw[400], train_pw[400], scratch[400];
    size_t n = slice(tr, run, 1, t, fb, u, pw);
    pfi_phase ph[400];
    double st[PFI_PHASE_COUNT];
    assert_int_equal(pfi_trace_segment(t, fb, u, n, NULL, ph, st, NULL), PFI_OK);
    /* Exact sample times from the CSV (listed in the test's comment above). */
    assert_near(st[PFI_PHASE_WARMUP], warm0, 1e-9);
    assert_near(st[PFI_PHASE_STARTUP], start0, 1e-9);
    assert_near(st[PFI_PHASE_TRAINING], train0, 1e-9);
    double end = t[n - 1];
    /* README: a few seconds of warmup, ~8 s of startup, ~60 s of training. */
    assert_true(st[PFI_PHASE_STARTUP] - st[PFI_PHASE_WARMUP] >= 2.5);
    assert_true(st[PFI_PHASE_STARTUP] - st[PFI_PHASE_WARMUP] <= 10);
    assert_true(st[PFI_PHASE_TRAINING] - st[PFI_PHASE_STARTUP] >= 7);
    assert_true(st[PFI_PHASE_TRAINING] - st[PFI_PHASE_STARTUP] <= 12);
    assert_true(end - st[PFI_PHASE_TRAINING] >= 55 && end - st[PFI_PHASE_TRAINING] <= 62);
    /* The checkpoint pause (idle samples well inside training) stays
     * training, and the top-10% mean of power over training excludes it. */
    size_t idle_in_training = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        if (ph[i] != PFI_PHASE_TRAINING) continue;
        if (u[i] == 0) idle_in_training++;
        train_pw[m++] = pw[i];
    }
    assert_true(idle_in_training >= 3);
    double top;
    assert_int_equal(pfi_trace_top_mean(train_pw, m, 0.1, scratch, &top), PFI_OK);
    assert_true(top >= top_lo && top <= top_hi);

    /* At the paper's 5 s DCGM interval (every 10th sample) the phases are
     * found within one interval of the 0.5 s answer. */
    n = slice(tr, run, 10, t, fb, u, pw);
    double st5[PFI_PHASE_COUNT];
    assert_int_equal(pfi_trace_segment(t, fb, u, n, NULL, NULL, st5, NULL), PFI_OK);
    for (int k = 1; k < PFI_PHASE_COUNT; k++)
        assert_near(st5[k], st[k], 5.1);
}

static void test_real_trace(void **state)
{
    static trace tr;
    load_trace(&tr);
    /* dense_pt: label from 3.036; fb 13637 MiB first at 12.108; gpu_util
     * 100 from 23.702 on. Power-limited at 700 W: README 683-696 W. */
    check_run(&tr, "dense_pt", 3.036, 12.108, 23.702, 690, 700);
    /* moe_ft: label from 83.841; fb 15295 MiB at 86.861; util 60 at 95.944
     * then mostly >= 50. README: 380-410 W. */
    check_run(&tr, "moe_ft", 83.841, 86.861, 95.944, 395, 420);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_defaults),
        cmocka_unit_test(test_hand_trace),
        cmocka_unit_test(test_sustained_mean),
        cmocka_unit_test(test_nan_and_bad_time),
        cmocka_unit_test(test_top_mean),
        cmocka_unit_test(test_top_mean_vs_sort),
        cmocka_unit_test(test_roll),
        cmocka_unit_test(test_roll_grows),
        cmocka_unit_test(test_real_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
