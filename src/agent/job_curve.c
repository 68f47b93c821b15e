/* What the agent has seen of each job's power/throughput curve: for every
 * per-GPU limit the job has trained at in steady state, the job's total power
 * and tokens/s, how many reports and their spread. The controller learns
 * from it, and an operator can read a job's flexibility off it without a
 * sweep. Points live in the store (job_points), written whole, so they
 * survive restarts and outlive the job.
 *
 * Steady state: the job is in its training phase and every one of its GPUs
 * has had the same limit (within 1 W) for CURVE_HOLD_TICKS sampler ticks in a
 * row, and no cap has been set or lifted on them since the last tick. A
 * throughput report then made is one sample of that limit's point, paired
 * with the job's total power at the last tick; the ticks before the hold is
 * met are the settling after a change and count nowhere.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "pfi/json.h"

/* "cap held at least a few samples": the first two ticks at a new limit
 * (the one that saw the change and the next) are settling. */
#define CURVE_HOLD_TICKS 3
#define LEVEL_TOL_W 1.0
/* A job's curve has at most this many points (every whole watt of a 200-700
 * W range is 501); beyond it new levels are not recorded. */
#define CURVE_MAX_POINTS 1024

void agent_curve_free(agent_curve *c)
{
    free(c->pts);
    free(c->m2);
    free(c->dirty);
    memset(c, 0, sizeof *c);
}

static int grow(agent_curve *c)
{
    if (c->n < c->cap) return PFI_OK;
    size_t cap = c->cap ? 2 * c->cap : 8;
    pfi_store_point *p = realloc(c->pts, cap * sizeof *p);
    if (!p) return PFI_ENOMEM;
    c->pts = p;
    double *m = realloc(c->m2, cap * sizeof *m);
    if (!m) return PFI_ENOMEM;
    c->m2 = m;
    unsigned char *d = realloc(c->dirty, cap * sizeof *d);
    if (!d) return PFI_ENOMEM;
    c->dirty = d;
    c->cap = cap;
    return PFI_OK;
}

int agent_curve_load(agent *a, agent_job *j, pfi_error *err)
{
    agent_curve *c = &j->curve;
    pfi_store_point *pts = NULL;
    size_t n = 0;
    int rc = pfi_store_points(a->store, j->rec.id, &pts, &n, err);
    if (rc != PFI_OK) return rc;
    for (size_t i = 0; i < n && rc == PFI_OK; i++) {
        if ((rc = grow(c)) != PFI_OK) {
            rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
            break;
        }
        /* by cap_w already (pfi_store_points' order) */
        c->pts[c->n] = pts[i];
        c->m2[c->n] =
            pts[i].n > 1 ? pts[i].tokens_sd * pts[i].tokens_sd * (double)(pts[i].n - 1) : 0;
        c->dirty[c->n] = 0;
        c->n++;
    }
    free(pts);
    return rc;
}

/* The per-GPU limit every GPU of the job ran at this tick (whole W), NaN when
 * one is unknown or they differ. The sample's enforced limit, else the last
 * one read from the device. */
static double tick_level(const agent *a, const agent_job *j, const pfi_gpu_sample *const *by_gpu)
{
    double level = NAN;
    for (size_t k = 0; k < j->rec.n_gpus; k++) {
        unsigned g = j->rec.gpus[k];
        const pfi_gpu_sample *x = by_gpu[g];
        double lim = x && pfi_gpu_sample_has(x, PFI_GF_LIMIT) ? x->v[PFI_GF_LIMIT]
                     : a->gpus[g].have_limits                 ? a->gpus[g].limits.enforced_w
                                                              : NAN;
        if (!x || !(lim > 0) || !isfinite(lim)) return NAN;
        if (k == 0)
            level = lim;
        else if (fabs(lim - level) > LEVEL_TOL_W)
            return NAN;
    }
    return round(level);
}

void agent_curve_tick(agent *a, agent_job *j, const pfi_gpu_sample *const *by_gpu)
{
    agent_curve *c = &j->curve;
    double level = tick_level(a, j, by_gpu);
    if (j->phase != PFI_PHASE_TRAINING || !isfinite(level)) {
        c->level_w = NAN;
        c->held = 0;
        return;
    }
    if (level == c->level_w) {
        c->held++;
    } else {
        c->level_w = level;
        c->held = 1;
    }
}

/* Whether a report now is a sample of the current level: held long enough,
 * power known, and no cap set or lifted on the job's GPUs since the tick
 * (the HTTP call changes the GPU's state at once, the tick comes later). */
static int steady(const agent *a, const agent_job *j)
{
    const agent_curve *c = &j->curve;
    if (c->held < CURVE_HOLD_TICKS || !isfinite(c->level_w) || !isfinite(j->last_power_w)) return 0;
    for (size_t k = 0; k < j->rec.n_gpus; k++) {
        const agent_gpu *x = &a->gpus[j->rec.gpus[k]];
        double now = x->capped ? x->cap_w : x->have_limits ? x->limits.enforced_w : c->level_w;
        if (fabs(now - c->level_w) > LEVEL_TOL_W) return 0;
    }
    return 1;
}

void agent_curve_report(agent *a, agent_job *j, double t, double tokens_per_s)
{
    if (!steady(a, j)) return;
    agent_curve *c = &j->curve;
    size_t i = 0;
    while (i < c->n && c->pts[i].cap_w < c->level_w)
        i++;
    if (i == c->n || c->pts[i].cap_w != c->level_w) {
        if (c->n >= CURVE_MAX_POINTS || grow(c) != PFI_OK) return;
        memmove(&c->pts[i + 1], &c->pts[i], (c->n - i) * sizeof *c->pts);
        memmove(&c->m2[i + 1], &c->m2[i], (c->n - i) * sizeof *c->m2);
        memmove(&c->dirty[i + 1], &c->dirty[i], (c->n - i) * sizeof *c->dirty);
        c->n++;
        pfi_store_point *p = &c->pts[i];
        memset(p, 0, sizeof *p);
        snprintf(p->job, sizeof p->job, "%s", j->rec.id);
        p->cap_w = c->level_w;
        p->t_first = t;
        c->m2[i] = 0;
    }
    /* Welford: the running means and the tokens/s sum of squares, exact
     * enough over millions of reports and mergeable with a stored point. */
    pfi_store_point *p = &c->pts[i];
    p->n++;
    double nn = (double)p->n;
    p->power_w += (j->last_power_w - p->power_w) / nn;
    double d = tokens_per_s - p->tokens_per_s;
    p->tokens_per_s += d / nn;
    c->m2[i] += d * (tokens_per_s - p->tokens_per_s);
    p->tokens_sd = p->n > 1 ? sqrt(c->m2[i] / (nn - 1)) : 0;
    if (t < p->t_first) p->t_first = t;
    if (t > p->t_last) p->t_last = t;
    c->dirty[i] = 1;
}

double agent_curve_sd(const agent_job *j)
{
    const agent_curve *c = &j->curve;
    if (!isfinite(c->level_w)) return NAN;
    for (size_t i = 0; i < c->n && c->pts[i].cap_w <= c->level_w; i++)
        if (c->pts[i].cap_w == c->level_w) return c->pts[i].n >= 2 ? c->pts[i].tokens_sd : NAN;
    return NAN;
}

size_t agent_curve_take_dirty(agent_job *j, double now, pfi_store_point **out)
{
    agent_curve *c = &j->curve;
    *out = NULL;
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        n += c->dirty[i];
    if (n == 0) return 0;
    *out = malloc(n * sizeof **out);
    if (!*out) return 0; /* stays dirty: the next write takes it */
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->dirty[i]) {
            (*out)[k++] = c->pts[i];
            c->dirty[i] = 0;
        }
    c->saved_at = now;
    return n;
}

size_t agent_curves_take_due(agent *a, double now, pfi_store_point **out)
{
    *out = NULL;
    size_t n = 0;
    for (size_t i = 0; i < a->n_jobs; i++) {
        agent_job *j = a->jobs[i];
        if (now - j->curve.saved_at < a->o.interval_s) continue;
        pfi_store_point *pts;
        size_t k = agent_curve_take_dirty(j, now, &pts);
        if (!k) continue;
        pfi_store_point *all = realloc(*out, (n + k) * sizeof *all);
        if (!all) { /* written with the next report, or at the end */
            free(pts);
            continue;
        }
        memcpy(all + n, pts, k * sizeof *pts);
        free(pts);
        *out = all;
        n += k;
    }
    return n;
}

void agent_curve_save(agent *a, const char *job, const pfi_store_point *pts, size_t n)
{
    /* A failing store fails every write: say it once per change of state. */
    static int failing;
    for (size_t i = 0; i < n; i++) {
        pfi_error err;
        int ok = pfi_store_point_put(a->store, &pts[i], &err) == PFI_OK;
        if (!ok && !__atomic_exchange_n(&failing, 1, __ATOMIC_RELAXED))
            pfi_log("store: curve point %s at %.0f W not written: %s (retried with its next "
                    "report)",
                    job, pts[i].cap_w, err.msg);
        if (ok && __atomic_exchange_n(&failing, 0, __ATOMIC_RELAXED))
            pfi_log("store: writing curve points again");
    }
}

static json_t *points_json(const pfi_store_point *pts, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const pfi_store_point *p = &pts[i];
        json_t *o = json_object();
        pfi_json_set(o, "cap_w", pfi_json_num(p->cap_w));
        pfi_json_set(o, "power_w", pfi_json_num(p->power_w));
        pfi_json_set(o, "tokens_per_s", pfi_json_num(p->tokens_per_s));
        pfi_json_set(o, "tokens_sd", pfi_json_num(p->tokens_sd));
        pfi_json_set(o, "n", json_integer((json_int_t)p->n));
        pfi_json_set(o, "t_first", pfi_json_num(p->t_first));
        pfi_json_set(o, "t_last", pfi_json_num(p->t_last));
        json_array_append_new(arr, o);
    }
    return arr;
}

static json_t *curve_json(const char *id, int running, double level_w, int is_steady,
                          const pfi_store_point *pts, size_t n)
{
    json_t *o = json_object();
    pfi_json_set(o, "job", json_string(id));
    pfi_json_set(o, "running", json_boolean(running));
    pfi_json_set(o, "level_w", isfinite(level_w) ? pfi_json_num(level_w) : json_null());
    pfi_json_set(o, "steady", json_boolean(is_steady));
    pfi_json_set(o, "hold_ticks", json_integer(CURVE_HOLD_TICKS));
    pfi_json_set(o, "points", points_json(pts, n));
    return o;
}

int agent_curve_get(agent *a, const char *id, json_t **out, pfi_error *err)
{
    pthread_mutex_lock(&a->mu);
    int i = agent_job_find(a, id);
    if (i >= 0) {
        const agent_job *j = a->jobs[i];
        *out = curve_json(id, 1, j->curve.level_w, steady(a, j), j->curve.pts, j->curve.n);
        pthread_mutex_unlock(&a->mu);
        return PFI_OK;
    }
    pthread_mutex_unlock(&a->mu);
    /* An ended job: what the store kept (read without mu: scrapes and the
     * sampler need not wait on SQLite). */
    pfi_store_point *pts = NULL;
    size_t n = 0;
    int rc = pfi_store_points(a->store, id, &pts, &n, err);
    if (rc != PFI_OK) return rc;
    if (n == 0)
        return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0,
                             "no job '%s' (running, or "
                             "with a stored curve)",
                             id);
    *out = curve_json(id, 0, NAN, 0, pts, n);
    free(pts);
    return PFI_OK;
}
