/* Telemetry features of a sweep group (paper Fig. 5 and Fig. 14): the DCGM
 * metrics of the uncapped run in common units, the composites built from
 * them, and the job metadata of Table 3.
 *
 * Units (normalised here, whatever the source): activities (SM, tensor,
 * DRAM) are ratios 0-1 as DCGM_FI_PROF_* report them; utilisations (memory
 * copy, GPU) are percent as DCGM_FI_DEV_*_UTIL report them; power W per GPU;
 * clock MHz; frame buffer GiB; temperature C; NVLink and PCIe GB/s (1e9 B/s).
 *
 * A feature is valid when every field it needs was present. A composite whose
 * denominator is zero (an activity of 0, e.g. a tensor/DRAM ratio when DRAM
 * is idle) is not valid either, and its bit in `undefined` says why: it is
 * reported, never stored as inf or NaN (v[f] is 0 when not valid).
 */
#ifndef PFI_FEATURES_H
#define PFI_FEATURES_H

#include <stdint.h>

#include "pfi/error.h"
#include "pfi/telemetry.h"

typedef enum {
    /* The 13 DCGM metrics of Table 3's "all DCGM metrics" (p = 13). The memory
     * clock is not among them: capping leaves it fixed (paper Fig. 6), so it is
     * constant across groups and would make the design singular. */
    PFI_FEAT_SM_ACTIVE,     /* ratio */
    PFI_FEAT_TENSOR_ACTIVE, /* ratio */
    PFI_FEAT_DRAM_ACTIVE,   /* ratio */
    PFI_FEAT_MEM_COPY_UTIL, /* percent */
    PFI_FEAT_GPU_UTIL,      /* percent */
    PFI_FEAT_POWER,         /* W per GPU */
    PFI_FEAT_SM_CLOCK,      /* MHz */
    PFI_FEAT_FB_USED,       /* GiB */
    PFI_FEAT_GPU_TEMP,      /* C */
    PFI_FEAT_NVLINK_TX,     /* GB/s */
    PFI_FEAT_NVLINK_RX,     /* GB/s */
    PFI_FEAT_PCIE_TX,       /* GB/s */
    PFI_FEAT_PCIE_RX,       /* GB/s */
    /* Composites (Fig. 14). */
    PFI_FEAT_DRAM_COPY_PRODUCT, /* DRAM active (%) x memory copy util (%) / 100 = ratio x percent */
    PFI_FEAT_ARITH_INTENSITY,   /* tensor active / DRAM active */
    PFI_FEAT_TENSOR_SM_RATIO,   /* tensor active / SM active */
    PFI_FEAT_DRAM_SM_RATIO,     /* DRAM active / SM active */
    PFI_FEAT_POWER_PER_SM,      /* power (W) / SM active (ratio) */
    PFI_FEAT_CLOCK_FRAC_BOOST,  /* SM clock / maximum boost clock */
    PFI_FEAT_NVLINK_PER_SM,     /* NVLink TX+RX (GB/s) / SM active (ratio) */
    PFI_FEAT_NVLINK_PER_DRAM,   /* NVLink TX+RX (GB/s) / DRAM active (ratio) */
    PFI_FEAT_COPY_UTIL_FRAC,    /* memory copy util / GPU util (both percent) */
    PFI_FEAT_N_TELEMETRY,       /* features computed from telemetry */
    /* Job metadata (Table 3 "job metadata", p = 3): from sweeps.csv, not telemetry. */
    PFI_FEAT_ARCH_MOE = PFI_FEAT_N_TELEMETRY, /* 1 for MoE, 0 for dense */
    PFI_FEAT_TASK_FT,                         /* 1 for fine-tuning, 0 for pretraining */
    PFI_FEAT_LOG2_GPUS,                       /* log2 of the job's GPU count */
    PFI_FEAT_COUNT
} pfi_feature;

#define PFI_FEAT_N_DCGM 13 /* features 0..12: Table 3's "all DCGM metrics" */

/* Snake-case name used on the command line and in JSON, e.g.
 * "dram_copy_product"; NULL for an out-of-range id. */
const char *pfi_feature_name(pfi_feature f);
/* Human label with unit, e.g. "DRAM copy product (ratio x %)". */
const char *pfi_feature_label(pfi_feature f);
/* The id of a name, or -1. */
int pfi_feature_lookup(const char *name);

typedef struct pfi_features {
    double v[PFI_FEAT_COUNT];
    uint32_t valid;     /* bit f: v[f] holds a value */
    uint32_t undefined; /* bit f: a composite's denominator was zero */
} pfi_features;

/* The H200's maximum SM boost clock, MHz (nvidia-smi -q "Max Clocks"). */
#define PFI_FEAT_H200_BOOST_MHZ 1980.0

/* Computes the telemetry features of one row. boost_mhz > 0 is the maximum
 * SM clock for the clock fraction. Metadata features stay invalid. Returns
 * PFI_OK even when some features are missing or undefined (check the bits);
 * PFI_EINVAL for a NULL argument or boost_mhz <= 0. */
int pfi_features_compute(const pfi_tm_row *row, double boost_mhz, pfi_features *out);

/* Sets the metadata features: arch "dense"/"moe", task "pt"/"ft", gpus > 0;
 * anything else is PFI_EINVAL (named in err). */
int pfi_features_set_meta(pfi_features *f, const char *arch, const char *task, int gpus,
                          pfi_error *err);

#endif
