/* Node ceilings (issue 28, item 5): each period every node that answers is
 * told the most its GPUs may draw (PUT /v1/node/limit, with the caps'
 * owner and epoch), so that pfid holds its branch on its own between
 * periods (a job starting uncapped) and while the controller or the network
 * is gone. A node's ceiling in a domain is what the plan gives it (its
 * jobs' planned power on its GPUs, and what it cannot move) plus the
 * domain's headroom shared by GPU count; it is the lowest over the limited
 * domains above it, so the ceilings of a domain's nodes add up to its limit
 * less its non-GPU load (where the plan is over that, every node's share
 * is scaled down to it). None (DELETE) where no domain above it is limited.
 * Sent again when it moves by more than 1% or a third of its expiry has
 * passed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_internal.h"

/* The ceilings, per agent (out[a], INFINITY none), from per-agent planned
 * power and GPU counts (pure: tested in test_ctl_topo). */
void ctl_ceilings(const ctl_topo *T, const double *planned_w, const double *gpus, double *out)
{
    size_t n = T->n;
    double *base = calloc(n + 1, sizeof *base), *ng = calloc(n + 1, sizeof *ng);
    for (size_t a = 0; a < T->n_ag; a++)
        out[a] = INFINITY;
    if (!base || !ng) goto out;
    for (size_t a = 0; a < T->n_ag; a++) {
        base[T->leaf[a]] += planned_w[a] + T->ag_fixed_w[a];
        ng[T->leaf[a]] += gpus[a];
    }
    for (size_t d = n; d-- > 1;) {
        base[ctl_topo_parent(T, d)] += base[d];
        ng[ctl_topo_parent(T, d)] += ng[d];
    }
    for (size_t a = 0; a < T->n_ag; a++) {
        if (!(gpus[a] > 0)) continue;
        for (size_t d = T->leaf[a]; d != PFI_TOPO_NONE; d = ctl_topo_parent(T, d)) {
            const ctl_dom *x = &T->d[d];
            double lim = d == 0 ? fmin(x->limit_w, T->site_w) : x->limit_w;
            if (!isfinite(lim) || !(ng[d] > 0)) continue;
            double room = fmax(0, lim - x->sub_other_w), own = planned_w[a] + T->ag_fixed_w[a];
            /* the headroom shared by GPU count; a plan over the room (its
             * floors do not fit) is scaled down to it: the breaker first */
            double c =
                base[d] <= room ? own + (room - base[d]) * gpus[a] / ng[d] : own * room / base[d];
            if (c < out[a]) out[a] = c;
        }
    }
out:
    free(base);
    free(ng);
}

void ctl_ceiling_push(ctl *c, const pfi_plan_cap *caps, double now)
{
    ctl_topo *T = &c->topo;
    size_t na = T->n_ag;
    if (!T->has_limits || !na) return;
    double *planned = calloc(na, sizeof *planned), *gpus = calloc(na, sizeof *gpus);
    double *ceil = calloc(na, sizeof *ceil);
    pfi_cap_cmd *cmd = calloc(na, sizeof *cmd);
    if (!planned || !gpus || !ceil || !cmd) goto out;
    for (size_t a = 0; a < na; a++)
        gpus[a] = (double)pfi_agents_get(c->agents, a)->n_gpus;
    for (size_t i = 0; i < c->jobs.n; i++) {
        const ctl_job *j = &c->jobs.v[i];
        /* the plan's power, else what it draws now */
        double p = caps ? caps[i].power_w : j->power_w;
        for (size_t g = 0; g < j->n_gpus; g++)
            if (j->gpu_agent[g] < na) planned[j->gpu_agent[g]] += p / (double)j->n_gpus;
    }
    ctl_ceilings(T, planned, gpus, ceil);
    double expires = fmax(3 * c->o.period_s, c->o.cap_margin_s);
    size_t n = 0;
    for (size_t a = 0; a < na; a++) {
        const pfi_agent_info *g = pfi_agents_get(c->agents, a);
        if (!g->up || g->cannot_cap) continue;
        double w = isfinite(ceil[a]) ? fmax(1, floor(ceil[a])) : INFINITY;
        int had = isfinite(T->ceil_w[a]);
        if (!isfinite(w) && !had) continue;
        if (isfinite(w) && had && fabs(w - T->ceil_w[a]) <= 0.01 * T->ceil_w[a] &&
            now - T->ceil_at[a] < expires / 3)
            continue;
        cmd[n] = (pfi_cap_cmd){
            .agent = a, .gpu = PFI_CAP_NODE, .watts = isfinite(w) ? w : 0, .expires_s = expires};
        n++;
    }
    if (!n) goto out;
    pfi_agents_push(c->agents, cmd, n);
    for (size_t k = 0; k < n; k++) {
        size_t a = cmd[k].agent;
        if (cmd[k].status == 200 || (cmd[k].watts <= 0 && cmd[k].status == 404)) {
            T->ceil_w[a] = cmd[k].watts > 0 ? cmd[k].watts : NAN;
            T->ceil_at[a] = now;
            if (T->ceil_err[a])
                pfi_log("agent %s: node ceiling set again", pfi_agents_get(c->agents, a)->url);
            T->ceil_err[a] = 0;
        } else if (!T->ceil_err[a]) {
            T->ceil_err[a] = 1;
            pfi_log("agent %s: node ceiling %.0f W: %s", pfi_agents_get(c->agents, a)->url,
                    cmd[k].watts, cmd[k].error[0] ? cmd[k].error : "refused");
        }
    }
out:
    free(planned);
    free(gpus);
    free(ceil);
    free(cmd);
}
