/* Benchmark: PFI + 10,000-draw Monte Carlo CI for 1,000 sweep groups of 6 runs
 * (issue 2's target: under 0.5 s on the 2-core dev machine). Prints one JSON
 * object: the median of 5 repetitions and the spread. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "pfi/ci.h"
#include "pfi/index.h"
#include "bench_util.h"

#define GROUPS 1000
#define RUNS 6
#define DRAWS 10000
#define REPS 5

int main(void)
{
    pfi_sweeps *s = pfi_sweeps_create();
    pfi_group_meta m = {"H200", "bench", "dense", "pt", "", 8};
    char name[32];
    for (int g = 0; g < GROUPS; g++) {
        snprintf(name, sizeof name, "g%d", g);
        double flex = 0.3 + 0.6 * (double)g / GROUPS; /* share of throughput kept at 200 W */
        for (int i = 0; i < RUNS; i++) {
            double cap = 200 + 100 * i, x = cap / 700.0;
            pfi_run r = {.cap_w = cap,
                         .power_w = 8 * cap * 0.97,
                         .tput = 10000 * (flex + (1 - flex) * x * (2 - x))};
            r.power_sem_w = 0.0004 * r.power_w;
            r.tput_sem = 0.0005 * r.tput;
            pfi_sweeps_add_run(s, name, &m, &r, NULL, NULL);
        }
    }
    if (pfi_sweeps_finalize(s, 0, NULL, NULL) != PFI_OK) return 1;
    const pfi_group **gs = malloc(GROUPS * sizeof *gs);
    pfi_ci *ci = malloc(GROUPS * sizeof *ci);
    for (int g = 0; g < GROUPS; g++)
        gs[g] = pfi_sweeps_group(s, (size_t)g);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cpus < 1 ? 1 : cpus > 8 ? 8 : (int)cpus;
    pfi_ci_opts o = {.draws = DRAWS, .seed = 1, .level = 0.95, .method = PFI_METHOD_RATIO};

    double t[REPS], sink = 0;
    for (int rep = 0; rep < REPS; rep++) {
        double t0 = bench_now();
        for (int g = 0; g < GROUPS; g++) {
            pfi_index_result r;
            pfi_index_group(gs[g], PFI_METHOD_RATIO, NULL, &r);
            sink += r.pfi;
        }
        if (pfi_ci_batch(gs, GROUPS, &o, threads, ci) != PFI_OK) return 1;
        t[rep] = bench_now() - t0;
        sink += ci[0].low;
    }
    qsort(t, REPS, sizeof t[0], bench_cmp);
    printf("{\"name\":\"index_ci_1000_groups_6_runs_10000_draws\",\"seconds\":%.4f,"
           "\"min\":%.4f,\"max\":%.4f,\"threads\":%d,\"target_seconds\":0.5,\"check\":%.3f}\n",
           t[REPS / 2], t[0], t[REPS - 1], threads, sink / REPS / GROUPS);
    free(gs);
    free(ci);
    pfi_sweeps_destroy(s);
    return 0;
}
