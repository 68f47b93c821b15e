/* Reads a GPU probe trace (the format of ../shared/data/h200-probe/trace.csv:
 * t, phase, power_mW, sm_clock, sm_util, tensor_util, dram_bw_util, util_mem,
 * util_gpu, ... with NVML GPM metrics in percent) into the samples the GPU
 * model fit takes. Only rows whose phase is one of `phases` are kept.
 *
 * Ownership: *out is malloc'd; the caller frees it.
 */
#ifndef PFI_PROBE_TRACE_H
#define PFI_PROBE_TRACE_H

#include <stddef.h>

#include "pfi/error.h"
#include "pfi/gpumodel_fit.h"

/* phases: NULL-terminated names; *phase_of (may be NULL) receives, per kept
 * sample, the index of its phase in `phases` (malloc'd, caller frees). */
int pfi_probe_trace_read(const char *path, const char *const *phases, pfi_gpumodel_sample **out,
                         size_t **phase_of, size_t *n, pfi_error *err);

/* The same from a buffer (len bytes; `name` labels errors). */
int pfi_probe_trace_parse(const char *buf, size_t len, const char *name, const char *const *phases,
                          pfi_gpumodel_sample **out, size_t **phase_of, size_t *n, pfi_error *err);

#endif
