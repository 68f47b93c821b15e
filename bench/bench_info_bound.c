/* Benchmark: how much of equal's gap 1% reading noise leaves within reach
 * (issue 12, item 3's bar with noise; README "Where it still loses").
 *
 * The informed policy of tests/families/bound.h (shared with
 * test_families): every job read at every point of its true sweep (the 25 W
 * cap grid of tests/families), m readings a point with 1% relative noise
 * each, made monotone, then the exact oracle on those curves, scored on the
 * true ones. Its readings are free (no round is counted against it) and it
 * takes any risk (no "do no harm"). Workloads as pfi simulate draws them;
 * the share of equal's gap is the simulation's (1 - policy's gap / equal's).
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
 * `--offset mid` is 0.5, `--offset random` is -1; the random places are
 * drawn once per workload, job and interval (a learner reads one place for
 * the whole event), from their own stream, so every m reads at the same ones.
 *
 * `--powers K` (implies --sequential) prints the bound at K powers alone
 * for every cell, beside equal's gap per job, the bound's gain over equal
 * per job and one reading's SD per job at the equal share (1% of its
 * throughput there), and how many periods a policy must read the bound's
 * allocation and as many the equal one to tell them apart at 2 SD of the
 * difference of their means: 8 SD^2 / (J gain^2) each, for J jobs read
 * independently (a gain smaller than that cannot be shown within an event
 * of fewer periods, which a policy that must not lose against equal needs;
 * flat-knee 10%, docs/learn.md). It only reads as many readings a cap as
 * K powers need in the event. docs/learn.md's bounds for item 5 of issue 29:
 *   bench_info_bound --table --powers 5 --offset random
 *   bench_info_bound --table --powers 5 --offset mid
 * at the default 100 workloads of 100 jobs, seed 1: the workloads, the
 * 120 periods and the scoring of `bench_families --table --workloads 100`
 * (the same draw of groups, equal's gap summed per workload, the share
 * 1 - gap / equal's gap, an event's share the mean of its periods').
 *
 * One JSON object per line per (family, reduction, m), or per (family,
 * reduction) with --sequential; `--table` prints a markdown table instead;
 * `--workloads N` (default 100). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "bound.h"
#include "families.h"

enum { J = FAM_BOUND_JOBS };
static const double RED[] = {0.05, 0.10, 0.20, 0.30, 0.40};
static const unsigned M_FIXED[] = {1, 4, 8, 16, 64};
enum {
    NR = sizeof RED / sizeof RED[0],
    NM_FIXED = sizeof M_FIXED / sizeof M_FIXED[0],
    KMAX = 5,
    POWERS_MAX = 8
};

int main(int argc, char **argv)
{
    int table = 0, seq = 0;
    size_t W = 100, periods = 120, powers = 0;
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
            if (offset != 0.5 && offset != -1 && (end == argv[a] || *end)) offset = NAN;
        } else if (strcmp(argv[a], "--powers") == 0 && a + 1 < argc) {
            powers = strtoul(argv[++a], NULL, 10);
            seq = 1;
            if (powers < 1 || powers > POWERS_MAX) {
                fprintf(stderr, "bench_info_bound: --powers is 1 to %d\n", POWERS_MAX);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: bench_info_bound [--table] [--workloads N] [--sequential "
                            "[--periods P]] [--powers K] [--offset F|mid|random]\n");
            return 2;
        }
    }
    if (W == 0 || periods < 2 || periods > 10000 || !(offset >= -1 && offset < 1)) {
        fprintf(stderr, "bench_info_bound: need --workloads > 0, --periods in [2, 10000] and "
                        "--offset in [-1, 1), mid or random\n");
        return 2;
    }
    /* the readings a cap to try: 1 to periods - 1 for the bound (at K
     * powers, to (periods - 1) / K) */
    size_t NM = seq ? (periods - 1) / (powers ? powers : 1) : NM_FIXED;
    if (NM == 0) return fprintf(stderr, "bench_info_bound: more powers than periods\n"), 2;
    unsigned *M = malloc(NM * sizeof *M);
    double *gap_inf = malloc(NM * NR * sizeof *gap_inf);
    if (!M || !gap_inf) return fprintf(stderr, "bench_info_bound: out of memory\n"), 1;
    for (size_t m = 0; m < NM; m++)
        M[m] = seq ? (unsigned)(m + 1) : M_FIXED[m];
    if (table && powers) {
        printf("| family | cut | equal's gap (tok/s/job) | one reading's SD at equal "
               "(tok/s/job) | bound's gain over equal (tok/s/job) | periods to show it, each "
               "side | bound at %zu powers, %zu periods, readings %s |\n",
               powers, periods,
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
                double b[POWERS_MAX], q8 = q[NM >= 8 ? 7 : NM - 1];
                for (size_t c = 0; c < POWERS_MAX; c++)
                    b[c] = fam_bound_sequential(q, NM, periods, c + 1);
                if (powers) {
                    double g = gap_eq[r] / (double)W / J, bk = b[powers - 1];
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
                               ".1f,\"bound\":%.4f,"
                               "\"seconds\":%.3f}\n",
                               fam_name((fam_kind)k), RED[r], offset, periods, W, J, powers, g, sd,
                               show, bk, secs);
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
