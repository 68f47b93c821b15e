/* The power tree in GET /v1/status ("domains", in pre-order) and /metrics
 * (pfi_control_domain_*), from the period's figures (ctl_topo.h). */
#include <math.h>
#include <stdio.h>

#include "ctl_internal.h"
#include "pfi/json.h"
#include "pfi/prom_emit.h"

/* What a domain may draw now, before the margin: its rating, or its
 * target when lower (the site's: s->site_limit_w). */
static double hard_limit(const ctl_topo *T, size_t d)
{
    const ctl_dom *x = &T->d[d];
    return fmin(ctl_topo_rating(T, d), isfinite(x->target_w) ? x->target_w : INFINITY);
}

/* What its jobs and fixed power may use: its limit less the margin, the
 * root's also under the site's target. */
static double budget_of(const ctl_topo *T, size_t d)
{
    return d == 0 ? fmin(T->d[0].limit_w, T->site_w) : T->d[d].limit_w;
}

static double measured(const ctl_dom *x)
{
    return x->sub_gpu_w + x->sub_other_w;
}

json_t *ctl_domains_json(const ctl_status *s)
{
    const ctl_topo *T = s->topo;
    json_t *a = json_array();
    for (size_t d = 0; T && d < T->n; d++) {
        const ctl_dom *x = &T->d[d];
        size_t par = ctl_topo_parent(T, d);
        json_t *o = json_object();
        pfi_json_set(o, "name", json_string(ctl_topo_name(T, d)));
        pfi_json_set(o, "parent",
                     par == PFI_TOPO_NONE ? json_null() : json_string(ctl_topo_name(T, par)));
        pfi_json_set(o, "limit_w", pfi_json_num(ctl_topo_rating(T, d)));
        pfi_json_set(o, "target", x->active ? json_string(x->win.id) : json_null());
        pfi_json_set(o, "target_w", pfi_json_num(x->target_w));
        /* what its jobs and fixed power may use: the lower of both less the margin */
        double budget = budget_of(T, d);
        pfi_json_set(o, "budget_w", pfi_json_num(budget));
        pfi_json_set(o, "trim_w", pfi_json_num(x->trim.w));
        pfi_json_set(o, "planned_w", pfi_json_num(x->planned_w));
        pfi_json_set(o, "measured_w", pfi_json_num(measured(x)));
        pfi_json_set(o, "measured_gpu_w", pfi_json_num(x->sub_gpu_w));
        pfi_json_set(o, "other_load_w", pfi_json_num(x->sub_other_w));
        pfi_json_set(o, "uncapped_w", pfi_json_num(x->sub_demand_w));
        pfi_json_set(o, "headroom_w", pfi_json_num(budget - measured(x)));
        pfi_json_set(o, "binding", json_boolean(x->binding));
        pfi_json_set(o, "over_periods", json_integer(x->over_periods));
        pfi_json_set(o, "agents", json_integer((json_int_t)x->sub_agents));
        pfi_json_set(o, "dead_agents", json_integer((json_int_t)x->sub_dead));
        json_array_append_new(a, o);
    }
    return a;
}

/* One gauge family, one sample per domain. */
static void family(FILE *f, const ctl_status *s, const char *name, const char *help,
                   double (*v)(const ctl_status *, size_t))
{
    const ctl_topo *T = s->topo;
    pfi_prom_family(f, name, PFI_PROM_GAUGE, help);
    for (size_t d = 0; d < T->n; d++) {
        const char *l[] = {"domain", ctl_topo_name(T, d), NULL};
        pfi_prom_sample(f, name, l, v(s, d));
    }
}

static double v_limit(const ctl_status *s, size_t d)
{
    return hard_limit(s->topo, d);
}
static double v_rating(const ctl_status *s, size_t d)
{
    return ctl_topo_rating(s->topo, d);
}
static double v_budget(const ctl_status *s, size_t d)
{
    return budget_of(s->topo, d);
}
static double v_planned(const ctl_status *s, size_t d)
{
    return s->topo->d[d].planned_w;
}
static double v_measured(const ctl_status *s, size_t d)
{
    return measured(&s->topo->d[d]);
}
static double v_headroom(const ctl_status *s, size_t d)
{
    return budget_of(s->topo, d) - measured(&s->topo->d[d]);
}
static double v_dead(const ctl_status *s, size_t d)
{
    return (double)s->topo->d[d].sub_dead;
}
static double v_over(const ctl_status *s, size_t d)
{
    return (double)s->topo->d[d].over_periods;
}

void ctl_domains_metrics(const ctl_status *s, FILE *f)
{
    if (!s->topo || !s->topo->n) return;
    family(f, s, "pfi_control_domain_rating_watts", "the domain's rating (its limit_w)", v_rating);
    family(f, s, "pfi_control_domain_limit_watts",
           "what the domain may draw now: its rating or its target, the lower", v_limit);
    family(f, s, "pfi_control_domain_budget_watts",
           "the domain's limit less the margin: what the plan keeps it under", v_budget);
    family(f, s, "pfi_control_domain_planned_watts", "the plan's power in the domain", v_planned);
    family(f, s, "pfi_control_domain_measured_watts",
           "the domain's power: its GPUs (dead agents at their maximum) and non-GPU load",
           v_measured);
    family(f, s, "pfi_control_domain_headroom_watts", "budget minus measured", v_headroom);
    family(f, s, "pfi_control_domain_dead_agents", "agents in the domain that did not answer",
           v_dead);
    family(f, s, "pfi_control_domain_over_limit_periods",
           "periods in a row the domain measured over its limit", v_over);
}
