/* Per-sample telemetry (a trace) reduced to one telemetry row, the input of
 * the features and the PFI predictor. The paper's steady state is "the mean
 * of the top 10% of samples"; here the top share is chosen by power, so every
 * field is averaged over the same samples (the busiest moments of the run),
 * not each field over its own top values.
 */
#ifndef PFI_TM_AGGREGATE_H
#define PFI_TM_AGGREGATE_H

#include <stddef.h>

#include "pfi/error.h"
#include "pfi/gpu_sample.h"
#include "pfi/gpumodel_fit.h"
#include "pfi/telemetry.h"

/* Averages samples[0..n) into out (out->group and out->line untouched).
 * top_frac in (0, 1]: 1 averages every sample; below 1, the ceil(top_frac *
 * m) samples with the highest power among the m that have power. A field is
 * valid in out when at least one selected sample has it; its value is the
 * mean over those. PFI_ENODATA when there is no sample (or, with top_frac <
 * 1, none with power); PFI_EINVAL for a bad top_frac. */
int pfi_tm_aggregate(const pfi_tm_row *samples, size_t n, double top_frac, pfi_tm_row *out,
                     pfi_error *err);

/* One probe sample (pfi/probe_trace.h: NVML + GPM, already in DCGM units:
 * activities as ratios, utilisations in percent, power in W) as a telemetry
 * row: SM/tensor/DRAM active, memory copy and GPU util (when not NaN), power
 * and SM clock are valid; the other fields are not measured there. */
void pfi_tm_from_probe_sample(const pfi_gpumodel_sample *s, pfi_tm_row *out);

/* One GPU sample (SI, gpu_sample.h) as a telemetry row in DCGM's units, by
 * the GPU field table's telemetry column and factor (gpu_field.h): a field
 * the sample read and the table maps is valid, the others NaN. */
void pfi_tm_from_gpu_sample(const pfi_gpu_sample *s, pfi_tm_row *out);

#endif
