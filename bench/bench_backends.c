/* Benchmark: the telemetry path per sampling interval. (1) Parsing a
 * dcgm-exporter scrape of an 8-GPU node (the fixture's GPU 0 replicated to
 * 8: 210 series, 56 KB) with the Prometheus parser; (2) one sample of
 * every GPU of an 8-GPU sim backend with 8 training jobs. Prints one JSON
 * object per line: the median of 7 repetitions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pfi/backend.h"
#include "pfi/fileio.h"
#include "pfi/prom.h"
#include "bench_util.h"

#define REPS 7

/* The fixture with GPU 0's sample lines copied as GPUs 0-7 (GPUs 1-2 dropped). */
static char *eight_gpu_scrape(size_t *len)
{
    char *src = NULL;
    size_t n = 0;
    if (pfi_file_read_all(PFI_SOURCE_DIR "/tests/data/dcgm-exporter-metrics.txt", &src, &n, NULL) !=
        PFI_OK)
        return NULL;
    size_t cap = 16 * n, out = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    for (char *line = strtok(src, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "{gpu=\"1\"") || strstr(line, "{gpu=\"2\"")) continue;
        const char *g = strstr(line, "{gpu=\"0\"");
        int copies = g ? 8 : 1;
        for (int k = 0; k < copies; k++) {
            int w = snprintf(buf + out, cap - out, "%s\n", line);
            if (g) buf[out + (size_t)(g - line) + 6] = (char)('0' + k);
            out += (size_t)w;
        }
    }
    free(src);
    *len = out;
    return buf;
}

int main(void)
{
    size_t len = 0;
    char *text = eight_gpu_scrape(&len);
    if (!text) {
        fprintf(stderr, "bench_backends: cannot read the fixture\n");
        return 1;
    }
    double t[REPS];
    const int iters = 200;
    size_t series = 0;
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        for (int i = 0; i < iters; i++) {
            pfi_prom_doc *d = NULL;
            if (pfi_prom_parse(text, len, "bench", &d, NULL) != PFI_OK) return 1;
            series = pfi_prom_doc_series_count(d);
            pfi_prom_doc_destroy(d);
        }
        t[r] = (bench_now() - t0) / iters;
    }
    qsort(t, REPS, sizeof t[0], bench_cmp);
    printf("{\"name\":\"prom_parse_8gpu_scrape\",\"seconds\":%.3g,\"bytes\":%zu,\"series\":%zu,"
           "\"mb_per_s\":%.1f}\n",
           t[REPS / 2], len, series, len / t[REPS / 2] / 1e6);
    free(text);

    FILE *f = fopen("/tmp/pfi-bench-jobs.csv", "w");
    if (!f) return 1;
    fprintf(f, "gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu\n");
    for (int g = 0; g < 8; g++)
        fprintf(f, "%d,j%d,0.%d,0.8,0.4,0.5,100000\n", g, g, 2 + g);
    fclose(f);
    pfi_backend *b = NULL;
    if (pfi_backend_open("sim", "gpus=8,jobs=/tmp/pfi-bench-jobs.csv", &b, NULL) != PFI_OK)
        return 1;
    const int rounds = 2000;
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        for (int i = 0; i < rounds; i++)
            for (unsigned g = 0; g < 8; g++) {
                pfi_gpu_sample s;
                double tp;
                pfi_backend_sample(b, g, &s);
                pfi_backend_throughput(b, g, &tp);
            }
        t[r] = (bench_now() - t0) / rounds;
    }
    qsort(t, REPS, sizeof t[0], bench_cmp);
    printf("{\"name\":\"sim_sample_8gpus\",\"seconds\":%.3g,\"gpus\":8}\n", t[REPS / 2]);
    pfi_backend_close(b);
    remove("/tmp/pfi-bench-jobs.csv");
    return 0;
}
