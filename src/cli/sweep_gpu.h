/* The GPUs a sweep caps: a telemetry backend opened by pfi itself (holding
 * the single-writer GPU lock pfid holds), or a running pfid reached over
 * HTTP (--via-pfid: pfid owns the limits, so two programs never fight over
 * one). Every limit change is checked: refused outside the device's
 * constraints, read back. */
#ifndef PFI_SWEEP_GPU_H
#define PFI_SWEEP_GPU_H

#include <stddef.h>

#include "pfi/error.h"
#include "pfi/gpu_sample.h"

typedef struct sweep_gpu sweep_gpu;

/* Opens backend `name` with `opts`, or, when via_pfid is set, the pfid at
 * that URL with the bearer token in token_file. */
int sweep_gpu_open(const char *name, const char *opts, const char *via_pfid, const char *token_file,
                   sweep_gpu **out, pfi_error *err);
void sweep_gpu_close(sweep_gpu *g); /* NULL-safe; releases the locks */

int sweep_gpu_count(sweep_gpu *g, unsigned *n, pfi_error *err);
int sweep_gpu_limits(sweep_gpu *g, unsigned gpu, pfi_gpu_limits *out, pfi_error *err);
int sweep_gpu_sample(sweep_gpu *g, unsigned gpu, pfi_gpu_sample *out);
/* Takes the single-writer lock of each GPU (a no-op through pfid, which
 * holds them): PFI_ESTATE naming the holder when a pfid has one. */
int sweep_gpu_lock(sweep_gpu *g, const unsigned *gpus, size_t n, const char *lock_dir,
                   pfi_error *err);
/* Sets a cap (W) that pfid lets expire after expires_s (a direct backend
 * has no expiry: the state file and the next start stand in for it). */
int sweep_gpu_set(sweep_gpu *g, unsigned gpu, double w, double expires_s, pfi_error *err);
/* Puts the limit in force before the sweep back (prior_mw; through pfid,
 * pfid's own record of it). */
int sweep_gpu_restore(sweep_gpu *g, unsigned gpu, double prior_w, pfi_error *err);

#endif
