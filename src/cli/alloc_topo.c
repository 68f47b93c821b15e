/* pfi allocate --topology: the topology file's tree on the allocation
 * problem, and each domain's power and limit in the output (alloc_topo.h). */
#include "alloc_topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pfi/json.h"

int pfi_cli_alloc_topo_load(const char *path, const pfi_cli_curves *cv, const pfi_alloc_job *jobs,
                            size_t n, pfi_topo **out)
{
    pfi_error err = {0};
    pfi_topo *t = NULL;
    *out = NULL;
    int rc = pfi_topo_load(path, &t, &err);
    if (rc == PFI_OK && pfi_topo_member_kind_of(t) != PFI_TOPO_JOBS)
        rc = pfi_error_set(&err, PFI_EINVAL, path, 0,
                           "its leaves list agents or nodes; pfi allocate needs \"jobs\" (sweep "
                           "group names)");
    /* every job the file lists is a sweep group */
    for (size_t d = 0; rc == PFI_OK && d < pfi_topo_domains(t); d++) {
        const pfi_topo_domain *dom = pfi_topo_domain_at(t, d);
        for (size_t k = 0; rc == PFI_OK && k < dom->n_members; k++) {
            size_t g = 0;
            while (g < cv->n && strcmp(cv->g[g]->name, dom->members[k]) != 0)
                g++;
            if (g == cv->n)
                rc = pfi_error_set(&err, PFI_ENOTFOUND, path, 0,
                                   "domain %s lists job '%s', which is not a group of the sweeps",
                                   dom->name, dom->members[k]);
        }
    }
    /* and every job allocated sits in a leaf (none falls to the root unseen) */
    for (size_t k = 0; rc == PFI_OK && k < n; k++)
        if (pfi_topo_leaf_of(t, jobs[k].name) == PFI_TOPO_NONE)
            rc = pfi_error_set(&err, PFI_ENOTFOUND, path, 0,
                               "group '%s' is in no leaf: list it under the domain it draws from",
                               jobs[k].name);
    if (rc != PFI_OK) {
        pfi_topo_destroy(t);
        return pfi_cli_fail("allocate", &err);
    }
    for (size_t i = 0; pfi_topo_note(t, i); i++)
        fprintf(stderr, "pfi allocate: note: %s\n", pfi_topo_note(t, i));
    *out = t;
    return PFI_EXIT_OK;
}

int pfi_cli_alloc_topo_set(const pfi_topo *t, const pfi_alloc_job *jobs, size_t n,
                           pfi_alloc_problem *prob, double *jobs_limit_w, pfi_error *err)
{
    size_t nd = pfi_topo_domains(t);
    pfi_alloc_domain *d = calloc(nd, sizeof *d);
    pfi_alloc_span *s = calloc(n ? n : 1, sizeof *s);
    if (!d || !s) {
        free(d), free(s);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    double fixed = 0;
    for (size_t a = 0; a < nd; a++) {
        const pfi_topo_domain *td = pfi_topo_domain_at(t, a);
        d[a] = (pfi_alloc_domain){td->name, a == 0 ? PFI_ALLOC_NO_PARENT : td->parent, td->limit_w,
                                  td->other_load_w};
        fixed += td->other_load_w;
    }
    for (size_t k = 0; k < n; k++)
        s[k] = (pfi_alloc_span){k, pfi_topo_leaf_of(t, jobs[k].name), 1.0};
    int rc = pfi_alloc_problem_set_tree(prob, d, nd, s, n, err);
    /* the root's limit less what cannot move: what the jobs may draw */
    *jobs_limit_w = pfi_topo_domain_at(t, 0)->limit_w - fixed;
    free(d);
    free(s);
    return rc;
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? pfi_json_num(v) : json_null();
}

json_t *pfi_cli_alloc_topo_json(const pfi_topo *t, const pfi_alloc_problem *prob)
{
    json_t *arr = json_array();
    for (size_t a = 0; a < pfi_topo_domains(t); a++) {
        const pfi_topo_domain *d = pfi_topo_domain_at(t, a);
        json_t *o = json_object();
        pfi_json_set(o, "name", json_string(d->name));
        pfi_json_set(o, "parent",
                     d->parent == PFI_TOPO_NONE
                         ? json_null()
                         : json_string(pfi_topo_domain_at(t, d->parent)->name));
        pfi_json_set(o, "depth", json_integer((json_int_t)d->depth));
        pfi_json_set(o, "limit_w", num_or_null(d->limit_w));
        pfi_json_set(o, "other_load_w", pfi_json_num(d->other_load_w));
        pfi_json_set(o, "power_w", pfi_json_num(pfi_alloc_problem_domain_power(prob, a)));
        json_array_append_new(arr, o);
    }
    return arr;
}

void pfi_cli_alloc_topo_print(const pfi_topo *t, const pfi_alloc_problem *prob)
{
    int w = 6;
    for (size_t a = 0; a < pfi_topo_domains(t); a++) {
        const pfi_topo_domain *d = pfi_topo_domain_at(t, a);
        int l = (int)(2 * d->depth + strlen(d->name));
        if (l > w) w = l;
    }
    printf("%-*s  %10s %10s\n", w, "domain", "power_w", "limit_w");
    for (size_t a = 0; a < pfi_topo_domains(t); a++) {
        const pfi_topo_domain *d = pfi_topo_domain_at(t, a);
        printf("%*s%-*s  %10.1f", (int)(2 * d->depth), "", w - (int)(2 * d->depth), d->name,
               pfi_alloc_problem_domain_power(prob, a));
        if (isfinite(d->limit_w))
            printf(" %10.1f\n", d->limit_w);
        else
            printf(" %10s\n", "-");
    }
}
