/* The live loop under a power tree (pfi_live_set_tree, learn_live.h): the
 * tree is kept by job id and set on each problem the loop builds, its
 * spans translated to the jobs' current indices. */
#include <stdlib.h>
#include <string.h>

#include "learn_live_int.h"

int pfi_live_set_tree(pfi_live *l, const pfi_alloc_domain *d, size_t nd, const pfi_live_span *s,
                      size_t ns, pfi_error *err)
{
    int rc = pfi_alloc_tree_check(d, nd, err);
    if (rc != PFI_OK) return rc;
    pfi_alloc_domain *nd_ = nd ? malloc(nd * sizeof *nd_) : NULL;
    pfi_live_span *ns_ = ns ? malloc(ns * sizeof *ns_) : NULL;
    pfi_alloc_span *ix = ns ? malloc(ns * sizeof *ix) : NULL;
    if ((nd && !nd_) || (ns && (!ns_ || !ix))) {
        free(nd_), free(ns_), free(ix);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    for (size_t a = 0; a < nd; a++) {
        nd_[a] = d[a];
        nd_[a].name = NULL; /* not kept: the caller's */
    }
    if (ns) memcpy(ns_, s, ns * sizeof *ns_);
    free(l->tree_d), free(l->tree_s), free(l->tree_ix);
    l->tree_d = nd_;
    l->tree_nd = nd;
    l->tree_s = ns_;
    l->tree_ix = ix;
    l->tree_ns = ns;
    return PFI_OK;
}

int live_tree_apply(const pfi_live *l, pfi_alloc_problem *prob, pfi_error *err)
{
    if (l->tree_nd == 0) return pfi_alloc_problem_set_tree(prob, NULL, 0, NULL, 0, err);
    size_t k = 0;
    for (size_t j = 0; j < l->tree_ns; j++) {
        size_t i = live_find(l, l->tree_s[j].id);
        if (i < l->n)
            l->tree_ix[k++] = (pfi_alloc_span){i, l->tree_s[j].domain, l->tree_s[j].share};
    }
    int rc = pfi_alloc_problem_set_tree(prob, l->tree_d, l->tree_nd, l->tree_ix, k, err);
    if (rc == PFI_OK) pfi_alloc_problem_relax_tree(prob);
    return rc;
}
