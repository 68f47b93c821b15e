/* The period's job table (ctl_internal.h): every agent's listing (or
 * Prometheus' answer, ctl_prom.c) merged into one job per id across nodes,
 * each with its GPUs, power, limits and throughput; what cannot be moved
 * (dead or read-only agents, exempt jobs, idle GPUs) counted as fixed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_internal.h"
#include "pfi/curve.h"
#include "ctl_spread.h"

typedef struct key_ctx {
    const ctl_job *v;
    const char *id;
} key_ctx;

static int job_eq(size_t pos, const void *x)
{
    const key_ctx *k = x;
    return strcmp(k->v[pos].id, k->id) == 0;
}

ctl_job *ctl_job_find(const ctl_jobs *J, const char *id)
{
    key_ctx k = {J->v, id};
    size_t pos = ctl_index_get(&J->ix, ctl_hash_str(id), job_eq, &k);
    return pos == SIZE_MAX ? NULL : &J->v[pos];
}

static void jobs_clear(ctl_jobs *J)
{
    ctl_index_clear(&J->ix);
    for (size_t i = 0; i < J->n; i++) {
        free(J->v[i].gpu_agent);
        free(J->v[i].gpu_idx);
    }
    J->n = 0;
}

void ctl_jobs_free(ctl_jobs *J)
{
    jobs_clear(J);
    free(J->v);
    ctl_index_free(&J->ix);
    free(J->obs);
    ctl_index_free(&J->obs_ix);
    free(J->known);
    ctl_index_free(&J->known_ix);
    ctl_priors_free(J);
}

/* The site's own limit on a GPU, its prior (issue 27): what pfid reports
 * (limits.prior_w), else the prior its cap records, else, uncapped, the
 * limit in force (what pfid restores a cap to); NaN unknown. */
static double gpu_prior(const pfi_cl_gpu *g)
{
    if (isfinite(g->prior_w) && g->prior_w > 0) return g->prior_w;
    if (g->capped) return isfinite(g->cap_prior_w) && g->cap_prior_w > 0 ? g->cap_prior_w : NAN;
    return isfinite(g->enforced_w) && g->enforced_w > 0 ? g->enforced_w : NAN;
}

double ctl_gpu_ceiling(const pfi_cl_gpu *g)
{
    double p = gpu_prior(g);
    if (isfinite(g->max_w) && isfinite(p)) return fmin(g->max_w, p);
    return isfinite(g->max_w) ? g->max_w : p;
}

/* The power a GPU is counted at when it cannot be moved: its ceiling (what
 * it may draw), else its measured power, else PFI_GPU_DEFAULT_W. */
double ctl_gpu_counted_max(const pfi_cl_gpu *g)
{
    double c = ctl_gpu_ceiling(g);
    if (isfinite(c)) return c;
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

ctl_carry *ctl_jobs_begin(ctl_jobs *J)
{
    /* carry last period's caps per job id */
    ctl_carry *k = calloc(1, sizeof *k);
    if (k && !(k->old = calloc(J->n + 1, sizeof *k->old))) {
        free(k);
        k = NULL;
    }
    for (size_t i = 0; k && i < J->n; i++) {
        snprintf(k->old[i].id, sizeof k->old[i].id, "%s", J->v[i].id);
        k->old[i].cap = J->v[i].last_cap_w;
        k->old[i].plan = J->v[i].last_plan_w;
        k->old[i].periods = J->v[i].cap_periods;
        ctl_index_put(&k->ix, ctl_hash_str(k->old[i].id), i);
        k->n++;
    }
    jobs_clear(J);
    return k;
}

void ctl_jobs_end(ctl_carry *k)
{
    if (!k) return;
    free(k->old);
    ctl_index_free(&k->ix);
    free(k);
}

ctl_job *ctl_job_get(ctl_jobs *J, ctl_carry *carry, const char *id)
{
    ctl_job *m = ctl_job_find(J, id);
    if (m) return m;
    ctl_job *arr = ctl_grow(J->v, &J->cap, J->n + 1, sizeof *J->v);
    if (!arr) return NULL;
    J->v = arr;
    m = &J->v[J->n++];
    memset(m, 0, sizeof *m);
    snprintf(m->id, sizeof m->id, "%s", id);
    m->min_w = 0;
    m->max_w = INFINITY;
    m->last_cap_w = m->last_plan_w = NAN;
    m->training = 1;
    m->tps = 0;
    m->tps_var = 0;
    m->sla = NAN;
    m->pfi_sd = NAN;
    ctl_index_put(&J->ix, ctl_hash_str(m->id), J->n - 1);
    old_ctx oc = {carry ? carry->old : NULL, m->id};
    size_t o = carry ? ctl_index_get(&carry->ix, ctl_hash_str(m->id), old_eq, &oc) : SIZE_MAX;
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
            g->n_gpus = ng; /* its size as last seen, for the status */
            g->max_sum_w = mw;
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

/* Adds job m's GPUs on node nd (agent a) from cj; 0 on no memory. */
static int add_gpus(ctl_job *m, size_t a, const pfi_cl_node *nd, const pfi_cl_job *cj, char *in_job,
                    double *measured_w)
{
    size_t add = cj->n_gpus;
    size_t *ga = realloc(m->gpu_agent, (m->n_gpus + add) * sizeof *ga);
    if (ga) m->gpu_agent = ga;
    unsigned *gi = realloc(m->gpu_idx, (m->n_gpus + add) * sizeof *gi);
    if (gi) m->gpu_idx = gi;
    if (!ga || !gi) return 0;
    for (size_t k = 0; k < add; k++) {
        const pfi_cl_gpu *gp = pfi_cl_node_gpu(nd, cj->gpus[k]);
        if (!gp || in_job[gp - nd->gpus] == 2) continue; /* another controller's */
        in_job[gp - nd->gpus] = 1;
        m->gpu_agent[m->n_gpus] = a;
        m->gpu_idx[m->n_gpus] = gp->index;
        m->n_gpus++;
        double pw = isfinite(gp->power_w) ? gp->power_w : ctl_gpu_counted_max(gp);
        m->power_w += pw;
        *measured_w += pw;
        if (isfinite(gp->min_w) && gp->min_w > m->min_w) m->min_w = gp->min_w;
        double hi = ctl_gpu_ceiling(gp); /* never above the site's own limit */
        if (isfinite(hi) && hi < m->max_w) m->max_w = hi;
        m->capped |= gp->capped;
    }
    return 1;
}

/* Whether GPU gp of node a, in job id, is another controller's: then it is
 * fixed at its measured power (its maximum when unread). */
static int foreign(ctl_caps *K, size_t a, const pfi_cl_gpu *gp, const char *id, double *fixed_w,
                   double *measured_w)
{
    ctl_conflict *f = K ? ctl_conflict_find(K, a, gp->index) : NULL;
    if (!f) return 0;
    if (!gp->capped) {
        /* its owner's cap is gone: ours to plan again */
        ctl_conflict_drop(K, (size_t)(f - K->conf));
        return 0;
    }
    snprintf(f->job, sizeof f->job, "%s", id);
    f->cap_w = gp->cap_w;
    double pw = isfinite(gp->power_w) ? gp->power_w : ctl_gpu_counted_max(gp);
    *fixed_w += pw;
    *measured_w += pw;
    return 1;
}

void ctl_merge_node(ctl_jobs *J, ctl_caps *K, ctl_carry *carry, size_t a, const pfi_cl_node *nd,
                    double *fixed_w, double *measured_w, double *live_w)
{
    for (size_t k = 0; k < nd->n_gpus; k++)
        if (isfinite(nd->gpus[k].power_w)) *live_w += nd->gpus[k].power_w;
    char *in_job = calloc(nd->n_gpus + 1, 1);
    if (!in_job) {
        /* no memory to tell jobs from idle GPUs: all of it is fixed */
        for (size_t k = 0; k < nd->n_gpus; k++) {
            *fixed_w += ctl_gpu_counted_max(&nd->gpus[k]);
            *measured_w += ctl_gpu_counted_max(&nd->gpus[k]);
        }
        return;
    }
    for (size_t j = 0; j < nd->n_jobs; j++) {
        const pfi_cl_job *cj = &nd->jobs[j];
        if (cj->exempt) {
            /* Never capped: its GPUs count at their measured power (the
             * feedback sees a rise), or their maximum when unread. */
            for (size_t k = 0; k < cj->n_gpus; k++) {
                const pfi_cl_gpu *gp = pfi_cl_node_gpu(nd, cj->gpus[k]);
                if (!gp || in_job[gp - nd->gpus]) continue;
                in_job[gp - nd->gpus] = 1;
                double pw = isfinite(gp->power_w) ? gp->power_w : ctl_gpu_counted_max(gp);
                *fixed_w += pw;
                *measured_w += pw;
            }
            continue;
        }
        size_t own = 0;
        char *mine = in_job; /* GPUs left to add: those not another controller's */
        for (size_t k = 0; k < cj->n_gpus; k++) {
            const pfi_cl_gpu *gp = pfi_cl_node_gpu(nd, cj->gpus[k]);
            if (!gp || mine[gp - nd->gpus] == 2) continue;
            if (!mine[gp - nd->gpus] && foreign(K, a, gp, cj->id, fixed_w, measured_w))
                mine[gp - nd->gpus] = 2;
            else
                own++;
        }
        if (own == 0) continue; /* all of it another's here */
        ctl_job *m = ctl_job_get(J, carry, cj->id);
        if (!m) continue;
        if (cj->sla_floor > 0 && !(m->sla >= cj->sla_floor)) m->sla = cj->sla_floor;
        if (!add_gpus(m, a, nd, cj, in_job, measured_w)) continue;
        if (isfinite(cj->tokens_per_s)) {
            /* summed over nodes: so are the variances of their reports */
            m->tps += cj->tokens_per_s;
            m->tps_var = ctl_spread_add(m->tps_var, cj->tokens_sd);
        }
        if (isfinite(cj->pfi_estimate)) {
            m->pfi_sum += cj->pfi_estimate;
            m->pfi_n++;
            if (cj->pfi_sd > 0 && !(m->pfi_sd >= cj->pfi_sd)) m->pfi_sd = cj->pfi_sd;
        }
        if (cj->job_class[0] && !m->job_class[0])
            snprintf(m->job_class, sizeof m->job_class, "%s", cj->job_class);
        if (strcmp(cj->phase, "training") != 0) m->training = 0; /* nothing to learn from yet */
    }
    for (size_t k = 0; k < nd->n_gpus; k++)
        if (!in_job[k]) {
            /* An idle GPU draws what it draws; a job that starts on it is
             * seen next period. */
            double pw = isfinite(nd->gpus[k].power_w) ? nd->gpus[k].power_w
                                                      : ctl_gpu_counted_max(&nd->gpus[k]);
            *fixed_w += pw;
            *measured_w += pw;
        }
    free(in_job);
}

void ctl_jobs_merge(ctl *c, double now, double *fixed_w, double *measured_w, double *live_w,
                    size_t *up)
{
    ctl_carry *carry = ctl_jobs_begin(&c->jobs);
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
                g->max_sum_w += ctl_gpu_counted_max(&nd->gpus[k]);
        }
        double f0 = *fixed_w, m0 = *measured_w;
        ctl_agent_count(c, g, now, fixed_w, measured_w);
        if (g->up && !g->cannot_cap)
            ctl_merge_node(&c->jobs, &c->caps, carry, a, nd, fixed_w, measured_w, live_w);
        if (a < c->topo.n_ag) {
            /* what lands in its domain of the power tree */
            c->topo.ag_fixed_w[a] = *fixed_w - f0;
            c->topo.ag_gpu_w[a] = *measured_w - m0;
            c->topo.ag_down[a] = !g->up;
        }
    }
    ctl_jobs_end(carry);
}
