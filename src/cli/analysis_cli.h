/* Loading shared by pfi corr, fit and predict: sweeps + telemetry joined
 * into observations (pfi/analysis.h), with an optional held-out list. */
#ifndef PFI_ANALYSIS_CLI_H
#define PFI_ANALYSIS_CLI_H

#include "pfi/analysis.h"
#include "pfi/curve.h"
#include "pfi/telemetry_csv.h"

typedef struct pfi_cli_dataset {
    pfi_sweeps *sweeps;
    pfi_sweeps *held; /* validation groups given as a sweeps file, or NULL */
    pfi_telemetry *tm;
    pfi_obs *obs;
    size_t n;
} pfi_cli_dataset;

/* Reads both files and joins them. holdout (may be NULL) names validation
 * groups: a sweeps.csv of extra groups (their telemetry rows are in
 * TELEMETRY.csv too), or a CSV whose `group` column lists groups of the main
 * sweeps (e.g. the paper's Table 7). Errors
 * print "pfi CMD: file:line: cause" and return PFI_EXIT_DATA. */
int pfi_cli_dataset_load(const char *cmd, const char *sweeps, const char *telemetry,
                         const char *holdout, double boost_mhz, pfi_cli_dataset *d);
void pfi_cli_dataset_free(pfi_cli_dataset *d);

/* Parses a positive number option (e.g. --boost-mhz); -1 on a bad value. */
int pfi_cli_parse_positive(const char *s, double *out);

#endif
