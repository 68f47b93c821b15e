/* libFuzzer target: log lines through both throughput presets and a user
 * regex. A match must be a finite, non-negative number; never a crash or an
 * overrun (lines longer than the matcher's buffer included). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "pfi/tput_line.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pfi_tput_matcher *m[3];
    if (!m[0]) {
        pfi_tput_matcher_create("hf", &m[0], NULL);
        pfi_tput_matcher_create("torchtitan", &m[1], NULL);
        pfi_tput_matcher_create("tok/s=([0-9.]+)", &m[2], NULL);
    }
    for (int k = 0; k < 3; k++) {
        double v;
        if (pfi_tput_matcher_match(m[k], (const char *)data, size, &v) && !(isfinite(v) && v >= 0))
            __builtin_trap();
    }
    return 0;
}
