/* Telemetry rows (telemetry.h): field names, lookup, and freeing. */
#include "pfi/telemetry.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[PFI_TM_NFIELDS] = {
    "DCGM_FI_PROF_SM_ACTIVE",       "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "DCGM_FI_PROF_DRAM_ACTIVE",     "DCGM_FI_DEV_MEM_COPY_UTIL",
    "DCGM_FI_DEV_GPU_UTIL",         "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_SM_CLOCK",         "DCGM_FI_DEV_MEM_CLOCK",
    "DCGM_FI_DEV_FB_USED",          "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_PROF_NVLINK_TX_BYTES", "DCGM_FI_PROF_NVLINK_RX_BYTES",
    "DCGM_FI_PROF_PCIE_TX_BYTES",   "DCGM_FI_PROF_PCIE_RX_BYTES",
};

const char *pfi_tm_field_name(pfi_tm_field f)
{
    return (unsigned)f < PFI_TM_NFIELDS ? names[f] : "";
}

void pfi_telemetry_destroy(pfi_telemetry *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++)
        free(t->rows[i].group);
    free(t->rows);
    free(t);
}

const pfi_tm_row *pfi_telemetry_find(const pfi_telemetry *t, const char *group)
{
    for (size_t i = 0; t && i < t->n; i++)
        if (strcmp(t->rows[i].group, group) == 0) return &t->rows[i];
    return NULL;
}
