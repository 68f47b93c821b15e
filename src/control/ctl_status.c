/* GET /v1/status and GET /v1/flexibility (ctl_internal.h), from the
 * period's figures (ctl_status), the same ones /metrics is rendered from. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_ha.h"
#include "ctl_internal.h"
#include "pfi/json.h"
#include "pfi/target_io.h"

void ctl_status_job(const ctl_status *s, size_t i, double *cap_w, double *planned_w, double *loss,
                    double *kept, double *uncapped)
{
    const pfi_plan_cap *c = s->caps ? &s->caps[i] : NULL;
    *cap_w = s->controlling && c ? c->cap_w : NAN;
    *planned_w = s->controlling && c ? c->power_w : NAN;
    *loss = c && c->tmax > 0 && s->controlling ? 1 - c->tput / c->tmax : 0;
    *kept = c ? (s->controlling ? c->tput : c->tmax) : 0;
    *uncapped = c ? c->tmax : 0;
}

static json_t *agents_json(const ctl_status *s)
{
    json_t *ag = json_array();
    for (size_t a = 0; a < pfi_agents_count(s->agents); a++) {
        pfi_agent_info *g = pfi_agents_get(s->agents, a);
        json_t *x = json_object();
        pfi_json_set(x, "url", json_string(g->url));
        pfi_json_set(x, "up", json_boolean(g->up));
        pfi_json_set(x, "cannot_cap", json_boolean(g->cannot_cap));
        pfi_json_set(x, "gpus", json_integer((json_int_t)g->n_gpus));
        pfi_json_set(x, "error", g->error[0] ? json_string(g->error) : json_null());
        /* its leaf of the power tree; null while its node name is unknown */
        const ctl_topo *T = s->topo;
        int placed = T && a < T->n_ag && T->placed[a];
        pfi_json_set(x, "domain", placed ? json_string(ctl_topo_name(T, T->leaf[a])) : json_null());
        json_array_append_new(ag, x);
    }
    return ag;
}

/* The jobs, and the throughput kept and uncapped over them. */
static json_t *jobs_json(const ctl_status *s, double *kept_sum, double *unc_sum)
{
    json_t *js = json_array();
    *kept_sum = *unc_sum = 0;
    for (size_t i = 0; i < s->n_jobs; i++) {
        const ctl_job *j = &s->jobs[i];
        double cap, planned, loss, kept, unc;
        ctl_status_job(s, i, &cap, &planned, &loss, &kept, &unc);
        json_t *x = json_object();
        pfi_json_set(x, "id", json_string(j->id));
        pfi_json_set(x, "gpus", json_integer((json_int_t)j->n_gpus));
        pfi_json_set(x, "power_w", pfi_json_num(j->power_w));
        pfi_json_set(x, "tokens_per_s", pfi_json_num(j->tps));
        /* its spread (ctl_spread.h); null where unknown, not learn's 0 */
        pfi_json_set(x, "tokens_sd",
                     pfi_json_num(j->tps > 0 && j->tps_var >= 0 ? sqrt(j->tps_var) : NAN));
        pfi_json_set(x, "cap_w", pfi_json_num(cap));
        pfi_json_set(x, "planned_w", pfi_json_num(planned));
        pfi_json_set(x, "class", j->job_class[0] ? json_string(j->job_class) : json_null());
        pfi_json_set(x, "class_used", json_boolean(s->caps && s->caps[i].class_used));
        pfi_json_set(x, "pfi_estimate",
                     pfi_json_num(j->pfi_n ? j->pfi_sum / (double)j->pfi_n : NAN));
        pfi_json_set(x, "pfi_sd", pfi_json_num(j->pfi_sd));
        pfi_json_set(x, "expected_tput", pfi_json_num(s->caps ? s->caps[i].tput : NAN));
        /* its band at the status's confidence: expected - z SD */
        pfi_json_set(x, "expected_tput_lo", pfi_json_num(s->caps ? s->caps[i].tput_lo : NAN));
        pfi_json_set(x, "expected_tput_sd", pfi_json_num(s->caps ? s->caps[i].tput_sd : NAN));
        pfi_json_set(x, "uncapped_tput", pfi_json_num(s->caps ? s->caps[i].tmax : NAN));
        pfi_json_set(x, "loss", pfi_json_num(loss));
        pfi_json_set(x, "at_floor", json_boolean(s->controlling && s->caps && s->caps[i].at_floor));
        *kept_sum += kept;
        *unc_sum += unc;
        json_array_append_new(js, x);
    }
    return js;
}

/* The GPUs other controllers hold: [{agent, gpu, owner, epoch}]. */
static json_t *conflicts_json(const ctl_status *s)
{
    json_t *a = json_array();
    for (size_t k = 0; k < s->held->n_conf; k++) {
        const ctl_conflict *f = &s->held->conf[k];
        const pfi_agent_info *g = pfi_agents_get(s->agents, f->agent);
        json_t *x = json_object();
        pfi_json_set(x, "agent", json_string(g ? g->url : ""));
        pfi_json_set(x, "gpu", json_integer(f->gpu));
        pfi_json_set(x, "owner", json_string(f->owner));
        pfi_json_set(x, "epoch", json_integer((json_int_t)f->epoch));
        pfi_json_set(x, "job", f->job[0] ? json_string(f->job) : json_null());
        json_array_append_new(a, x);
    }
    return a;
}

static json_t *counters_json(const ctl_status *s)
{
    json_t *cnt = json_object();
    pfi_json_set(cnt, "periods", json_integer((json_int_t)s->periods));
    pfi_json_set(cnt, "cap_calls", json_integer((json_int_t)s->held->pushes));
    pfi_json_set(cnt, "cap_errors", json_integer((json_int_t)s->held->errors));
    pfi_json_set(cnt, "releases", json_integer((json_int_t)s->held->releases));
    pfi_json_set(cnt, "caps_held", json_integer((json_int_t)s->held->n));
    pfi_json_set(cnt, "cap_refusals", json_integer((json_int_t)s->held->refused));
    if (s->ven) {
        pfi_ven_stats vs;
        pfi_ven_get_stats(s->ven, &vs);
        pfi_json_set(cnt, "vtn_polls", json_integer((json_int_t)vs.polls));
        pfi_json_set(cnt, "vtn_poll_errors", json_integer((json_int_t)vs.poll_errors));
        pfi_json_set(cnt, "vtn_reports", json_integer((json_int_t)vs.reports));
        pfi_json_set(cnt, "vtn_report_errors", json_integer((json_int_t)vs.report_errors));
    }
    return cnt;
}

json_t *ctl_status_json(const ctl_status *s)
{
    json_t *o = json_object();
    pfi_json_set(o, "t", pfi_json_num(s->t));
    pfi_json_set(o, "active", json_boolean(s->active));
    pfi_json_set(o, "controlling", json_boolean(s->controlling));
    pfi_json_set(o, "target", s->target ? pfi_target_to_json(s->target) : json_null());
    pfi_json_set(o, "site_limit_w", pfi_json_num(s->site_limit_w));
    pfi_json_set(o, "gpu_budget_w", pfi_json_num(s->gpu_budget_w));
    pfi_json_set(o, "fixed_w", pfi_json_num(s->fixed_w));
    pfi_json_set(o, "trim_w", pfi_json_num(s->trim_w));
    pfi_json_set(o, "measured_gpu_w", pfi_json_num(s->measured_gpu_w));
    pfi_json_set(o, "other_load_w", pfi_json_num(s->other_w));
    pfi_json_set(o, "other_load_source", json_string(s->other_src));
    pfi_json_set(o, "site_w", pfi_json_num(s->measured_gpu_w + s->other_w));
    pfi_json_set(o, "headroom_w",
                 pfi_json_num(s->controlling ? s->gpu_budget_w - s->measured_gpu_w : NAN));
    pfi_json_set(o, "infeasible", json_boolean(s->infeasible));
    pfi_json_set(o, "shortfall_w", pfi_json_num(s->shortfall_w));
    pfi_json_set(o, "policy", json_string(s->policy));
    pfi_json_set(o, "agents_up", json_integer((json_int_t)s->agents_up));
    pfi_json_set(o, "agents", agents_json(s));
    pfi_json_set(o, "domains", ctl_domains_json(s));
    double kept, unc;
    json_t *js = jobs_json(s, &kept, &unc);
    pfi_json_set(o, "expected_tput", pfi_json_num(kept));
    pfi_json_set(o, "uncapped_tput", pfi_json_num(unc));
    pfi_json_set(o, "kept_ratio", pfi_json_num(unc > 0 ? kept / unc : NAN));
    /* the promise's band: controlling, the plan's bound; not, every job uncapped (exact) */
    double lo = s->controlling && s->caps ? s->tput_lo : kept;
    pfi_json_set(o, "confidence", pfi_json_num(s->confidence));
    pfi_json_set(o, "expected_tput_lo", pfi_json_num(s->n_jobs ? lo : NAN));
    pfi_json_set(o, "expected_tput_sd",
                 pfi_json_num(s->n_jobs ? (s->controlling && s->caps ? s->tput_sd : 0) : NAN));
    pfi_json_set(o, "kept_ratio_lo", pfi_json_num(unc > 0 ? lo / unc : NAN));
    pfi_json_set(o, "jobs", js);
    pfi_json_set(o, "owner", json_string(s->owner));
    pfi_json_set(o, "ha", ctl_ha_json(s->ha));
    pfi_json_set(o, "conflicts", conflicts_json(s));
    pfi_json_set(o, "period_s", pfi_json_num(s->period_s));
    pfi_json_set(o, "counters", counters_json(s));
    return o;
}

size_t ctl_flex_steps(pfi_plan *plan, pfi_plan_policy policy, pfi_plan_flex *flex, size_t n)
{
    /* learn's supply curve is pfi's on the same curves (the loop is not touched) */
    return pfi_plan_flexibility(plan, policy == PFI_PLAN_LEARN ? PFI_PLAN_PFI : policy, n, flex,
                                NULL) == PFI_OK
               ? n
               : 0;
}

json_t *ctl_flex_json(const ctl_status *s)
{
    json_t *o = json_object();
    pfi_json_set(o, "t", pfi_json_num(s->t));
    pfi_json_set(o, "policy", json_string(s->policy));
    pfi_json_set(o, "other_load_w", pfi_json_num(s->other_w));
    pfi_json_set(o, "margin_w", pfi_json_num(s->margin_w));
    pfi_json_set(o, "fixed_w", pfi_json_num(s->fixed_w));
    /* every step's lower bound is at this confidence: throughput - z SD */
    pfi_json_set(o, "confidence", pfi_json_num(s->confidence));
    json_t *steps = json_array();
    for (size_t k = 0; s->caps && k < s->n_flex; k++) {
        const pfi_plan_flex *f = &s->flex[k];
        json_t *x = json_object();
        double gpu = f->gpu_power_w + s->fixed_w;
        pfi_json_set(x, "site_power_w", pfi_json_num(gpu + s->other_w + s->margin_w));
        pfi_json_set(x, "gpu_power_w", pfi_json_num(gpu));
        pfi_json_set(x, "throughput", pfi_json_num(f->tput));
        pfi_json_set(x, "throughput_lo", pfi_json_num(f->tput_lo));
        pfi_json_set(x, "throughput_sd", pfi_json_num(f->tput_sd));
        pfi_json_set(x, "kept", pfi_json_num(f->kept));
        pfi_json_set(x, "kept_lo", pfi_json_num(f->kept_lo));
        json_array_append_new(steps, x);
    }
    pfi_json_set(o, "steps", steps);
    return o;
}
