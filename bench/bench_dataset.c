/* Benchmark: the embedded dataset's build (35 groups calibrated to the
 * paper's tables) and the GPU model's point evaluation. Issue 3 asks for a
 * rebuild in seconds, not minutes. Prints one JSON object per measurement:
 * medians of the repetitions and the spread. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pfi/dataset.h"
#include "pfi/gpumodel.h"
#include "bench_util.h"

#define REPS 5
#define EVALS 200000

int main(void)
{
    double t[REPS];
    size_t groups = 0;
    for (int rep = 0; rep < REPS; rep++) {
        double t0 = bench_now();
        pfi_dataset *d = NULL;
        if (pfi_dataset_build(PFI_DATASET_SEED, &d, NULL) != PFI_OK) return 1;
        t[rep] = bench_now() - t0;
        groups = d->n;
        pfi_dataset_destroy(d);
    }
    qsort(t, REPS, sizeof t[0], bench_cmp);
    printf("{\"name\":\"dataset_build_%zu_groups\",\"seconds\":%.4f,\"min\":%.4f,\"max\":%.4f,"
           "\"target_seconds\":10}\n",
           groups, t[REPS / 2], t[0], t[REPS - 1]);

    const pfi_job_model *job = pfi_gpumodel_preset("dense_train");
    double sink = 0;
    for (int rep = 0; rep < REPS; rep++) {
        double t0 = bench_now();
        for (int i = 0; i < EVALS; i++) {
            pfi_gpumodel_point p;
            pfi_gpumodel_eval(pfi_gpumodel_h200(), job, 200 + (i % 501), &p);
            sink += p.power_w;
        }
        t[rep] = bench_now() - t0;
    }
    qsort(t, REPS, sizeof t[0], bench_cmp);
    printf("{\"name\":\"gpumodel_eval\",\"seconds\":%.4f,\"evals\":%d,\"us_per_eval\":%.3f,"
           "\"check\":%.1f}\n",
           t[REPS / 2], EVALS, 1e6 * t[REPS / 2] / EVALS, sink / REPS / EVALS);
    return 0;
}
