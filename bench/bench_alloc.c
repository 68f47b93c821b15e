/* Benchmark: one oracle allocation (problem set-up with the envelopes, then
 * the allocation) for 10^3..10^6 jobs of 6 points, and the proportional
 * policies at 10^5 jobs. Prints one JSON object per line; times are medians
 * of several repetitions. Target: 10^5 jobs under 20 ms.
 *
 * Nested budgets (issue 28): at 10^5 jobs, the oracle and equal under a
 * 4-level tree (site, 4 feeds, 16 PDUs, 64 racks; limits binding at every
 * level) against the flat oracle on the same problem, target under 2x; and
 * the linear program of jobs spread over two racks (1% of 10^4 jobs),
 * target under 20 ms. The tree's figures are CPU seconds (single thread),
 * so that other work on a shared machine counts less. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The 4-level tree: domain 0 the site, then per feed f its PDUs, per PDU
 * its racks, in pre-order; job i in rack i % 64. Limits: racks at 60% of
 * their jobs' Pmax (every other one; the rest unrated), one PDU in four at
 * 62%, one feed at 64%, the others at 85%, the site under the 30% cut's
 * budget: each level binds somewhere (the output counts where). */
enum { FEEDS = 4, PDUS = 4, RACKS = 4, NRACK = FEEDS * PDUS * RACKS };

static size_t tree_build(const pfi_alloc_problem *p, pfi_alloc_domain *d, size_t *rack_dom)
{
    size_t nd = 0;
    d[nd++] = (pfi_alloc_domain){"site", PFI_ALLOC_NO_PARENT, INFINITY, 0};
    for (int f = 0; f < FEEDS; f++) {
        size_t fd = nd;
        d[nd++] = (pfi_alloc_domain){"feed", 0, INFINITY, 0};
        for (int q = 0; q < PDUS; q++) {
            size_t pd = nd;
            d[nd++] = (pfi_alloc_domain){"pdu", fd, INFINITY, 0};
            for (int r = 0; r < RACKS; r++) {
                rack_dom[(f * PDUS + q) * RACKS + r] = nd;
                d[nd++] = (pfi_alloc_domain){"rack", pd, INFINITY, 0};
            }
        }
    }
    double *pm = calloc(nd, sizeof *pm);
    for (size_t i = 0; i < pfi_alloc_problem_jobs(p); i++) {
        double x;
        pfi_alloc_problem_job_range(p, i, &x, NULL, NULL);
        for (size_t a = rack_dom[i % NRACK]; a != PFI_ALLOC_NO_PARENT; a = d[a].parent)
            pm[a] += x;
    }
    size_t nf = 0, np = 0, nr = 0;
    for (size_t a = 1; a < nd; a++) {
        const char *k = d[a].name;
        double f = k[0] == 'f'   ? (nf++ == 0 ? 0.64 : 0.85)
                   : k[0] == 'p' ? (np++ % 4 == 1 ? 0.62 : 0.85)
                                 : (nr++ % 2 ? 0.60 : INFINITY);
        d[a].limit_w = f * pm[a];
    }
    free(pm);
    return nd;
}

static void bench_tree(pfi_alloc_problem *p, const pfi_alloc_job *jobs, size_t n, int reps)
{
    pfi_alloc_domain d[1 + FEEDS * (1 + PDUS * (1 + RACKS))];
    size_t rack_dom[NRACK];
    size_t nd = tree_build(p, d, rack_dom);
    pfi_alloc_span *s = malloc(n * sizeof *s);
    double *pw = malloc(n * sizeof *pw), budget, tput;
    if (!s || !pw) exit(1);
    for (size_t i = 0; i < n; i++)
        s[i] = (pfi_alloc_span){i, rack_dom[i % NRACK], 1};
    pfi_alloc_budget_for_reduction(p, 0.3, &budget, NULL);
    /* the oracle alone, and with the period's set-up (a reset of the kept
     * problem; for the tree, setting it too), as a controller pays both */
    double flat[16], nested[16], eq[16], flat_all[16], nested_all[16], flat_tput = 0;
    for (int k = 0; k < reps; k++) {
        pfi_alloc_problem_set_tree(p, NULL, 0, NULL, 0, NULL);
        double t0 = bench_cpu();
        if (pfi_alloc_problem_reset(p, jobs, n, NULL)) exit(1);
        double t1 = bench_cpu();
        if (pfi_alloc_oracle(p, budget, pw, &flat_tput, NULL)) exit(1);
        double t2 = bench_cpu();
        flat[k] = t2 - t1;
        flat_all[k] = t2 - t0;
        t0 = bench_cpu();
        if (pfi_alloc_problem_reset(p, jobs, n, NULL)) exit(1);
        if (pfi_alloc_problem_set_tree(p, d, nd, s, n, NULL)) exit(1);
        t1 = bench_cpu();
        if (pfi_alloc_oracle(p, budget, pw, &tput, NULL)) exit(1);
        t2 = bench_cpu();
        nested[k] = t2 - t1;
        nested_all[k] = t2 - t0;
        t0 = bench_cpu();
        if (pfi_alloc_run(p, PFI_POLICY_EQUAL, budget, NULL, NULL, NULL)) exit(1);
        eq[k] = bench_cpu() - t0;
    }
    /* how many domains the oracle left at their limit, per level */
    int bound[4] = {0};
    for (size_t a = 0; a < nd; a++) {
        int lvl = a == 0 ? 0 : d[a].name[0] == 'f' ? 1 : d[a].name[0] == 'p' ? 2 : 3;
        double lim = a == 0 ? budget : d[a].limit_w;
        bound[lvl] += pfi_alloc_problem_domain_power(p, a) >= lim * (1 - 1e-9);
    }
    double fm = bench_median(flat, (size_t)reps), nm = bench_median(nested, (size_t)reps);
    double fa = bench_median(flat_all, (size_t)reps), na = bench_median(nested_all, (size_t)reps);
    printf("{\"name\":\"alloc_tree_oracle\",\"jobs\":%zu,\"domains\":%zu,\"levels\":4,"
           "\"flat_seconds\":%.6f,\"nested_seconds\":%.6f,\"ratio\":%.3f,\"target_ratio\":2,"
           "\"flat_with_setup_seconds\":%.6f,\"nested_with_setup_seconds\":%.6f,"
           "\"ratio_with_setup\":%.3f,"
           "\"equal_nested_seconds\":%.6f,\"bound\":{\"site\":%d,\"feeds\":%d,\"pdus\":%d,"
           "\"racks\":%d},\"clock\":\"cpu\",\"flat_tput\":%.1f,\"nested_tput\":%.1f,\"reps\":%d}\n",
           n, nd, fm, nm, nm / fm, fa, na, na / fa, bench_median(eq, (size_t)reps), bound[0],
           bound[1], bound[2], bound[3], flat_tput, tput, reps);
    pfi_alloc_problem_set_tree(p, NULL, 0, NULL, 0, NULL);
    free(s);
    free(pw);
}

/* The linear program: n jobs, one in a hundred spread evenly over two
 * racks of different PDUs. */
static void bench_tree_lp(pfi_alloc_problem *p, size_t n, int reps)
{
    pfi_alloc_domain d[1 + FEEDS * (1 + PDUS * (1 + RACKS))];
    size_t rack_dom[NRACK], ns = 0;
    size_t nd = tree_build(p, d, rack_dom);
    pfi_alloc_span *s = malloc(2 * n * sizeof *s);
    double *pw = malloc(n * sizeof *pw), budget, tput, t[16];
    if (!s || !pw) exit(1);
    for (size_t i = 0; i < n; i++) {
        if (i % 100 == 0) {
            s[ns++] = (pfi_alloc_span){i, rack_dom[i % NRACK], 0.5};
            s[ns++] = (pfi_alloc_span){i, rack_dom[(i + RACKS) % NRACK], 0.5};
        } else {
            s[ns++] = (pfi_alloc_span){i, rack_dom[i % NRACK], 1};
        }
    }
    pfi_alloc_budget_for_reduction(p, 0.3, &budget, NULL);
    if (pfi_alloc_problem_set_tree(p, d, nd, s, ns, NULL)) exit(1);
    for (int k = 0; k < reps; k++) {
        double t0 = bench_cpu();
        if (pfi_alloc_oracle(p, budget, pw, &tput, NULL)) exit(1);
        t[k] = bench_cpu() - t0;
    }
    printf("{\"name\":\"alloc_tree_lp\",\"jobs\":%zu,\"spread_jobs\":%zu,\"domains\":%zu,"
           "\"cpu_seconds\":%.6f,\"target_seconds\":0.02,\"tput\":%.3f,\"reps\":%d}\n",
           n, (n + 99) / 100, nd, bench_median(t, (size_t)reps), tput, reps);
    pfi_alloc_problem_set_tree(p, NULL, 0, NULL, 0, NULL);
    free(s);
    free(pw);
}

/* The flat oracle, cold (a new problem each time: fresh memory, page faults
 * included) and warm (the controller's steady state: a reset of a kept
 * problem with the envelopes rebuilt, then the oracle). */
static int bench_oracle(const pfi_alloc_job *jobs, size_t n, int reps, double *pw)
{
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
    return 0;
}

/* Every policy at n jobs, flat. */
static int bench_policies(pfi_alloc_problem *p, size_t n, int reps)
{
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
               pfi_alloc_policy_name((pfi_alloc_policy)pol), n, bench_median(t, (size_t)reps),
               reps);
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* "tree": only the nested budgets' benchmarks (on the same jobs) */
    int tree_only = argc > 1 && strcmp(argv[1], "tree") == 0;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    static const size_t sizes[] = {1000, 10000, 100000, 1000000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        if (tree_only && n > 100000) break;
        int reps = n >= 1000000 ? 3 : 9;
        double *P = malloc(n * NPTS * sizeof *P), *T = malloc(n * NPTS * sizeof *T);
        double *C = malloc(n * NPTS * sizeof *C), *pw = malloc(n * sizeof *pw);
        pfi_alloc_job *jobs = malloc(n * sizeof *jobs);
        if (!P || !T || !C || !pw || !jobs) return 1;
        make_jobs(r, n, P, T, C, jobs);
        if (!tree_only && bench_oracle(jobs, n, reps, pw)) return 1;
        if (n == 100000) {
            pfi_alloc_problem *p = NULL;
            if (pfi_alloc_problem_create(jobs, n, &p, NULL)) return 1;
            if (!tree_only && bench_policies(p, n, reps)) return 1;
            bench_tree(p, jobs, n, reps);
            pfi_alloc_problem_destroy(p);
        }
        if (n == 10000) {
            pfi_alloc_problem *p = NULL;
            if (pfi_alloc_problem_create(jobs, n, &p, NULL)) return 1;
            bench_tree_lp(p, n, 7);
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
