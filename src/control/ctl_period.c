/* One period of the control loop (see include/control/pfi/controller.h):
 * read the cluster, evaluate the targets, plan, ramp the budget, trim,
 * push the caps, record, publish. Each step's state and work belong to its
 * concern (ctl_internal.h): jobs, caps, trim, status. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_ha.h"
#include "ctl_internal.h"
#include "pfi/prom_query.h"

/* The non-GPU load this period: the stated constant, or the site meter
 * (--site-meter, a Prometheus query) less the GPUs' measured power, the
 * highest of the last 3 such readings (the meter lags the agents: after a
 * release it would under-count for a scrape). A failed read keeps the last
 * good value, or the constant when there is none. */
static void other_load(ctl *c, double live_gpu_w)
{
    c->other_w = c->o.other_load_w;
    c->other_src = "constant";
    if (!c->o.site_meter) return;
    double m;
    pfi_error err;
    pfi_error_clear(&err);
    int ok = pfi_prom_query(c->o.prometheus_url, c->o.site_meter, 1.0, &m, &err) == PFI_OK;
    if (ok) {
        c->other_hist[c->other_n % 3] = fmax(0, m - live_gpu_w);
        c->other_n++;
    } else if (c->periods % 12 == 1) {
        pfi_log("site meter: %s", err.msg);
    }
    if (!c->other_n) {
        c->other_src = "constant (meter unavailable)";
        return;
    }
    double hi = 0;
    for (size_t i = 0; i < 3 && i < c->other_n; i++)
        hi = fmax(hi, c->other_hist[i]);
    c->other_w = hi;
    c->other_src = ok ? "meter" : "meter (last good reading)";
}

/* What one period works on, step to step. */
typedef struct period {
    double now, dt;
    double fixed, measured, live;
    size_t up;
    int fresh; /* the readings are complete and comparable to last period's */
    pfi_target_now tn;
    pfi_target win;
    pfi_plan_job *pj;
    pfi_plan_obs *po;
    pfi_plan_cap *caps;
    int plan_ok, controlling, push_ok;
    double budget, pmax_total;
    pfi_plan_result res;
} period;

/* The budget after the ramp; NaN once it covers every job uncapped (and
 * no target is in force): nothing to control. */
static double ramped_budget(ctl *c, period *p)
{
    double want = p->tn.active ? p->tn.gpu_budget_w : INFINITY;
    double ramp = p->tn.active ? (p->tn.ramp_w_per_s > 0 ? p->tn.ramp_w_per_s : c->o.ramp_w_per_s)
                               : c->last_ramp;
    if (p->tn.active) c->last_ramp = ramp;
    double budget = pfi_target_ramp(c->budget_w, want, p->dt, ramp);
    p->pmax_total = 0;
    for (size_t i = 0; i < c->jobs.n; i++) {
        const ctl_known *k = ctl_known_find(&c->jobs, c->jobs.v[i].id);
        p->pmax_total +=
            k && isfinite(k->pmax_w) ? k->pmax_w : c->jobs.v[i].n_gpus * p->pj[i].max_w;
    }
    if (!p->tn.active && !(budget < p->pmax_total + p->fixed)) budget = NAN;
    return budget;
}

/* The power tree's period (ctl_topo.h): each domain's power and limit from
 * the jobs' GPUs and the agents' figures, the jobs' spans into p->pj, and
 * the tree into the plan. 0 on no memory. */
static int tree(ctl *c, period *p)
{
    ctl_topo *T = &c->topo;
    size_t n = c->jobs.n;
    const size_t **ga = malloc((n + 1) * sizeof *ga);
    size_t *ng = malloc((n + 1) * sizeof *ng);
    double *pmax = malloc((n + 1) * sizeof *pmax);
    int ok = ga && ng && pmax;
    for (size_t i = 0; ok && i < n; i++) {
        const ctl_job *j = &c->jobs.v[i];
        const ctl_known *k = ctl_known_find(&c->jobs, j->id);
        ga[i] = j->gpu_agent;
        ng[i] = j->n_gpus;
        pmax[i] = k && isfinite(k->pmax_w) ? k->pmax_w : j->n_gpus * p->pj[i].max_w;
    }
    ok = ok &&
         ctl_topo_build(T, n, ga, ng, pmax, c->o.margin_w, p->fresh, c->prev_push_ok) == PFI_OK;
    free(ga);
    free(ng);
    free(pmax);
    if (!ok || !T->t) return ok; /* the site alone: the plan as before */
    for (size_t i = 0; i < n; i++) {
        p->pj[i].domains = &T->jdom[T->joff[i]];
        p->pj[i].shares = &T->jshare[T->joff[i]];
        p->pj[i].n_domains = T->joff[i + 1] - T->joff[i];
    }
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_plan_set_tree(c->plan, T->pd, T->n, &err) != PFI_OK) {
        pfi_log("plan: the tree: %s", err.msg);
        return 0;
    }
    return 1;
}

/* The budget, the trim and this period's plan (p->caps, p->res); 0 when
 * planning failed. The site's targets give the budget (NaN none); a domain
 * over its limit with every job uncapped (its rating, its own targets) is
 * controlled too, every period, with or without an event. */
static int plan(ctl *c, period *p)
{
    pfi_error err;
    pfi_error_clear(&err);
    pfi_plan_set_time(c->plan, p->now);
    int ok = tree(c, p);
    if (!ok) pfi_log("plan: out of memory for the power tree");
    ok = ok && pfi_plan_set_jobs(c->plan, p->pj, c->jobs.n, &err) == PFI_OK;
    if (!ok && err.msg[0]) pfi_log("plan: %s", err.msg);
    p->budget = ramped_budget(c, p);
    int site = isfinite(p->budget);
    p->controlling = site || c->topo.binding;
    int settled = c->prev_active && c->prev_push_ok &&
                  fabs(c->prev_budget_w - p->budget) <= 0.01 * p->budget + 1;
    ctl_trim_update(&c->trim, site, settled, p->fresh, p->budget, p->measured);
    if (!ok) return 0;
    if (p->controlling) {
        /* held by the tree alone: the site's budget covers every job uncapped */
        double budget = site ? p->budget : p->pmax_total + p->fixed + 1;
        if (pfi_plan_run(c->plan, c->o.policy, budget, p->fixed, site ? c->trim.w : 0, p->caps,
                         &p->res, &err) != PFI_OK) {
            pfi_log("plan: %s", err.msg);
            return 0;
        }
    } else if (c->jobs.n) {
        /* Not controlling: the curves' uncapped figures, for the status. */
        pfi_plan_run(c->plan, c->o.policy, 2 * p->pmax_total + 1, 0, 0, p->caps, &p->res, NULL);
    }
    return 1;
}

/* One cap per job on all its GPUs, or releases; pushed (opening the
 * period's transaction). */
static int caps(ctl *c, period *p)
{
    int job_caps = p->controlling && p->plan_ok;
    /* A follower plans (its state warm) but pushes nothing and learns
     * nothing: the leader's caps and points come to it through etcd. So
     * does a leader whose lease may end before its pushes land. */
    int push = !c->passive && ctl_ha_may_push(c);
    for (size_t i = 0; job_caps && i < c->jobs.n; i++) {
        ctl_job *j = &c->jobs.v[i];
        p->caps[i].cap_w = ctl_caps_next(p->caps[i].cap_w, p->caps[i].at_floor, p->pj[i].min_w,
                                         p->pj[i].max_w, &j->last_plan_w);
        if (push) ctl_job_capped(&c->jobs, c->store, j, p->caps[i].cap_w, p->now);
    }
    /* what the caps as pushed promise (the step down, a raise a period late) */
    if (job_caps) pfi_plan_eval(c->plan, p->caps, &p->res);
    if (!push) {
        pfi_ctl_store_begin(c->store, NULL); /* the period's records; committed by record() */
        return 0;
    }
    if (!p->controlling)
        for (size_t i = 0; i < c->jobs.n; i++)
            c->jobs.v[i].last_cap_w = c->jobs.v[i].last_plan_w = NAN;
    double until = p->tn.active ? fmin(p->tn.until, p->now + c->o.cap_max_s) : p->now;
    double expires_s = fmin(until + c->o.cap_margin_s - p->now, 604800);
    if (expires_s < 1) expires_s = 1;
    pfi_cap_cmd *cmds = NULL;
    size_t n = 0;
    int rc = ctl_caps_commands(&c->caps, c->agents, c->jobs.v, job_caps ? p->caps : NULL, c->jobs.n,
                               p->controlling && !p->plan_ok, expires_s, &cmds, &n);
    if (rc != PFI_OK) pfi_log("out of memory for the period's cap calls");
    int prc = ctl_caps_push(&c->caps, c->agents, c->store, cmds, n, p->now);
    free(cmds);
    /* a third round: the lease is asked again (the two above were its bound) */
    if (ctl_ha_may_push(c)) ctl_ceiling_push(c, p->plan_ok ? p->caps : NULL, p->now);
    return rc == PFI_OK && prc == PFI_OK;
}

static void record(ctl *c, period *p)
{
    int on = p->controlling, planned = on && p->plan_ok;
    for (size_t i = 0; planned && i < c->jobs.n; i++)
        pfi_ctl_store_add_alloc(c->store, p->now, c->jobs.v[i].id, p->caps[i].power_w,
                                p->caps[i].cap_w, p->caps[i].tput, p->caps[i].tmax, NULL);
    pfi_ctl_period_rec rec = {.t = p->now,
                              .target = p->tn.active ? p->win.id : NULL,
                              .site_limit_w = p->tn.active ? p->tn.site_limit_w : NAN,
                              .gpu_budget_w = on ? p->budget : NAN,
                              .fixed_w = p->fixed,
                              .trim_w = c->trim.w,
                              .measured_gpu_w = p->measured,
                              .site_w = p->measured + c->other_w,
                              .infeasible = on && p->res.infeasible,
                              .shortfall_w = on ? p->res.shortfall_w : 0,
                              .agents_up = (int)p->up,
                              .policy = pfi_plan_policy_name(c->o.policy)};
    pfi_ctl_store_add_period(c->store, &rec, NULL);
    pfi_ctl_store_put_state(c->store, "budget_w", on ? p->budget : NAN, NULL);
    pfi_ctl_store_put_state(c->store, "trim_w", c->trim.w, NULL);
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_ctl_store_commit(c->store, &err) != PFI_OK) pfi_log("%s", err.msg);
    if (on && p->res.infeasible && c->periods % 12 == 1) {
        size_t at = 0;
        for (size_t i = 0; planned && i < c->jobs.n; i++)
            at += p->caps[i].at_floor != 0;
        if (planned && at == c->jobs.n)
            pfi_log("infeasible: the floors exceed the budget by %.0f W; every job at its floor",
                    p->res.shortfall_w);
        else
            pfi_log("infeasible: %.0f W short of the budget; %zu of %zu job(s) at their floor",
                    p->res.shortfall_w, at, c->jobs.n);
    }
}

/* The server's snapshot: status, flexibility and metrics, swapped under mu. */
static void publish(ctl *c, period *p)
{
    int on = p->controlling;
    ctl_status s = {.t = p->now,
                    .active = p->tn.active,
                    .controlling = on,
                    .target = p->tn.active ? &p->win : NULL,
                    .site_limit_w = p->tn.active ? p->tn.site_limit_w : NAN,
                    .gpu_budget_w = on ? p->budget : NAN,
                    .fixed_w = p->fixed,
                    .trim_w = c->trim.w,
                    .measured_gpu_w = p->measured,
                    .other_w = c->other_w,
                    .margin_w = c->o.margin_w,
                    .other_src = c->other_src,
                    .infeasible = on && p->res.infeasible,
                    .shortfall_w = on ? p->res.shortfall_w : 0,
                    .policy = pfi_plan_policy_name(c->o.policy),
                    .agents_up = p->up,
                    .agents = c->agents,
                    .jobs = c->jobs.v,
                    .n_jobs = c->jobs.n,
                    .caps = p->plan_ok ? p->caps : NULL,
                    .tput_lo = p->res.total_tput_lo,
                    .tput_sd = p->res.total_tput_sd,
                    .confidence = p->res.confidence > 0 ? p->res.confidence : 0.9,
                    .held = &c->caps,
                    .periods = c->periods,
                    .ven = c->ven,
                    .owner = c->owner,
                    .period_s = c->period_s,
                    .topo = &c->topo,
                    .ha = c->ha};
    pfi_plan_flex flex[21];
    s.flex = flex;
    s.n_flex = p->plan_ok && c->jobs.n ? ctl_flex_steps(c->plan, c->o.policy, flex, 21) : 0;
    json_t *st = ctl_status_json(&s);
    json_t *fx = ctl_flex_json(&s);
    size_t mlen = 0;
    char *m = ctl_render_metrics(&s, &mlen);
    pthread_mutex_lock(&c->mu);
    json_decref(c->status);
    json_decref(c->flex);
    c->status = st;
    c->flex = fx;
    if (m) {
        free(c->metrics);
        c->metrics = m;
        c->metrics_len = mlen;
    }
    pthread_mutex_unlock(&c->mu);
}

void ctl_period(ctl *c)
{
    period p;
    memset(&p, 0, sizeof p);
    double t0 = pfi_clock_mono();
    p.now = pfi_clock_wall();
    p.dt = isfinite(c->last_t) ? p.now - c->last_t : c->o.period_s;
    c->last_t = p.now;
    c->periods++;

    if (c->o.cluster_from_prometheus) {
        ctl_prom_read(c, p.now, &p.fixed, &p.measured, &p.live, &p.up);
    } else {
        pfi_agents_poll(c->agents, p.now);
        ctl_jobs_merge(c, p.now, &p.fixed, &p.measured, &p.live, &p.up);
    }
    /* Readings to trim on: some agent answered (Prometheus did) and the
     * same number as last period (an agent that dies or comes back moves
     * watts between the counted maximum and the measured). */
    p.fresh = p.up > 0 && p.up == c->prev_up;
    c->prev_up = p.up;
    other_load(c, p.live);
    ctl_topo_place(c, p.now);
    ctl_topo_other(&c->topo, c->o.prometheus_url, c->other_w, c->periods % 12 == 1);
    if (!c->passive) ctl_ven_task(c, p.now, p.measured + c->other_w); /* the leader's */

    /* the site's targets, then each domain's */
    pthread_mutex_lock(&c->mu);
    double lead = c->o.period_s + c->o.cut_lead_ramp_s;
    pfi_target *site = malloc((c->n_targets + 1) * sizeof *site);
    size_t ns = site ? ctl_topo_filter(&c->topo, 0, c->targets, c->n_targets, site) : 0;
    pfi_target_eval_ahead(site, ns, p.now, lead, c->other_w, c->o.margin_w, &p.tn);
    if (p.tn.active) p.win = site[p.tn.winner];
    ctl_topo_targets(&c->topo, c->targets, c->n_targets, p.now, p.dt, lead, c->o.margin_w,
                     c->o.ramp_w_per_s);
    pthread_mutex_unlock(&c->mu);
    free(site);
    ctl_dom *root = &c->topo.d[0];
    root->active = p.tn.active;
    if (p.tn.active) root->win = p.win;
    root->target_w = !p.tn.active                    ? NAN
                     : p.win.kind == PFI_TARGET_SITE ? p.win.limit_w
                                                     : p.win.limit_w + root->sub_other_w;

    if (c->o.policy == PFI_PLAN_LEARN) ctl_priors_fetch(&c->jobs, c->agents);
    p.caps = calloc(c->jobs.n + 1, sizeof *p.caps);
    if (!p.caps ||
        ctl_jobs_plan_inputs(&c->jobs, &c->o, c->store, c->prev_active && c->prev_push_ok, p.now,
                             &p.pj, &p.po) != PFI_OK) {
        free(p.caps);
        pfi_log("out of memory in a period");
        return;
    }
    p.plan_ok = plan(c, &p);
    double *dp = p.plan_ok && p.controlling ? malloc(c->topo.n * sizeof *dp) : NULL;
    for (size_t d = 0; dp && d < c->topo.n; d++)
        dp[d] = c->topo.t ? pfi_plan_domain_power(c->plan, d)
                          : p.res.total_power_w + p.fixed + c->topo.d[0].sub_other_w;
    c->topo.site_w = isfinite(p.budget) ? p.budget + c->topo.d[0].sub_other_w : INFINITY;
    ctl_topo_after(&c->topo, dp);
    free(dp);
    p.push_ok = caps(c, &p);
    record(c, &p);

    c->prev_active = p.controlling;
    c->prev_push_ok = p.push_ok;
    c->prev_budget_w = p.budget;
    c->budget_w = p.budget;
    c->period_s = pfi_clock_mono() - t0; /* read, plan, push, record: what must fit a period */
    publish(c, &p);
    free(p.pj);
    free(p.caps);
    free(p.po);
}
