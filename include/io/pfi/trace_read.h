/* Trace files read into runs (core: trace_run.h), for `pfi trace`. Three
 * formats, told apart by the first line:
 *
 *  - wide CSV: a time column (`time_s` or `t`), optional `gpu` (one row per
 *    GPU per time; rows with equal times form one sample) and `run` (names
 *    the runs; without it the file is one run named after the file), and
 *    telemetry columns by their DCGM names (telemetry.csv units) or the
 *    h200-probe names (power_w, gpu_util, sm_util %, ...: see trace_csv.c);
 *    `DCGM_FI_DEV_ENFORCED_POWER_LIMIT` or `limit_w` gives the cap;
 *  - the h200-probe trace (../shared/data/h200-probe/trace.csv): a wide CSV
 *    whose `phase` column labels the samples: NAME_warm is run NAME's
 *    warmup, NAME its load (training); the labels are the phases;
 *  - concatenated dcgm-exporter scrapes: Prometheus text pages, each
 *    preceded by a line `# time SECONDS` (e.g. `echo "# time $(date +%s.%N)"`
 *    before each `curl`); a sample's own millisecond timestamp takes
 *    precedence. Series are matched by DCGM field name, per `gpu` label; MIG
 *    instance series (GPU_I_ID) and DCGM's blank sentinels are skipped. The
 *    file is one run named after the file.
 *
 * Runs named `idle` (the probe's gaps between loads) are left out. Errors
 * name the file and line.
 *
 * Ownership: a pfi_trace_set owns its runs; pfi_trace_set_free (NULL-safe).
 */
#ifndef PFI_TRACE_READ_H
#define PFI_TRACE_READ_H

#include <stddef.h>

#include "pfi/error.h"
#include "pfi/trace_run.h"

typedef struct pfi_trace_set {
    pfi_trace_run *runs;
    size_t n;
} pfi_trace_set;

void pfi_trace_set_free(pfi_trace_set *s);

/* Reads a trace file and appends its runs to set. A run name already in set
 * is an error (two files describing one run). */
int pfi_trace_read(const char *path, pfi_trace_set *set, pfi_error *err);

/* The same from a buffer (len bytes); `name` labels errors and names a run
 * without a run column (its basename without extension). */
int pfi_trace_parse(const char *buf, size_t len, const char *name, pfi_trace_set *set,
                    pfi_error *err);

/* A step log (`time_s,step,tokens` with cumulative tokens, optional `run`)
 * as throughput reports of the runs in set: rows of run R go to run R (an
 * unknown R is an error); without a `run` column, to every run. */
int pfi_trace_steps_read(const char *path, pfi_trace_set *set, pfi_error *err);

#endif
