/* The GPU fields, described once: everything pfi knows about a field of a
 * pfi_gpu_sample (gpu_sample.h) is its row here, and the dcgm backend, the
 * store's columns, pfid's /metrics and JSON and the telemetry aggregates are
 * driven by the table. Adding a field is a row here (and a PFI_GF_* value,
 * appended), plus its read in the backends that can measure it.
 *
 * Units: a sample holds SI values (W, J, Hz, ratio 0-1, degrees C, bytes,
 * bytes/s; the clock-event bits as an exact integer value). Each row gives
 * the factor from DCGM's unit to SI and from SI to the units of the places
 * that use another (Prometheus, telemetry.csv).
 */
#ifndef PFI_GPU_FIELD_H
#define PFI_GPU_FIELD_H

#include "pfi/gpu_sample.h"

typedef struct pfi_gpu_field_desc {
    pfi_gpu_field field;
    const char *name; /* JSON key in pfid's /v1/gpus "sample" */
    const char *unit; /* SI unit of the sample value: "W", "J", "Hz", "ratio", "C", "B",
                         "B/s", or "bits" */
    /* DCGM: the field name and id (dcgm_fields.h), an older name of the same
     * id or NULL, and the factor from DCGM's unit to SI. */
    const char *dcgm_name, *dcgm_alias;
    int dcgm_id;
    double dcgm_to_si;
    /* Where the nvml backend reads it (documentation and its error messages). */
    const char *nvml_source;
    /* The Prometheus family pfid exports, its help, 1 for a counter, and the
     * factor from SI to the family's unit. */
    const char *prom_name, *prom_help;
    int prom_counter;
    double si_to_prom;
    /* The store's samples column (SI), INTEGER for bit masks, else REAL. */
    const char *store_column;
    int store_integer;
    /* The telemetry.csv column (a pfi_tm_field, -1 when none) and the factor
     * from SI to its unit (DCGM's: percent for *_UTIL, ratio for PROF, W, MHz,
     * MiB, C, bytes/s). */
    int tm_field;
    double si_to_tm;
} pfi_gpu_field_desc;

/* The table, indexed by pfi_gpu_field: pfi_gpu_fields[f].field == f. */
extern const pfi_gpu_field_desc pfi_gpu_fields[PFI_GF_COUNT];

/* The row of field f, NULL when f is out of range. */
const pfi_gpu_field_desc *pfi_gpu_field_get(pfi_gpu_field f);

/* The row whose DCGM name or alias is name, NULL when none. */
const pfi_gpu_field_desc *pfi_gpu_field_by_dcgm(const char *name);

#endif
