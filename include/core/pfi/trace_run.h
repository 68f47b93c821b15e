/* One run's trace (a job at one cap: its GPUs' samples over time and its
 * throughput reports) reduced to a steady-state point, as the paper does it
 * (Appendix B.6): the trace is split into warmup, startup and training
 * (trace.h), and the training phase is aggregated as the mean of its top 10%
 * of samples: power (top 10% by power), telemetry (the same samples,
 * tm_aggregate.h) and throughput (top 10% of its own reports).
 *
 * `pfi trace` fills runs from trace files (io: trace_read.h), `pfi sweep`
 * from live samples. Pure computation: no I/O, no clock.
 *
 * Ownership: a pfi_trace_run owns its arrays and name; pfi_trace_run_free
 * releases them (NULL-safe) and leaves the struct empty.
 */
#ifndef PFI_TRACE_RUN_H
#define PFI_TRACE_RUN_H

#include <stddef.h>

#include "pfi/error.h"
#include "pfi/telemetry.h"
#include "pfi/trace.h"

typedef struct pfi_trace_run {
    char *name;
    size_t n;           /* samples */
    double *t;          /* sample times, s, strictly increasing */
    pfi_tm_row *tm;     /* per sample: the mean over the run's GPUs of each field
                           (telemetry.csv units; group NULL) */
    signed char *label; /* per sample: the phase a labelled trace gives it
                           (pfi_phase), or -1; NULL when the trace has no labels */
    int gpus;           /* GPUs in the run; total power = gpus * mean power */
    double cap_w;       /* per-GPU power limit in force, W; NaN when unknown */
    size_t n_tput;      /* throughput reports */
    double *tput_t;     /* their times, s */
    double *tput;       /* tokens/s of the whole run */
} pfi_trace_run;

void pfi_trace_run_free(pfi_trace_run *r);

/* Appends a sample (unlabelled run): t must be after the last sample's time
 * (PFI_EINVAL otherwise), PFI_ENOMEM on failure. */
int pfi_trace_run_add_sample(pfi_trace_run *r, double t, const pfi_tm_row *row);

/* Appends a throughput report (tokens/s at time t). PFI_ENOMEM on failure. */
int pfi_trace_run_add_tput(pfi_trace_run *r, double t, double tok_s);

/* Cumulative token counts at times t[0..n) (a step log) as rates: one report
 * per interval, (tokens[i] - tokens[i-1]) / (t[i] - t[i-1]) at t[i]. An
 * interval whose time does not increase or whose count goes down is an
 * error naming the row (1-based). */
int pfi_trace_run_add_steps(pfi_trace_run *r, const double *t, const double *tokens, size_t n,
                            pfi_error *err);

typedef struct pfi_trace_summary {
    double start[PFI_PHASE_COUNT]; /* start of each phase, s; NaN when never reached */
    size_t samples;                /* all samples of the run */
    size_t training_samples;       /* samples in the training phase */
    size_t top_samples;            /* of which the top share averaged */
    double power_w;                /* top-share mean of total power, W */
    double power_sem_w;            /* its standard error: sd / sqrt(k) of those samples */
    size_t tput_samples;           /* throughput reports in training */
    double tput;                   /* top-share mean of them, tokens/s; NaN when none */
    double tput_sem;               /* its standard error; NaN when none */
    pfi_tm_row telemetry;          /* every field over the top-power samples */
} pfi_trace_summary;

/* Summarises a run. A labelled run takes its phases from the labels (the
 * first sample of each); otherwise the samples are segmented with p (NULL:
 * the paper's thresholds) from the frame buffer and GPU utilisation.
 * top_frac in (0, 1] (the paper: 0.1). PFI_ENODATA naming the run when it
 * never reaches training or no training sample has power. */
int pfi_trace_run_summarize(const pfi_trace_run *r, const pfi_trace_params *p, double top_frac,
                            pfi_trace_summary *out, pfi_error *err);

#endif
