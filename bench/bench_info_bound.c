/* Benchmark: how much of equal's gap 1% reading noise leaves within reach
 * (issue 12, item 3's bar with noise; README "Where it still loses").
 *
 * An informed policy that no controller has: every job's throughput read at
 * every point of its true sweep (the 25 W cap grid of tests/families), m
 * readings a point with 1% relative noise each (so an SD of 1% / sqrt(m)),
 * made non-decreasing in power (isotonic regression, the uncapped point
 * exact), then the exact oracle on those curves, scored on the true ones.
 * Its readings are free (no round is counted against it) and it takes any
 * risk (no "do no harm"). Workloads as pfi simulate draws them (random mix,
 * seed 1, 100 jobs, one entry per job since noise tells jobs apart); the
 * share of equal's gap is the simulation's (1 - policy's gap / equal's).
 *
 * Where this policy with m = 16 (16 readings at each of 15-20 caps per job,
 * more than the 120 periods of a one-hour event give) recovers less than
 * 85% of equal's gap, no policy that reads throughput with 1% noise during
 * the event can be expected to reach that bar by learning better; it could
 * only by luck.
 *
 * With --sequential, the same policy gauges what any learner can make of
 * an event of P periods (--periods, default 120: an hour of 30 s): in
 * period t a learner has read each job at most t - 1 times, so it can
 * know no more than this policy with m = t - 1 readings at every cap, and
 * with none it keeps the equal share (0). The bound is the event's average
 * of max(0, share(m = t - 1)) over its periods; where it is under 85%, a
 * learner that reads each job once a period and estimates as this policy
 * does reaches the bar only by luck. It is generous: it charges nothing
 * for the powers read, and one reading a period stands for one at every
 * cap. Shared by k powers charges a little: the readings go to k powers,
 * m = (t - 1) / k, for k = 1 to KMAX (learn reads 4-7 powers a job in an
 * event, bench_learn_reads).
 *
 * With --offset F the policy reads off the sweep's points, which in
 * tests/families are the generator's grid, where every knee, bump edge,
 * dead zone edge and lucky point lies: at the floor, F of the way into
 * each interval between points (F = -1: a uniform random place), and the
 * uncapped point, interpolated on the true curve. Learn is not told that
 * grid. Not a bound on an adaptive learner, which reads where its
 * estimates point (learn beats it on the embedded dataset at 30%); it
 * shows how much of the bound is the grid (docs/learn.md).
 *
 * With --classes (issue 29 item 5: what any learner could get when each
 * job's group is its class, as bench_families' "class" run): replicas
 * share their readings, so a class of c jobs reads each power c times a
 * period. In period t (of --periods) with its readings shared by K powers
 * (--powers, default 5), a job of a class of c knows its curve as this
 * policy does with floor(c (t - 1) / K) readings at every place; printed
 * beside the same with every class of size 1 (no class: --sequential
 * --powers K's bound, to the last bit), and both with the fractional count
 * c (t - 1) / K. The floor is the bound: issue 29's bar was stated against
 * the original bench_info_bound's floored count (in periods 2 to K it
 * grants a job alone nothing); the fractional count shows what the floor
 * costs (2-3 points without classes, under 1 with them). All of it is
 * tests/families/bound.c's fam_bound_classed (bound.h says what it grants).
 * Read off the grid (--offset) as item 5 asks. docs/learn.md's classed bar:
 *   bench_info_bound --classes --table --workloads 100 --powers 5 --offset random
 *   bench_info_bound --classes --table --workloads 100 --powers 5 --offset mid
 *
 * Every mode runs tests/families/bound.c (shared with test_families), whose
 * random places (--offset -1, or `random`; `mid` is 0.5) are drawn once
 * per workload, job and interval from their own stream (a learner reads
 * one place for the event). `--sequential --powers K` prints the bound
 * at K powers alone for every cell, beside equal's gap per job, one
 * reading's SD per job at the equal share (1% of its throughput there), the
 * bound's gain per job, and how many periods a policy must read the bound's
 * allocation and as many the equal one to tell them apart at 2 SD of the
 * difference of their means: 8 SD^2 / (J gain^2) each, for J jobs read
 * independently (a gain that needs more than the event's periods cannot be
 * shown within it, which a policy that must not lose against equal needs:
 * flat-knee 10%, docs/learn.md). docs/learn.md's bounds for item 5 of issue
 * 29, on the workloads, periods and scoring of `bench_families --table
 * --workloads 100`:
 *   bench_info_bound --table --workloads 100 --sequential --powers 5 --offset random
 *   bench_info_bound --table --workloads 100 --sequential --powers 5 --offset mid
 *
 * One JSON object per line per (family, reduction, m), or per (family,
 * reduction) with --sequential or --classes; `--table` prints a markdown
 * table instead; `--workloads N` (default 200); `--family NAME` (repeated)
 * only those families. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "bound.h"
#include "families.h"
#include "pfi/alloc.h"

enum { J = FAM_BOUND_JOBS };
static const double RED[] = {0.05, 0.10, 0.20, 0.30, 0.40};
static const unsigned M_FIXED[] = {1, 4, 8, 16, 64};
enum { NR = sizeof RED / sizeof RED[0], NM_FIXED = sizeof M_FIXED / sizeof M_FIXED[0], KMAX = 5 };

/* --classes: the bound without and with classes, floored and fractional
 * counts (tests/families/bound.h), of one family, printed per reduction.
 * 0 on success. */
static int classed(const fam_set *fs, fam_kind k, size_t W, size_t periods, size_t K, double offset,
                   int table)
{
    double bnd[4][NR]; /* no class, no class fractional, class, class fractional */
    double t0 = bench_now();
    for (int v = 0; v < 4; v++)
        if (fam_bound_classed(fs, W, offset, periods, K, v / 2, v % 2, RED, NR, bnd[v]) != PFI_OK)
            return 1;
    double secs = bench_now() - t0;
    for (size_t r = 0; r < NR; r++) {
        if (isnan(bnd[0][r])) continue; /* no gap to recover */
        if (table)
            printf("| %s %.0f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% |\n", fam_name(k), 100 * RED[r],
                   100 * bnd[2][r], 100 * bnd[3][r], 100 * bnd[0][r], 100 * bnd[1][r]);
        else
            printf("{\"name\":\"info_bound_classes\",\"family\":\"%s\",\"noise\":0.01,"
                   "\"reduction\":%.2f,\"offset\":%g,\"periods\":%zu,\"powers\":%zu,"
                   "\"workloads\":%zu,\"jobs\":%d,\"bound\":%.4f,\"bound_fractional\":%.4f,"
                   "\"class_bound\":%.4f,\"class_bound_fractional\":%.4f,\"seconds\":%.3f}\n",
                   fam_name(k), RED[r], offset, periods, K, W, J, bnd[0][r], bnd[1][r], bnd[2][r],
                   bnd[3][r], secs);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int table = 0, seq = 0, cls = 0, fam_on[FAM_COUNT] = {0}, k_set = 0;
    size_t W = 200, periods = 120, K = 5;
    double offset = 0; /* 0: read at the sweep's points; else see --offset */
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--table") == 0)
            table = 1;
        else if (strcmp(argv[a], "--sequential") == 0)
            seq = 1;
        else if (strcmp(argv[a], "--workloads") == 0 && a + 1 < argc)
            W = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--periods") == 0 && a + 1 < argc)
            periods = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--offset") == 0 && a + 1 < argc) {
            a++;
            char *end = NULL;
            offset = strcmp(argv[a], "mid") == 0      ? 0.5
                     : strcmp(argv[a], "random") == 0 ? -1
                                                      : strtod(argv[a], &end);
            if (end && (end == argv[a] || *end)) offset = NAN;
        } else if (strcmp(argv[a], "--classes") == 0)
            cls = 1;
        else if (strcmp(argv[a], "--powers") == 0 && a + 1 < argc) {
            K = strtoul(argv[++a], NULL, 10);
            k_set = 1;
        } else if (strcmp(argv[a], "--family") == 0 && a + 1 < argc) {
            if (fam_select("bench_info_bound", argv[++a], fam_on) != 0) return 2;
        } else {
            fprintf(stderr, "usage: bench_info_bound [--table] [--workloads N] [--family NAME]... "
                            "[--sequential [--periods P]] [--classes [--periods P] [--powers K]] "
                            "[--offset F|mid|random]\n");
            return 2;
        }
    }
    if (W == 0 || periods < 2 || periods > 10000 || !(offset >= -1 && offset < 1) || K < 1 ||
        K > 100) {
        fprintf(stderr, "bench_info_bound: need --workloads > 0, --periods in [2, 10000], "
                        "--powers in [1, 100] and --offset in [-1, 1)\n");
        return 2;
    }
    if (cls) {
        if (table) {
            printf("| cell | any learner, class | the same, fractional count | any learner, no "
                   "class | the same, fractional count |\n");
            printf("| --- | --- | --- | --- | --- |\n");
        }
        for (int k = 0; k < FAM_COUNT; k++) {
            if (!fam_selected(fam_on, k)) continue;
            fam_set fs;
            if (fam_build((fam_kind)k, 1, &fs) != PFI_OK ||
                classed(&fs, (fam_kind)k, W, periods, K, offset, table)) {
                fprintf(stderr, "bench_info_bound: %s failed\n", fam_name((fam_kind)k));
                return 1;
            }
            fflush(stdout);
            fam_free(&fs);
        }
        return 0;
    }
    /* the readings a cap to try: 1 to periods - 1 for the bound (at K
     * powers alone, to (periods - 1) / K) */
    int at_k = seq && k_set;
    size_t NM = at_k ? (periods - 1) / K : seq ? periods - 1 : NM_FIXED;
    if (NM == 0) return fprintf(stderr, "bench_info_bound: more powers than periods\n"), 2;
    unsigned *M = malloc(NM * sizeof *M);
    double *gap_inf = malloc(NM * NR * sizeof *gap_inf);
    if (!M || !gap_inf) return fprintf(stderr, "bench_info_bound: out of memory\n"), 1;
    for (size_t m = 0; m < NM; m++)
        M[m] = seq ? (unsigned)(m + 1) : M_FIXED[m];
    if (table && at_k) {
        printf("| family | cut | equal's gap (tok/s/job) | one reading's SD at equal "
               "(tok/s/job) | bound's gain over equal (tok/s/job) | periods to show it, each "
               "side | bound at %zu powers, %zu periods, readings %s |\n",
               K, periods,
               offset == 0     ? "at the sweep's points"
               : offset == 0.5 ? "midway between them"
               : offset < 0    ? "at a random place in each interval"
                               : "off the sweep's points");
        printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    } else if (table && seq) {
        printf("| family | cut | informed, 1 / 8 readings a cap | any learner, %zu periods, its "
               "readings shared by 1 / 2 / 3 / 4 / 5 powers |\n",
               periods);
        printf("| --- | --- | --- | --- |\n");
    } else if (table) {
        printf("| family | m | informed oracle's share of equal's gap, 5%% | 10%% | 20%% | 30%% | "
               "40%% |\n");
        printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    }
    for (int k = 0; k < FAM_COUNT; k++) {
        if (!fam_selected(fam_on, k)) continue;
        fam_set fs;
        if (fam_build((fam_kind)k, 1, &fs) != PFI_OK) {
            fprintf(stderr, "bench_info_bound: %s failed to build\n", fam_name((fam_kind)k));
            return 1;
        }
        double gap_eq[NR], sd_eq[NR];
        double t0 = bench_now();
        if (fam_bound_gaps(&fs, W, offset, M, NM, RED, NR, gap_eq, sd_eq, gap_inf) != PFI_OK) {
            fprintf(stderr, "bench_info_bound: %s: the bound failed\n", fam_name((fam_kind)k));
            return 1;
        }
        double secs = bench_now() - t0;
        if (seq) {
            double *q = malloc(NM * sizeof *q);
            if (!q) return fprintf(stderr, "bench_info_bound: out of memory\n"), 1;
            for (size_t r = 0; r < NR; r++) {
                if (!(gap_eq[r] > 0)) continue; /* no gap to recover */
                for (size_t m = 0; m < NM; m++)
                    q[m] = 1 - gap_inf[m * NR + r] / gap_eq[r];
                double b[KMAX], q8 = q[NM >= 8 ? 7 : NM - 1];
                for (size_t c = 0; c < KMAX; c++)
                    b[c] = fam_bound_sequential(q, NM, periods, c + 1);
                if (at_k) {
                    double g = gap_eq[r] / (double)W / J,
                           bk = fam_bound_sequential(q, NM, periods, K);
                    double sd = sd_eq[r] / (double)W / J,
                           show = 8 * sd * sd / (J * bk * g * bk * g);
                    if (table)
                        printf("| %s | %.0f%% | %.1f | %.1f | %.1f | %.0f | %.1f%% |\n",
                               fam_name((fam_kind)k), 100 * RED[r], g, sd, bk * g, show, 100 * bk);
                    else
                        printf("{\"name\":\"info_bound_powers\",\"family\":\"%s\",\"noise\":"
                               "0.01,\"reduction\":%.2f,\"offset\":%g,\"periods\":%zu,"
                               "\"workloads\":%zu,\"jobs\":%d,\"powers\":%zu,\"equal_gap_per_"
                               "job\":%.2f,\"reading_sd_per_job\":%.2f,\"periods_to_show\":%"
                               ".1f,\"bound\":%.4f,\"seconds\":%.3f}\n",
                               fam_name((fam_kind)k), RED[r], offset, periods, W, J, K, g, sd, show,
                               bk, secs);
                    continue;
                }
                if (table)
                    printf("| %s | %.0f%% | %.0f / %.0f%% |", fam_name((fam_kind)k), 100 * RED[r],
                           100 * q[0], 100 * q8);
                else
                    printf("{\"name\":\"info_bound_sequential\",\"family\":\"%s\",\"noise\":0.01,"
                           "\"reduction\":%.2f,\"offset\":%g,\"periods\":%zu,\"workloads\":%zu,"
                           "\"jobs\":%d,"
                           "\"informed_1\":%.4f,\"informed_8\":%.4f,\"bound_by_powers\":[",
                           fam_name((fam_kind)k), RED[r], offset, periods, W, J, q[0], q8);
                for (size_t c = 0; c < KMAX; c++) {
                    if (table)
                        printf("%s%.0f", c ? " / " : " ", 100 * b[c]);
                    else
                        printf("%s%.4f", c ? "," : "", b[c]);
                }
                if (table)
                    printf("%% |\n");
                else
                    printf("],\"seconds\":%.3f}\n", secs);
            }
            free(q);
        }
        for (size_t m = 0; !seq && m < NM; m++) {
            if (table) printf("| %s | %u |", fam_name((fam_kind)k), M[m]);
            for (size_t r = 0; r < NR; r++) {
                double rec = gap_eq[r] > 0 ? 1 - gap_inf[m * NR + r] / gap_eq[r] : NAN;
                if (table)
                    printf(" %.0f%% |", 100 * rec);
                else
                    printf("{\"name\":\"info_bound\",\"family\":\"%s\",\"readings_per_point\":%u,"
                           "\"noise\":0.01,\"reduction\":%.2f,\"offset\":%g,\"workloads\":%zu,"
                           "\"jobs\":%d,"
                           "\"informed_recovered\":%.4f,\"equal_gap_per_job\":%.1f,\"seconds\":%."
                           "3f}\n",
                           fam_name((fam_kind)k), M[m], RED[r], offset, W, J, rec,
                           gap_eq[r] / (double)W / J, secs);
            }
            if (table) printf("\n");
        }
        fflush(stdout);
        fam_free(&fs);
    }
    free(M);
    free(gap_inf);
    return 0;
}
