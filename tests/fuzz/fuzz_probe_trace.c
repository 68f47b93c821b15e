/* libFuzzer target: a GPU probe trace (h200-probe trace.csv format) through
 * the reader and, when it reads, the GPU model fit behind `pfi model
 * --fit-probe`. Success must give finite samples and, from the fit, finite
 * constants; failure a message. Never a crash, a leak or a NaN constant. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "pfi/gpumodel_fit.h"
#include "pfi/probe_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const phases[] = {"gemm", "stream", "dense_train", "moe_train", NULL};
    pfi_gpumodel_sample *s = NULL;
    size_t *ph = NULL, n = 0;
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_probe_trace_parse((const char *)data, size, "fuzz", phases, &s, &ph, &n, &err) !=
        PFI_OK) {
        if (!err.msg[0]) __builtin_trap();
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(s[i].power_w) || !isfinite(s[i].sm_clock_mhz) || ph[i] > 3) __builtin_trap();
    pfi_gpumodel_sample loads[4];
    size_t which[4], nl = 0;
    pfi_gpumodel_fit fit;
    pfi_error_clear(&err);
    if (pfi_gpumodel_fit_probe(s, ph, n, 4, 1980, loads, which, &nl, &fit, &err) == PFI_OK) {
        for (int k = 0; k < PFI_GPUMODEL_FIT_NPARAM; k++)
            if (!isfinite(fit.p[k])) __builtin_trap();
    } else if (!err.msg[0]) {
        __builtin_trap();
    }
    free(s);
    free(ph);
    return 0;
}
