/* libFuzzer target: topology files (pfi control run --topology, pfi allocate
 * --topology). An accepted tree must be in pre-order with consistent
 * subtrees, depths within PFI_TOPO_MAX_DEPTH, limits positive or none, every
 * name and member found where it is listed; a refused one carries a message
 * and leaves no tree. Never a crash or a leak. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pfi/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pfi_topo *t = (pfi_topo *)&size;
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_topo_parse((const char *)data, size, "fuzz.json", &t, &err) != PFI_OK) {
        if (!err.msg[0] || t) __builtin_trap();
        return 0;
    }
    size_t n = pfi_topo_domains(t);
    if (n == 0) __builtin_trap();
    for (size_t i = 0; i < n; i++) {
        const pfi_topo_domain *d = pfi_topo_domain_at(t, i);
        if (i == 0 ? d->parent != PFI_TOPO_NONE || d->depth != 0
                   : d->parent >= i || d->depth != pfi_topo_domain_at(t, d->parent)->depth + 1)
            __builtin_trap();
        if (d->depth > PFI_TOPO_MAX_DEPTH || d->subtree_end <= i || d->subtree_end > n)
            __builtin_trap();
        if (i && d->subtree_end > pfi_topo_domain_at(t, d->parent)->subtree_end) __builtin_trap();
        if (!(d->limit_w > 0) || !(d->other_load_w >= 0) || !isfinite(d->other_load_w))
            __builtin_trap();
        if (pfi_topo_find(t, d->name) != i || !pfi_topo_contains(t, 0, i)) __builtin_trap();
        int leaf = d->subtree_end == i + 1;
        if (leaf != (d->n_members > 0)) __builtin_trap();
        for (size_t k = 0; k < d->n_members; k++)
            if (pfi_topo_leaf_of(t, d->members[k]) != i || !d->members[k][0]) __builtin_trap();
    }
    for (size_t i = 0; pfi_topo_note(t, i); i++)
        if (strncmp(pfi_topo_note(t, i), "fuzz.json: $", 12) != 0) __builtin_trap();
    pfi_topo_destroy(t);
    return 0;
}
