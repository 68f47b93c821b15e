/* The GPU field table (gpu_field.h). DCGM ids from dcgm_fields.h; units as
 * DCGM documents them (power W, energy mJ, clocks MHz, *_UTIL percent, FB
 * MiB, PROF ratios and bytes/s). The Prometheus names and factors are the
 * ones pfid has always exported. */
#include "pfi/gpu_field.h"

#include <string.h>

#include "pfi/telemetry.h"

#define MIB 1048576.0

const pfi_gpu_field_desc pfi_gpu_fields[PFI_GF_COUNT] = {
    [PFI_GF_POWER] = {PFI_GF_POWER, "power_watts", "W", "DCGM_FI_DEV_POWER_USAGE", NULL, 155, 1,
                      "nvmlDeviceGetPowerUsage", "pfi_gpu_power_watts",
                      "GPU power draw (NVML power usage).", 0, 1, "power_w", 0, PFI_TM_POWER, 1},
    [PFI_GF_ENERGY] = {PFI_GF_ENERGY, "energy_joules_total", "J",
                       "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", NULL, 156, 1e-3,
                       "nvmlDeviceGetTotalEnergyConsumption", "pfi_gpu_energy_joules_total",
                       "GPU energy since the driver loaded.", 1, 1, "energy_j", 0, -1, 1},
    [PFI_GF_LIMIT] = {PFI_GF_LIMIT, "power_limit_enforced_watts", "W",
                      "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", NULL, 164, 1,
                      "nvmlDeviceGetEnforcedPowerLimit", NULL, NULL, 0, 1, "limit_w", 0, -1, 1},
    [PFI_GF_SM_CLOCK] = {PFI_GF_SM_CLOCK, "sm_clock_hertz", "Hz", "DCGM_FI_DEV_SM_CLOCK", NULL, 100,
                         1e6, "nvmlDeviceGetClockInfo(SM)", "pfi_gpu_sm_clock_hertz", "SM clock.",
                         0, 1, "sm_clock_hz", 0, PFI_TM_SM_CLOCK, 1e-6},
    [PFI_GF_MEM_CLOCK] = {PFI_GF_MEM_CLOCK, "memory_clock_hertz", "Hz", "DCGM_FI_DEV_MEM_CLOCK",
                          NULL, 101, 1e6, "nvmlDeviceGetClockInfo(MEM)",
                          "pfi_gpu_memory_clock_hertz", "Memory clock.", 0, 1, "mem_clock_hz", 0,
                          PFI_TM_MEM_CLOCK, 1e-6},
    [PFI_GF_UTIL_GPU] = {PFI_GF_UTIL_GPU, "utilization_ratio", "ratio", "DCGM_FI_DEV_GPU_UTIL",
                         NULL, 203, 0.01, "nvmlDeviceGetUtilizationRates (gpu)",
                         "pfi_gpu_utilization_ratio",
                         "GPU utilization (DCGM_FI_DEV_GPU_UTIL / 100).", 0, 1, "util_gpu_ratio", 0,
                         PFI_TM_GPU_UTIL, 100},
    [PFI_GF_UTIL_MEM] = {PFI_GF_UTIL_MEM, "memory_copy_utilization_ratio", "ratio",
                         "DCGM_FI_DEV_MEM_COPY_UTIL", NULL, 204, 0.01,
                         "nvmlDeviceGetUtilizationRates (memory)",
                         "pfi_gpu_memory_copy_utilization_ratio",
                         "Memory copy utilization (DCGM_FI_DEV_MEM_COPY_UTIL / 100).", 0, 1,
                         "util_mem_ratio", 0, PFI_TM_MEM_COPY_UTIL, 100},
    [PFI_GF_TEMP] = {PFI_GF_TEMP, "temperature_celsius", "C", "DCGM_FI_DEV_GPU_TEMP", NULL, 150, 1,
                     "nvmlDeviceGetTemperature(GPU)", "pfi_gpu_temperature_celsius",
                     "GPU temperature.", 0, 1, "temp_c", 0, PFI_TM_GPU_TEMP, 1},
    [PFI_GF_FB_USED] = {PFI_GF_FB_USED, "framebuffer_used_bytes", "B", "DCGM_FI_DEV_FB_USED", NULL,
                        252, MIB, "nvmlDeviceGetMemoryInfo", "pfi_gpu_framebuffer_used_bytes",
                        "Frame buffer memory used.", 0, 1, "fb_used_bytes", 0, PFI_TM_FB_USED,
                        1 / MIB},
    /* dcgm-exporter passes NVML's clocks event reasons mask on: the backend
     * translates it to pfi bits (the factor does not apply). */
    [PFI_GF_CLOCK_EVENTS] = {PFI_GF_CLOCK_EVENTS, "clock_event_reasons", "bits",
                             "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
                             "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", 112, 1,
                             "nvmlDeviceGetCurrentClocksEventReasons",
                             "pfi_gpu_clock_event_reasons",
                             "Why the clocks are below maximum, pfi's clock-event bits (1 power "
                             "cap, 2 idle, 4 SW thermal, 8 HW thermal, 16 HW slowdown, 32 power "
                             "brake, 64 app clocks, 128 sync boost, 256 display, 512 other).",
                             0, 1, "clock_events", 1, -1, 1},
    [PFI_GF_SM_ACTIVE] = {PFI_GF_SM_ACTIVE, "sm_active_ratio", "ratio", "DCGM_FI_PROF_SM_ACTIVE",
                          NULL, 1002, 1, "GPM NVML_GPM_METRIC_SM_UTIL", "pfi_gpu_sm_active_ratio",
                          "SM activity (GPM SM util, DCGM_FI_PROF_SM_ACTIVE).", 0, 1,
                          "sm_active_ratio", 0, PFI_TM_SM_ACTIVE, 1},
    [PFI_GF_SM_OCCUPANCY] = {PFI_GF_SM_OCCUPANCY, "sm_occupancy_ratio", "ratio",
                             "DCGM_FI_PROF_SM_OCCUPANCY", NULL, 1003, 1,
                             "GPM NVML_GPM_METRIC_SM_OCCUPANCY", "pfi_gpu_sm_occupancy_ratio",
                             "SM occupancy (GPM, DCGM_FI_PROF_SM_OCCUPANCY).", 0, 1,
                             "sm_occupancy_ratio", 0, -1, 1},
    [PFI_GF_TENSOR_ACTIVE] = {PFI_GF_TENSOR_ACTIVE, "tensor_active_ratio", "ratio",
                              "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", NULL, 1004, 1,
                              "GPM NVML_GPM_METRIC_ANY_TENSOR_UTIL", "pfi_gpu_tensor_active_ratio",
                              "Tensor pipe activity (GPM any-tensor, "
                              "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE).",
                              0, 1, "tensor_active_ratio", 0, PFI_TM_TENSOR_ACTIVE, 1},
    [PFI_GF_DRAM_ACTIVE] = {PFI_GF_DRAM_ACTIVE, "dram_active_ratio", "ratio",
                            "DCGM_FI_PROF_DRAM_ACTIVE", NULL, 1005, 1,
                            "GPM NVML_GPM_METRIC_DRAM_BW_UTIL", "pfi_gpu_dram_active_ratio",
                            "DRAM bandwidth activity (GPM, DCGM_FI_PROF_DRAM_ACTIVE).", 0, 1,
                            "dram_active_ratio", 0, PFI_TM_DRAM_ACTIVE, 1},
    [PFI_GF_PCIE_TX] = {PFI_GF_PCIE_TX, "pcie_tx_bytes_per_second", "B/s",
                        "DCGM_FI_PROF_PCIE_TX_BYTES", NULL, 1009, 1,
                        "GPM NVML_GPM_METRIC_PCIE_TX_PER_SEC", "pfi_gpu_pcie_tx_bytes_per_second",
                        "PCIe transmit rate.", 0, 1, "pcie_tx_bytes_per_s", 0, PFI_TM_PCIE_TX, 1},
    [PFI_GF_PCIE_RX] = {PFI_GF_PCIE_RX, "pcie_rx_bytes_per_second", "B/s",
                        "DCGM_FI_PROF_PCIE_RX_BYTES", NULL, 1010, 1,
                        "GPM NVML_GPM_METRIC_PCIE_RX_PER_SEC", "pfi_gpu_pcie_rx_bytes_per_second",
                        "PCIe receive rate.", 0, 1, "pcie_rx_bytes_per_s", 0, PFI_TM_PCIE_RX, 1},
    [PFI_GF_NVLINK_TX] = {PFI_GF_NVLINK_TX, "nvlink_tx_bytes_per_second", "B/s",
                          "DCGM_FI_PROF_NVLINK_TX_BYTES", NULL, 1011, 1,
                          "GPM NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC",
                          "pfi_gpu_nvlink_tx_bytes_per_second", "NVLink transmit rate.", 0, 1,
                          "nvlink_tx_bytes_per_s", 0, PFI_TM_NVLINK_TX, 1},
    [PFI_GF_NVLINK_RX] = {PFI_GF_NVLINK_RX, "nvlink_rx_bytes_per_second", "B/s",
                          "DCGM_FI_PROF_NVLINK_RX_BYTES", NULL, 1012, 1,
                          "GPM NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC",
                          "pfi_gpu_nvlink_rx_bytes_per_second", "NVLink receive rate.", 0, 1,
                          "nvlink_rx_bytes_per_s", 0, PFI_TM_NVLINK_RX, 1},
};

const pfi_gpu_field_desc *pfi_gpu_field_get(pfi_gpu_field f)
{
    return (unsigned)f < PFI_GF_COUNT ? &pfi_gpu_fields[f] : NULL;
}

const pfi_gpu_field_desc *pfi_gpu_field_by_dcgm(const char *name)
{
    for (int f = 0; f < PFI_GF_COUNT; f++) {
        const pfi_gpu_field_desc *d = &pfi_gpu_fields[f];
        if (strcmp(d->dcgm_name, name) == 0 || (d->dcgm_alias && strcmp(d->dcgm_alias, name) == 0))
            return d;
    }
    return NULL;
}
