/* libFuzzer target: `pfi simulate --json` output read back for `pfi plot gap`
 * (src/report/sim_json.c). A document that loads fills the slot of its mix
 * with distinct reductions in [0, 1), at most one per result, and cells whose
 * values are finite; the workload and job counts are never negative ones
 * wrapped around. A failure carries a message. Loading it a second time
 * replaces the slot (no leak). Never a crash or a leak. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "report/rdata.h"

static void check(const rd_data *d, size_t size)
{
    int slots = 0;
    for (int m = 0; m < 2; m++) {
        if (!d->has_sim[m]) continue;
        slots++;
        const pfi_sim_result *r = &d->sim[m];
        if (r->n_reductions == 0 || r->n_reductions > size) __builtin_trap();
        for (size_t k = 0; k < r->n_reductions; k++) {
            if (!(r->reductions[k] >= 0 && r->reductions[k] < 1)) __builtin_trap();
            for (size_t j = 0; j < k; j++)
                if (r->reductions[j] == r->reductions[k]) __builtin_trap();
            int any = 0;
            for (int p = 0; p < PFI_SIM_NPOLICIES; p++) {
                const pfi_sim_cell *c = &r->cells[k * PFI_SIM_NPOLICIES + p];
                if (!c->ran) continue;
                any = 1;
                if (!isfinite(c->tput_per_job) || !isfinite(c->gap_per_job)) __builtin_trap();
                if (c->has_recovered && !isfinite(c->gap_recovered)) __builtin_trap();
            }
            if (!any) __builtin_trap(); /* a reduction is listed only with a result */
        }
    }
    if (slots != 1) __builtin_trap();
    /* counts come from the document, which is smaller than any wrapped value */
    if (d->workloads > (size_t)1 << 62 || d->jobs > (size_t)1 << 62) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd_data d;
    memset(&d, 0, sizeof d);
    pfi_error err;
    pfi_error_clear(&err);
    int rc = rd_sim_from_json_text(&d, (const char *)data, size, "fuzz.json", &err);
    if (rc == PFI_OK) {
        check(&d, size);
        if (rd_sim_from_json_text(&d, (const char *)data, size, "fuzz.json", &err) != PFI_OK)
            __builtin_trap(); /* the same document loads the same way */
        check(&d, size);
    } else if (!err.msg[0] || rc != PFI_EPARSE) {
        if (rc != PFI_ENOMEM) __builtin_trap();
    }
    rd_free(&d);
    return 0;
}
