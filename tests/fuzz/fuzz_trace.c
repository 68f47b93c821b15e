/* libFuzzer target: any bytes through pfi trace's readers (wide CSV, the
 * h200-probe trace, concatenated dcgm-exporter pages: the first line picks
 * one) and, when they read, every run's summary. Success must give runs
 * with increasing times and a valid GPU count; a failure a message. Never a
 * crash, a leak or a NaN power. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "pfi/trace_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pfi_trace_set set = {0};
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_trace_parse((const char *)data, size, "fuzz.csv", &set, &err) != PFI_OK) {
        if (!err.msg[0]) __builtin_trap();
        pfi_trace_set_free(&set);
        return 0;
    }
    for (size_t i = 0; i < set.n; i++) {
        const pfi_trace_run *r = &set.runs[i];
        if (r->n == 0 || r->gpus < 1) __builtin_trap();
        for (size_t k = 1; k < r->n; k++)
            if (!(r->t[k] > r->t[k - 1])) __builtin_trap();
        pfi_trace_summary s;
        pfi_error_clear(&err);
        if (pfi_trace_run_summarize(r, NULL, 0.1, &s, &err) == PFI_OK) {
            if (isnan(s.power_w) || s.top_samples == 0 || s.top_samples > s.training_samples)
                __builtin_trap();
        } else if (!err.msg[0]) {
            __builtin_trap();
        }
    }
    pfi_trace_set_free(&set);
    return 0;
}
