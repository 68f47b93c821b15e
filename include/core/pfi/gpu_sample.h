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

/* The GPU fields, described once in pfi/gpu_field.h (names, units, DCGM and
 * NVML sources, metric, store column). A field's value is its bit in a
 * sample's valid mask, which the store keeps: append, never reorder. */
typedef enum {
    PFI_GF_POWER,         /* power draw, W */
    PFI_GF_ENERGY,        /* total energy since driver load, J */
    PFI_GF_LIMIT,         /* enforced power limit, W */
    PFI_GF_SM_CLOCK,      /* Hz */
    PFI_GF_MEM_CLOCK,     /* Hz */
    PFI_GF_UTIL_GPU,      /* GPU utilisation, ratio 0-1 */
    PFI_GF_UTIL_MEM,      /* memory copy utilisation (NVML memory util), ratio 0-1 */
    PFI_GF_TEMP,          /* degrees C */
    PFI_GF_FB_USED,       /* frame buffer used, bytes */
    PFI_GF_CLOCK_EVENTS,  /* pfi_clock_event bits, held exactly as an integer value */
    PFI_GF_SM_ACTIVE,     /* ratio 0-1 */
    PFI_GF_SM_OCCUPANCY,  /* ratio 0-1 */
    PFI_GF_TENSOR_ACTIVE, /* ratio 0-1 */
    PFI_GF_DRAM_ACTIVE,   /* ratio 0-1 */
    PFI_GF_PCIE_TX,       /* bytes/s */
    PFI_GF_PCIE_RX,       /* bytes/s */
    PFI_GF_NVLINK_TX,     /* bytes/s */
    PFI_GF_NVLINK_RX,     /* bytes/s */
    PFI_GF_COUNT
} pfi_gpu_field;

/* One read of a GPU: every field in SI units (see the enum), v[f] meaningful
 * only when bit f of valid is set. */
typedef struct pfi_gpu_sample {
    uint32_t valid;         /* bit (1u << pfi_gpu_field) set when read */
    double v[PFI_GF_COUNT]; /* SI */
} pfi_gpu_sample;

/* Power-limit constraints and settings, W. */
typedef struct pfi_gpu_limits {
    double min_w, max_w; /* the range a limit may be set to */
    double default_w;    /* the device's default limit */
    double enforced_w;   /* the limit in force */
    double current_w;    /* the limit set through power management (may differ from
                            enforced when another limiter is lower) */
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

/* Field f's SI value, or fallback when it was not read. */
static inline double pfi_gpu_sample_get(const pfi_gpu_sample *s, pfi_gpu_field f, double fallback)
{
    return pfi_gpu_sample_has(s, f) ? s->v[f] : fallback;
}

/* Sets field f to an SI value and marks it read. */
static inline void pfi_gpu_sample_set(pfi_gpu_sample *s, pfi_gpu_field f, double v)
{
    s->v[f] = v;
    s->valid |= 1u << (unsigned)f;
}

#endif
