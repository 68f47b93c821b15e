/* The embedded paper dataset (data/paper-h200, data/paper-h100): one
 * calibrated GPU-model job per published sweep group (paper_groups.h), its
 * sweep with measurement noise, and its uncapped DCGM telemetry. A
 * reconstruction from the paper's tables, not measurements; see
 * data/README.md. Deterministic for a given seed (GSL mt19937, one stream
 * per group seeded from the seed and the group's position in the tables).
 *
 * Ownership: pfi_dataset_build allocates *out; pfi_dataset_destroy (NULL-safe)
 * frees it. Pure computation: the CLI writes the files.
 */
#ifndef PFI_DATASET_H
#define PFI_DATASET_H

#include <stddef.h>

#include "pfi/calib.h"
#include "pfi/error.h"
#include "pfi/gpumodel.h"
#include "pfi/paper_groups.h"
#include "pfi/telemetry.h"

typedef struct pfi_dataset_group {
    const pfi_paper_group *paper;
    const pfi_gpu_spec *gpu;
    pfi_job_model job;      /* the calibrated job (per GPU) */
    pfi_calib_report calib; /* achieved PFI vs the published one */
    size_t n_runs;
    double cap_w[6];
    double power_w[6]; /* aggregate over the group's GPUs, W */
    double tput[6];    /* aggregate tokens/s */
    double power_sem_w[6];
    double tput_sem[6];
    double tm[PFI_TM_NFIELDS]; /* uncapped-run telemetry by pfi_tm_field, telemetry.csv units */
} pfi_dataset_group;

typedef struct pfi_dataset {
    pfi_dataset_group *groups; /* in paper_groups.h order */
    size_t n;
} pfi_dataset;

/* The seed of the committed dataset. */
#define PFI_DATASET_SEED 20260501UL

int pfi_dataset_build(unsigned long seed, pfi_dataset **out, pfi_error *err);
void pfi_dataset_destroy(pfi_dataset *d);

#endif
