/* Phase segmentation of a training job's GPU trace and rolling top-10%
 * aggregates (paper Sec. 3 and Appendix B.6):
 *
 *   warmup   frame-buffer usage below 10 GiB (the process is starting);
 *   startup  weights loaded (frame buffer >= 10 GiB) but the GPU idle;
 *   training sustained gpu_util >= 50%;
 *
 * "all metrics aggregate over the training phase only, using the mean of the
 * top 10% of samples to exclude evals and checkpoints".
 *
 * Phases only move forward (warmup -> startup -> training): an eval or a
 * checkpoint pause inside training stays training (the top-10% mean is what
 * removes it). "Sustained" is made precise as: training starts at the first
 * sample s with util >= 50% such that the mean util of the samples from s
 * over at least `sustain_s` seconds stays >= 50%. The start is therefore
 * known only `sustain_s` later; pfi_trace_seg_start reports it retroactively.
 *
 * Pure computation: no I/O, no clock (times are whatever the caller uses).
 * Ownership: _create returns a handle freed by _destroy (NULL-safe).
 */
#ifndef PFI_TRACE_H
#define PFI_TRACE_H

#include <stddef.h>

#include "pfi/error.h"

typedef enum {
    PFI_PHASE_WARMUP = 0,
    PFI_PHASE_STARTUP = 1,
    PFI_PHASE_TRAINING = 2,
    PFI_PHASE_COUNT = 3
} pfi_phase;

/* "warmup", "startup", "training". */
const char *pfi_trace_phase_name(pfi_phase ph);

typedef struct pfi_trace_params {
    double loaded_fb_mib;  /* frame buffer at which weights count as loaded, MiB (10 GiB) */
    double train_util_pct; /* gpu_util of training, percent (50) */
    double sustain_s;      /* how long the mean util must hold, s (10) */
} pfi_trace_params;

/* The paper's thresholds: 10240 MiB, 50%, and a 10 s hold (two intervals of
 * the paper's 5 s DCGM sampling). */
void pfi_trace_params_default(pfi_trace_params *p);

typedef struct pfi_trace_seg pfi_trace_seg;

int pfi_trace_seg_create(const pfi_trace_params *p, pfi_trace_seg **out);
void pfi_trace_seg_destroy(pfi_trace_seg *s);

/* Feeds the next sample: t (s, increasing), frame buffer used (MiB) and GPU
 * utilisation (percent). A NaN frame buffer (not read) counts as loaded; a
 * NaN utilisation counts as idle. Returns the phase after this sample (the
 * sample itself may later turn out to be training: see the header note).
 * A time not after the previous one is ignored (returns the current phase). */
pfi_phase pfi_trace_seg_push(pfi_trace_seg *s, double t, double fb_mib, double util_pct);

pfi_phase pfi_trace_seg_phase(const pfi_trace_seg *s);

/* Time of the first sample of a phase; NaN when the phase has not begun. A
 * phase that was skipped (e.g. a first sample already loaded) starts at the
 * same time as the next one. */
double pfi_trace_seg_start(const pfi_trace_seg *s, pfi_phase ph);

/* Whole-trace segmentation: phase[i] (may be NULL) for each sample and the
 * start time of each phase (NaN when never reached). Times must increase:
 * otherwise PFI_EINVAL naming the sample. */
int pfi_trace_segment(const double *t, const double *fb_mib, const double *util_pct, size_t n,
                      const pfi_trace_params *p, pfi_phase *phase, double start[PFI_PHASE_COUNT],
                      pfi_error *err);

/* Mean of the largest ceil(frac * n) of the finite values of v[0..n), frac in
 * (0, 1] (the paper: 0.1). NaN values are skipped. scratch must hold n
 * doubles. PFI_ENODATA when no value is finite, PFI_EINVAL for a bad frac. */
int pfi_trace_top_mean(const double *v, size_t n, double frac, double *scratch, double *out);

/* A rolling window of multi-field samples (the agent's per-job history):
 * keeps the samples of the last window_s seconds, at most max_samples. */
typedef struct pfi_trace_roll pfi_trace_roll;

int pfi_trace_roll_create(size_t n_fields, double window_s, size_t max_samples,
                          pfi_trace_roll **out);
void pfi_trace_roll_destroy(pfi_trace_roll *r);

/* Appends a sample (vals has n_fields entries, NaN = not read) and drops the
 * samples older than window_s before t (or the oldest when full). */
void pfi_trace_roll_push(pfi_trace_roll *r, double t, const double *vals);

size_t pfi_trace_roll_count(const pfi_trace_roll *r);

/* Top-`frac` mean of one field over the samples with time >= since (pass
 * -INFINITY for all); *used (may be NULL) gets the number of finite values it
 * was taken over. PFI_ENODATA when there is none. */
int pfi_trace_roll_top_mean(pfi_trace_roll *r, size_t field, double since, double frac, double *out,
                            size_t *used);

/* Plain mean of one field over the samples with time >= since. */
int pfi_trace_roll_mean(const pfi_trace_roll *r, size_t field, double since, double *out,
                        size_t *used);

#endif
