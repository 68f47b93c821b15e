/* Joining sweeps with telemetry, predictor sets, and the ablation's error
 * reporting, on the small fixture tests/data/fit-{sweeps,telemetry}.csv
 * (10 groups whose ratio PFI is exact by construction: every capped run has
 * (1 - P/Pmax) / (1 - T/Tmax) equal to the group's target). */
#include "test_util.h"

#include <string.h>

#include "pfi/analysis.h"
#include "pfi/csv.h"
#include "pfi/stats.h"
#include "pfi/sweeps_csv.h"
#include "pfi/telemetry_csv.h"

typedef struct {
    pfi_sweeps *s;
    pfi_telemetry *t;
    pfi_obs *obs;
    size_t n;
} fixture;

static int load(fixture *f, const char *tm_file, pfi_error *err)
{
    char p1[512], p2[512];
    memset(f, 0, sizeof *f);
    test_path(p1, sizeof p1, PFI_SOURCE_DIR, "tests/data/fit-sweeps.csv");
    test_path(p2, sizeof p2, PFI_SOURCE_DIR, tm_file);
    int rc = pfi_sweeps_read(p1, 0, &f->s, err);
    if (rc == PFI_OK) rc = pfi_telemetry_read(p2, &f->t, err);
    if (rc == PFI_OK)
        rc = pfi_analysis_join(f->s, NULL, f->t, PFI_FEAT_H200_BOOST_MHZ, &f->obs, &f->n, err);
    return rc;
}

static void unload(fixture *f)
{
    free(f->obs);
    pfi_telemetry_destroy(f->t);
    pfi_sweeps_destroy(f->s);
}

static void join_fixture(void **state)
{
    fixture f;
    pfi_error err;
    assert_int_equal(load(&f, "tests/data/fit-telemetry.csv", &err), PFI_OK);
    assert_int_equal(f.n, 10);
    /* "MoE FT B": moe, ft, 16 GPUs, PFI 2.30 by construction */
    const pfi_obs *o = &f.obs[9];
    assert_string_equal(o->name, "MoE FT B");
    assert_int_equal(o->cluster, PFI_CLUSTER_MOE_FT);
    assert_near(o->pfi, 2.30, 1e-3);
    assert_near(o->f.v[PFI_FEAT_LOG2_GPUS], 4, 0);
    assert_near(o->f.v[PFI_FEAT_ARCH_MOE], 1, 0);
    /* DRAM 0.45 x copy 66% = 29.7 */
    assert_near(o->f.v[PFI_FEAT_DRAM_COPY_PRODUCT], 29.7, 1e-9);
    assert_int_equal(f.obs[3].cluster, PFI_CLUSTER_DENSE_FT);
    unload(&f);
}

static void join_errors(void **state)
{
    fixture f;
    pfi_error err;
    /* a telemetry row for a group the sweeps do not have: named with its line */
    assert_int_equal(load(&f, "tests/data/fit-telemetry-unknown.csv", &err), PFI_ENOTFOUND);
    assert_int_equal(err.line, 12);
    assert_non_null(strstr(err.msg, "Dense PT Z"));
    unload(&f);
    /* a sweep group without telemetry */
    assert_int_equal(load(&f, "tests/data/fit-telemetry-missing.csv", &err), PFI_ENOTFOUND);
    assert_non_null(strstr(err.msg, "MoE FT B"));
    assert_null(f.obs);
    unload(&f);
}

/* The seven sets have Table 3's feature counts p (read from the paper's CSV). */
static void table3_sets_match_paper(void **state)
{
    pfi_feature_set sets[PFI_TABLE3_SETS];
    pfi_analysis_table3_sets(sets);
    char path[512];
    pfi_csv *c = NULL;
    pfi_error err;
    test_path(path, sizeof path, PFI_SHARED_DIR, "data/paper-tables/table3_predictor_ablation.csv");
    assert_int_equal(pfi_csv_read_file(path, &c, &err), PFI_OK);
    assert_int_equal(pfi_csv_rows(c), PFI_TABLE3_SETS);
    for (size_t i = 0; i < PFI_TABLE3_SETS; i++) {
        double p;
        assert_string_equal(sets[i].name,
                            pfi_csv_field(c, i, (size_t)pfi_csv_col(c, "predictors")));
        assert_int_equal(pfi_csv_number(c, i, (size_t)pfi_csv_col(c, "p"), 0, 0, &p, &err), PFI_OK);
        assert_int_equal(sets[i].p, (size_t)p);
    }
    pfi_csv_destroy(c);
}

static void parse_sets(void **state)
{
    pfi_feature_set s;
    pfi_error err;
    assert_int_equal(pfi_analysis_parse_set("dram_copy_product,job_metadata", &s, &err), PFI_OK);
    assert_int_equal(s.p, 4);
    assert_string_equal(s.name, "dram_copy_product+job_metadata");
    assert_int_equal(s.ids[3], PFI_FEAT_LOG2_GPUS);
    assert_int_equal(pfi_analysis_parse_set("all_dcgm", &s, &err), PFI_OK);
    assert_int_equal(s.p, PFI_FEAT_N_DCGM);
    assert_int_equal(pfi_analysis_parse_set("dram_active,,x", &s, &err), PFI_EINVAL);
    assert_int_equal(pfi_analysis_parse_set("bogus", &s, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "bogus"));
    assert_int_equal(pfi_analysis_parse_set("all_dcgm,sm_active", &s, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "twice"));
}

/* The ablation's DRAM-copy row equals a direct fit of PFI on the product, and
 * sets that cannot be fitted report why instead of numbers. */
static void ablation_outcomes(void **state)
{
    fixture f;
    pfi_error err;
    assert_int_equal(load(&f, "tests/data/fit-telemetry.csv", &err), PFI_OK);
    pfi_feature_set sets[PFI_TABLE3_SETS];
    pfi_analysis_table3_sets(sets);
    pfi_ablation a;
    assert_int_equal(pfi_analysis_ablation(f.obs, f.n, &sets[0], &a), PFI_OK);
    assert_int_equal(a.fit_rc, PFI_OK);
    double x[10], y[10];
    for (size_t i = 0; i < 10; i++) {
        x[i] = f.obs[i].f.v[PFI_FEAT_DRAM_COPY_PRODUCT];
        y[i] = f.obs[i].pfi;
    }
    pfi_ols m;
    assert_int_equal(pfi_model_ols(x, y, 10, 1, &m, &err), PFI_OK);
    assert_near(a.ols.coef[1], m.coef[1], 1e-12);
    assert_int_equal(a.loo.rc, PFI_OK);
    assert_int_equal(a.loco.rc, PFI_OK);
    assert_int_equal(a.loco.cv.folds, 4);
    assert_true(a.loco.cv.r2_oos <= a.loo.cv.r2_oos); /* whole clusters held out: harder */
    assert_false(a.has_val);
    /* 13 DCGM features on 10 groups: too few groups */
    assert_int_equal(pfi_analysis_ablation(f.obs, f.n, &sets[5], &a), PFI_OK);
    assert_int_equal(a.fit_rc, PFI_ENODATA);
    assert_int_equal(a.loo.rc, PFI_ENODATA);
    assert_non_null(strstr(a.fit_msg, "need at least 15"));

    /* holding out two groups: fitted on 8, validated on 2 */
    f.obs[0].holdout = f.obs[9].holdout = 1;
    assert_int_equal(pfi_analysis_ablation(f.obs, f.n, &sets[0], &a), PFI_OK);
    assert_int_equal(a.n, 8);
    assert_true(a.has_val);
    assert_int_equal(a.val.n, 2);
    /* Table 13 subgroups over the 8 training groups: dense 4, moe 4, all 8 */
    pfi_subgroup_rho sub[PFI_TABLE13_SUBGROUPS];
    assert_int_equal(pfi_analysis_subgroups(f.obs, f.n, PFI_FEAT_DRAM_COPY_PRODUCT, sub), PFI_OK);
    assert_int_equal(sub[0].n, 4);
    assert_int_equal(sub[1].n, 4);
    assert_int_equal(sub[2].n, 7);
    assert_int_equal(sub[3].n, 8);
    unload(&f);
}

/* A zero DRAM activity: arithmetic intensity is undefined for that group, so
 * the set fails naming the group; corr leaves the group out of that feature. */
static void zero_activity(void **state)
{
    fixture f;
    pfi_error err;
    assert_int_equal(load(&f, "tests/data/fit-telemetry-zero-dram.csv", &err), PFI_OK);
    pfi_feature_set s;
    assert_int_equal(pfi_analysis_parse_set("arithmetic_intensity", &s, &err), PFI_OK);
    pfi_ablation a;
    assert_int_equal(pfi_analysis_ablation(f.obs, f.n, &s, &a), PFI_OK);
    assert_int_equal(a.fit_rc, PFI_EUNDEFINED);
    assert_non_null(strstr(a.fit_msg, "MoE PT B"));
    pfi_corr c[PFI_FEAT_N_TELEMETRY];
    assert_int_equal(pfi_analysis_corr(f.obs, f.n, c), PFI_OK);
    assert_int_equal(c[PFI_FEAT_ARITH_INTENSITY].n, 9);
    assert_int_equal(c[PFI_FEAT_DRAM_COPY_PRODUCT].n, 10);
    /* q >= p for every defined feature (BH never lowers a p-value) */
    for (int i = 0; i < PFI_FEAT_N_TELEMETRY; i++)
        if (c[i].has) assert_true(c[i].q >= c[i].p - 1e-15);
    unload(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(join_fixture),
        cmocka_unit_test(join_errors),
        cmocka_unit_test(table3_sets_match_paper),
        cmocka_unit_test(parse_sets),
        cmocka_unit_test(ablation_outcomes),
        cmocka_unit_test(zero_activity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
