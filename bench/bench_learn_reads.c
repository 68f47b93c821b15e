/* Benchmark: where learn loses within its event (issue 12, item 3; README
 * "Where it still loses"): in the exploring rounds, in choosing among the
 * powers it read, or in which powers it read.
 *
 * Learn is played as pfi simulate plays it (src/core/sim.c): workloads of
 * 100 jobs drawn from a family (seed 1, one entry per job), the 1 h event
 * of 30 s periods, each reading off by a relative Gaussian error of SD
 * --noise that learn is told. The observer sums each period's true
 * throughput and keeps the powers each job was read at (one power within
 * 0.1% of Pmax, as learn pools them). Printed per (family, reduction), as
 * shares of equal's gap (the simulation's, 1 - gap / equal's gap):
 *   - learned: the event's average, rounds included (bench_families' cell);
 *   - rounds: the average of the exploring rounds, and each_round each
 *     of them (the first is the equal share: 0);
 *   - first_kept, last: the first period after them and the event's last;
 *   - ceiling_after_rounds, ceiling_end: the best one-power-per-job
 *     allocation of the powers read by then, scored on the true curves
 *     (the exact oracle over the true throughput at those powers): what a
 *     perfect choice among learn's readings would keep. Where it is below
 *     the bar, reading better cannot reach the bar: other powers must be
 *     read;
 *   - powers_read: distinct powers read per job, by the rounds' end and
 *     the event's.
 * With exact readings a kept choice that stands is read as one period
 * (learn.h), so `last` is that period.
 *
 * One JSON object per line; --table prints a markdown table instead;
 * --workloads N (default 20), --noise SD (default 0.01), --family NAME
 * (repeatable; default every family); --class tells learn each job's
 * group as its class (as bench_families' class run). */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "families.h"
#include "pfi/alloc.h"
#include "pfi/learn.h"

enum { J = 100, MAXR = 64, ROUNDS = 8 };
static const double RED[] = {0.05, 0.10, 0.20, 0.30, 0.40};
enum { NR = sizeof RED / sizeof RED[0] };

typedef struct {
    double p[MAXR];
    size_t n;
} readset;

typedef struct {
    pfi_alloc_problem *truth;
    gsl_rng *rng;
    double noise;
    size_t calls, period;      /* period: 1-based, of the call being made */
    double period_tput[2];     /* the first kept period's and the current one's true totals */
    double rounds_tput;        /* the exploring rounds' true totals summed */
    double round_tput[ROUNDS]; /* and each one's */
    double work;               /* true tokens over the event */
    readset now[J], after_rounds[J];
} obs_ctx;

static void remember(readset *s, double p, double pmax)
{
    for (size_t k = 0; k < s->n; k++)
        if (fabs(s->p[k] - p) <= 1e-3 * pmax) return;
    if (s->n < MAXR && p < pmax * (1 - 1e-9)) s->p[s->n++] = p;
}

static int observe(void *ctx, size_t job, double power_w, size_t jobs, double secs, double *tput)
{
    obs_ctx *c = ctx;
    if (c->calls % J == 0) { /* a new period */
        c->period++;
        if (c->period == ROUNDS + 1) memcpy(c->after_rounds, c->now, sizeof c->now);
        c->period_tput[1] = 0;
    }
    c->calls++;
    double pmax, tmax, floor_w, t = pfi_alloc_problem_tput_at(c->truth, job, power_w);
    pfi_alloc_problem_job_range(c->truth, job, &pmax, &tmax, &floor_w);
    remember(&c->now[job], power_w, pmax);
    c->work += (double)jobs * secs * t;
    c->period_tput[1] += t;
    if (c->period <= ROUNDS) {
        c->rounds_tput += t;
        c->round_tput[c->period - 1] += t;
    }
    if (c->period == ROUNDS + 1) c->period_tput[0] += t;
    *tput = c->noise > 0 ? t * (1 + gsl_ran_gaussian_ziggurat(c->rng, c->noise)) : t;
    return PFI_OK;
}

/* The true total of the best one-power-per-job allocation of the powers in
 * s (and Pmax), by the exact oracle over their true throughput. */
static double ceiling(pfi_alloc_problem *truth, const readset *s, double budget)
{
    static double P[J][MAXR + 1], T[J][MAXR + 1];
    pfi_alloc_job mj[J];
    for (size_t i = 0; i < J; i++) {
        double pmax, tmax, floor_w;
        pfi_alloc_problem_job_range(truth, i, &pmax, &tmax, &floor_w);
        size_t n = s[i].n;
        memcpy(P[i], s[i].p, n * sizeof *P[i]);
        for (size_t a = 1; a < n; a++) /* ascending */
            for (size_t b = a; b > 0 && P[i][b - 1] > P[i][b]; b--) {
                double t = P[i][b];
                P[i][b] = P[i][b - 1];
                P[i][b - 1] = t;
            }
        for (size_t k = 0; k < n; k++)
            T[i][k] = pfi_alloc_problem_tput_at(truth, i, P[i][k]);
        P[i][n] = pmax;
        T[i][n] = tmax;
        mj[i] = (pfi_alloc_job){.P = P[i], .T = T[i], .n = n + 1, .pfi = NAN, .dram_copy = NAN};
    }
    pfi_alloc_problem *mp = NULL;
    double pw[J], tot = 0;
    if (pfi_alloc_problem_create(mj, J, &mp, NULL) ||
        pfi_alloc_oracle(mp, budget, pw, NULL, NULL)) {
        pfi_alloc_problem_destroy(mp);
        return NAN;
    }
    pfi_alloc_problem_destroy(mp);
    for (size_t i = 0; i < J; i++)
        tot += pfi_alloc_problem_tput_at(truth, i, pw[i]);
    return tot;
}

int main(int argc, char **argv)
{
    int table = 0;
    size_t W = 20;
    double noise = 0.01;
    int classed = 0, fam_on[FAM_COUNT] = {0};
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--table") == 0)
            table = 1;
        else if (strcmp(argv[a], "--class") == 0)
            classed = 1;
        else if (strcmp(argv[a], "--workloads") == 0 && a + 1 < argc)
            W = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--noise") == 0 && a + 1 < argc)
            noise = strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--family") == 0 && a + 1 < argc) {
            if (fam_select("bench_learn_reads", argv[++a], fam_on) != 0) return 2;
        } else {
            fprintf(stderr, "usage: bench_learn_reads [--table] [--workloads N] [--noise SD] "
                            "[--family NAME]... [--class]\n");
            return 2;
        }
    }
    if (!(W > 0) || !(noise >= 0 && noise < 1)) {
        fprintf(stderr, "bench_learn_reads: need --workloads > 0 and --noise in [0, 1)\n");
        return 2;
    }
    if (table) {
        printf(
            "| family | cut | learned | rounds (each) | first kept | last | ceiling after rounds | "
            "ceiling at end | powers read |\n");
        printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    }
    gsl_rng *draw = gsl_rng_alloc(gsl_rng_mt19937), *rng = gsl_rng_alloc(gsl_rng_mt19937);
    static obs_ctx c;
    pfi_alloc_job tj[J];
    pfi_learn_job lj[J];
    pfi_learn_opts lo = pfi_learn_defaults();
    lo.noise_rel = noise;
    for (int k = 0; k < FAM_COUNT; k++) {
        if (!fam_selected(fam_on, k)) continue;
        fam_set fs;
        if (fam_build((fam_kind)k, 1, &fs) != PFI_OK) {
            fprintf(stderr, "bench_learn_reads: %s failed to build\n", fam_name((fam_kind)k));
            return 1;
        }
        /* sums over workloads, in tokens/s: equal's gap and each measure's */
        double eq_gap[NR] = {0}, gap[6][NR] = {{0}}, reads[2][NR] = {{0}}, rgap[ROUNDS][NR] = {{0}};
        double t0 = bench_now();
        gsl_rng_set(draw, 1);
        for (size_t w = 0; w < W; w++) {
            fam_workload(&fs, draw, tj, J);
            pfi_alloc_problem *truth = NULL;
            if (pfi_alloc_problem_create(tj, J, &truth, NULL) != PFI_OK) return 1;
            for (size_t i = 0; i < J; i++) {
                pfi_alloc_problem_job_range(truth, i, &lj[i].pmax_w, &lj[i].tmax, &lj[i].floor_w);
                lj[i].pfi_hat = tj[i].pfi;
                lj[i].count = 1;
                /* the job's group (its curve's arrays are the group's) */
                size_t g = 0;
                while (g < fs.n && fs.g[g].P != tj[i].P)
                    g++;
                lj[i].class_id = classed ? g + 1 : 0;
            }
            for (size_t r = 0; r < NR; r++) {
                double b;
                pfi_alloc_result orc, eq;
                pfi_error err;
                pfi_alloc_budget_for_reduction(truth, RED[r], &b, NULL);
                if (pfi_alloc_run(truth, PFI_POLICY_ORACLE, b, NULL, &orc, NULL) ||
                    pfi_alloc_run(truth, PFI_POLICY_EQUAL, b, NULL, &eq, NULL))
                    return 1;
                memset(&c, 0, sizeof c);
                c.truth = truth;
                c.rng = rng;
                c.noise = noise;
                gsl_rng_set(rng, 1000003UL * (w + 1) + r);
                pfi_learn_result lr;
                if (pfi_learn_run(lj, J, b, &lo, observe, &c, NULL, &lr, &err)) {
                    fprintf(stderr, "bench_learn_reads: %s\n", err.msg);
                    return 1;
                }
                if (c.period < ROUNDS + 1) memcpy(c.after_rounds, c.now, sizeof c.now);
                double o = orc.total_tput, e = eq.total_tput;
                eq_gap[r] += fmax(0, o - e);
                double m[6] = {c.work / lo.event_s,
                               c.rounds_tput / ROUNDS,
                               c.period_tput[0],
                               c.period_tput[1],
                               ceiling(truth, c.after_rounds, b),
                               ceiling(truth, c.now, b)};
                for (int q = 0; q < 6; q++)
                    gap[q][r] += o - m[q];
                for (int q = 0; q < ROUNDS; q++)
                    rgap[q][r] += o - c.round_tput[q];
                for (size_t i = 0; i < J; i++) {
                    reads[0][r] += (double)c.after_rounds[i].n / J;
                    reads[1][r] += (double)c.now[i].n / J;
                }
            }
            pfi_alloc_problem_destroy(truth);
        }
        double secs = bench_now() - t0;
        for (size_t r = 0; r < NR; r++) {
            if (!(eq_gap[r] > 0)) continue; /* no gap to recover */
            double s[6];
            for (int q = 0; q < 6; q++)
                s[q] = 1 - gap[q][r] / eq_gap[r];
            char each[ROUNDS * 16] = "";
            for (int q = 0, at = 0; q < ROUNDS; q++)
                at += snprintf(each + at, sizeof each - (size_t)at, table ? "%s%.0f" : "%s%.4f",
                               q ? (table ? " / " : ",") : "",
                               (table ? 100 : 1) * (1 - rgap[q][r] / eq_gap[r]));
            if (table)
                printf("| %s | %.0f%% | %.0f%% | %.0f%% (%s) | %.0f%% | %.0f%% | %.0f%% | %.0f%% | "
                       "%.1f / %.1f |\n",
                       fam_name((fam_kind)k), 100 * RED[r], 100 * s[0], 100 * s[1], each,
                       100 * s[2], 100 * s[3], 100 * s[4], 100 * s[5], reads[0][r] / (double)W,
                       reads[1][r] / (double)W);
            else
                printf(
                    "{\"name\":\"learn_reads\",\"family\":\"%s\",\"noise\":%.3f,\"reduction\":%.2f,"
                    "\"workloads\":%zu,\"jobs\":%d,\"learned\":%.4f,\"rounds\":%.4f,"
                    "\"each_round\":[%s],"
                    "\"first_kept\":%.4f,\"last\":%.4f,\"ceiling_after_rounds\":%.4f,"
                    "\"ceiling_end\":%.4f,\"powers_read_after_rounds\":%.2f,"
                    "\"powers_read_end\":%.2f,\"seconds\":%.3f}\n",
                    fam_name((fam_kind)k), noise, RED[r], W, J, s[0], s[1], each, s[2], s[3], s[4],
                    s[5], reads[0][r] / (double)W, reads[1][r] / (double)W, secs);
        }
        fflush(stdout);
        fam_free(&fs);
    }
    gsl_rng_free(draw);
    gsl_rng_free(rng);
    return 0;
}
