/* The plan's power tree (plan_tree.h). */
#include "plan_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void plan_tree_free(plan_tree *t)
{
    free(t->d);
    free(t->names);
    free(t->s);
    free(t->dpow);
    memset(t, 0, sizeof *t);
}

int plan_tree_set(plan_tree *t, const pfi_plan_domain *d, size_t n, pfi_error *err)
{
    plan_tree nt = {0};
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += d[i].name ? strlen(d[i].name) + 1 : 0;
    if (n && (!(nt.d = calloc(n, sizeof *nt.d)) || !(nt.names = malloc(len + 1)) ||
              !(nt.dpow = calloc(n, sizeof *nt.dpow)))) {
        plan_tree_free(&nt);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const char *nm = NULL;
        if (d[i].name) {
            size_t l = strlen(d[i].name) + 1;
            memcpy(nt.names + at, d[i].name, l);
            nm = nt.names + at;
            at += l;
        }
        nt.d[i] = (pfi_alloc_domain){nm, d[i].parent, d[i].limit_w, d[i].fixed_w};
    }
    nt.nd = n;
    int rc = pfi_alloc_tree_check(nt.d, n, err);
    if (rc != PFI_OK) {
        plan_tree_free(&nt);
        return rc;
    }
    plan_tree_free(t); /* the spans too: the next apply rebuilds them */
    *t = nt;
    return PFI_OK;
}

int plan_tree_apply(plan_tree *t, const pfi_plan_job *jobs, size_t n, pfi_alloc_problem *prob,
                    pfi_error *err)
{
    t->have_pow = 0;
    t->shortfall_w = 0;
    if (n == 0) return PFI_OK;
    /* a problem keeps its tree across resets of the same size: clear it */
    if (t->nd == 0) return pfi_alloc_problem_set_tree(prob, NULL, 0, NULL, 0, err);
    size_t ns = 0;
    for (size_t i = 0; i < n; i++)
        ns += jobs[i].n_domains;
    if (ns > t->cap_s) {
        pfi_alloc_span *s = realloc(t->s, ns * sizeof *s);
        if (!s) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        t->s = s;
        t->cap_s = ns;
    }
    t->ns = 0;
    for (size_t i = 0; i < n; i++) {
        const pfi_plan_job *j = &jobs[i];
        for (size_t k = 0; k < j->n_domains; k++) {
            if (j->domains[k] >= t->nd)
                return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                     "job %s: domain %zu out of range (%zu domains)",
                                     j->id ? j->id : "?", j->domains[k], t->nd);
            /* no shares: an even split */
            double sh = j->shares ? j->shares[k] : 1.0 / (double)j->n_domains;
            t->s[t->ns++] = (pfi_alloc_span){i, j->domains[k], sh};
        }
    }
    int rc = pfi_alloc_problem_set_tree(prob, t->d, t->nd, t->s, t->ns, err);
    if (rc == PFI_OK) t->shortfall_w = pfi_alloc_problem_relax_tree(prob);
    return rc;
}

void plan_tree_keep(plan_tree *t, const pfi_alloc_problem *prob)
{
    t->have_pow = pfi_alloc_problem_domains(prob) == t->nd && t->nd > 0;
    for (size_t a = 0; t->have_pow && a < t->nd; a++)
        t->dpow[a] = pfi_alloc_problem_domain_power(prob, a);
}
