/* Loading shared by pfi allocate and pfi simulate: each sweep group's curve
 * as flat arrays, its measured PFI, and from telemetry its DRAM copy product
 * and a predicted PFI. */
#ifndef PFI_ALLOC_CLI_H
#define PFI_ALLOC_CLI_H

#include <stddef.h>

#include "analysis_cli.h"
#include "pfi/model.h"

typedef struct pfi_cli_curves {
    size_t n;            /* groups, in sweeps order */
    const pfi_group **g; /* borrowed from the sweeps */
    size_t *off;         /* n + 1: group i's runs are [off[i], off[i+1]) */
    double *P, *T, *C;   /* aggregate power W, throughput tok/s, per-GPU cap W */
    double *pfi;         /* measured ratio PFI (Eq. 1); NaN when undefined */
    double *pfi_hat;     /* predicted PFI; NaN until pfi_cli_curves_predict */
    double *dram;        /* DRAM copy product; NaN until pfi_cli_curves_telemetry */
} pfi_cli_curves;

/* Like pfi_cli_dataset_load, but telemetry rows of groups that are not in
 * the sweeps are ignored (the embedded telemetry.csv also covers the
 * held-out groups of heldout-sweeps.csv). */
int pfi_cli_alloc_dataset_load(const char *cmd, const char *sweeps, const char *telemetry,
                               const char *holdout, pfi_cli_dataset *d);

/* Flattens every group of s; errors print "pfi CMD: ..." and return
 * PFI_EXIT_DATA. */
int pfi_cli_curves_build(const char *cmd, const pfi_sweeps *s, pfi_cli_curves *c);
void pfi_cli_curves_free(pfi_cli_curves *c);

/* Fills dram[] from the joined observations (every group has one: the join
 * requires it). A group whose DRAM copy product is missing is an error. */
int pfi_cli_curves_telemetry(const char *cmd, const pfi_cli_dataset *d, pfi_cli_curves *c);

/* Fills pfi_hat[] with model m (features of set) applied to each group's
 * telemetry (pfi simulate fits its model with pfi/sim_groups.h). */
int pfi_cli_curves_predict(const char *cmd, const pfi_cli_dataset *d, const pfi_feature_set *set,
                           const pfi_ols *m, pfi_cli_curves *c);

#endif
