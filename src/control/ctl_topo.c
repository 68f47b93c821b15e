/* The power tree in the controller (ctl_topo.h): the file, where each agent
 * sits, and the period's per-domain arithmetic. Pure but for the log and
 * the other-load queries; the agents' names come from ctl_topo_place.c. */
#include "ctl_topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_index.h"
#include "pfi/log.h"
#include "pfi/openadr.h"
#include "pfi/prom_query.h"

const char *ctl_topo_name(const ctl_topo *T, size_t d)
{
    return T->t ? pfi_topo_domain_at(T->t, d)->name : "site";
}

size_t ctl_topo_parent(const ctl_topo *T, size_t d)
{
    return T->t ? pfi_topo_domain_at(T->t, d)->parent : PFI_TOPO_NONE;
}

double ctl_topo_rating(const ctl_topo *T, size_t d)
{
    return T->t ? pfi_topo_domain_at(T->t, d)->limit_w : INFINITY;
}

size_t ctl_topo_domain_of(const ctl_topo *T, const char *name)
{
    if (!name[0] || strcmp(name, ctl_topo_name(T, 0)) == 0) return 0;
    return T->t ? pfi_topo_find(T->t, name) : PFI_TOPO_NONE;
}

/* The leaf listing url, trailing '/' or not (pfi_agents drops it). */
static size_t leaf_of_url(const pfi_topo *t, const char *url)
{
    size_t l = pfi_topo_leaf_of(t, url);
    if (l != PFI_TOPO_NONE) return l;
    char alt[600];
    size_t n = strlen(url);
    if (n > 0 && url[n - 1] == '/')
        snprintf(alt, sizeof alt, "%.*s", (int)(n - 1), url);
    else
        snprintf(alt, sizeof alt, "%s/", url);
    return pfi_topo_leaf_of(t, alt);
}

static int has_url(const char *const *urls, size_t n, const char *u)
{
    size_t lu = strlen(u);
    while (lu > 0 && u[lu - 1] == '/')
        lu--;
    for (size_t i = 0; i < n; i++) {
        size_t li = strlen(urls[i]);
        while (li > 0 && urls[i][li - 1] == '/')
            li--;
        if (li == lu && strncmp(urls[i], u, lu) == 0) return 1;
    }
    return 0;
}

int ctl_topo_init(ctl_topo *T, const char *path, const char *const *urls, size_t n, char ***extra,
                  size_t *n_extra, pfi_error *err)
{
    memset(T, 0, sizeof *T);
    *extra = NULL;
    *n_extra = 0;
    T->n = 1;
    if (path) {
        int rc = pfi_topo_load(path, &T->t, err);
        if (rc != PFI_OK) return rc;
        T->n = pfi_topo_domains(T->t);
        for (size_t i = 0; pfi_topo_note(T->t, i); i++)
            pfi_log("topology: %s", pfi_topo_note(T->t, i));
        pfi_topo_member_kind k = pfi_topo_member_kind_of(T->t);
        if (k == PFI_TOPO_JOBS)
            return pfi_error_set(err, PFI_EINVAL, path, 0,
                                 "the controller's leaves list \"agents\" or \"nodes\", not "
                                 "\"jobs\" (those are pfi allocate's)");
        if (k == PFI_TOPO_AGENTS) {
            /* Every agent in a leaf; the leaves' agents are the agents. */
            for (size_t i = 0; i < n; i++)
                if (leaf_of_url(T->t, urls[i]) == PFI_TOPO_NONE)
                    return pfi_error_set(err, PFI_EINVAL, path, 0,
                                         "agent %.200s is in no leaf of the topology", urls[i]);
            for (size_t d = 0; d < T->n; d++) {
                const pfi_topo_domain *dm = pfi_topo_domain_at(T->t, d);
                for (size_t m = 0; m < dm->n_members; m++) {
                    if (has_url(urls, n, dm->members[m]) ||
                        has_url((const char *const *)*extra, *n_extra, dm->members[m]))
                        continue;
                    char **e = realloc(*extra, (*n_extra + 1) * sizeof *e);
                    if (!e) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
                    *extra = e;
                    if (!(e[*n_extra] = strdup(dm->members[m])))
                        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
                    (*n_extra)++;
                }
            }
        }
    }
    T->d = calloc(T->n, sizeof *T->d);
    T->pd = calloc(T->n, sizeof *T->pd);
    if (!T->d || !T->pd) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (size_t d = 0; d < T->n; d++) {
        ctl_dom *x = &T->d[d];
        x->other_query_w = x->target_w = x->tbudget_w = x->planned_w = NAN;
        x->prev_limit_w = NAN;
        x->limit_w = x->plan_w = INFINITY;
        if (isfinite(ctl_topo_rating(T, d))) T->has_limits = 1;
    }
    if (T->n > 1) T->has_limits = 1; /* a domain may get a target */
    T->site_w = INFINITY;
    return PFI_OK;
}

int ctl_topo_agents(ctl_topo *T, const char *const *urls, size_t n, pfi_error *err)
{
    T->n_ag = n;
    size_t k = n ? n : 1;
    T->leaf = calloc(k, sizeof *T->leaf);
    T->placed = calloc(k, sizeof *T->placed);
    T->next_ask = calloc(k, sizeof *T->next_ask);
    T->ag_fixed_w = calloc(k, sizeof *T->ag_fixed_w);
    T->ag_gpu_w = calloc(k, sizeof *T->ag_gpu_w);
    T->ag_down = calloc(k, sizeof *T->ag_down);
    T->ceil_err = calloc(k, sizeof *T->ceil_err);
    T->ceil_w = calloc(k, sizeof *T->ceil_w);
    T->ceil_at = calloc(k, sizeof *T->ceil_at);
    if (!T->leaf || !T->placed || !T->next_ask || !T->ag_fixed_w || !T->ag_gpu_w || !T->ag_down ||
        !T->ceil_err || !T->ceil_w || !T->ceil_at)
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int by_url = T->t && pfi_topo_member_kind_of(T->t) == PFI_TOPO_AGENTS;
    for (size_t a = 0; a < n; a++) {
        T->ceil_w[a] = NAN;
        T->leaf[a] = 0;
        if (!T->t) {
            T->placed[a] = 1; /* the site alone: every agent in it */
        } else if (by_url) {
            T->leaf[a] = leaf_of_url(T->t, urls[a]);
            if (T->leaf[a] == PFI_TOPO_NONE)
                return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                     "agent %.200s is in no leaf of the topology", urls[a]);
            T->placed[a] = 1;
        }
    }
    return PFI_OK;
}

void ctl_topo_free(ctl_topo *T)
{
    pfi_topo_destroy(T->t);
    free(T->d);
    free(T->pd);
    free(T->leaf);
    free(T->placed);
    free(T->next_ask);
    free(T->ag_fixed_w);
    free(T->ag_gpu_w);
    free(T->ag_down);
    free(T->ceil_err);
    free(T->ceil_w);
    free(T->ceil_at);
    free(T->jdom);
    free(T->jshare);
    free(T->joff);
    memset(T, 0, sizeof *T);
}

void ctl_topo_other(ctl_topo *T, const char *prometheus_url, double other_w, int log_now)
{
    double below_root = 0;
    for (size_t d = 0; d < T->n; d++) {
        ctl_dom *x = &T->d[d];
        const pfi_topo_domain *dm = T->t ? pfi_topo_domain_at(T->t, d) : NULL;
        x->own_other_w = dm ? dm->other_load_w : 0;
        if (dm && dm->other_load_query && prometheus_url && d > 0) {
            double v;
            pfi_error err;
            pfi_error_clear(&err);
            if (pfi_prom_query(prometheus_url, dm->other_load_query, 1.0, &v, &err) == PFI_OK &&
                isfinite(v))
                x->other_query_w = fmax(0, v);
            else if (log_now)
                pfi_log("domain %s: other_load_query: %s", dm->name, err.msg);
            /* the last good answer, else the file's constant */
            if (isfinite(x->other_query_w)) x->own_other_w = x->other_query_w;
        }
        if (d > 0) below_root += x->own_other_w;
    }
    /* the root's own: the site's non-GPU load less what its domains carry */
    T->d[0].own_other_w = fmax(0, other_w - below_root);
    for (size_t d = 0; d < T->n; d++)
        T->d[d].sub_other_w = T->d[d].own_other_w;
    for (size_t d = T->n; d-- > 1;)
        T->d[ctl_topo_parent(T, d)].sub_other_w += T->d[d].sub_other_w;
}

size_t ctl_topo_filter(const ctl_topo *T, size_t d, const pfi_target *ts, size_t n, pfi_target *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ctl_topo_domain_of(T, ts[i].domain) == d) out[k++] = ts[i];
    return k;
}

void ctl_topo_targets(ctl_topo *T, const pfi_target *ts, size_t n, double now, double dt,
                      double lead_s, double margin_w, double ramp_w_per_s)
{
    pfi_target *sub = malloc((n + 1) * sizeof *sub);
    if (!sub) return; /* no memory: last period's budgets stand */
    for (size_t d = 1; d < T->n; d++) {
        ctl_dom *x = &T->d[d];
        size_t k = ctl_topo_filter(T, d, ts, n, sub);
        pfi_target_now tn;
        pfi_target_eval_ahead(sub, k, now, lead_s, x->sub_other_w, margin_w, &tn);
        x->active = tn.active;
        double want = INFINITY;
        if (tn.active) {
            x->win = sub[tn.winner];
            /* on the domain's power: a GPU limit plus what its GPUs are not */
            x->target_w =
                x->win.kind == PFI_TARGET_SITE ? x->win.limit_w : x->win.limit_w + x->sub_other_w;
            want = fmax(0, x->target_w - margin_w);
            x->last_ramp = tn.ramp_w_per_s > 0 ? tn.ramp_w_per_s : ramp_w_per_s;
        } else {
            x->target_w = NAN;
        }
        x->tbudget_w = pfi_target_ramp(x->tbudget_w, want, dt, x->last_ramp);
        if (!isfinite(x->tbudget_w)) x->tbudget_w = NAN;
    }
    free(sub);
}

/* Job i's spans: its GPUs' leaves, each with its share of the GPUs. */
static int spans(ctl_topo *T, size_t n_jobs, const size_t *const *gpu_agent, const size_t *n_gpus)
{
    size_t total = 0;
    for (size_t i = 0; i < n_jobs; i++)
        total += n_gpus[i];
    size_t *jd = ctl_grow(T->jdom, &T->cap_j, total + 1, sizeof *jd);
    if (!jd) return -1;
    T->jdom = jd;
    double *js = realloc(T->jshare, T->cap_j * sizeof *js); /* as long as jdom */
    if (!js) return -1;
    T->jshare = js;
    size_t *jo = ctl_grow(T->joff, &T->cap_joff, n_jobs + 1, sizeof *jo);
    if (!jo) return -1;
    T->joff = jo;
    size_t k = 0;
    for (size_t i = 0; i < n_jobs; i++) {
        T->joff[i] = k;
        for (size_t g = 0; g < n_gpus[i]; g++) {
            size_t a = gpu_agent[i][g];
            size_t leaf = a < T->n_ag ? T->leaf[a] : 0;
            size_t s = T->joff[i];
            while (s < k && T->jdom[s] != leaf)
                s++;
            if (s == k) {
                T->jdom[k] = leaf;
                T->jshare[k++] = 0;
            }
            T->jshare[s] += 1;
        }
        for (size_t s = T->joff[i]; s < k; s++)
            T->jshare[s] /= (double)n_gpus[i];
    }
    T->joff[n_jobs] = k;
    return 0;
}

int ctl_topo_build(ctl_topo *T, size_t n_jobs, const size_t *const *gpu_agent, const size_t *n_gpus,
                   const double *pmax, double margin_w, int fresh, int pushed)
{
    if (spans(T, n_jobs, gpu_agent, n_gpus) != 0) return PFI_ENOMEM;
    double *sub_fixed = calloc(T->n, sizeof *sub_fixed);
    if (!sub_fixed) return PFI_ENOMEM;
    for (size_t d = 0; d < T->n; d++) {
        ctl_dom *x = &T->d[d];
        x->own_fixed_w = x->sub_gpu_w = x->sub_demand_w = 0;
        x->sub_agents = x->sub_dead = 0;
    }
    for (size_t a = 0; a < T->n_ag; a++) {
        ctl_dom *x = &T->d[T->leaf[a]];
        x->own_fixed_w += T->ag_fixed_w[a];
        x->sub_gpu_w += T->ag_gpu_w[a];
        x->sub_agents++;
        x->sub_dead += T->ag_down[a] != 0;
    }
    for (size_t i = 0; i < n_jobs; i++)
        for (size_t s = T->joff[i]; s < T->joff[i + 1]; s++)
            T->d[T->jdom[s]].sub_demand_w += pmax[i] * T->jshare[s];
    for (size_t d = 0; d < T->n; d++)
        sub_fixed[d] = T->d[d].own_fixed_w;
    for (size_t d = T->n; d-- > 1;) {
        ctl_dom *x = &T->d[d], *p = &T->d[ctl_topo_parent(T, d)];
        p->sub_gpu_w += x->sub_gpu_w;
        p->sub_demand_w += x->sub_demand_w;
        p->sub_agents += x->sub_agents;
        p->sub_dead += x->sub_dead;
        sub_fixed[ctl_topo_parent(T, d)] += sub_fixed[d];
    }
    T->binding = 0;
    for (size_t d = 0; d < T->n; d++) {
        ctl_dom *x = &T->d[d];
        x->sub_demand_w += sub_fixed[d] + x->sub_other_w;
        double rating = ctl_topo_rating(T, d);
        double lim = isfinite(rating) ? fmax(0, rating - margin_w) : INFINITY;
        /* a target's ramp ends once it covers every job uncapped */
        if (!x->active && isfinite(x->tbudget_w) && x->tbudget_w >= x->sub_demand_w)
            x->tbudget_w = NAN;
        if (isfinite(x->tbudget_w)) lim = fmin(lim, x->tbudget_w);
        x->limit_w = lim;
        x->binding = isfinite(lim) && x->sub_demand_w > lim;
        T->binding |= x->binding;
        int settled = pushed && isfinite(x->prev_limit_w) && isfinite(lim) &&
                      fabs(x->prev_limit_w - lim) <= 0.01 * lim + 1;
        ctl_trim_update(&x->trim, x->binding, settled, fresh, lim, x->sub_gpu_w + x->sub_other_w);
        x->plan_w = isfinite(lim) ? fmax(0, lim - x->trim.w) : INFINITY;
        x->prev_limit_w = lim;
        size_t par = ctl_topo_parent(T, d);
        T->pd[d] = (pfi_plan_domain){.name = ctl_topo_name(T, d),
                                     .parent = par == PFI_TOPO_NONE ? PFI_ALLOC_NO_PARENT : par,
                                     .limit_w = x->plan_w,
                                     .fixed_w = x->own_fixed_w + x->own_other_w};
    }
    free(sub_fixed);
    return PFI_OK;
}

void ctl_topo_after(ctl_topo *T, const double *planned)
{
    for (size_t d = 0; d < T->n; d++) {
        ctl_dom *x = &T->d[d];
        x->planned_w = planned ? planned[d] : NAN;
        /* over what it may draw (no margin): its rating or its target */
        double hard = fmin(ctl_topo_rating(T, d), isfinite(x->target_w) ? x->target_w : INFINITY);
        if (x->sub_gpu_w + x->sub_other_w > hard)
            x->over_periods++;
        else
            x->over_periods = 0;
    }
}

size_t ctl_topo_oadr_domain(const ctl_topo *T, const struct pfi_oadr_event *e, const char *program)
{
    if (!T->t) return 0;
    for (size_t k = 0; k < e->n_targets; k++)
        for (size_t d = 0; d < T->n; d++) {
            const char *r = pfi_topo_domain_at(T->t, d)->openadr_resource;
            if (r && strcmp(r, e->targets[k]) == 0) return d;
        }
    for (size_t d = 1; d < T->n; d++) {
        const char *pg = pfi_topo_domain_at(T->t, d)->openadr_program;
        if (pg && (strcmp(pg, e->program_id) == 0 || (program && strcmp(pg, program) == 0)))
            return d;
    }
    return 0;
}
