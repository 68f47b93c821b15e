/* One GPU's sample, power-limit constraints and identity: plain data, filled
 * by a telemetry backend (telemetry/backend.h), stored by io (store.h),
 * computed on by core and rendered by the agent. No layer above core owns
 * these types, so none of them needs another's header to pass a sample on.
 *
 * A sample carries a bitmask of the fields that were read: a field whose bit
 * is clear was not supported or failed, and its value means nothing.
 */
#ifndef PFI_GPU_SAMPLE_H
#define PFI_GPU_SAMPLE_H

#include <stdint.h>

/* Why the clocks are below their maximum, in pfi's own bits (a sample's
 * clock_events). The NVML and DCGM backends translate the driver's clocks
 * event reasons into these, so nothing above them depends on NVML's
 * encoding; PFI_CLK_POWER_CAP is the one the live PFI estimate watches (a
 * binding power cap slows the clocks, so the sample is not uncapped
 * telemetry). */
typedef enum {
    PFI_CLK_POWER_CAP = 1u << 0,   /* the software power cap binds */
    PFI_CLK_IDLE = 1u << 1,        /* nothing runs */
    PFI_CLK_SW_THERMAL = 1u << 2,  /* driver thermal slowdown */
    PFI_CLK_HW_THERMAL = 1u << 3,  /* hardware thermal slowdown */
    PFI_CLK_HW_SLOWDOWN = 1u << 4, /* hardware slowdown (power brake, thermal, ...) */
    PFI_CLK_POWER_BRAKE = 1u << 5, /* external power brake */
    PFI_CLK_APP_CLOCKS = 1u << 6,  /* application clocks setting */
    PFI_CLK_SYNC_BOOST = 1u << 7,  /* sync boost with other GPUs */
    PFI_CLK_DISPLAY = 1u << 8,     /* display clock setting */
    PFI_CLK_OTHER = 1u << 9        /* a reason pfi does not know */
} pfi_clock_event;

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
    PFI_GF_CLOCK_EVENTS,  /* clock_events, pfi_clock_event bits */
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
    uint32_t clock_events;   /* why clocks are below maximum: pfi_clock_event bits */
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

/* True when field f's bit is set in s->valid. */
static inline int pfi_gpu_sample_has(const pfi_gpu_sample *s, pfi_gpu_field f)
{
    return (s->valid >> (unsigned)f) & 1u;
}

#endif
