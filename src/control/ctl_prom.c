/* The period's reading of the cluster from Prometheus (--cluster-from
 * prometheus): the same job table, fixed load and agents' state that
 * polling every agent gives (ctl_period.c's merge), from per-node and
 * per-job aggregates (include/control/pfi/prom_cluster.h). Caps are still
 * pushed to the agents: each node's instance label is its agent,
 * https://INSTANCE when --agents/--agents-file lists that, else
 * http://INSTANCE.
 *
 * What cannot be moved is counted as polling counts it: a node Prometheus
 * cannot scrape (up == 0), or that has left its answer, at its GPUs' maximum
 * as last seen; a read-only node at its maximum; idle GPUs at their
 * measured power. A job registered exempt on any node is never capped:
 * its GPUs on the nodes that take caps count at its measured power there
 * (their maximum when it has none), as the agents' listings count it; a
 * registration's SLA floor is the highest of its nodes'. When Prometheus
 * itself (any one of its queries) does not answer every agent is
 * down: no cap is renewed or released (each pfid holds its caps to their
 * expiry) until it answers again. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_internal.h"
#include "pfi/curve.h"
#include "pfi/prom_cluster.h"

/* The agent of instance inst, added when new; SIZE_MAX if unusable. */
static size_t agent_of(ctl *c, const char *inst)
{
    char url[600];
    snprintf(url, sizeof url, "https://%s", inst);
    size_t ix = pfi_agents_find(c->agents, url);
    if (ix != SIZE_MAX) return ix;
    snprintf(url, sizeof url, "http://%s", inst);
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_agents_add(c->agents, url, &ix, &err) != PFI_OK) {
        if (c->periods % 12 == 1) pfi_log("Prometheus instance '%.100s': %s", inst, err.msg);
        return SIZE_MAX;
    }
    return ix;
}

static void all_down(ctl *c, const char *why, double now, double *fixed_w, double *measured_w)
{
    for (size_t a = 0; a < pfi_agents_count(c->agents); a++) {
        pfi_agent_info *g = pfi_agents_get(c->agents, a);
        g->up = 0;
        snprintf(g->error, sizeof g->error, "%s", why);
        ctl_agent_count(c, g, now, fixed_w, measured_w);
    }
}

/* One reading's state: the view, each node's agent, the sums. */
typedef struct rd {
    ctl *c;
    double now;
    pfi_pc_view v;
    ctl_carry *carry;
    size_t *ag;       /* per node: its agent, SIZE_MAX none */
    double *in_jobs;  /* per node: GPUs in jobs */
    size_t *slot;     /* per view job: its c->jobs entry, SIZE_MAX none */
    double *all_gpus; /* per job, on every node */
    /* per job: an exempt job's GPUs on the nodes that take caps, their maximum */
    double *ex_gpus, *ex_max_w;
    double *fixed_w, *measured_w, *live_w;
    size_t *up;
} rd;

/* The agents: who is up, their size; each counted as polling counts it. */
static int read_agents(rd *r)
{
    ctl *c = r->c;
    const pfi_pc_view *v = &r->v;
    for (size_t n = 0; n < v->n_nodes; n++)
        r->ag[n] = agent_of(c, v->nodes[n].instance);
    char *seen = calloc(pfi_agents_count(c->agents) + 1, 1);
    if (!seen) return PFI_ENOMEM;
    for (size_t n = 0; n < v->n_nodes; n++) {
        const pfi_pc_node *nd = &v->nodes[n];
        if (r->ag[n] == SIZE_MAX) {
            /* no agent to cap it through (an instance no URL can be made
             * of): all it may draw is fixed */
            double w = isfinite(nd->max_sum_w) ? nd->max_sum_w
                       : isfinite(nd->n_gpus)  ? nd->n_gpus * PFI_GPU_DEFAULT_W
                                               : 0;
            *r->fixed_w += w;
            *r->measured_w += w;
            continue;
        }
        pfi_agent_info *g = pfi_agents_get(c->agents, r->ag[n]);
        seen[r->ag[n]] = 1;
        if (nd->down) {
            g->up = 0;
            snprintf(g->error, sizeof g->error, "Prometheus cannot scrape it (up == 0)");
            continue;
        }
        g->up = g->ever_up = 1;
        g->error[0] = '\0';
        g->last_ok = r->now;
        if (isfinite(nd->n_gpus) && nd->n_gpus >= 0) g->n_gpus = (size_t)nd->n_gpus;
        if (isfinite(nd->max_sum_w))
            g->max_sum_w = nd->max_sum_w;
        else
            g->max_sum_w = (double)g->n_gpus * PFI_GPU_DEFAULT_W;
        if (nd->read_only) g->cannot_cap = 1;
        (*r->up)++;
    }
    for (size_t a = 0; a < pfi_agents_count(c->agents); a++) {
        pfi_agent_info *g = pfi_agents_get(c->agents, a);
        if (!seen[a]) {
            g->up = 0;
            snprintf(g->error, sizeof g->error, "not in Prometheus' answer");
        }
        ctl_agent_count(c, g, r->now, r->fixed_w, r->measured_w);
    }
    free(seen);
    return PFI_OK;
}

/* The jobs: one per job id, its GPUs on the nodes that take caps. */
static void read_members(rd *r)
{
    ctl *c = r->c;
    const pfi_pc_view *v = &r->v;
    for (size_t j = 0; j < v->n_jobs; j++)
        r->slot[j] = SIZE_MAX;
    for (size_t i = 0; i < v->n_members; i++) {
        const pfi_pc_member *mb = &v->members[i];
        const pfi_pc_node *nd = &v->nodes[mb->node];
        r->all_gpus[mb->job] += (double)mb->n_gpus;
        r->in_jobs[mb->node] += (double)mb->n_gpus;
        if (r->ag[mb->node] == SIZE_MAX) continue;
        pfi_agent_info *g = pfi_agents_get(c->agents, r->ag[mb->node]);
        if (!g->up || g->cannot_cap) continue; /* its GPUs are counted at their maximum */
        if (v->jobs[mb->job].exempt) {
            r->ex_gpus[mb->job] += (double)mb->n_gpus;
            r->ex_max_w[mb->job] +=
                (double)mb->n_gpus * (isfinite(nd->hi_w) ? nd->hi_w : PFI_GPU_DEFAULT_W);
            continue;
        }
        ctl_job *m = ctl_job_get(&c->jobs, r->carry, v->jobs[mb->job].id);
        if (!m) continue;
        r->slot[mb->job] = (size_t)(m - c->jobs.v);
        size_t *ga = realloc(m->gpu_agent, (m->n_gpus + mb->n_gpus) * sizeof *ga);
        if (ga) m->gpu_agent = ga;
        unsigned *gi = realloc(m->gpu_idx, (m->n_gpus + mb->n_gpus) * sizeof *gi);
        if (gi) m->gpu_idx = gi;
        if (!ga || !gi) continue;
        for (size_t k = 0; k < mb->n_gpus; k++) {
            m->gpu_agent[m->n_gpus] = r->ag[mb->node];
            m->gpu_idx[m->n_gpus++] = mb->gpus[k];
        }
        if (isfinite(nd->lo_w) && nd->lo_w > m->min_w) m->min_w = nd->lo_w;
        if (isfinite(nd->hi_w) && nd->hi_w < m->max_w) m->max_w = nd->hi_w;
        m->capped |= nd->capped > 0;
    }
}

/* Each job's power, tokens/s, PFI and phase from its aggregates. */
static void read_figures(rd *r)
{
    const pfi_pc_view *v = &r->v;
    for (size_t j = 0; j < v->n_jobs; j++) {
        const pfi_pc_job *vj = &v->jobs[j];
        if (vj->exempt && r->ex_gpus[j] > 0) {
            /* never capped: fixed, at its measured power (the feedback sees
             * a rise), or its GPUs' maximum when unread */
            double w = isfinite(vj->power_w) ? vj->power_w * r->ex_gpus[j] / r->all_gpus[j]
                                             : r->ex_max_w[j];
            if (isfinite(vj->power_w)) *r->live_w += w;
            *r->fixed_w += w;
            *r->measured_w += w;
            continue;
        }
        if (r->slot[j] == SIZE_MAX) continue;
        ctl_job *m = &r->c->jobs.v[r->slot[j]];
        /* The aggregates cover the job on every node; a part on a node that
         * refuses caps is already counted at that node's maximum. */
        double frac = r->all_gpus[j] > 0 ? (double)m->n_gpus / r->all_gpus[j] : 1;
        double per_gpu = isfinite(m->max_w) ? m->max_w : PFI_GPU_DEFAULT_W;
        m->power_w = isfinite(vj->power_w) ? vj->power_w * frac : (double)m->n_gpus * per_gpu;
        if (isfinite(vj->power_w)) *r->live_w += m->power_w;
        *r->measured_w += m->power_w;
        m->tps = isfinite(vj->tokens_per_s) ? vj->tokens_per_s * frac : 0;
        m->tps_var = vj->tokens_var * frac * frac; /* NaN (unknown) stays NaN */
        if (isfinite(vj->pfi)) {
            m->pfi_sum = vj->pfi;
            m->pfi_n = 1;
        }
        m->training = vj->training;
        if (vj->sla_floor > 0 && !(m->sla >= vj->sla_floor)) m->sla = vj->sla_floor;
    }
}

/* What no job draws on the nodes that take caps. */
static void read_idle(rd *r)
{
    const pfi_pc_view *v = &r->v;
    for (size_t n = 0; n < v->n_nodes; n++) {
        if (r->ag[n] == SIZE_MAX) continue;
        const pfi_pc_node *nd = &v->nodes[n];
        const pfi_agent_info *g = pfi_agents_get(r->c->agents, r->ag[n]);
        if (!g->up || g->cannot_cap) continue;
        double idle = nd->idle_w;
        if (isfinite(idle)) {
            *r->live_w += idle;
        } else {
            double free_gpus = isfinite(nd->n_gpus) ? fmax(0, nd->n_gpus - r->in_jobs[n]) : 0;
            idle = free_gpus * (isfinite(nd->hi_w) ? nd->hi_w : PFI_GPU_DEFAULT_W);
        }
        *r->fixed_w += idle;
        *r->measured_w += idle;
    }
}

void ctl_prom_read(ctl *c, double now, double *fixed_w, double *measured_w, double *live_w,
                   size_t *up)
{
    *fixed_w = *measured_w = *live_w = 0;
    *up = 0;
    rd r = {.c = c,
            .now = now,
            .fixed_w = fixed_w,
            .measured_w = measured_w,
            .live_w = live_w,
            .up = up};
    pfi_prom_vec ans[PFI_PC_NQ];
    memset(ans, 0, sizeof ans);
    pfi_error err;
    pfi_error_clear(&err);
    const char *match = c->o.prometheus_match ? c->o.prometheus_match : PFI_PC_DEFAULT_MATCH;
    int rc = pfi_pc_fetch(c->o.prometheus_url, match, c->o.agent_timeout_s, ans, &err);
    if (rc == PFI_OK) rc = pfi_pc_view_build(ans, &r.v, &err);
    for (int q = 0; q < PFI_PC_NQ; q++)
        pfi_prom_vec_free(&ans[q]);
    r.carry = ctl_jobs_begin(&c->jobs);
    size_t nn = r.v.n_nodes + 1, nj = r.v.n_jobs + 1;
    r.ag = calloc(nn, sizeof *r.ag);
    r.in_jobs = calloc(nn, sizeof *r.in_jobs);
    r.slot = malloc(nj * sizeof *r.slot);
    r.all_gpus = calloc(nj, sizeof *r.all_gpus);
    r.ex_gpus = calloc(nj, sizeof *r.ex_gpus);
    r.ex_max_w = calloc(nj, sizeof *r.ex_max_w);
    if (rc == PFI_OK &&
        (!r.ag || !r.in_jobs || !r.slot || !r.all_gpus || !r.ex_gpus || !r.ex_max_w))
        rc = pfi_error_set(&err, PFI_ENOMEM, NULL, 0, "out of memory");
    if (rc != PFI_OK) {
        char why[256];
        snprintf(why, sizeof why, "Prometheus: %.240s", err.msg);
        int was_up = 0; /* said when it stops answering, then once a minute or so */
        for (size_t a = 0; a < pfi_agents_count(c->agents); a++)
            was_up |= pfi_agents_get(c->agents, a)->up;
        if (was_up || c->periods % 12 == 1) pfi_log("%s: caps held stay as they are", why);
        all_down(c, why, now, fixed_w, measured_w);
        goto out;
    }
    if (r.v.skipped && c->periods % 12 == 1)
        pfi_log("Prometheus: %zu row(s) left out (no instance, a bad job_id or gpus label)",
                r.v.skipped);
    if (read_agents(&r) != PFI_OK) {
        all_down(c, "out of memory", now, fixed_w, measured_w);
        goto out;
    }
    read_members(&r);
    read_figures(&r);
    read_idle(&r);
out:
    ctl_jobs_end(r.carry);
    free(r.ag);
    free(r.in_jobs);
    free(r.slot);
    free(r.all_gpus);
    free(r.ex_gpus);
    free(r.ex_max_w);
    pfi_pc_view_clear(&r.v);
}
