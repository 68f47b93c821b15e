/* pfi/sim_groups.h: the simulation's groups from sweeps and telemetry
 * observations, on a hand-made set whose OLS fit is computed by hand: which
 * groups come out (held-out ones do not), in which order, with which curve,
 * metadata, predicted PFI and DRAM copy product, and the errors. */
#include "test_util.h"

#include <string.h>

#include "pfi/sim_groups.h"

static const char *const NAME[5] = {"dense-pt-a", "moe-ft-b", "dense-ft-c", "moe-pt-d", "held-e"};
static const char *const ARCH[5] = {"dense", "moe", "dense", "moe", "dense"};
static const char *const TASK[5] = {"pt", "ft", "ft", "pt", "pt"};
static const int GPUS[5] = {8, 16, 8, 32, 8};

/* Three runs per group, added out of cap order (finalize sorts them): group
 * i at cap C has P = C (i+1) and T = 10 C + i. */
static const double CAP[3] = {700, 200, 400};

static pfi_sweeps *make_sweeps(void)
{
    pfi_sweeps *s = pfi_sweeps_create();
    pfi_error err;
    for (int i = 0; i < 5; i++) {
        pfi_group_meta m = {.platform = "H200",
                            .model = "m",
                            .arch = ARCH[i],
                            .task = TASK[i],
                            .config = "",
                            .gpus = GPUS[i]};
        for (int r = 0; r < 3; r++) {
            pfi_run run = {
                .cap_w = CAP[r], .power_w = CAP[r] * (i + 1), .tput = 10 * CAP[r] + i, .line = 0};
            if (pfi_sweeps_add_run(s, NAME[i], &m, &run, "mem", &err) != PFI_OK)
                fail_msg("add_run: %s", err.msg);
        }
    }
    if (pfi_sweeps_finalize(s, 0, "mem", &err) != PFI_OK) fail_msg("finalize: %s", err.msg);
    return s;
}

/* The feature is arithmetic intensity x = 1, 2, 3, 4 for the four training
 * groups with PFI y = 1.0, 1.4, 1.5, 2.1. By hand: xbar 2.5, ybar 1.5,
 * Sxy = 1.5*.5 + .5*.1 + 0 + 1.5*.6 = 1.7, Sxx = 5: slope 0.34, intercept
 * 1.5 - 0.34*2.5 = 0.65; predictions 0.99, 1.33, 1.67, 2.01; SS_res =
 * .01^2 + .07^2 + .17^2 + .09^2 = 0.042, SS_tot = 0.62, R2 = 1 - 0.042/0.62.
 * The held-out group (x = 10, PFI 9) would pull the line far off if fitted.
 * Observations are in another order than the sweeps (joined by name). */
static const double X[5] = {1, 4, 2, 3, 10}, Y[5] = {1.0, 2.1, 1.4, 1.5, 9.0};
static const double DCP[5] = {11, 44, 22, 33, 55};

static void make_obs(pfi_obs obs[5])
{
    static const int order[5] = {3, 0, 4, 2, 1}; /* obs k describes group order[k] */
    memset(obs, 0, 5 * sizeof *obs);
    for (int k = 0; k < 5; k++) {
        int i = order[k];
        obs[k].name = NAME[i];
        obs[k].arch = ARCH[i];
        obs[k].task = TASK[i];
        obs[k].gpus = GPUS[i];
        obs[k].pfi = Y[i];
        obs[k].holdout = i == 4;
        obs[k].f.v[PFI_FEAT_ARITH_INTENSITY] = X[i];
        obs[k].f.v[PFI_FEAT_DRAM_COPY_PRODUCT] = DCP[i];
        obs[k].f.valid = (1u << PFI_FEAT_ARITH_INTENSITY) | (1u << PFI_FEAT_DRAM_COPY_PRODUCT);
    }
}

static pfi_feature_set arith_set(void)
{
    pfi_feature_set set = {
        .name = "arithmetic_intensity", .p = 1, .ids = {PFI_FEAT_ARITH_INTENSITY}};
    return set;
}

static void builds_the_training_groups(void **state)
{
    pfi_sweeps *s = make_sweeps();
    pfi_obs obs[5];
    make_obs(obs);
    pfi_feature_set set = arith_set();
    pfi_ols m;
    pfi_sim_groups g;
    pfi_error err;
    assert_int_equal(pfi_sim_groups_build(s, obs, 5, &set, &m, &g, &err), PFI_OK);
    assert_int_equal(m.n, 4);
    assert_near(m.coef[0], 0.65, 1e-12);
    assert_near(m.coef[1], 0.34, 1e-12);
    assert_near(m.r2, 1 - 0.042 / 0.62, 1e-12);
    assert_int_equal(g.n, 4);                               /* held-e is left out */
    static const double pred[4] = {0.99, 2.01, 1.33, 1.67}; /* 0.65 + 0.34 x, sweeps order */
    for (size_t i = 0; i < 4; i++) {
        const pfi_sim_group *q = &g.g[i];
        assert_string_equal(q->name, NAME[i]);
        assert_int_equal(q->n, 3);
        assert_near(q->pfi_hat, pred[i], 1e-12);
        assert_near(q->dram_copy, DCP[i], 0);
        assert_int_equal(q->moe, strcmp(ARCH[i], "moe") == 0);
        assert_int_equal(q->ft, strcmp(TASK[i], "ft") == 0);
        assert_int_equal(q->gpus, GPUS[i]);
        /* the sweep sorted by cap: 200, 400, 700 W */
        static const double caps[3] = {200, 400, 700};
        for (size_t r = 0; r < 3; r++) {
            assert_near(q->cap[r], caps[r], 0);
            assert_near(q->P[r], caps[r] * (double)(i + 1), 0);
            assert_near(q->T[r], 10 * caps[r] + (double)i, 0);
        }
    }
    pfi_sim_groups_free(&g);
    assert_null(g.g);
    pfi_sim_groups_free(&g); /* twice, and NULL: no-ops */
    pfi_sim_groups_free(NULL);
    pfi_sweeps_destroy(s);
}

static void errors_name_the_group(void **state)
{
    pfi_sweeps *s = make_sweeps();
    pfi_obs obs[5];
    pfi_feature_set set = arith_set();
    pfi_ols m;
    pfi_sim_groups g;
    pfi_error err;

    /* a sweep group without an observation */
    make_obs(obs);
    assert_int_equal(pfi_sim_groups_build(s, obs, 4, &set, &m, &g, &err), PFI_ENOTFOUND);
    assert_non_null(strstr(err.msg, "moe-ft-b"));
    assert_null(g.g);

    /* the model's feature missing for a training group fails the fit itself */
    make_obs(obs);
    obs[3].f.valid &= ~(1u << PFI_FEAT_ARITH_INTENSITY); /* dense-ft-c */
    assert_int_equal(pfi_sim_groups_build(s, obs, 5, &set, &m, &g, &err), PFI_EUNDEFINED);
    assert_non_null(strstr(err.msg, "dense-ft-c"));

    /* the DRAM copy product (for the dram-copy policy) undefined */
    make_obs(obs);
    obs[4].f.valid &= ~(1u << PFI_FEAT_DRAM_COPY_PRODUCT); /* moe-ft-b */
    obs[4].f.undefined |= 1u << PFI_FEAT_DRAM_COPY_PRODUCT;
    assert_int_equal(pfi_sim_groups_build(s, obs, 5, &set, &m, &g, &err), PFI_EUNDEFINED);
    assert_non_null(strstr(err.msg, "moe-ft-b"));
    assert_non_null(strstr(err.msg, "undefined"));
    assert_null(g.g);

    /* ... and missing */
    obs[4].f.undefined = 0;
    assert_int_equal(pfi_sim_groups_build(s, obs, 5, &set, &m, &g, &err), PFI_EUNDEFINED);
    assert_non_null(strstr(err.msg, "missing"));

    /* a held-out group's missing features do not matter: it is not built */
    make_obs(obs);
    obs[2].f.valid = 0; /* held-e */
    assert_int_equal(pfi_sim_groups_build(s, obs, 5, &set, &m, &g, &err), PFI_OK);
    assert_int_equal(g.n, 4);
    pfi_sim_groups_free(&g);

    /* bad arguments */
    assert_int_equal(pfi_sim_groups_build(NULL, obs, 5, &set, &m, &g, &err), PFI_EINVAL);
    assert_int_equal(pfi_sim_groups_build(s, NULL, 5, &set, &m, &g, &err), PFI_EINVAL);
    assert_int_equal(pfi_sim_groups_build(s, obs, 5, &set, &m, NULL, &err), PFI_EINVAL);
    pfi_sweeps_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builds_the_training_groups),
        cmocka_unit_test(errors_name_the_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
