/* The caps the controller holds (ctl_internal.h): this period's per-GPU cap
 * from the plan's, the pushes (lowering first), and the table of what the
 * agents accepted, with each cap's expiry, mirrored in the store. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_internal.h"

#define CAP_STEP_W 5.0 /* caps in multiples of 5 W: less churn, learned points that repeat */

uint64_t ctl_held_key(size_t agent, unsigned gpu)
{
    return ctl_hash_2(agent, gpu);
}

typedef struct key_ctx {
    const ctl_held *v;
    size_t agent;
    unsigned gpu;
} key_ctx;

static int held_eq(size_t pos, const void *x)
{
    const key_ctx *k = x;
    return k->v[pos].agent == k->agent && k->v[pos].gpu == k->gpu;
}

ctl_held *ctl_held_find(const ctl_caps *K, size_t agent, unsigned gpu)
{
    key_ctx k = {K->v, agent, gpu};
    size_t pos = ctl_index_get(&K->ix, ctl_held_key(agent, gpu), held_eq, &k);
    return pos == SIZE_MAX ? NULL : &K->v[pos];
}

int ctl_held_add(ctl_caps *K, size_t agent, unsigned gpu, double watts, double expires_at)
{
    ctl_held *arr = ctl_grow(K->v, &K->cap, K->n + 1, sizeof *arr);
    if (!arr) return PFI_ENOMEM;
    K->v = arr;
    K->v[K->n] = (ctl_held){agent, gpu, watts, expires_at, 0};
    if (ctl_index_put(&K->ix, ctl_held_key(agent, gpu), K->n) != 0) return PFI_ENOMEM;
    K->n++;
    return PFI_OK;
}

void ctl_caps_free(ctl_caps *K)
{
    free(K->v);
    free(K->conf);
    ctl_index_free(&K->ix);
    memset(K, 0, sizeof *K);
}

ctl_conflict *ctl_conflict_find(const ctl_caps *K, size_t agent, unsigned gpu)
{
    /* rare (two controllers on one site): a scan */
    for (size_t k = 0; k < K->n_conf; k++)
        if (K->conf[k].agent == agent && K->conf[k].gpu == gpu) return &K->conf[k];
    return NULL;
}

void ctl_conflict_drop(ctl_caps *K, size_t k)
{
    K->conf[k] = K->conf[--K->n_conf];
}

/* pfid refused our cap on a GPU: another owner holds it. Said once per
 * owner and GPU; our own record of a cap there, if any, is dropped. */
static void conflict_note(ctl_caps *K, const pfi_cap_cmd *m, const char *url)
{
    ctl_conflict *f = ctl_conflict_find(K, m->agent, m->gpu);
    if (f && strcmp(f->owner, m->owner) == 0) {
        f->epoch = m->epoch;
        return;
    }
    pfi_log("agent %s GPU %u is held by controller %s (epoch %lld): counted as not ours, tried "
            "again every period",
            url, m->gpu, m->owner, m->epoch);
    if (!f) {
        ctl_conflict *arr = ctl_grow(K->conf, &K->cap_conf, K->n_conf + 1, sizeof *arr);
        if (!arr) return;
        K->conf = arr;
        f = &K->conf[K->n_conf++];
        memset(f, 0, sizeof *f);
        f->agent = m->agent;
        f->gpu = m->gpu;
        f->cap_w = NAN;
    }
    snprintf(f->owner, sizeof f->owner, "%s", m->owner);
    f->epoch = m->epoch;
}

/* Drops the caps released this period and re-indexes the rest. */
static void held_compact(ctl_caps *K)
{
    size_t k = 0;
    for (size_t i = 0; i < K->n; i++)
        if (!K->v[i].gone) K->v[k++] = K->v[i];
    K->n = k;
    ctl_index_clear(&K->ix);
    for (size_t i = 0; i < K->n; i++)
        ctl_index_put(&K->ix, ctl_held_key(K->v[i].agent, K->v[i].gpu), i);
}

double ctl_caps_next(double planned_w, int at_floor, double min_w, double max_w,
                     double *last_plan_w)
{
    /* down to the step, up for a job at its floor (its SLA) */
    double cap = at_floor ? ceil(planned_w / CAP_STEP_W - 1e-9) * CAP_STEP_W
                          : floor(planned_w / CAP_STEP_W) * CAP_STEP_W;
    if (cap > max_w) cap = max_w;
    if (cap < min_w) cap = ceil(min_w);
    /* Up one period late: a cap is at most what this period's and the last
     * period's plans give it. Watts moved between jobs then leave one job a
     * period before they reach another, so that readings of different nodes
     * a period apart (Prometheus scrapes its targets at different instants)
     * never add up over the budget. */
    double plan = cap;
    if (isfinite(*last_plan_w) && cap > *last_plan_w) cap = *last_plan_w;
    *last_plan_w = plan;
    return cap;
}

/* Down before up: the caps that lower a GPU (or hold it) go first and are
 * answered before any is raised or released, so that moving watts from one
 * job to another never has the site over for a moment (an agent samples as
 * soon as a cap changes). Returns how many lower. */
static size_t lowering_first(const ctl_caps *K, pfi_cap_cmd *cmds, size_t n)
{
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        const ctl_held *h = ctl_held_find(K, cmds[i].agent, cmds[i].gpu);
        if (cmds[i].watts > 0 && (!h || cmds[i].watts <= h->watts)) {
            pfi_cap_cmd t = cmds[nd];
            cmds[nd++] = cmds[i];
            cmds[i] = t;
        }
    }
    return nd;
}

int ctl_caps_push(ctl_caps *K, pfi_agents *ag, pfi_ctl_store *st, pfi_cap_cmd *cmds, size_t n,
                  double now)
{
    if (n == 0) {
        pfi_ctl_store_begin(st, NULL);
        return PFI_OK;
    }
    size_t nd = lowering_first(K, cmds, n);
    pfi_agents_push(ag, cmds, nd);
    pfi_agents_push(ag, cmds + nd, n - nd);
    K->pushes += n;
    pfi_ctl_store_begin(st, NULL); /* the period's records; committed by the caller */
    int logged = 0, rc = PFI_OK;
    for (size_t i = 0; i < n; i++) {
        pfi_cap_cmd *m = &cmds[i];
        const char *url = pfi_agents_get(ag, m->agent)->url;
        pfi_ctl_store_add_push(st, now, url, m->gpu, m->watts, m->status, NULL);
        ctl_held *h = ctl_held_find(K, m->agent, m->gpu);
        if (m->owner[0]) {
            /* not a failure of ours: the GPU is another controller's */
            K->refused++;
            conflict_note(K, m, url);
            if (h) {
                h->gone = 1;
                pfi_ctl_store_put_cap(st, url, m->gpu, 0, 0, now, NULL);
            }
            continue;
        }
        if (m->status != 200) rc = PFI_EIO;
        if (m->status == 200) {
            ctl_conflict *f = ctl_conflict_find(K, m->agent, m->gpu);
            if (f) {
                pfi_log("agent %s GPU %u: ours again (controller %s let it go)", url, m->gpu,
                        f->owner);
                ctl_conflict_drop(K, (size_t)(f - K->conf));
            }
        }
        if (m->status == 200 && m->watts > 0) {
            if (!h) {
                if (ctl_held_add(K, m->agent, m->gpu, m->watts, 0) != PFI_OK) {
                    /* in force on the agent, but not held here: it expires */
                    if (logged++ < 3) pfi_log("out of memory recording a cap");
                    rc = PFI_ENOMEM;
                    continue;
                }
                h = &K->v[K->n - 1];
            }
            h->watts = m->watts;
            h->expires_at = now + m->expires_s;
            pfi_ctl_store_put_cap(st, url, m->gpu, m->watts, h->expires_at, now, NULL);
        } else if (m->watts <= 0 && (m->status == 200 || m->status == 404)) {
            if (h) h->gone = 1;
            pfi_ctl_store_put_cap(st, url, m->gpu, 0, 0, now, NULL);
            K->releases++;
        } else {
            K->errors++;
            if (logged++ < 3) pfi_log("cap call failed: %s", m->error[0] ? m->error : "no answer");
        }
    }
    held_compact(K);
    return rc;
}

int ctl_caps_commands(const ctl_caps *K, pfi_agents *ag, const ctl_job *jobs,
                      const pfi_plan_cap *caps, size_t n_jobs, int keep, double expires_s,
                      pfi_cap_cmd **out, size_t *n_out)
{
    size_t n = 0, room = K->n + K->n_conf + 1;
    for (size_t i = 0; caps && i < n_jobs; i++)
        room += jobs[i].n_gpus;
    pfi_cap_cmd *cmds = calloc(room, sizeof *cmds);
    char *want = calloc(K->n + 1, 1);
    if (!cmds || !want) {
        free(cmds);
        free(want);
        return PFI_ENOMEM;
    }
    for (size_t i = 0; caps && i < n_jobs; i++)
        for (size_t k = 0; k < jobs[i].n_gpus; k++) {
            const ctl_held *h = ctl_held_find(K, jobs[i].gpu_agent[k], jobs[i].gpu_idx[k]);
            if (h) want[h - K->v] = 1;
            cmds[n++] = (pfi_cap_cmd){.agent = jobs[i].gpu_agent[k],
                                      .gpu = jobs[i].gpu_idx[k],
                                      .watts = caps[i].cap_w,
                                      .expires_s = expires_s};
        }
    /* Release what is held but not wanted (no target, or the job ended), on
     * agents that answer; a dead agent's caps expire on their own. keep
     * (the plan failed during an event) renews them as they are: a planning
     * error must never lift them. */
    for (size_t h = 0; h < K->n; h++) {
        if (want[h] || !pfi_agents_get(ag, K->v[h].agent)->up) continue;
        cmds[n++] = (pfi_cap_cmd){.agent = K->v[h].agent,
                                  .gpu = K->v[h].gpu,
                                  .watts = keep ? K->v[h].watts : 0,
                                  .expires_s = expires_s};
    }
    for (size_t k = 0; caps && k < K->n_conf; k++) {
        const ctl_conflict *f = &K->conf[k];
        if (!pfi_agents_get(ag, f->agent)->up) continue;
        double w = f->cap_w;
        for (size_t i = 0; f->job[0] && i < n_jobs; i++)
            if (strcmp(jobs[i].id, f->job) == 0 && !(w <= caps[i].cap_w)) w = caps[i].cap_w;
        if (!(w > 0)) continue; /* nothing safe to offer: its listing says when it is free */
        cmds[n++] =
            (pfi_cap_cmd){.agent = f->agent, .gpu = f->gpu, .watts = w, .expires_s = expires_s};
    }
    free(want);
    *out = cmds;
    *n_out = n;
    return PFI_OK;
}
