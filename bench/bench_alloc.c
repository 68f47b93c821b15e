/* Benchmark: one oracle allocation (problem set-up with the envelopes, then
 * the allocation) for 10^3..10^6 jobs of 6 points, and the proportional
 * policies at 10^5 jobs. Prints one JSON object per line; times are medians
 * of several repetitions. Target: 10^5 jobs under 20 ms. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "pfi/alloc.h"

enum { NPTS = 6 };

/* Sweeps like the paper's: caps 200..700 W per GPU on 8 GPUs, throughput
 * rising with power with a job-specific, mostly concave shape. */
static void make_jobs(gsl_rng *r, size_t n, double *P, double *T, double *C, pfi_alloc_job *jobs)
{
    static const double caps[NPTS] = {200, 300, 400, 500, 600, 700};
    for (size_t i = 0; i < n; i++) {
        double *p = P + i * NPTS, *t = T + i * NPTS, *c = C + i * NPTS;
        double tmax = 5000 + 20000 * gsl_rng_uniform(r), pfi = 1 + 1.5 * gsl_rng_uniform(r);
        double draw = 0.75 + 0.2 * gsl_rng_uniform(r);
        for (int k = 0; k < NPTS; k++) {
            c[k] = caps[k];
            p[k] = 8 * fmin(caps[k], 700 * draw) * (0.97 + 0.02 * gsl_rng_uniform(r));
            double x = p[k] / (8 * 700 * draw);
            t[k] = tmax * fmax(0.05, 1 - (1 - x) / pfi * (1 + 0.3 * (1 - x)));
        }
        jobs[i] = (pfi_alloc_job){
            .cap = c, .P = p, .T = t, .n = NPTS, .pfi = pfi, .dram_copy = gsl_rng_uniform(r)};
    }
}

int main(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    static const size_t sizes[] = {1000, 10000, 100000, 1000000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        int reps = n >= 1000000 ? 3 : 9;
        double *P = malloc(n * NPTS * sizeof *P), *T = malloc(n * NPTS * sizeof *T);
        double *C = malloc(n * NPTS * sizeof *C), *pw = malloc(n * sizeof *pw);
        pfi_alloc_job *jobs = malloc(n * sizeof *jobs);
        if (!P || !T || !C || !pw || !jobs) return 1;
        make_jobs(r, n, P, T, C, jobs);
        /* cold: a new problem each time (fresh memory, page faults included);
         * warm: the controller's steady state, reset of a kept problem with
         * the envelopes rebuilt, then the oracle */
        double cold[16], warm[16], setup[16], solve[16], tput = 0;
        pfi_alloc_problem *kept = NULL;
        if (pfi_alloc_problem_create(jobs, n, &kept, NULL)) return 1;
        for (int k = 0; k < reps; k++) {
            double t0 = bench_now(), budget;
            pfi_alloc_problem *p = NULL;
            if (pfi_alloc_problem_create(jobs, n, &p, NULL)) return 1;
            pfi_alloc_budget_for_reduction(p, 0.3, &budget, NULL);
            if (pfi_alloc_oracle(p, budget, pw, &tput, NULL)) return 1;
            cold[k] = bench_now() - t0;
            pfi_alloc_problem_destroy(p);
            t0 = bench_now();
            if (pfi_alloc_problem_reset(kept, jobs, n, NULL)) return 1;
            double t1 = bench_now();
            if (pfi_alloc_oracle(kept, budget, pw, &tput, NULL)) return 1;
            double t2 = bench_now();
            setup[k] = t1 - t0;
            solve[k] = t2 - t1;
            warm[k] = t2 - t0;
        }
        pfi_alloc_problem_destroy(kept);
        printf("{\"name\":\"alloc_oracle\",\"jobs\":%zu,\"points\":%d,\"reduction\":0.3,"
               "\"seconds\":%.6f,\"setup_seconds\":%.6f,\"oracle_seconds\":%.6f,"
               "\"cold_seconds\":%.6f,\"reps\":%d%s}\n",
               n, NPTS, bench_median(warm, (size_t)reps), bench_median(setup, (size_t)reps),
               bench_median(solve, (size_t)reps), bench_median(cold, (size_t)reps), reps,
               n == 100000 ? ",\"target_seconds\":0.02" : "");
        if (n == 100000) {
            pfi_alloc_problem *p = NULL;
            if (pfi_alloc_problem_create(jobs, n, &p, NULL)) return 1;
            double budget;
            pfi_alloc_budget_for_reduction(p, 0.3, &budget, NULL);
            for (int pol = 0; pol < PFI_POLICY_COUNT; pol++) {
                double t[16];
                for (int k = 0; k < reps; k++) {
                    double t0 = bench_now();
                    pfi_alloc_result res;
                    if (pfi_alloc_run(p, (pfi_alloc_policy)pol, budget, NULL, &res, NULL)) return 1;
                    t[k] = bench_now() - t0;
                }
                printf("{\"name\":\"alloc_run\",\"policy\":\"%s\",\"jobs\":%zu,\"seconds\":%.6f,"
                       "\"reps\":%d}\n",
                       pfi_alloc_policy_name((pfi_alloc_policy)pol), n,
                       bench_median(t, (size_t)reps), reps);
            }
            pfi_alloc_problem_destroy(p);
        }
        fflush(stdout);
        free(P);
        free(T);
        free(C);
        free(pw);
        free(jobs);
    }
    gsl_rng_free(r);
    return 0;
}
