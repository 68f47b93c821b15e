/* pfi trace's reading and reduction: the real h200-probe trace.csv (four
 * loads, 77 KB), and a synthetic hour of an 8-GPU job sampled every second
 * as a wide CSV (28,800 rows) and as concatenated dcgm-exporter pages (3,600
 * pages). Prints one JSON line per case: the median of 7 runs of parse +
 * summarize, and rows (or pages) per second. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "pfi/fileio.h"
#include "pfi/trace_read.h"

static double run_once(const char *buf, size_t len, const char *name)
{
    double t0 = bench_now();
    pfi_trace_set set = {0};
    pfi_error err;
    if (pfi_trace_parse(buf, len, name, &set, &err) != PFI_OK) {
        fprintf(stderr, "bench_trace: %s: %s\n", name, err.msg);
        exit(1);
    }
    for (size_t i = 0; i < set.n; i++) {
        pfi_trace_summary s;
        if (pfi_trace_run_summarize(&set.runs[i], NULL, 0.1, &s, &err) != PFI_OK) {
            fprintf(stderr, "bench_trace: %s: %s\n", name, err.msg);
            exit(1);
        }
    }
    pfi_trace_set_free(&set);
    return bench_now() - t0;
}

static void bench(const char *label, const char *buf, size_t len, const char *name, double units,
                  const char *unit)
{
    double t[7];
    for (int i = 0; i < 7; i++)
        t[i] = run_once(buf, len, name);
    double med = bench_median(t, 7);
    printf("{\"bench\":\"trace\",\"case\":\"%s\",\"bytes\":%zu,\"median_ms\":%.3f,\"%s_per_s\":%."
           "0f}\n",
           label, len, med * 1e3, unit, units / med);
}

/* One hour of 8 GPUs: 60 s warmup, 60 s startup, then training. */
static char *synth(int prom, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!prom)
        fputs("time_s,gpu,DCGM_FI_DEV_POWER_USAGE,DCGM_FI_DEV_GPU_UTIL,DCGM_FI_DEV_FB_USED,"
              "DCGM_FI_PROF_SM_ACTIVE,DCGM_FI_DEV_SM_CLOCK\n",
              f);
    for (int t = 0; t < 3600; t++) {
        if (prom) fprintf(f, "# time %d\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n", 1700000000 + t);
        for (int g = 0; g < 8; g++) {
            double fb = t < 60 ? 2000 : 60000, util = t < 120 ? 0 : 95;
            double p = t < 120 ? 120 : 600 + (t * 7 + g * 13) % 90;
            if (prom)
                fprintf(f,
                        "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=\"GPU-%d\"} %.3f\n"
                        "DCGM_FI_DEV_GPU_UTIL{gpu=\"%d\",UUID=\"GPU-%d\"} %.0f\n"
                        "DCGM_FI_DEV_FB_USED{gpu=\"%d\",UUID=\"GPU-%d\"} %.0f\n",
                        g, g, p, g, g, util, g, g, fb);
            else
                fprintf(f, "%d,%d,%.3f,%.0f,%.0f,0.9,1700\n", t, g, p, util, fb);
        }
    }
    fclose(f);
    return buf;
}

int main(void)
{
    char path[512], *buf;
    size_t len;
    pfi_error err;
    snprintf(path, sizeof path, "%s/data/h200-probe/trace.csv", PFI_SHARED_DIR);
    if (pfi_file_read_all(path, &buf, &len, &err) != PFI_OK) {
        fprintf(stderr, "bench_trace: %s: %s\n", path, err.msg);
        return 1;
    }
    size_t rows = 0;
    for (size_t i = 0; i < len; i++)
        rows += buf[i] == '\n';
    bench("h200-probe trace.csv", buf, len, "trace.csv", (double)(rows - 1), "rows");
    free(buf);
    buf = synth(0, &len);
    bench("wide CSV, 8 GPUs, 1 h at 1 s", buf, len, "hour.csv", 28800, "rows");
    free(buf);
    buf = synth(1, &len);
    bench("dcgm-exporter pages, 8 GPUs, 1 h at 1 s", buf, len, "hour.prom", 3600, "pages");
    free(buf);
    return 0;
}
