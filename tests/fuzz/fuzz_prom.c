/* libFuzzer target: the Prometheus text parser. Any input must give PFI_OK
 * with a consistent document or an error with a message, never a crash. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pfi/prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pfi_prom_doc *d = NULL;
    pfi_error err = {0};
    if (pfi_prom_parse((const char *)data, size, "fuzz", &d, &err) != PFI_OK) {
        if (!err.msg[0] || d) __builtin_trap();
        return 0;
    }
    /* Walk everything handed out: every string must be readable. */
    size_t total = 0;
    for (size_t i = 0; i < pfi_prom_doc_series_count(d); i++) {
        const pfi_prom_series *s = pfi_prom_doc_series(d, i);
        total += strlen(s->name);
        for (size_t k = 0; k < s->n_labels; k++) {
            total += strlen(s->labels[k].name) + strlen(s->labels[k].value);
            if (pfi_prom_series_label(s, s->labels[k].name) == NULL) __builtin_trap();
        }
        if (s->line < 1) __builtin_trap();
    }
    for (size_t i = 0; i < pfi_prom_doc_meta_count(d); i++) {
        const pfi_prom_meta *m = pfi_prom_doc_meta(d, i);
        total +=
            strlen(m->name) + (m->help ? strlen(m->help) : 0) + (m->type ? strlen(m->type) : 0);
        if (pfi_prom_doc_find_meta(d, m->name) != m) __builtin_trap();
    }
    if (total > 2 * size + 16) __builtin_trap(); /* strings never outgrow the input */
    pfi_prom_doc_destroy(d);
    return 0;
}
