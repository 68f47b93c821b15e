/* Reading cost against the number of sweep groups: `pfi index` and
 * `pfi allocate` (oracle, 20% reduction) on generated sweeps of N groups x 3
 * runs (N = 25k, 50k, 100k), run as the pfi binary beside this one. Reading
 * must be linear in N (a group looked up by name once cost a scan of all
 * groups: 45 s at 100k); the bar is 100k groups under 1 s for each command.
 * One JSON line per (command, N): median wall time of 3 runs, and the ratio
 * to the time at N/2 (about 2 when linear, 4 when quadratic). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

static int write_sweeps(const char *path, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs("group,platform,model,arch,task,gpus,config,cap_w,power_w,throughput_tok_s\n", f);
    static const double cap[] = {300, 500, 700};
    for (size_t g = 0; g < n; g++) {
        /* a concave curve varying a little per group: T = Tmax (P/Pmax)^e */
        double e = 0.5 + 0.4 * (double)(g % 97) / 96.0, tmax = 8000 + (double)(g % 13) * 100;
        for (int k = 0; k < 3; k++) {
            double p = 8 * cap[k] * 0.99, t = tmax * pow(cap[k] / 700.0, e);
            fprintf(f, "g%zu,H200,m,%s,pt,8,,%g,%.3f,%.3f\n", g, g % 2 ? "moe" : "dense", cap[k], p,
                    t);
        }
    }
    return fclose(f);
}

static double run_median(const char *cmd)
{
    double t[3];
    for (int i = 0; i < 3; i++) {
        double t0 = bench_now();
        if (system(cmd) != 0) {
            fprintf(stderr, "bench_parse: failed: %s\n", cmd);
            exit(1);
        }
        t[i] = bench_now() - t0;
    }
    return bench_median(t, 3);
}

int main(int argc, char **argv)
{
    char pfi[PATH_MAX + 8], dir[PATH_MAX], csv[PATH_MAX + 16], cmd[3 * PATH_MAX];
    snprintf(dir, sizeof dir, "%s", argv[0]);
    char *slash = strrchr(dir, '/');
    snprintf(pfi, sizeof pfi, "%s/pfi", slash ? (*slash = 0, dir) : ".");
    if (access(pfi, X_OK) != 0) {
        fprintf(stderr, "bench_parse: no pfi binary at %s\n", pfi);
        return 1;
    }
    char tmpl[] = "/tmp/bench-parse-XXXXXX";
    if (!mkdtemp(tmpl)) return 1;
    static const size_t ns[] = {25000, 50000, 100000};
    static const char *const what[] = {"index", "allocate"};
    double prev[2] = {0, 0};
    int status = 0;
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        snprintf(csv, sizeof csv, "%s/sweeps.csv", tmpl);
        if (write_sweeps(csv, ns[k]) != 0) return 1;
        for (int w = 0; w < 2; w++) {
            if (w == 0)
                snprintf(cmd, sizeof cmd, "'%s' index '%s' > /dev/null", pfi, csv);
            else
                snprintf(cmd, sizeof cmd,
                         "'%s' allocate --policy oracle --reduction 0.2 '%s' > /dev/null", pfi,
                         csv);
            double t = run_median(cmd);
            char ratio[32] = "null";
            if (k) snprintf(ratio, sizeof ratio, "%.2f", t / prev[w]);
            printf("{\"bench\":\"parse\",\"command\":\"%s\",\"groups\":%zu,\"median_s\":%.4f,"
                   "\"ratio_to_half\":%s,\"bar_s\":1.0}\n",
                   what[w], ns[k], t, ratio);
            fflush(stdout);
            if (ns[k] == 100000 && t >= 1.0) status = 1;
            prev[w] = t;
        }
    }
    unlink(csv);
    rmdir(tmpl);
    return status;
}
