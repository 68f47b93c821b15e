/* NVML's clocks event reasons as pfi's own bits (gpu_sample.h). */
#include "backend_impl.h"
#include "nvml_types.h"

uint32_t pfi_clock_events_from_nvml(uint64_t mask)
{
    static const struct {
        uint64_t nvml;
        uint32_t pfi;
    } map[] = {
        {NVML_CLOCKS_EVENT_GPU_IDLE, PFI_CLK_IDLE},
        {NVML_CLOCKS_EVENT_APP_CLOCKS, PFI_CLK_APP_CLOCKS},
        {NVML_CLOCKS_EVENT_SW_POWER_CAP, PFI_CLK_POWER_CAP},
        {NVML_CLOCKS_EVENT_HW_SLOWDOWN, PFI_CLK_HW_SLOWDOWN},
        {NVML_CLOCKS_EVENT_SYNC_BOOST, PFI_CLK_SYNC_BOOST},
        {NVML_CLOCKS_EVENT_SW_THERMAL, PFI_CLK_SW_THERMAL},
        {NVML_CLOCKS_EVENT_HW_THERMAL, PFI_CLK_HW_THERMAL},
        {NVML_CLOCKS_EVENT_HW_POWER_BRAKE, PFI_CLK_POWER_BRAKE},
        {NVML_CLOCKS_EVENT_DISPLAY_CLOCKS, PFI_CLK_DISPLAY},
    };
    uint32_t out = 0;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (mask & map[i].nvml) out |= map[i].pfi;
        mask &= ~map[i].nvml;
    }
    return mask ? out | PFI_CLK_OTHER : out;
}
