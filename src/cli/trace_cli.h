/* What pfi trace and pfi sweep print of measured runs: each run's summary
 * (core: trace_run.h) as a sweeps.csv row, a telemetry.csv row per group
 * (its uncapped run: the largest cap) and JSON. */
#ifndef PFI_TRACE_CLI_H
#define PFI_TRACE_CLI_H

#include <stdio.h>

#include <jansson.h>

#include "pfi/curve.h"
#include "pfi/error.h"
#include "pfi/trace_run.h"

/* The sweeps.csv metadata of the runs; group NULL: each run is its own
 * group, named after the run. */
typedef struct pfi_cli_meta {
    const char *group, *platform, *model, *arch, *task, *config;
} pfi_cli_meta;

/* One measured run: its trace, summary (valid when ok) and cap. */
typedef struct pfi_cli_measured {
    const pfi_trace_run *run;
    pfi_trace_summary sum;
    int ok;
    double cap_w;    /* per-GPU cap, W */
    const char *why; /* when !ok: the reason, shown in JSON */
} pfi_cli_measured;

/* {"run","gpus","cap_w","phases":{...},"samples","training_samples",
 *  "power_w","power_sem_w","throughput_tok_s","throughput_sem_tok_s",
 *  "telemetry":{DCGM...}} (null for what is unknown). */
json_t *pfi_cli_measured_json(const pfi_cli_measured *m);

/* sweeps.csv text of the runs that are ok. */
int pfi_cli_write_sweeps(FILE *f, const pfi_cli_meta *meta, const pfi_cli_measured *m, size_t n);
/* telemetry.csv text: per group, the ok run with the largest cap. */
int pfi_cli_write_telemetry(FILE *f, const pfi_cli_meta *meta, const pfi_cli_measured *m, size_t n);

/* Writes telemetry.csv text to path, atomically. */
int pfi_cli_write_telemetry_file(const char *path, const pfi_cli_meta *meta,
                                 const pfi_cli_measured *m, size_t n, pfi_error *err);
/* Writes DIR/sweeps.csv and DIR/telemetry.csv, each atomically. */
int pfi_cli_write_outputs(const char *dir, const pfi_cli_meta *meta, const pfi_cli_measured *m,
                          size_t n, pfi_error *err);

#endif
