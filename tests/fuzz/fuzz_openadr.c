/* libFuzzer target: OpenADR 3 event JSON (one event or a GET /events page)
 * through the VEN's parser and on to targets, and the POST /v1/targets body.
 * An accepted event must give valid targets (finite starts, end > start,
 * limits in range) and at most PFI_OADR_MAX_TARGETS targets, a target
 * body a valid domain or none; a refused one a reason. Never a crash or a
 * leak. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "pfi/openadr.h"
#include "pfi/target_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    pfi_error err;
    pfi_error_clear(&err);
    pfi_oadr_event *ev = NULL;
    size_t n = 0;
    if (pfi_oadr_events_parse(text, size, 1.7e9, &ev, &n, &err) == PFI_OK) {
        for (size_t i = 0; i < n; i++) {
            const pfi_oadr_event *e = &ev[i];
            if (e->status != PFI_OK && (!e->error[0] || e->n_iv)) __builtin_trap();
            /* its targets (issue 28): at most the maximum, each a name */
            if (e->n_targets > PFI_OADR_MAX_TARGETS) __builtin_trap();
            for (size_t j = 0; j < e->n_targets; j++)
                if (!e->targets[j][0]) __builtin_trap();
            pfi_target *t = calloc(e->n_iv + 1, sizeof *t);
            size_t k = pfi_oadr_event_targets(e, t, e->n_iv);
            for (size_t j = 0; j < k && j < e->n_iv; j++)
                if (pfi_target_validate(&t[j], NULL) != PFI_OK) __builtin_trap();
            free(t);
        }
        pfi_oadr_events_free(ev, n);
    } else if (!err.msg[0]) {
        __builtin_trap();
    }
    pfi_target t;
    int has_id;
    pfi_error_clear(&err);
    if (pfi_target_parse_json(text, size, &t, &has_id, &err) == PFI_OK) {
        if (!has_id) snprintf(t.id, sizeof t.id, "x");
        if (pfi_target_validate(&t, NULL) != PFI_OK) __builtin_trap();
        if (t.domain[0] && !pfi_target_domain_valid(t.domain)) __builtin_trap();
    } else if (!err.msg[0]) {
        __builtin_trap();
    }
    return 0;
}
