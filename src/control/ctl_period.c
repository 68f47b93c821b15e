/* One period of the control loop (see include/control/pfi/controller.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_internal.h"
#include "ctl_spread.h"
#include "pfi/curve.h"
#include "pfi/json.h"
#include "pfi/prom_query.h"
#include "pfi/target_io.h"

#define CAP_STEP_W 5.0 /* caps in multiples of 5 W: less churn, learned points that repeat */
#define OBS_WEIGHT 0.3 /* a learned point's exponential mean: a new reading's weight */

uint64_t ctl_held_key(size_t agent, unsigned gpu)
{
    return ctl_hash_2(agent, gpu);
}

uint64_t ctl_obs_key(const char *job, double cap_w)
{
    uint64_t bits;
    memcpy(&bits, &cap_w, sizeof bits);
    return ctl_hash_2(ctl_hash_str(job), bits);
}

typedef struct key_ctx {
    const ctl *c;
    const char *id;
    double cap;
    size_t agent;
    unsigned gpu;
} key_ctx;

static int job_eq(size_t pos, const void *x)
{
    const key_ctx *k = x;
    return strcmp(k->c->jobs[pos].id, k->id) == 0;
}

static ctl_job *job_find(ctl *c, const char *id)
{
    key_ctx k = {.c = c, .id = id};
    size_t pos = ctl_index_get(&c->job_ix, ctl_hash_str(id), job_eq, &k);
    return pos == SIZE_MAX ? NULL : &c->jobs[pos];
}

static void jobs_clear(ctl *c)
{
    ctl_index_clear(&c->job_ix);
    for (size_t i = 0; i < c->n_jobs; i++) {
        free(c->jobs[i].gpu_agent);
        free(c->jobs[i].gpu_idx);
    }
    c->n_jobs = 0;
}

/* The power a GPU is counted at when it cannot be moved: its maximum limit
 * (what it may draw), else its measured power, else PFI_GPU_DEFAULT_W. */
static double counted_max(const pfi_cl_gpu *g)
{
    if (isfinite(g->max_w)) return g->max_w;
    if (isfinite(g->power_w)) return g->power_w;
    return PFI_GPU_DEFAULT_W;
}

typedef struct old_job {
    char id[PFI_CL_ID_MAX + 1];
    double cap, plan;
    int periods;
} old_job;

struct ctl_carry {
    old_job *old;
    size_t n;
    ctl_index ix;
};

typedef struct old_ctx {
    const old_job *old;
    const char *id;
} old_ctx;

static int old_eq(size_t pos, const void *x)
{
    const old_ctx *k = x;
    return strcmp(k->old[pos].id, k->id) == 0;
}

ctl_carry *ctl_jobs_begin(ctl *c)
{
    /* carry last period's caps per job id */
    ctl_carry *k = calloc(1, sizeof *k);
    if (k) k->old = calloc(c->n_jobs + 1, sizeof *k->old);
    for (size_t i = 0; k && k->old && i < c->n_jobs; i++) {
        snprintf(k->old[i].id, sizeof k->old[i].id, "%s", c->jobs[i].id);
        k->old[i].cap = c->jobs[i].last_cap_w;
        k->old[i].plan = c->jobs[i].last_plan_w;
        k->old[i].periods = c->jobs[i].cap_periods;
        ctl_index_put(&k->ix, ctl_hash_str(k->old[i].id), i);
        k->n++;
    }
    jobs_clear(c);
    return k;
}

void ctl_jobs_end(ctl_carry *k)
{
    if (!k) return;
    free(k->old);
    ctl_index_free(&k->ix);
    free(k);
}

ctl_job *ctl_job_get(ctl *c, ctl_carry *carry, const char *id)
{
    ctl_job *m = job_find(c, id);
    if (m) return m;
    ctl_job *arr = ctl_grow(c->jobs, &c->cap_jobs, c->n_jobs + 1, sizeof *c->jobs);
    if (!arr) return NULL;
    c->jobs = arr;
    m = &c->jobs[c->n_jobs++];
    memset(m, 0, sizeof *m);
    snprintf(m->id, sizeof m->id, "%s", id);
    m->min_w = 0;
    m->max_w = INFINITY;
    m->last_cap_w = m->last_plan_w = NAN;
    m->training = 1;
    m->tps = 0;
    m->tps_var = 0;
    m->sla = NAN;
    ctl_index_put(&c->job_ix, ctl_hash_str(m->id), c->n_jobs - 1);
    old_ctx oc = {carry ? carry->old : NULL, m->id};
    size_t o = carry && carry->old ? ctl_index_get(&carry->ix, ctl_hash_str(m->id), old_eq, &oc)
                                   : SIZE_MAX;
    if (o != SIZE_MAX) {
        m->last_cap_w = carry->old[o].cap;
        m->last_plan_w = carry->old[o].plan;
        m->cap_periods = carry->old[o].periods;
    }
    return m;
}

void ctl_agent_count(ctl *c, pfi_agent_info *g, double now, double *fixed_w, double *measured_w)
{
    if (!g->ever_up) {
        size_t ng = 0;
        double mw = 0;
        if (pfi_ctl_store_get_agent(c->store, g->url, &ng, &mw, NULL) == PFI_OK) {
            *fixed_w += mw;
            *measured_w += mw;
        } else if (c->periods % 12 == 1) {
            /* Nothing known of its size: it cannot be counted. Said, not hidden. */
            pfi_log("agent %s has never answered and its size is unknown: counted at 0 W", g->url);
        }
        return;
    }
    if (!g->up || g->cannot_cap) {
        *fixed_w += g->max_sum_w;
        *measured_w += g->max_sum_w;
    }
    if (g->up && c->periods % 12 == 1)
        pfi_ctl_store_put_agent(c->store, g->url, g->n_gpus, g->max_sum_w, now, NULL);
}

void ctl_merge_node(ctl *c, ctl_carry *carry, size_t a, const pfi_cl_node *nd, double *fixed_w,
                    double *measured_w, double *live_w)
{
    for (size_t k = 0; k < nd->n_gpus; k++)
        if (isfinite(nd->gpus[k].power_w)) *live_w += nd->gpus[k].power_w;
    char *in_job = calloc(nd->n_gpus + 1, 1);
    for (size_t j = 0; j < nd->n_jobs; j++) {
        const pfi_cl_job *cj = &nd->jobs[j];
        if (cj->exempt) {
            /* Never capped: its GPUs count at their measured power (the
             * feedback sees a rise), or their maximum when unread. */
            for (size_t k = 0; k < cj->n_gpus; k++) {
                const pfi_cl_gpu *gp = pfi_cl_node_gpu(nd, cj->gpus[k]);
                if (!gp || in_job[gp - nd->gpus]) continue;
                in_job[gp - nd->gpus] = 1;
                double pw = isfinite(gp->power_w) ? gp->power_w : counted_max(gp);
                *fixed_w += pw;
                *measured_w += pw;
            }
            continue;
        }
        ctl_job *m = ctl_job_get(c, carry, cj->id);
        if (!m) continue;
        if (cj->sla_floor > 0 && !(m->sla >= cj->sla_floor)) m->sla = cj->sla_floor;
        size_t add = cj->n_gpus;
        size_t *ga = realloc(m->gpu_agent, (m->n_gpus + add) * sizeof *ga);
        if (ga) m->gpu_agent = ga;
        unsigned *gi = realloc(m->gpu_idx, (m->n_gpus + add) * sizeof *gi);
        if (gi) m->gpu_idx = gi;
        if (!ga || !gi) continue;
        for (size_t k = 0; k < add; k++) {
            const pfi_cl_gpu *gp = pfi_cl_node_gpu(nd, cj->gpus[k]);
            if (!gp) continue;
            in_job[gp - nd->gpus] = 1;
            m->gpu_agent[m->n_gpus] = a;
            m->gpu_idx[m->n_gpus] = gp->index;
            m->n_gpus++;
            double pw = isfinite(gp->power_w) ? gp->power_w : counted_max(gp);
            m->power_w += pw;
            *measured_w += pw;
            if (isfinite(gp->min_w) && gp->min_w > m->min_w) m->min_w = gp->min_w;
            if (isfinite(gp->max_w) && gp->max_w < m->max_w) m->max_w = gp->max_w;
            m->capped |= gp->capped;
        }
        if (isfinite(cj->tokens_per_s)) {
            /* summed over nodes: so are the variances of their reports */
            m->tps += cj->tokens_per_s;
            m->tps_var = ctl_spread_add(m->tps_var, cj->tokens_sd);
        }
        if (isfinite(cj->pfi_estimate)) {
            m->pfi_sum += cj->pfi_estimate;
            m->pfi_n++;
        }
        if (strcmp(cj->phase, "training") != 0) m->training = 0; /* nothing to learn from yet */
    }
    for (size_t k = 0; k < nd->n_gpus; k++)
        if (!in_job[k]) {
            /* An idle GPU draws what it draws; a job that starts on it is
             * seen next period. */
            double pw =
                isfinite(nd->gpus[k].power_w) ? nd->gpus[k].power_w : counted_max(&nd->gpus[k]);
            *fixed_w += pw;
            *measured_w += pw;
        }
    free(in_job);
}

/* Merges every up, cappable agent's jobs by id; everything else is fixed. */
static void merge(ctl *c, double now, double *fixed_w, double *measured_w, double *live_w,
                  size_t *up)
{
    ctl_carry *carry = ctl_jobs_begin(c);
    *fixed_w = *measured_w = *live_w = 0;
    *up = 0;
    for (size_t a = 0; a < pfi_agents_count(c->agents); a++) {
        pfi_agent_info *g = pfi_agents_get(c->agents, a);
        const pfi_cl_node *nd = &g->node;
        if (g->up) {
            (*up)++;
            g->n_gpus = nd->n_gpus;
            g->max_sum_w = 0;
            for (size_t k = 0; k < nd->n_gpus; k++)
                g->max_sum_w += counted_max(&nd->gpus[k]);
        }
        ctl_agent_count(c, g, now, fixed_w, measured_w);
        if (g->up && !g->cannot_cap) ctl_merge_node(c, carry, a, nd, fixed_w, measured_w, live_w);
    }
    ctl_jobs_end(carry);
}

pfi_plan_obs ctl_job_reading(const ctl *c, const ctl_job *j)
{
    /* What the cap pushed last period gave. Its tokens/s are each node's
     * last report, summed (not the learned points' exponential mean,
     * obs_put: those enter only when a job joins the loop), so its variance
     * is the sum of one report's variance per node, pfid's tokens_sd squared
     * (ctl_spread.h); unknown on any node: 0, exact. */
    if (c->prev_active && c->prev_push_ok && isfinite(j->last_cap_w) && j->training && j->tps > 0 &&
        j->power_w > 0)
        return (pfi_plan_obs){j->last_cap_w, j->power_w, j->tps, ctl_spread_sd(j->tps_var)};
    return (pfi_plan_obs){0};
}

static int known_eq(size_t pos, const void *x)
{
    const key_ctx *k = x;
    return strcmp(k->c->known[pos].job, k->id) == 0;
}

static const ctl_known *known_find(ctl *c, const char *id)
{
    key_ctx k = {.c = c, .id = id};
    size_t pos = ctl_index_get(&c->known_ix, ctl_hash_str(id), known_eq, &k);
    return pos == SIZE_MAX ? NULL : &c->known[pos];
}

static void known_put(ctl *c, const char *id, double pmax, double tmax, double now)
{
    ctl_known *k = (ctl_known *)known_find(c, id);
    if (!k) {
        ctl_known *arr = ctl_grow(c->known, &c->cap_known, c->n_known + 1, sizeof *arr);
        if (!arr) return;
        c->known = arr;
        k = &c->known[c->n_known++];
        snprintf(k->job, sizeof k->job, "%s", id);
        ctl_index_put(&c->known_ix, ctl_hash_str(id), c->n_known - 1);
        k->pmax_w = k->tmax = NAN;
    }
    int changed = 0;
    if (isfinite(pmax) && !(k->pmax_w >= pmax)) k->pmax_w = pmax, changed = 1;
    if (isfinite(tmax) && tmax > 0 && !(k->tmax >= tmax)) k->tmax = tmax, changed = 1;
    if (changed) pfi_ctl_store_put_job(c->store, id, k->pmax_w, k->tmax, now, NULL);
}

static int obs_eq(size_t pos, const void *x)
{
    const key_ctx *k = x;
    return k->c->obs[pos].o.cap_w == k->cap && strcmp(k->c->obs[pos].job, k->id) == 0;
}

/* var: t's variance (NaN unknown). The point's tokens/s is an exponential
 * mean (weight 0.3) of one reading a period, its variance kept alongside
 * (ctl_spread_ewma: about 0.18 of one reading's once many have been
 * taken), the readings taken as independent (a fresh report each period,
 * README "What it assumes"). */
static void obs_put(ctl *c, const char *id, double cap, double p, double t, double var, double now)
{
    key_ctx k = {.c = c, .id = id, .cap = cap};
    size_t pos = ctl_index_get(&c->obs_ix, ctl_obs_key(id, cap), obs_eq, &k);
    ctl_obs *o = pos == SIZE_MAX ? NULL : &c->obs[pos];
    if (!o) {
        ctl_obs *arr = ctl_grow(c->obs, &c->cap_obs, c->n_obs + 1, sizeof *arr);
        if (!arr) return;
        c->obs = arr;
        o = &c->obs[c->n_obs++];
        snprintf(o->job, sizeof o->job, "%s", id);
        ctl_index_put(&c->obs_ix, ctl_obs_key(id, cap), c->n_obs - 1);
        o->o = (pfi_plan_obs){cap, p, t, 0};
        o->var = var;
    } else {
        /* an exponential mean: the curve follows a job whose phase changes */
        o->o.power_w += OBS_WEIGHT * (p - o->o.power_w);
        o->o.tput += OBS_WEIGHT * (t - o->o.tput);
        o->var = ctl_spread_ewma(o->var, var, OBS_WEIGHT);
    }
    o->o.tput_sd = ctl_spread_sd(o->var);
    pfi_ctl_store_put_obs(c->store, id, cap, p, t, var, now, NULL);
}

static int held_eq(size_t pos, const void *x)
{
    const key_ctx *k = x;
    return k->c->held[pos].agent == k->agent && k->c->held[pos].gpu == k->gpu;
}

static ctl_held *held_find(ctl *c, size_t agent, unsigned gpu)
{
    key_ctx k = {.c = c, .agent = agent, .gpu = gpu};
    size_t pos = ctl_index_get(&c->held_ix, ctl_held_key(agent, gpu), held_eq, &k);
    return pos == SIZE_MAX ? NULL : &c->held[pos];
}

/* Drops the caps released this period and re-indexes the rest. */
static void held_compact(ctl *c)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n_held; i++)
        if (!c->held[i].gone) c->held[k++] = c->held[i];
    c->n_held = k;
    ctl_index_clear(&c->held_ix);
    for (size_t i = 0; i < c->n_held; i++)
        ctl_index_put(&c->held_ix, ctl_held_key(c->held[i].agent, c->held[i].gpu), i);
}

/* Sends cmds and folds the answers into what is held and the store. */
static int push(ctl *c, pfi_cap_cmd *cmds, size_t n, double now)
{
    if (n == 0) {
        pfi_ctl_store_begin(c->store, NULL);
        return 1;
    }
    /* Down before up: the caps that lower a GPU (or hold it) go first and
     * are answered before any is raised or released, so that moving watts
     * from one job to another never has the site over for a moment (an
     * agent samples as soon as a cap changes). */
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        const ctl_held *h = held_find(c, cmds[i].agent, cmds[i].gpu);
        if (cmds[i].watts > 0 && (!h || cmds[i].watts <= h->watts)) {
            pfi_cap_cmd t = cmds[nd];
            cmds[nd++] = cmds[i];
            cmds[i] = t;
        }
    }
    size_t ok = pfi_agents_push(c->agents, cmds, nd);
    ok += pfi_agents_push(c->agents, cmds + nd, n - nd);
    c->pushes += n;
    pfi_ctl_store_begin(c->store, NULL); /* the period's records; committed by the caller */
    int logged = 0;
    for (size_t i = 0; i < n; i++) {
        pfi_cap_cmd *m = &cmds[i];
        const char *url = pfi_agents_get(c->agents, m->agent)->url;
        pfi_ctl_store_add_push(c->store, now, url, m->gpu, m->watts, m->status, NULL);
        ctl_held *h = held_find(c, m->agent, m->gpu);
        if (m->status == 200 && m->watts > 0) {
            if (!h) {
                ctl_held *arr = ctl_grow(c->held, &c->cap_held, c->n_held + 1, sizeof *arr);
                if (!arr) continue;
                c->held = arr;
                h = &c->held[c->n_held++];
                h->agent = m->agent;
                h->gpu = m->gpu;
                h->gone = 0;
                ctl_index_put(&c->held_ix, ctl_held_key(m->agent, m->gpu), c->n_held - 1);
            }
            h->watts = m->watts;
            h->expires_at = now + m->expires_s;
            pfi_ctl_store_put_cap(c->store, url, m->gpu, m->watts, h->expires_at, now, NULL);
        } else if (m->watts <= 0 && (m->status == 200 || m->status == 404)) {
            if (h) h->gone = 1;
            pfi_ctl_store_put_cap(c->store, url, m->gpu, 0, 0, now, NULL);
            c->releases++;
        } else {
            c->push_errors++;
            if (logged++ < 3) pfi_log("cap call failed: %s", m->error[0] ? m->error : "no answer");
        }
    }
    held_compact(c);
    return ok == n;
}

static json_t *status_json(ctl *c, double now, const pfi_target_now *tn, const pfi_target *win,
                           double budget, double fixed, double measured, size_t up,
                           const pfi_plan_cap *caps, const pfi_plan_result *res, int controlling)
{
    json_t *o = json_object();
    pfi_json_set(o, "t", pfi_json_num(now));
    pfi_json_set(o, "active", json_boolean(tn->active));
    pfi_json_set(o, "controlling", json_boolean(controlling));
    pfi_json_set(o, "target", tn->active ? pfi_target_to_json(win) : json_null());
    pfi_json_set(o, "site_limit_w", pfi_json_num(tn->active ? tn->site_limit_w : NAN));
    pfi_json_set(o, "gpu_budget_w", pfi_json_num(controlling ? budget : NAN));
    pfi_json_set(o, "fixed_w", pfi_json_num(fixed));
    pfi_json_set(o, "trim_w", pfi_json_num(c->trim_w));
    pfi_json_set(o, "measured_gpu_w", pfi_json_num(measured));
    pfi_json_set(o, "other_load_w", pfi_json_num(c->other_w));
    pfi_json_set(o, "other_load_source", json_string(c->other_src));
    pfi_json_set(o, "site_w", pfi_json_num(measured + c->other_w));
    pfi_json_set(o, "headroom_w", pfi_json_num(controlling ? budget - measured : NAN));
    pfi_json_set(o, "infeasible", json_boolean(controlling && res->infeasible));
    pfi_json_set(o, "shortfall_w", pfi_json_num(controlling ? res->shortfall_w : 0));
    pfi_json_set(o, "policy", json_string(pfi_plan_policy_name(c->o.policy)));
    json_t *ag = json_array();
    for (size_t a = 0; a < pfi_agents_count(c->agents); a++) {
        pfi_agent_info *g = pfi_agents_get(c->agents, a);
        json_t *x = json_object();
        pfi_json_set(x, "url", json_string(g->url));
        pfi_json_set(x, "up", json_boolean(g->up));
        pfi_json_set(x, "cannot_cap", json_boolean(g->cannot_cap));
        pfi_json_set(x, "gpus", json_integer((json_int_t)g->n_gpus));
        pfi_json_set(x, "error", g->error[0] ? json_string(g->error) : json_null());
        json_array_append_new(ag, x);
    }
    pfi_json_set(o, "agents_up", json_integer((json_int_t)up));
    pfi_json_set(o, "agents", ag);
    double kept = 0, unc = 0;
    json_t *js = json_array();
    for (size_t i = 0; i < c->n_jobs; i++) {
        const ctl_job *j = &c->jobs[i];
        json_t *x = json_object();
        pfi_json_set(x, "id", json_string(j->id));
        pfi_json_set(x, "gpus", json_integer((json_int_t)j->n_gpus));
        pfi_json_set(x, "power_w", pfi_json_num(j->power_w));
        pfi_json_set(x, "tokens_per_s", pfi_json_num(j->tps));
        /* its spread (ctl_spread.h); null where unknown, not learn's 0 */
        pfi_json_set(x, "tokens_sd",
                     pfi_json_num(j->tps > 0 && j->tps_var >= 0 ? sqrt(j->tps_var) : NAN));
        pfi_json_set(x, "cap_w", pfi_json_num(controlling && caps ? caps[i].cap_w : NAN));
        pfi_json_set(x, "planned_w", pfi_json_num(controlling && caps ? caps[i].power_w : NAN));
        pfi_json_set(x, "expected_tput", pfi_json_num(caps ? caps[i].tput : NAN));
        pfi_json_set(x, "uncapped_tput", pfi_json_num(caps ? caps[i].tmax : NAN));
        double loss = caps && caps[i].tmax > 0 && controlling ? 1 - caps[i].tput / caps[i].tmax : 0;
        pfi_json_set(x, "loss", pfi_json_num(loss));
        pfi_json_set(x, "at_floor", json_boolean(controlling && caps && caps[i].at_floor));
        if (caps) {
            kept += controlling ? caps[i].tput : caps[i].tmax;
            unc += caps[i].tmax;
        }
        json_array_append_new(js, x);
    }
    pfi_json_set(o, "expected_tput", pfi_json_num(kept));
    pfi_json_set(o, "uncapped_tput", pfi_json_num(unc));
    pfi_json_set(o, "kept_ratio", pfi_json_num(unc > 0 ? kept / unc : NAN));
    pfi_json_set(o, "jobs", js);
    json_t *cnt = json_object();
    pfi_json_set(cnt, "periods", json_integer((json_int_t)c->periods));
    pfi_json_set(cnt, "cap_calls", json_integer((json_int_t)c->pushes));
    pfi_json_set(cnt, "cap_errors", json_integer((json_int_t)c->push_errors));
    pfi_json_set(cnt, "releases", json_integer((json_int_t)c->releases));
    pfi_json_set(cnt, "caps_held", json_integer((json_int_t)c->n_held));
    if (c->ven) {
        pfi_ven_stats vs;
        pfi_ven_get_stats(c->ven, &vs);
        pfi_json_set(cnt, "vtn_polls", json_integer((json_int_t)vs.polls));
        pfi_json_set(cnt, "vtn_poll_errors", json_integer((json_int_t)vs.poll_errors));
        pfi_json_set(cnt, "vtn_reports", json_integer((json_int_t)vs.reports));
        pfi_json_set(cnt, "vtn_report_errors", json_integer((json_int_t)vs.report_errors));
    }
    pfi_json_set(o, "counters", cnt);
    return o;
}

static json_t *flex_json(ctl *c, double now, double fixed, size_t n)
{
    json_t *o = json_object();
    pfi_json_set(o, "t", pfi_json_num(now));
    pfi_json_set(o, "policy", json_string(pfi_plan_policy_name(c->o.policy)));
    pfi_json_set(o, "other_load_w", pfi_json_num(c->other_w));
    pfi_json_set(o, "margin_w", pfi_json_num(c->o.margin_w));
    pfi_json_set(o, "fixed_w", pfi_json_num(fixed));
    json_t *steps = json_array();
    pfi_plan_flex f[21];
    if (n > 0 &&
        pfi_plan_flexibility(c->plan, c->o.policy == PFI_PLAN_LEARN ? PFI_PLAN_PFI : c->o.policy,
                             21, f, NULL) == PFI_OK)
        for (int s = 0; s < 21; s++) {
            json_t *x = json_object();
            double gpu = f[s].gpu_power_w + fixed;
            pfi_json_set(x, "site_power_w", pfi_json_num(gpu + c->other_w + c->o.margin_w));
            pfi_json_set(x, "gpu_power_w", pfi_json_num(gpu));
            pfi_json_set(x, "throughput", pfi_json_num(f[s].tput));
            pfi_json_set(x, "kept", pfi_json_num(f[s].kept));
            json_array_append_new(steps, x);
        }
    pfi_json_set(o, "steps", steps);
    return o;
}

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
    if (pfi_prom_query(c->o.prometheus_url, c->o.site_meter, 1.0, &m, &err) == PFI_OK) {
        c->other_hist[c->other_n % 3] = fmax(0, m - live_gpu_w);
        c->other_n++;
        double hi = 0;
        for (size_t i = 0; i < 3 && i < c->other_n; i++)
            hi = fmax(hi, c->other_hist[i]);
        c->other_w = hi;
        c->other_src = "meter";
        return;
    }
    if (c->periods % 12 == 1) pfi_log("site meter: %s", err.msg);
    if (c->other_n) {
        double hi = 0;
        for (size_t i = 0; i < 3 && i < c->other_n; i++)
            hi = fmax(hi, c->other_hist[i]);
        c->other_w = hi;
        c->other_src = "meter (last good reading)";
    } else {
        c->other_src = "constant (meter unavailable)";
    }
}

void ctl_period(ctl *c)
{
    double now = pfi_clock_wall();
    double dt = isfinite(c->last_t) ? now - c->last_t : c->o.period_s;
    c->last_t = now;
    c->periods++;

    double fixed, measured, live;
    size_t up;
    if (c->o.cluster_from_prometheus) {
        ctl_prom_read(c, now, &fixed, &measured, &live, &up);
    } else {
        pfi_agents_poll(c->agents, now);
        merge(c, now, &fixed, &measured, &live, &up);
    }
    other_load(c, live);

    ctl_ven_task(c, now, measured + c->other_w);

    pfi_target_now tn;
    pfi_target win;
    memset(&win, 0, sizeof win);
    pthread_mutex_lock(&c->mu);
    pfi_target_eval(c->targets, c->n_targets, now, c->other_w, c->o.margin_w, &tn);
    if (tn.active) win = c->targets[tn.winner];
    pthread_mutex_unlock(&c->mu);

    /* Plan inputs: known uncapped points, learned points. */
    pfi_plan_job *pj = calloc(c->n_jobs + 1, sizeof *pj);
    pfi_plan_cap *caps = calloc(c->n_jobs + 1, sizeof *caps);
    pfi_plan_obs *po = calloc(c->n_obs + 1, sizeof *po);
    if (!pj || !caps || !po) {
        free(pj);
        free(caps);
        free(po);
        pfi_log("out of memory in a period");
        return;
    }
    size_t npo = 0;
    int learn = c->o.policy == PFI_PLAN_LEARN;
    if (learn) ctl_priors_fetch(c);
    for (size_t i = 0; i < c->n_jobs; i++) {
        ctl_job *j = &c->jobs[i];
        if (!j->capped && j->training) known_put(c, j->id, j->power_w, j->tps, now);
        const ctl_known *k = known_find(c, j->id);
        double sla = pfi_sla_of(c->o.sla, c->o.n_sla, j->id);
        if (j->sla > sla) sla = j->sla; /* the registration's floor, where it is higher */
        pj[i] = (pfi_plan_job){.id = j->id,
                               .n_gpus = j->n_gpus,
                               .min_w = j->min_w,
                               .max_w = isfinite(j->max_w) ? j->max_w : PFI_GPU_DEFAULT_W,
                               .pmax_w = k ? k->pmax_w : NAN,
                               .tmax = k ? k->tmax : NAN,
                               .pfi = j->pfi_n ? j->pfi_sum / (double)j->pfi_n : NAN,
                               .sla_frac = sla};
        if (!(pj[i].min_w > 0)) pj[i].min_w = pj[i].max_w * 0.3;
        if (!learn) continue;
        const ctl_prior *pr = ctl_prior_find(c, j->id);
        if (pr) {
            pj[i].prior = pr->pts;
            pj[i].n_prior = pr->n;
        }
        pj[i].reading = ctl_job_reading(c, j);
    }
    /* Each job's learned points, contiguous in po: count, offsets, fill. */
    size_t *first = calloc(c->n_jobs + 1, sizeof *first);
    size_t *owner = malloc((c->n_obs + 1) * sizeof *owner);
    for (size_t q = 0; first && owner && q < c->n_obs; q++) {
        const ctl_job *j = job_find(c, c->obs[q].job);
        owner[q] = j ? (size_t)(j - c->jobs) : SIZE_MAX;
        if (j) pj[owner[q]].n_obs++;
    }
    for (size_t i = 0; first && i < c->n_jobs; i++) {
        first[i] = npo;
        pj[i].obs = po + npo;
        npo += owner ? pj[i].n_obs : 0;
        pj[i].n_obs = 0;
    }
    for (size_t q = 0; first && owner && q < c->n_obs; q++)
        if (owner[q] != SIZE_MAX) po[first[owner[q]] + pj[owner[q]].n_obs++] = c->obs[q].o;
    free(first);
    free(owner);
    pfi_error err;
    pfi_error_clear(&err);
    pfi_plan_set_time(c->plan, now);
    int plan_ok = pfi_plan_set_jobs(c->plan, pj, c->n_jobs, &err) == PFI_OK;
    if (!plan_ok) pfi_log("plan: %s", err.msg);

    /* Budget after the ramp; released once it covers every job uncapped. */
    double want = tn.active ? tn.gpu_budget_w : INFINITY;
    double ramp =
        tn.active ? (tn.ramp_w_per_s > 0 ? tn.ramp_w_per_s : c->o.ramp_w_per_s) : c->last_ramp;
    if (tn.active) c->last_ramp = ramp;
    double budget = pfi_target_ramp(c->budget_w, want, dt, ramp);
    double pmax_total = 0;
    for (size_t i = 0; i < c->n_jobs; i++) {
        const ctl_known *k = known_find(c, c->jobs[i].id);
        pmax_total += k && isfinite(k->pmax_w) ? k->pmax_w : c->jobs[i].n_gpus * pj[i].max_w;
    }
    if (!tn.active && !(budget < pmax_total + fixed)) budget = NAN;
    int controlling = isfinite(budget);

    /* Feedback: integrate the excess only once the caps planned under this
     * budget have been in force for a period. */
    if (controlling && c->prev_active && c->prev_push_ok &&
        fabs(c->prev_budget_w - budget) <= 0.01 * budget + 1) {
        double e = measured - budget;
        c->trim_w = e > 0 ? c->trim_w + e : fmax(0, c->trim_w + 0.25 * e);
        if (c->trim_w > budget) c->trim_w = budget;
    } else if (!controlling) {
        c->trim_w = 0;
    }

    pfi_plan_result res;
    memset(&res, 0, sizeof res);
    if (controlling && plan_ok) {
        if (pfi_plan_run(c->plan, c->o.policy, budget, fixed, c->trim_w, caps, &res, &err) !=
            PFI_OK) {
            pfi_log("plan: %s", err.msg);
            plan_ok = 0;
        }
    } else if (plan_ok && c->n_jobs) {
        /* Not controlling: the curves' uncapped figures, for the status. */
        pfi_plan_run(c->plan, c->o.policy, 2 * pmax_total + 1, 0, 0, caps, &res, NULL);
    }

    /* Caps: one per job on all its GPUs, or releases. */
    size_t ncmd = 0, room = c->n_held + 1;
    for (size_t i = 0; i < c->n_jobs; i++)
        room += c->jobs[i].n_gpus;
    pfi_cap_cmd *cmds = calloc(room, sizeof *cmds);
    double until = tn.active ? fmin(tn.until, now + c->o.cap_max_s) : now;
    double expires_s = fmin(until + c->o.cap_margin_s - now, 604800);
    if (expires_s < 1) expires_s = 1;
    char *want_held = calloc(c->n_held + 1, 1);
    for (size_t i = 0; cmds && controlling && plan_ok && i < c->n_jobs; i++) {
        ctl_job *j = &c->jobs[i];
        /* down to the step, up for a job at its floor (its SLA) */
        double cap = caps[i].at_floor ? ceil(caps[i].cap_w / CAP_STEP_W - 1e-9) * CAP_STEP_W
                                      : floor(caps[i].cap_w / CAP_STEP_W) * CAP_STEP_W;
        if (cap > pj[i].max_w) cap = pj[i].max_w;
        if (cap < pj[i].min_w) cap = ceil(pj[i].min_w);
        /* Up one period late: a cap is at most what this period's and the
         * last period's plans give it. Watts moved between jobs then leave
         * one job a period before they reach another, so that readings of
         * different nodes a period apart (Prometheus scrapes its targets at
         * different instants) never add up over the budget. */
        double plan = cap;
        if (isfinite(j->last_plan_w) && cap > j->last_plan_w) cap = j->last_plan_w;
        j->last_plan_w = plan;
        caps[i].cap_w = cap;
        j->cap_periods = j->last_cap_w == cap ? j->cap_periods + 1 : 0;
        if (j->training && j->cap_periods >= 2 && j->tps > 0 && isfinite(j->power_w))
            obs_put(c, j->id, cap, j->power_w, j->tps, j->tps_var, now);
        j->last_cap_w = cap;
        for (size_t k = 0; k < j->n_gpus; k++) {
            ctl_held *h = held_find(c, j->gpu_agent[k], j->gpu_idx[k]);
            if (h) want_held[h - c->held] = 1;
            cmds[ncmd++] = (pfi_cap_cmd){.agent = j->gpu_agent[k],
                                         .gpu = j->gpu_idx[k],
                                         .watts = cap,
                                         .expires_s = expires_s};
        }
    }
    if (!controlling)
        for (size_t i = 0; i < c->n_jobs; i++)
            c->jobs[i].last_cap_w = c->jobs[i].last_plan_w = NAN;
    /* Release what is held but not wanted (no target, or the job ended),
     * on agents that answer; a dead agent's caps expire on their own. When
     * the plan failed during an event, the caps held are renewed as they
     * are: a planning error must never lift them. */
    for (size_t h = 0; cmds && h < c->n_held; h++) {
        if (want_held[h] || !pfi_agents_get(c->agents, c->held[h].agent)->up) continue;
        int keep = controlling && !plan_ok;
        cmds[ncmd++] = (pfi_cap_cmd){.agent = c->held[h].agent,
                                     .gpu = c->held[h].gpu,
                                     .watts = keep ? c->held[h].watts : 0,
                                     .expires_s = expires_s};
    }
    free(want_held);
    int push_ok = push(c, cmds, ncmd, now); /* opens the period's transaction */
    free(cmds);
    for (size_t i = 0; controlling && plan_ok && i < c->n_jobs; i++)
        pfi_ctl_store_add_alloc(c->store, now, c->jobs[i].id, caps[i].power_w, caps[i].cap_w,
                                caps[i].tput, caps[i].tmax, NULL);

    pfi_ctl_period_rec rec = {.t = now,
                              .target = tn.active ? win.id : NULL,
                              .site_limit_w = tn.active ? tn.site_limit_w : NAN,
                              .gpu_budget_w = controlling ? budget : NAN,
                              .fixed_w = fixed,
                              .trim_w = c->trim_w,
                              .measured_gpu_w = measured,
                              .site_w = measured + c->other_w,
                              .infeasible = controlling && res.infeasible,
                              .shortfall_w = controlling ? res.shortfall_w : 0,
                              .agents_up = (int)up,
                              .policy = pfi_plan_policy_name(c->o.policy)};
    pfi_ctl_store_add_period(c->store, &rec, NULL);
    pfi_ctl_store_put_state(c->store, "budget_w", controlling ? budget : NAN, NULL);
    pfi_ctl_store_put_state(c->store, "trim_w", c->trim_w, NULL);
    if (pfi_ctl_store_commit(c->store, &err) != PFI_OK) pfi_log("%s", err.msg);
    if (controlling && res.infeasible && c->periods % 12 == 1)
        pfi_log("infeasible: the floors exceed the budget by %.0f W; every job at its floor",
                res.shortfall_w);

    c->prev_active = controlling;
    c->prev_push_ok = push_ok;
    c->prev_budget_w = budget;
    c->budget_w = budget;

    json_t *st = status_json(c, now, &tn, &win, budget, fixed, measured, up, plan_ok ? caps : NULL,
                             &res, controlling);
    json_t *fx = flex_json(c, now, fixed, plan_ok ? c->n_jobs : 0);
    size_t mlen = 0;
    char *m = ctl_render_metrics(c, st, &mlen);
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
    free(pj);
    free(caps);
    free(po);
}
