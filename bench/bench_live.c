/* Benchmark: one live learn round (learn_live.h) at the controller's sizes:
 * 10^3 and 10^4 jobs whose true curves are y = 1 - a u^b, every job read
 * once per round. A round is pfi_live_observe of every reading plus the
 * next pfi_live_propose; medians over the 8 exploring rounds and the kept
 * proposals after them, with exact readings and with 1% relative noise
 * (kept rounds then also choose on a draw of the readings), and with 1%
 * noise and classes (the jobs whose curves are the same, about 8 a class
 * at 10^4: learn_class.c pools their readings). Target: under 50 ms at
 * 10^4 jobs. One JSON object per line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "pfi/learn_live.h"

/* A normal deviate from a 64-bit LCG (Box-Muller): the bench's own noise. */
static double noise(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    double u1 = ((double)(*s >> 11) + 0.5) * 0x1p-53;
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    double u2 = ((double)(*s >> 11) + 0.5) * 0x1p-53;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

int main(void)
{
    size_t sizes[] = {1000, 10000};
    unsigned long long seed = 1;
    for (size_t z = 0; z < 6; z++) {
        size_t n = sizes[z % 2];
        double rel = z < 2 ? 0 : 0.01;
        int classes = z >= 4;
        pfi_live *l = NULL;
        pfi_error err;
        if (pfi_live_create(NULL, &l, &err)) return 1;
        double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        pfi_live_share *sh = malloc(n * sizeof *sh);
        pfi_live_reading *rd = malloc(n * sizeof *rd);
        if (!a || !b || !sh || !rd) return 1;
        double pmax_total = 0;
        for (size_t i = 0; i < n; i++) {
            double pmax = 4000 + (double)(i % 7) * 1000;
            a[i] = 0.4 + 0.1 * (double)(i % 5);
            b[i] = 1.1 + 0.2 * (double)(i % 4);
            pfi_live_job j = {.id = 1000 + i,
                              .pmax_w = pmax,
                              .tmax = pmax * (1 + (double)(i % 6)),
                              .floor_w = 0.3 * pmax,
                              .pfi_hat = 1 + 0.1 * (double)(i % 9),
                              /* i mod 1260 (7, 5, 4, 6, 9's multiple) sets the curve */
                              .class_id = classes ? i % 1260 + 1 : 0};
            if (pfi_live_job_set(l, &j, &err)) return 1;
            pmax_total += pmax;
        }
        double budget = 0.7 * pmax_total, t_explore[8], t_keep[8];
        for (int r = 0; r < 16; r++) {
            double t0 = bench_now();
            if (r > 0 && pfi_live_observe(l, rd, n, &err)) return 1;
            if (pfi_live_propose(l, budget, 30.0 * r, sh, n, &err)) {
                fprintf(stderr, "bench_live: %s\n", err.msg);
                return 1;
            }
            double dt = bench_now() - t0;
            if (r < 8)
                t_explore[r] = dt;
            else
                t_keep[r - 8] = dt;
            for (size_t k = 0; k < n; k++) { /* the jobs run; readings for the next round */
                size_t i = (size_t)(sh[k].id - 1000);
                double pmax = 4000 + (double)(i % 7) * 1000, u = 1 - sh[k].power_w / pmax;
                double tmax = pmax * (1 + (double)(i % 6));
                double t = tmax * (1 - a[i] * pow(u > 0 ? u : 0, b[i]));
                rd[k] = (pfi_live_reading){.id = sh[k].id,
                                           .power_w = sh[k].power_w,
                                           .cap_w = sh[k].power_w / 8,
                                           .t_s = 30.0 * r + 29,
                                           .tput = t * (1 + rel * noise(&seed)),
                                           .tput_sd = rel * t};
            }
        }
        printf("{\"name\":\"live_round\",\"jobs\":%zu,\"noise\":%.2f,\"classes\":%s,"
               "\"explore_ms\":%.3f,\"keep_ms\":%.3f,\"target_ms\":50}\n",
               n, rel, classes ? "true" : "false", 1e3 * bench_median(t_explore + 1, 7),
               1e3 * bench_median(t_keep, 8));
        fflush(stdout);
        free(a);
        free(b);
        free(sh);
        free(rd);
        pfi_live_destroy(l);
    }
    return 0;
}
