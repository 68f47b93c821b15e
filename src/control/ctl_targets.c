/* The controller's targets in memory (call under c->mu); the store is
 * written by the callers. */
#include <string.h>

#include "ctl_internal.h"

int ctl_targets_add(ctl *c, const pfi_target *t, pfi_error *err)
{
    for (size_t i = 0; i < c->n_targets; i++)
        if (c->targets[i].source == t->source && strcmp(c->targets[i].id, t->id) == 0) {
            c->targets[i] = *t;
            return PFI_OK;
        }
    if (c->n_targets == c->cap_targets) {
        size_t cap = c->cap_targets ? 2 * c->cap_targets : 16;
        pfi_target *p = realloc(c->targets, cap * sizeof *p);
        if (!p) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        c->targets = p;
        c->cap_targets = cap;
    }
    c->targets[c->n_targets++] = *t;
    return PFI_OK;
}

int ctl_targets_del(ctl *c, pfi_target_source src, const char *id)
{
    for (size_t i = 0; i < c->n_targets; i++)
        if (c->targets[i].source == src && strcmp(c->targets[i].id, id) == 0) {
            memmove(&c->targets[i], &c->targets[i + 1],
                    (c->n_targets - i - 1) * sizeof *c->targets);
            c->n_targets--;
            return PFI_OK;
        }
    return PFI_ENOTFOUND;
}

int ctl_targets_replace(ctl *c, pfi_target_source src, const pfi_target *ts, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n_targets; i++)
        if (c->targets[i].source != src) c->targets[k++] = c->targets[i];
    c->n_targets = k;
    for (size_t i = 0; i < n; i++)
        if (ctl_targets_add(c, &ts[i], NULL) != PFI_OK) return PFI_ENOMEM;
    return PFI_OK;
}
