/* Benchmark: the paper's full Sec. 6 experiment on the embedded dataset,
 * 500 workloads x 100 jobs x 41 reduction levels (0..40%) x 2 mixes, with
 * the paper's policies and the oracle, then with learn as well. One JSON
 * object per line; times are medians (5 runs, 3 with learn), wall clock and
 * the process's CPU seconds (all threads; less inflated by others' load on
 * a shared machine). Target: under 2 s with learn. PFI for the pfi policy comes from the
 * one-feature OLS on the DRAM copy product, as pfi simulate does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "pfi/features.h"
#include "pfi/index.h"
#include "pfi/model.h"
#include "pfi/sim.h"
#include "pfi/sweeps_csv.h"
#include "pfi/telemetry_csv.h"

int main(void)
{
    pfi_error err;
    pfi_sweeps *s = NULL;
    pfi_telemetry *t = NULL;
    if (pfi_sweeps_read(PFI_SOURCE_DIR "/data/paper-h200/sweeps.csv", 0, &s, &err) ||
        pfi_telemetry_read(PFI_SOURCE_DIR "/data/paper-h200/telemetry.csv", &t, &err)) {
        fprintf(stderr, "bench_sim: %s\n", err.msg);
        return 1;
    }
    size_t ng = pfi_sweeps_count(s), runs = 0;
    for (size_t i = 0; i < ng; i++)
        runs += pfi_sweeps_group(s, i)->n_runs;
    pfi_sim_group *g = calloc(ng, sizeof *g);
    double *P = malloc(runs * sizeof *P), *T = malloc(runs * sizeof *T),
           *C = malloc(runs * sizeof *C);
    double *x = malloc(ng * sizeof *x), *y = malloc(ng * sizeof *y);
    if (!g || !P || !T || !C || !x || !y) return 1;
    size_t k = 0;
    for (size_t i = 0; i < ng; i++) {
        const pfi_group *gr = pfi_sweeps_group(s, i);
        const pfi_tm_row *row = pfi_telemetry_find(t, gr->name);
        pfi_features f;
        pfi_index_result res;
        if (!row || pfi_features_compute(row, PFI_FEAT_H200_BOOST_MHZ, &f) ||
            !((f.valid >> PFI_FEAT_DRAM_COPY_PRODUCT) & 1u) ||
            pfi_index_group(gr, PFI_METHOD_RATIO, NULL, &res) || !res.has_pfi) {
            fprintf(stderr, "bench_sim: group %s lacks telemetry or PFI\n", gr->name);
            return 1;
        }
        x[i] = f.v[PFI_FEAT_DRAM_COPY_PRODUCT];
        y[i] = res.pfi;
        g[i] = (pfi_sim_group){.name = gr->name,
                               .cap = C + k,
                               .P = P + k,
                               .T = T + k,
                               .n = gr->n_runs,
                               .dram_copy = x[i],
                               .moe = strcmp(gr->meta.arch, "moe") == 0,
                               .ft = strcmp(gr->meta.task, "ft") == 0,
                               .gpus = gr->meta.gpus};
        for (size_t r = 0; r < gr->n_runs; r++, k++) {
            P[k] = gr->runs[r].power_w;
            T[k] = gr->runs[r].tput;
            C[k] = gr->runs[r].cap_w;
        }
    }
    pfi_ols m;
    if (pfi_model_ols(x, y, ng, 1, &m, &err)) {
        fprintf(stderr, "bench_sim: %s\n", err.msg);
        return 1;
    }
    for (size_t i = 0; i < ng; i++)
        g[i].pfi_hat = pfi_model_predict(&m, &x[i]);

    double red[41];
    for (int r = 0; r <= 40; r++)
        red[r] = r / 100.0;
    for (int with_learn = 0; with_learn <= 1; with_learn++) {
        int reps = with_learn ? 3 : 5;
        double tm[5], cpu[5];
        double learn30 = NAN, pfi30 = NAN;
        for (int rep = 0; rep < reps; rep++) {
            double t0 = bench_now(), c0 = bench_cpu();
            for (int mix = 0; mix < 2; mix++) {
                pfi_sim_opts o = pfi_sim_defaults();
                o.mix = mix ? PFI_SIM_PRODUCTION : PFI_SIM_RANDOM;
                o.reductions = red;
                o.n_reductions = 41;
                o.threads = 2;
                o.no_learn = !with_learn;
                pfi_sim_result r;
                if (pfi_sim_run(g, ng, &o, &r, &err)) {
                    fprintf(stderr, "bench_sim: %s\n", err.msg);
                    return 1;
                }
                if (mix) {
                    pfi30 = r.cells[30 * PFI_SIM_NPOLICIES + PFI_POLICY_PFI].gap_recovered;
                    learn30 = r.cells[30 * PFI_SIM_NPOLICIES + PFI_SIM_LEARN].gap_recovered;
                }
                pfi_sim_result_free(&r);
            }
            tm[rep] = bench_now() - t0;
            cpu[rep] = bench_cpu() - c0;
        }
        double med = bench_median(tm, (size_t)reps), cmed = bench_median(cpu, (size_t)reps);
        printf("{\"name\":\"sim_full_experiment\",\"learn\":%s,\"workloads\":500,\"jobs\":100,"
               "\"reductions\":41,\"mixes\":2,\"policies\":%d,\"threads\":2,\"seconds\":%.4f,"
               "\"cpu_seconds\":%.4f,\"reps\":%d,\"production_30_pfi_recovered\":%.4f",
               with_learn ? "true" : "false", with_learn ? 6 : 5, med, cmed, reps, pfi30);
        if (with_learn)
            printf(",\"production_30_learn_recovered\":%.4f,\"target_seconds\":2", learn30);
        printf("}\n");
        fflush(stdout);
    }
    free(g);
    free(P);
    free(T);
    free(C);
    free(x);
    free(y);
    pfi_telemetry_destroy(t);
    pfi_sweeps_destroy(s);
    return 0;
}
