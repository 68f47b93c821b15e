/* libFuzzer target: the CSV reader and the sweeps.csv validation on top of it.
 * Any input must give PFI_OK or an error with a message, never a crash. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pfi/index.h"
#include "pfi/sweeps_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pfi_csv *c = NULL;
    pfi_error err = {0};
    if (pfi_csv_parse((const char *)data, size, "fuzz", &c, &err) != PFI_OK) {
        if (!err.msg[0]) __builtin_trap();
        return 0;
    }
    pfi_sweeps *s = NULL;
    if (pfi_sweeps_from_csv(c, 0, &s, &err) == PFI_OK) {
        for (size_t i = 0; i < pfi_sweeps_count(s); i++) {
            const pfi_group *g = pfi_sweeps_group(s, i);
            int excl[64];
            pfi_index_result r;
            if (g->n_runs <= 64) pfi_index_group(g, PFI_METHOD_ALL, excl, &r);
        }
    } else if (!err.msg[0]) {
        __builtin_trap();
    }
    pfi_sweeps_destroy(s);
    pfi_csv_destroy(c);
    return 0;
}
