/* A mechanistic model of one GPU running one training job under a power cap
 * (paper Sec. 5: a cap lowers the SM clock; the memory clock stays).
 *
 * A job's step time splits into a compute-bound share that scales with
 * 1/SM clock and the rest (memory, communication, host) that does not. GPU
 * power is static + memory + dynamic SM power rising steeply with SM clock.
 * Under a cap the SM clock settles where power meets the cap, within the
 * device's clock range. The functional forms, their sources and the fitted
 * constants are documented in src/core/gpumodel.c.
 *
 * Everything here is plain data and pure functions: no allocation, no I/O.
 * This header is the contract other modules (dataset, sim backend, fake NVML)
 * build on; add fields at the end, do not change the meaning of existing ones.
 */
#ifndef PFI_GPUMODEL_H
#define PFI_GPUMODEL_H

#include <stddef.h>

#include "pfi/error.h"

typedef struct pfi_gpu_spec {
    const char *name;   /* e.g. "NVIDIA H200" */
    double tdp_w;       /* default power limit, W */
    double min_limit_w; /* power limit constraints, W */
    double max_limit_w;
    double sm_clock_min_mhz; /* lowest SM clock the cap can force */
    double sm_clock_max_mhz; /* maximum (boost) SM clock */
    double mem_clock_mhz;    /* memory clock, unchanged by caps */
    double idle_w;           /* power of an idle GPU at the idle clock */
    /* Model constants, fitted (see gpumodel.c). */
    double static_w;       /* leakage + board power while loaded */
    double mem_w_per_util; /* memory power at full DRAM activity, W */
    double dyn_w;          /* dynamic SM power at max clock and full activity, W */
    double dyn_exp;        /* dynamic power ~ (f / fmax)^dyn_exp */
    /* Added after the first contract (defaults documented in gpumodel.c). */
    double tensor_w;      /* extra dynamic power of the tensor pipes at max clock, W */
    double cap_tracking;  /* average power the controller holds, as a share of the cap */
    double copy_per_dram; /* DCGM_FI_DEV_MEM_COPY_UTIL / 100 per unit DRAM active */
    double gpu_util_exp;  /* DCGM_FI_DEV_GPU_UTIL = 100 * sm_active^gpu_util_exp */
} pfi_gpu_spec;

/* The built-in device specs. */
const pfi_gpu_spec *pfi_gpumodel_h200(void);
const pfi_gpu_spec *pfi_gpumodel_h100(void);

/* One training job on one GPU. */
typedef struct pfi_job_model {
    double compute_frac;  /* share of step time at max SM clock that scales with 1/f, 0-1 */
    double sm_activity;   /* switching activity of the SMs while computing, 0-1 (scales dyn_w) */
    double dram_activity; /* DRAM active ratio at max clock, 0-1 */
    double tensor_ratio;  /* tensor-active / SM-active, 0-1 */
    double tput_per_gpu;  /* tokens/s per GPU at max SM clock, uncapped and unthrottled */
    /* Added after the first contract; 0 keeps the plain single-GPU model. */
    double clock_spread; /* relative clock lag of the job's slowest GPU once a cap
                            binds, at the TDP; grows as tdp / cap (chip-to-chip
                            power variation; synchronous steps wait for it), 0-0.2 */
    double floor_mhz;    /* lowest SM clock power capping reaches with this job
                            before the hardware slowdown duty-cycles it, MHz
                            (0 = the GPU's sm_clock_min_mhz) */
    double extra_w;      /* per-GPU power that does not follow the SM clock
                            (NVLink/NIC traffic, host I/O), W, >= 0 */
} pfi_job_model;

/* The model's prediction for a job at a cap. Throughput is per GPU. */
typedef struct pfi_gpumodel_point {
    double cap_w;             /* the cap applied, W */
    double power_w;           /* steady-state power, W (<= cap_w) */
    double sm_clock_mhz;      /* settled SM clock, MHz */
    double mem_clock_mhz;     /* MHz */
    double tput;              /* tokens/s per GPU */
    double sm_active;         /* DCGM_FI_PROF_SM_ACTIVE, ratio */
    double tensor_active;     /* DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, ratio */
    double dram_active;       /* DCGM_FI_PROF_DRAM_ACTIVE, ratio */
    double mem_copy_util_pct; /* DCGM_FI_DEV_MEM_COPY_UTIL, percent */
    double gpu_util_pct;      /* DCGM_FI_DEV_GPU_UTIL, percent */
} pfi_gpumodel_point;

/* Step time at normalized SM clock x = f / fmax, relative to the step at fmax:
 * compute_frac / x + (1 - compute_frac). */
double pfi_gpumodel_step_time(const pfi_job_model *job, double x);

/* Power (W) the job would draw at normalized SM clock x with no cap. */
double pfi_gpumodel_power_at(const pfi_gpu_spec *gpu, const pfi_job_model *job, double x);

/* Jobs shaped like the loads of the H200 probe (../shared/data/h200-probe):
 * "gemm", "stream", "dense_train", "moe_train". NULL for an unknown name.
 * pfi_gpumodel_preset_name(i) lists them (NULL past the last). */
const pfi_job_model *pfi_gpumodel_preset(const char *name);
const char *pfi_gpumodel_preset_name(size_t i);

/* Evaluates the job at cap_w (W). job == NULL means an idle GPU. A cap outside
 * [min_limit_w, max_limit_w] is PFI_ERANGE. */
int pfi_gpumodel_eval(const pfi_gpu_spec *gpu, const pfi_job_model *job, double cap_w,
                      pfi_gpumodel_point *out);

#endif
