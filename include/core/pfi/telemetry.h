/* Telemetry rows: one per sweep group, DCGM field values measured on the
 * group's uncapped run (telemetry.csv, DESIGN.md "Data"). DCGM_FI_PROF_* are
 * ratios 0-1, DCGM_FI_DEV_*_UTIL are percent, power W, clocks MHz, FB used
 * MiB, temperature C, NVLink/PCIe bytes/s. A missing (empty) value is NaN in
 * `v` and its bit is clear in `valid`; callers check `valid` before using a
 * field. Plain data of core: io reads and writes it (telemetry_csv.h).
 *
 * Ownership: a table owns its rows and strings until pfi_telemetry_destroy
 * (NULL-safe).
 */
#ifndef PFI_TELEMETRY_H
#define PFI_TELEMETRY_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    PFI_TM_SM_ACTIVE,     /* DCGM_FI_PROF_SM_ACTIVE, ratio */
    PFI_TM_TENSOR_ACTIVE, /* DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, ratio */
    PFI_TM_DRAM_ACTIVE,   /* DCGM_FI_PROF_DRAM_ACTIVE, ratio */
    PFI_TM_MEM_COPY_UTIL, /* DCGM_FI_DEV_MEM_COPY_UTIL, percent */
    PFI_TM_GPU_UTIL,      /* DCGM_FI_DEV_GPU_UTIL, percent */
    PFI_TM_POWER,         /* DCGM_FI_DEV_POWER_USAGE, W per GPU */
    PFI_TM_SM_CLOCK,      /* DCGM_FI_DEV_SM_CLOCK, MHz */
    PFI_TM_MEM_CLOCK,     /* DCGM_FI_DEV_MEM_CLOCK, MHz */
    PFI_TM_FB_USED,       /* DCGM_FI_DEV_FB_USED, MiB */
    PFI_TM_GPU_TEMP,      /* DCGM_FI_DEV_GPU_TEMP, C */
    PFI_TM_NVLINK_TX,     /* DCGM_FI_PROF_NVLINK_TX_BYTES, bytes/s */
    PFI_TM_NVLINK_RX,     /* DCGM_FI_PROF_NVLINK_RX_BYTES, bytes/s */
    PFI_TM_PCIE_TX,       /* DCGM_FI_PROF_PCIE_TX_BYTES, bytes/s */
    PFI_TM_PCIE_RX,       /* DCGM_FI_PROF_PCIE_RX_BYTES, bytes/s */
    PFI_TM_NFIELDS
} pfi_tm_field;

/* The DCGM column name of a field. */
const char *pfi_tm_field_name(pfi_tm_field f);

typedef struct pfi_tm_row {
    char *group;
    double v[PFI_TM_NFIELDS];
    uint32_t valid; /* bit f set when v[f] was present */
    long line;      /* source line, 0 if not from a file */
} pfi_tm_row;

typedef struct pfi_telemetry {
    pfi_tm_row *rows;
    size_t n;
} pfi_telemetry;

void pfi_telemetry_destroy(pfi_telemetry *t);
/* The row of a group, or NULL. */
const pfi_tm_row *pfi_telemetry_find(const pfi_telemetry *t, const char *group);

#endif
