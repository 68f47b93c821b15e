/* Benchmark: every policy on the curve families of tests/families (issue
 * 12, item 2; classes: issue 29): the random mix, 500 workloads x 100
 * jobs, reductions 5, 10, 20, 30, 40%, four runs a family: exact readings,
 * 1% relative reading noise, 1% noise with each job's group as its class,
 * 1% noise with wrong classes (pfi_sim_opts.classes). One JSON object per
 * line per (family, run, reduction): each policy's share of equal's gap
 * recovered and its throughput per job, the families' rank correlation of
 * telemetry with PFI, and the time the run took. `bench_families --table`
 * prints docs/learn.md's markdown table instead (learn's share, a row per
 * run); `--workloads N` shrinks the run, `--event-s S` sets the event's
 * length (a long one shows the kept allocation alone); `--family NAME`
 * (repeated) and `--runs exact,noise,class,wrong` run only those, to
 * measure a rule on the cells it is meant for. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "families.h"
#include "pfi/sim.h"

static const double RED[] = {0.05, 0.10, 0.20, 0.30, 0.40};
enum { NR = sizeof RED / sizeof RED[0] };

/* The runs of a family: readings exact, with 1% noise, with 1% noise and
 * each job's group as its class, with 1% noise and wrong classes. */
enum { NRUN = 4 };
static const char *const RUN_NAME[NRUN] = {"exact", "1% noise", "1% noise, class",
                                           "1% noise, wrong class"};
static const char *const RUN_KEY[NRUN] = {"none", "none", "group", "wrong"};
static const char *const RUN_OPT[NRUN] = {"exact", "noise", "class", "wrong"};

/* The runs named in a comma-separated list into on[]; -1 on a name not known. */
static int parse_runs(const char *list, int *on)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    memset(on, 0, NRUN * sizeof *on);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int r = 0;
        while (r < NRUN && strcmp(t, RUN_OPT[r]) != 0)
            r++;
        if (r == NRUN) return -1;
        on[r] = 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int table = 0;
    size_t workloads = 500;
    double event_s = 3600;
    int run_on[NRUN] = {1, 1, 1, 1}, fam_on[FAM_COUNT] = {0};
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--table") == 0)
            table = 1;
        else if (strcmp(argv[a], "--workloads") == 0 && a + 1 < argc)
            workloads = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--event-s") == 0 && a + 1 < argc)
            event_s = strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--runs") == 0 && a + 1 < argc &&
                 parse_runs(argv[a + 1], run_on) == 0)
            a++;
        else if (strcmp(argv[a], "--family") == 0 && a + 1 < argc) {
            if (fam_select("bench_families", argv[++a], fam_on) != 0) return 2;
        } else {
            fprintf(stderr, "usage: bench_families [--table] [--workloads N] [--event-s S] "
                            "[--family NAME]... [--runs exact,noise,class,wrong]\n");
            return 2;
        }
    }
    if (table) {
        printf("| family | ρ | equal gap 5/10/20/30/40%% (tok/s/job) | learn's readings | 5%% | "
               "10%% | "
               "20%% | 30%% | 40%% |\n");
        printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    }
    for (int k = 0; k < FAM_COUNT; k++) {
        if (!fam_selected(fam_on, k)) continue;
        fam_set fs;
        if (fam_build((fam_kind)k, 1, &fs) != PFI_OK) {
            fprintf(stderr, "bench_families: %s failed to build\n", fam_name((fam_kind)k));
            return 1;
        }
        pfi_sim_cell cells[NRUN][NR][PFI_SIM_NPOLICIES];
        double secs[NRUN];
        for (int run = 0; run < NRUN; run++) {
            if (!run_on[run]) continue;
            pfi_sim_opts o = pfi_sim_defaults();
            o.workloads = workloads;
            o.reductions = RED;
            o.n_reductions = NR;
            o.threads = 2;
            o.noise_rel = run ? 0.01 : 0;
            o.classes = run == 2 ? PFI_SIM_CLASS_GROUP : run == 3 ? PFI_SIM_CLASS_WRONG : 0;
            o.learn.event_s = event_s;
            pfi_sim_result r;
            pfi_error err;
            double t0 = bench_now();
            if (pfi_sim_run(fs.g, fs.n, &o, &r, &err) != PFI_OK) {
                fprintf(stderr, "bench_families: %s: %s\n", fam_name((fam_kind)k), err.msg);
                return 1;
            }
            secs[run] = bench_now() - t0;
            memcpy(cells[run], r.cells, sizeof cells[run]);
            pfi_sim_result_free(&r);
        }
        if (table) {
            /* equal reads nothing: its gap is the same in every run */
            for (int run = 0, first = 1; run < NRUN; run++) {
                if (!run_on[run]) continue;
                if (first) {
                    first = 0;
                    printf("| %s | %.2f | ", fam_name((fam_kind)k), fs.rank_corr);
                    for (int r = 0; r < NR; r++)
                        printf("%s%.0f", r ? "/" : "", cells[run][r][PFI_POLICY_EQUAL].gap_per_job);
                } else {
                    printf("| | |");
                }
                printf(" | %s", RUN_NAME[run]);
                for (int r = 0; r < NR; r++)
                    printf(" | %.1f%%", 100 * cells[run][r][PFI_SIM_LEARN].gap_recovered);
                printf(" |\n");
            }
        } else {
            for (int run = 0; run < NRUN; run++)
                for (int r = 0; run_on[run] && r < NR; r++) {
                    printf("{\"name\":\"families\",\"family\":\"%s\",\"groups\":%zu,\"rank_corr\":%"
                           ".3f,"
                           "\"noise\":%.2f,\"classes\":\"%s\",\"reduction\":%.2f,\"workloads\":%"
                           "zu,\"jobs\":100,"
                           "\"seconds\":%.3f",
                           fam_name((fam_kind)k), fs.n, fs.rank_corr, run ? 0.01 : 0.0,
                           RUN_KEY[run], RED[r], workloads, secs[run]);
                    for (int p = 0; p < PFI_SIM_NPOLICIES; p++) {
                        const pfi_sim_cell *c = &cells[run][r][p];
                        if (p == PFI_POLICY_ORACLE) continue;
                        printf(",\"%s\":{\"recovered\":%.4f,\"tput_per_job\":%.1f,\"gap_per_job\":%"
                               ".1f}",
                               pfi_sim_policy_name(p), c->gap_recovered, c->tput_per_job,
                               c->gap_per_job);
                    }
                    printf("}\n");
                }
        }
        fflush(stdout);
        fam_free(&fs);
    }
    return 0;
}
