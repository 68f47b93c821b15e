/* Fig. 2's data: one run of a trace (pfi trace's formats, io/trace_read.h)
 * as the paper draws it, aggregate GPU power and training throughput over
 * elapsed time, with the phases the run was split into. Private to
 * src/report.
 *
 * Ownership: an rd_trace owns its arrays; rd_trace_free (NULL-safe) leaves
 * it empty. */
#ifndef PFI_REPORT_RTRACE_H
#define PFI_REPORT_RTRACE_H

#include <stddef.h>

#include "pfi/error.h"
#include "pfi/trace.h"

typedef struct rd_trace {
    int has;
    char run[64];   /* the run drawn: the trace's first */
    char file[256]; /* the trace file's base name */
    int gpus;
    size_t n;
    double *t, *power_w; /* s since the run's first sample; total over its GPUs, W */
    size_t n_tput;
    double *tput_t, *tput;         /* s (same origin), tokens/s */
    double start[PFI_PHASE_COUNT]; /* s (same origin); NaN when never reached */
    double top_power_w, top_tput;  /* the steady state (top 10% of training); NaN
                                      when unknown */
} rd_trace;

/* Reads trace (and, when not NULL, the step log steps) and keeps its first
 * run. Errors name the file (and line); a run that never reaches training
 * is PFI_ENODATA naming it. */
int rd_trace_load(rd_trace *tr, const char *trace, const char *steps, pfi_error *err);
void rd_trace_free(rd_trace *tr);

#endif
