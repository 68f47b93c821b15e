/* One cap of a sweep: the command runs with its output parsed for
 * throughput and saved, the GPUs are sampled every interval into a trace
 * (kept in memory for the summary and written as a wide CSV that pfi trace
 * reads), until the duration, a failure, or a stop request. */
#ifndef PFI_SWEEP_RUN_H
#define PFI_SWEEP_RUN_H

#include <signal.h>
#include <stdio.h>

#include "pfi/error.h"
#include "pfi/trace_run.h"
#include "pfi/tput_line.h"
#include "sweep_gpu.h"
#include "sweep_port.h"

typedef struct sweep_run_opts {
    char *const *argv; /* the command */
    double cap_w;      /* exported to it as PFI_SWEEP_CAP_W */
    double duration_s, interval_s;
    double tput_timeout_s;     /* no throughput line by then: the run fails */
    double tput_scale;         /* a log's tokens/s times this (e.g. per-GPU logs) */
    const pfi_tput_matcher *m; /* NULL with a port */
    sweep_port *port;          /* throughput reports over HTTP, or NULL */
    sweep_gpu *g;
    const unsigned *gpus;
    size_t n_gpus;
    FILE *log;                   /* the command's output, as it came */
    FILE *trace;                 /* per-GPU samples: time_s,gpu,DCGM... */
    volatile sig_atomic_t *stop; /* set by a signal handler: end the run now */
    /* progress, called after each sample: seconds into the run, total power
     * of the last sample (NaN if unknown), last tokens/s (NaN if none yet) */
    void (*progress)(void *ctx, double t, double power_w, double tok_s);
    void *progress_ctx;
} sweep_run_opts;

/* Runs the command for one cap; *out (an empty run) receives the samples
 * and throughput reports. PFI_OK when the duration was reached; PFI_ESTATE
 * when the command exited before it or a stop was requested (err says
 * which), PFI_ENODATA when no throughput line came within the timeout,
 * PFI_EIO when the command could not be started. The command's process
 * group is always stopped (SIGTERM, then SIGKILL after 5 s) before return. */
int sweep_run_cap(const sweep_run_opts *o, pfi_trace_run *out, pfi_error *err);

/* Writes the trace CSV header. */
void sweep_run_trace_header(FILE *f);

/* Sleeps s seconds, or less when *stop is set; returns *stop. */
int sweep_sleep(double s, volatile sig_atomic_t *stop);

#endif
