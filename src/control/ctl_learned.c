/* What the controller knows of each job's curve across periods
 * (ctl_internal.h): its uncapped figures (known), the points learned at the
 * caps it pushed (obs, an exponential mean per cap), and the plan's inputs
 * built from them and this period's job table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_internal.h"
#include "pfi/curve.h"
#include "ctl_spread.h"

#define OBS_WEIGHT 0.3 /* a learned point's exponential mean: a new reading's weight */

uint64_t ctl_obs_key(const char *job, double cap_w)
{
    uint64_t bits;
    memcpy(&bits, &cap_w, sizeof bits);
    return ctl_hash_2(ctl_hash_str(job), bits);
}

pfi_plan_obs ctl_job_reading(const ctl_job *j, int pushed)
{
    /* What the cap pushed last period gave. Its tokens/s are each node's
     * last report, summed (not the learned points' exponential mean,
     * ctl_obs_put: those enter only when a job joins the loop), so its
     * variance is the sum of one report's variance per node, pfid's
     * tokens_sd squared (ctl_spread.h); unknown on any node: 0, exact. */
    if (pushed && isfinite(j->last_cap_w) && j->training && j->tps > 0 && j->power_w > 0)
        return (pfi_plan_obs){j->last_cap_w, j->power_w, j->tps, ctl_spread_sd(j->tps_var)};
    return (pfi_plan_obs){0};
}

typedef struct key_ctx {
    const ctl_jobs *J;
    const char *id;
    double cap;
} key_ctx;

static int known_eq(size_t pos, const void *x)
{
    const key_ctx *k = x;
    return strcmp(k->J->known[pos].job, k->id) == 0;
}

const ctl_known *ctl_known_find(const ctl_jobs *J, const char *id)
{
    key_ctx k = {.J = J, .id = id};
    size_t pos = ctl_index_get(&J->known_ix, ctl_hash_str(id), known_eq, &k);
    return pos == SIZE_MAX ? NULL : &J->known[pos];
}

static ctl_known *known_get(ctl_jobs *J, const char *id)
{
    ctl_known *k = (ctl_known *)ctl_known_find(J, id);
    if (!k) {
        ctl_known *arr = ctl_grow(J->known, &J->cap_known, J->n_known + 1, sizeof *arr);
        if (!arr) return NULL;
        J->known = arr;
        k = &J->known[J->n_known++];
        snprintf(k->job, sizeof k->job, "%s", id);
        ctl_index_put(&J->known_ix, ctl_hash_str(id), J->n_known - 1);
        k->pmax_w = k->tmax = NAN;
        k->job_class[0] = '\0';
    }
    return k;
}

void ctl_known_put(ctl_jobs *J, pfi_ctl_store *st, const char *id, double pmax, double tmax,
                   double now)
{
    ctl_known *k = known_get(J, id);
    if (!k) return;
    int changed = 0;
    if (isfinite(pmax) && !(k->pmax_w >= pmax)) k->pmax_w = pmax, changed = 1;
    if (isfinite(tmax) && tmax > 0 && !(k->tmax >= tmax)) k->tmax = tmax, changed = 1;
    if (changed) pfi_ctl_store_put_job(st, id, k->pmax_w, k->tmax, now, NULL);
}

static int obs_eq(size_t pos, const void *x)
{
    const key_ctx *k = x;
    return k->J->obs[pos].o.cap_w == k->cap && strcmp(k->J->obs[pos].job, k->id) == 0;
}

/* var: t's variance (NaN unknown). The point's tokens/s is an exponential
 * mean (weight 0.3) of one reading a period, its variance kept alongside
 * (ctl_spread_ewma: about 0.18 of one reading's once many have been
 * taken), the readings taken as independent (a fresh report each period,
 * README "What it assumes"). */
/* The point of (id, cap), added (at p, t, var) when new; *fresh tells. */
static ctl_obs *obs_get(ctl_jobs *J, const char *id, double cap, double p, double t, double var,
                        int *fresh)
{
    key_ctx k = {.J = J, .id = id, .cap = cap};
    size_t pos = ctl_index_get(&J->obs_ix, ctl_obs_key(id, cap), obs_eq, &k);
    *fresh = pos == SIZE_MAX;
    if (pos != SIZE_MAX) return &J->obs[pos];
    ctl_obs *arr = ctl_grow(J->obs, &J->cap_obs, J->n_obs + 1, sizeof *arr);
    if (!arr) return NULL;
    J->obs = arr;
    ctl_obs *o = &J->obs[J->n_obs++];
    snprintf(o->job, sizeof o->job, "%s", id);
    ctl_index_put(&J->obs_ix, ctl_obs_key(id, cap), J->n_obs - 1);
    o->o = (pfi_plan_obs){cap, p, t, 0};
    o->var = var;
    return o;
}

void ctl_obs_put(ctl_jobs *J, pfi_ctl_store *st, const char *id, double cap, double p, double t,
                 double var, double now)
{
    int fresh;
    ctl_obs *o = obs_get(J, id, cap, p, t, var, &fresh);
    if (!o) return;
    if (!fresh) {
        /* an exponential mean: the curve follows a job whose phase changes */
        o->o.power_w += OBS_WEIGHT * (p - o->o.power_w);
        o->o.tput += OBS_WEIGHT * (t - o->o.tput);
        o->var = ctl_spread_ewma(o->var, var, OBS_WEIGHT);
    }
    o->o.tput_sd = ctl_spread_sd(o->var);
    pfi_ctl_store_put_obs(st, id, cap, p, t, var, now, NULL);
}

void ctl_obs_set(ctl_jobs *J, const char *id, double cap, double p, double t, double var)
{
    int fresh;
    ctl_obs *o = obs_get(J, id, cap, p, t, var, &fresh);
    if (!o) return;
    o->o = (pfi_plan_obs){cap, p, t, ctl_spread_sd(var)};
    o->var = var;
}

void ctl_known_set(ctl_jobs *J, const char *id, double pmax, double tmax, const char *job_class)
{
    ctl_known *k = known_get(J, id);
    if (!k) return;
    k->pmax_w = pmax;
    k->tmax = tmax;
    snprintf(k->job_class, sizeof k->job_class, "%s", job_class);
}

void ctl_job_capped(ctl_jobs *J, pfi_ctl_store *st, ctl_job *j, double cap, double now)
{
    j->cap_periods = j->last_cap_w == cap ? j->cap_periods + 1 : 0;
    if (j->training && j->cap_periods >= 2 && j->tps > 0 && isfinite(j->power_w))
        ctl_obs_put(J, st, j->id, cap, j->power_w, j->tps, j->tps_var, now);
    j->last_cap_w = cap;
}

/* A job's class as last seen, kept (and stored) so that its points pool
 * with its class's after it ends. */
static void known_class(ctl_jobs *J, pfi_ctl_store *st, const ctl_job *j, double now)
{
    if (!j->job_class[0]) return;
    ctl_known *k = known_get(J, j->id);
    if (!k || strcmp(k->job_class, j->job_class) == 0) return;
    snprintf(k->job_class, sizeof k->job_class, "%s", j->job_class);
    pfi_ctl_store_put_job_class(st, j->id, j->job_class, now, NULL);
}

typedef struct gone_pt {
    const char *cls;
    pfi_plan_obs o; /* relative: cap, P / Pmax, T / Tmax, SD / Tmax */
} gone_pt;

static int by_class(const void *a, const void *b)
{
    return strcmp(((const gone_pt *)a)->cls, ((const gone_pt *)b)->cls);
}

/* The points of jobs not listed this period, relative to their uncapped
 * figures, for their classes: into po (from *npo on), each listed job of
 * such a class pointed at its class's run. */
static int class_points(ctl_jobs *J, pfi_plan_job *pj, pfi_plan_obs *po, size_t npo)
{
    gone_pt *g = malloc((J->n_obs + 1) * sizeof *g);
    if (!g) return PFI_ENOMEM;
    size_t m = 0;
    for (size_t q = 0; q < J->n_obs; q++) {
        const ctl_obs *ob = &J->obs[q];
        if (ctl_job_find(J, ob->job)) continue; /* its own points serve as they are */
        const ctl_known *k = ctl_known_find(J, ob->job);
        if (!k || !k->job_class[0] || !(k->pmax_w > 0) || !(k->tmax > 0)) continue;
        g[m++] = (gone_pt){k->job_class,
                           {ob->o.cap_w, ob->o.power_w / k->pmax_w, ob->o.tput / k->tmax,
                            ob->o.tput_sd / k->tmax}};
    }
    qsort(g, m, sizeof *g, by_class);
    for (size_t q = 0; q < m; q++)
        po[npo + q] = g[q].o;
    for (size_t i = 0; i < J->n; i++) {
        if (!pj[i].job_class) continue;
        size_t lo = 0, hi = m; /* the first point of its class */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (strcmp(g[mid].cls, pj[i].job_class) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t e = lo;
        while (e < m && strcmp(g[e].cls, pj[i].job_class) == 0)
            e++;
        pj[i].class_obs = e > lo ? po + npo + lo : NULL;
        pj[i].n_class_obs = e - lo;
    }
    free(g);
    return PFI_OK;
}

/* Each job's learned points, contiguous in po: count, offsets, fill. */
static int gather_obs(ctl_jobs *J, pfi_plan_job *pj, pfi_plan_obs *po, size_t *used)
{
    size_t *first = calloc(J->n + 1, sizeof *first);
    size_t *owner = malloc((J->n_obs + 1) * sizeof *owner);
    if (!first || !owner) {
        free(first);
        free(owner);
        return PFI_ENOMEM;
    }
    for (size_t q = 0; q < J->n_obs; q++) {
        const ctl_job *j = ctl_job_find(J, J->obs[q].job);
        owner[q] = j ? (size_t)(j - J->v) : SIZE_MAX;
        if (j) pj[owner[q]].n_obs++;
    }
    size_t npo = 0;
    for (size_t i = 0; i < J->n; i++) {
        first[i] = npo;
        pj[i].obs = po + npo;
        npo += pj[i].n_obs;
        pj[i].n_obs = 0;
    }
    for (size_t q = 0; q < J->n_obs; q++)
        if (owner[q] != SIZE_MAX) po[first[owner[q]] + pj[owner[q]].n_obs++] = J->obs[q].o;
    free(first);
    free(owner);
    *used = npo;
    return PFI_OK;
}

int ctl_jobs_plan_inputs(ctl_jobs *J, const pfi_ctl_opts *o, pfi_ctl_store *st, int pushed,
                         double now, pfi_plan_job **pj_out, pfi_plan_obs **po_out)
{
    pfi_plan_job *pj = calloc(J->n + 1, sizeof *pj);
    pfi_plan_obs *po = calloc(2 * J->n_obs + 1, sizeof *po); /* own, then the departed */
    if (!pj || !po) {
        free(pj);
        free(po);
        return PFI_ENOMEM;
    }
    int learn = o->policy == PFI_PLAN_LEARN;
    for (size_t i = 0; i < J->n; i++) {
        ctl_job *j = &J->v[i];
        if (!j->capped && j->training) ctl_known_put(J, st, j->id, j->power_w, j->tps, now);
        const ctl_known *k = ctl_known_find(J, j->id);
        double sla = pfi_sla_of(o->sla, o->n_sla, j->id);
        if (j->sla > sla) sla = j->sla; /* the registration's floor, where it is higher */
        pj[i] = (pfi_plan_job){.id = j->id,
                               .n_gpus = j->n_gpus,
                               .min_w = j->min_w,
                               .max_w = isfinite(j->max_w) ? j->max_w : PFI_GPU_DEFAULT_W,
                               .pmax_w = k ? k->pmax_w : NAN,
                               .tmax = k ? k->tmax : NAN,
                               .pfi = j->pfi_n ? j->pfi_sum / (double)j->pfi_n : NAN,
                               .pfi_sd = j->pfi_sd,
                               .job_class = j->job_class[0] ? j->job_class : NULL,
                               .sla_frac = sla};
        known_class(J, st, j, now);
        if (!(pj[i].min_w > 0)) pj[i].min_w = pj[i].max_w * 0.3;
        pj[i].reading = ctl_job_reading(j, pushed);
        if (!learn) continue;
        const ctl_prior *pr = ctl_prior_find(J, j->id);
        if (pr) {
            pj[i].prior = pr->pts;
            pj[i].n_prior = pr->n;
        }
    }
    size_t own = 0;
    if (gather_obs(J, pj, po, &own) != PFI_OK || class_points(J, pj, po, own) != PFI_OK) {
        free(pj);
        free(po);
        return PFI_ENOMEM;
    }
    *pj_out = pj;
    *po_out = po;
    return PFI_OK;
}
