/* The full `pfi fit` analysis on 1,000 synthetic sweep groups (6 caps each):
 * join sweeps with telemetry (PFI + features), the seven Table 3 predictor
 * sets with LOO and LOCO, the Table 12 leverage drop and Table 13 subgroups,
 * plus the feature correlations of `pfi corr`. Target: under 1 s. Prints one
 * JSON object: the median of 5 repetitions and the spread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "pfi/analysis.h"
#include "pfi/curve.h"
#include "bench_util.h"

#define GROUPS 1000
#define REPS 5

int main(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 42);
    pfi_sweeps *s = pfi_sweeps_create();
    pfi_telemetry tm = {.rows = calloc(GROUPS, sizeof(pfi_tm_row)), .n = GROUPS};
    static const char *arch[] = {"dense", "moe"}, *task[] = {"pt", "ft"};
    static const double caps[] = {200, 300, 400, 500, 600, 700};
    pfi_error err;
    for (int g = 0; g < GROUPS; g++) {
        char name[32];
        snprintf(name, sizeof name, "g%04d", g);
        int a = g % 2, t = (g / 2) % 2, gpus = 8 << (g % 3);
        /* memory-bound jobs (high DRAM x copy) keep throughput under caps */
        double dram = gsl_ran_flat(rng, 0.1, 0.6), copy = gsl_ran_flat(rng, 10, 80);
        double pfi = 1.0 + 0.02 * dram * copy + 0.3 * a * t + gsl_ran_gaussian(rng, 0.1);
        if (pfi < 1.05) pfi = 1.05;
        pfi_group_meta meta = {"H200", "synthetic", arch[a], task[t], "", gpus};
        double pmax = 680.0 * gpus, tmax = 1000.0 * gpus;
        for (int k = 0; k < 6; k++) {
            double P = k == 5 ? pmax : caps[k] * gpus * 0.97;
            pfi_run r = {.cap_w = caps[k], .power_w = P, .tput = tmax * (1 - (1 - P / pmax) / pfi)};
            if (pfi_sweeps_add_run(s, name, &meta, &r, "bench", &err) != PFI_OK) return 1;
        }
        pfi_tm_row *row = &tm.rows[g];
        row->group = strdup(name);
        double v[PFI_TM_NFIELDS] = {gsl_ran_flat(rng, 0.5, 0.95),
                                    gsl_ran_flat(rng, 0.05, 0.6),
                                    dram,
                                    copy,
                                    gsl_ran_flat(rng, 80, 100),
                                    gsl_ran_flat(rng, 350, 700),
                                    gsl_ran_flat(rng, 1400, 1980),
                                    3201,
                                    gsl_ran_flat(rng, 30000, 140000),
                                    gsl_ran_flat(rng, 40, 80),
                                    gsl_ran_flat(rng, 1e9, 2e11),
                                    gsl_ran_flat(rng, 1e9, 2e11),
                                    gsl_ran_flat(rng, 1e8, 1e10),
                                    gsl_ran_flat(rng, 1e8, 1e10)};
        memcpy(row->v, v, sizeof v);
        row->valid = (1u << PFI_TM_NFIELDS) - 1;
    }
    if (pfi_sweeps_finalize(s, 0, "bench", &err) != PFI_OK) return 1;

    double times[REPS], check = 0;
    pfi_feature_set sets[PFI_TABLE3_SETS];
    pfi_analysis_table3_sets(sets);
    for (int rep = 0; rep < REPS; rep++) {
        double t0 = bench_now();
        pfi_obs *obs;
        size_t n;
        if (pfi_analysis_join(s, NULL, &tm, 1980, &obs, &n, &err) != PFI_OK) return 1;
        for (int i = 0; i < PFI_TABLE3_SETS; i++) {
            pfi_ablation a;
            if (pfi_analysis_ablation(obs, n, &sets[i], &a) != PFI_OK || a.loo.rc != PFI_OK ||
                a.loco.rc != PFI_OK)
                return 1;
            if (i == 0) check = a.loo.cv.r2_oos;
        }
        double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
        for (size_t i = 0; i < n; i++) {
            x[i] = obs[i].f.v[PFI_FEAT_DRAM_COPY_PRODUCT];
            y[i] = obs[i].pfi;
        }
        pfi_leverage_step lev[6];
        pfi_subgroup_rho sub[PFI_TABLE13_SUBGROUPS];
        pfi_corr corr[PFI_FEAT_N_TELEMETRY];
        if (pfi_model_leverage_drop(x, y, n, 5, lev, &err) != PFI_OK ||
            pfi_analysis_subgroups(obs, n, PFI_FEAT_DRAM_COPY_PRODUCT, sub) != PFI_OK ||
            pfi_analysis_corr(obs, n, corr) != PFI_OK)
            return 1;
        free(x);
        free(y);
        free(obs);
        times[rep] = bench_now() - t0;
    }
    qsort(times, REPS, sizeof times[0], bench_cmp);
    printf("{\"name\":\"fit_ablation_1000_groups_7_sets_loo_loco\",\"seconds\":%.4f,"
           "\"min\":%.4f,\"max\":%.4f,\"target_seconds\":1.0,\"check_loo_r2\":%.3f}\n",
           times[REPS / 2], times[0], times[REPS - 1], check);
    for (size_t i = 0; i < tm.n; i++)
        free(tm.rows[i].group);
    free(tm.rows);
    pfi_sweeps_destroy(s);
    gsl_rng_free(rng);
    return 0;
}
