/* Private to io: per-GPU trace records gathered into runs (trace_read.h).
 * Readers add one record per GPU per time; finishing sorts each run's
 * records by time, merges the GPUs of one time into one sample (the mean of
 * each field) and appends the runs to a set. */
#ifndef PFI_IO_TRACE_BUILD_H
#define PFI_IO_TRACE_BUILD_H

#include <stdint.h>

#include "pfi/error.h"
#include "pfi/trace_read.h"

typedef struct trace_build trace_build;

/* file labels errors. */
trace_build *trace_build_create(const char *file);
void trace_build_destroy(trace_build *b);

/* One GPU's record: run name, label (pfi_phase or -1), time (s), GPU index,
 * fields v[] with their valid bits, power limit (W, NaN if not read), and
 * the source line for errors. */
int trace_build_add(trace_build *b, const char *run, int label, double t, long gpu, const double *v,
                    uint32_t valid, double limit_w, long line, pfi_error *err);

/* Appends the runs (in order of first appearance) to set; two records of
 * one GPU at one time, or a run name set already has, is an error. */
int trace_build_finish(trace_build *b, pfi_trace_set *set, pfi_error *err);

/* The basename of path without its extension, into buf. */
void trace_build_stem(const char *path, char *buf, size_t len);

#endif
