/* Telemetry backends behind one table of function pointers (nvtop's
 * struct gpu_vendor): nvml (dlopen of libnvidia-ml.so.1), dcgm (scrape of a
 * dcgm-exporter /metrics URL), sim (GPUs simulated through gpumodel).
 *
 * A sample carries a bitmask of the fields that were read: a field whose bit
 * is clear was not supported or failed, and its value means nothing.
 * Ownership: pfi_backend_open (or ops->init) returns a handle the caller
 * closes with pfi_backend_close (or ops->close); both are NULL-safe.
 * GPU indices are the device's own (NVML index, dcgm-exporter "gpu" label).
 */
#ifndef PFI_BACKEND_H
#define PFI_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "pfi/error.h"

typedef enum {
    PFI_GF_POWER,         /* power_mw */
    PFI_GF_ENERGY,        /* energy_mj */
    PFI_GF_LIMIT,         /* enforced limit, limit_mw */
    PFI_GF_SM_CLOCK,      /* sm_clock_mhz */
    PFI_GF_MEM_CLOCK,     /* mem_clock_mhz */
    PFI_GF_UTIL_GPU,      /* util_gpu_pct */
    PFI_GF_UTIL_MEM,      /* util_mem_pct */
    PFI_GF_TEMP,          /* temp_c */
    PFI_GF_FB_USED,       /* fb_used_mib */
    PFI_GF_CLOCK_REASONS, /* clock_event_reasons */
    PFI_GF_SM_ACTIVE,     /* GPM/DCGM sm_active, ratio */
    PFI_GF_SM_OCCUPANCY,  /* GPM/DCGM sm_occupancy, ratio */
    PFI_GF_TENSOR_ACTIVE, /* GPM any-tensor / DCGM tensor active, ratio */
    PFI_GF_DRAM_ACTIVE,   /* GPM/DCGM DRAM bandwidth util, ratio */
    PFI_GF_PCIE_TX,       /* bytes/s */
    PFI_GF_PCIE_RX,       /* bytes/s */
    PFI_GF_NVLINK_TX,     /* bytes/s */
    PFI_GF_NVLINK_RX,     /* bytes/s */
    PFI_GF_COUNT
} pfi_gpu_field;

typedef struct pfi_gpu_sample {
    uint32_t valid;          /* bit (1u << pfi_gpu_field) set when read */
    double power_mw;         /* mW */
    double energy_mj;        /* total energy since driver load, mJ */
    double limit_mw;         /* enforced power limit, mW */
    double sm_clock_mhz;     /* MHz */
    double mem_clock_mhz;    /* MHz */
    double util_gpu_pct;     /* percent */
    double util_mem_pct;     /* percent (NVML memory util = DCGM MEM_COPY_UTIL) */
    double temp_c;           /* C */
    double fb_used_mib;      /* MiB */
    uint64_t clock_reasons;  /* NVML clocks event reasons bitmask */
    double sm_active;        /* ratio 0-1 */
    double sm_occupancy;     /* ratio 0-1 */
    double tensor_active;    /* ratio 0-1 */
    double dram_active;      /* ratio 0-1 */
    double pcie_tx, pcie_rx;     /* bytes/s */
    double nvlink_tx, nvlink_rx; /* bytes/s */
} pfi_gpu_sample;

typedef struct pfi_gpu_limits {
    double min_mw, max_mw; /* power limit constraints, mW */
    double default_mw;     /* default limit, mW */
    double enforced_mw;    /* currently enforced limit, mW */
    double current_mw;     /* limit set through power management (may differ from
                              enforced when another limiter is lower), mW */
} pfi_gpu_limits;

typedef struct pfi_gpu_info {
    char name[96]; /* e.g. "NVIDIA H200" */
    char uuid[96];
} pfi_gpu_info;

typedef struct pfi_backend pfi_backend;

typedef struct pfi_backend_ops {
    const char *name;
    /* opts is the backend's own option string (e.g. a URL, a jobs file);
     * a missing library or endpoint fails here with a clear message. */
    int (*init)(pfi_backend **b, const char *opts, pfi_error *err);
    void (*close)(pfi_backend *b);
    const char *(*last_error)(const pfi_backend *b);
    int (*count)(pfi_backend *b, unsigned *n);
    int (*info)(pfi_backend *b, unsigned gpu, pfi_gpu_info *out);
    /* Reads every field it can; per-field failures clear the field's bit. */
    int (*sample)(pfi_backend *b, unsigned gpu, pfi_gpu_sample *out);
    int (*limits)(pfi_backend *b, unsigned gpu, pfi_gpu_limits *out);
    /* Sets the power limit; PFI_ENOTSUP when the backend cannot (read-only
     * backends), never PFI_OK for an action that did not happen. */
    int (*set_limit)(pfi_backend *b, unsigned gpu, double mw);
    /* Optional (NULL when the backend has no such knowledge): the modelled
     * throughput of the job on the GPU, tokens/s (sim only). */
    int (*throughput)(pfi_backend *b, unsigned gpu, double *tok_s);
} pfi_backend_ops;

/* The table entry for a backend name ("nvml", "dcgm", "sim"), or NULL. */
const pfi_backend_ops *pfi_backend_find(const char *name);

/* Finds the backend by name and runs its init: PFI_ENOTFOUND for an unknown
 * name, else init's status (err says why). */
int pfi_backend_open(const char *name, const char *opts, pfi_backend **out, pfi_error *err);
void pfi_backend_close(pfi_backend *b); /* NULL-safe */

/* The ops table a handle was opened with. */
const pfi_backend_ops *pfi_backend_ops_of(const pfi_backend *b);

/* Thin wrappers over the ops of b's table; every op may be called from
 * several threads at once (each backend serialises its own state). */
/* The last error or warning, "" if none; never NULL. The text lives in b and
 * may be overwritten by the next call on b from any thread. */
const char *pfi_backend_last_error(const pfi_backend *b);
int pfi_backend_count(pfi_backend *b, unsigned *n);
int pfi_backend_info(pfi_backend *b, unsigned gpu, pfi_gpu_info *out);
int pfi_backend_sample(pfi_backend *b, unsigned gpu, pfi_gpu_sample *out);
int pfi_backend_limits(pfi_backend *b, unsigned gpu, pfi_gpu_limits *out);
int pfi_backend_set_limit(pfi_backend *b, unsigned gpu, double mw);
/* PFI_ENOTSUP when the backend does not model throughput. */
int pfi_backend_throughput(pfi_backend *b, unsigned gpu, double *tok_s);

/* True when field f's bit is set in s->valid. */
static inline int pfi_gpu_sample_has(const pfi_gpu_sample *s, pfi_gpu_field f)
{
    return (s->valid >> (unsigned)f) & 1u;
}

#endif
