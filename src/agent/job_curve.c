/* What the agent has seen of each job's power curve: for every cap level
 * the job ran at in steady state, its power and throughput (GET
 * /v1/jobs/ID/curve, the store's job_points).
 *
 * A tick's level is the limit all of the job's GPUs run at (pfid's cap, or
 * the prior limit when uncapped); GPUs at different levels give no point.
 * Steady state: the training phase, and the level held for CURVE_HOLD
 * samples, so that a report straddling a cap change (tokens/s lag the cap
 * by a step or two) is not counted at the new level. Each throughput report
 * then adds to its level's tokens/s (mean and spread, Welford), each tick to
 * its power (mean). Points are written to the store once per tick when they
 * changed, and read back when a job is restored after a restart.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "pfi/json.h"

#define CURVE_HOLD 3      /* samples at a level before it counts */
#define LEVEL_TOL_W 0.5   /* GPUs within this are at the same level */

struct curve_point {
    pfi_store_point p;
    double m2;            /* Welford: sum of squared deviations of tokens/s */
    double power_sum;     /* over power_n ticks */
    unsigned long power_n;
    int dirty;            /* changed since it was last stored */
};

static curve_point *find_point(agent_job *j, double level)
{
    for (size_t i = 0; i < j->n_points; i++)
        if (fabs(j->points[i].p.cap_w - level) <= LEVEL_TOL_W) return &j->points[i];
    return NULL;
}

static curve_point *add_point(agent_job *j, double level, double t)
{
    curve_point *c = find_point(j, level);
    if (c) return c;
    if (j->n_points == j->cap_points) {
        size_t cap = j->cap_points ? 2 * j->cap_points : 4;
        curve_point *p = realloc(j->points, cap * sizeof *p);
        if (!p) return NULL;
        j->points = p;
        j->cap_points = cap;
    }
    c = &j->points[j->n_points++];
    memset(c, 0, sizeof *c);
    snprintf(c->p.job, sizeof c->p.job, "%s", j->rec.id);
    c->p.cap_w = round(level);
    c->p.power_w = c->p.tokens_per_s = NAN;
    c->p.t_first = c->p.t_last = t;
    return c;
}

/* The level all of the job's GPUs are at now, NaN when they differ. */
static double level_now(const agent *a, const agent_job *j)
{
    double level = NAN;
    for (size_t k = 0; k < j->rec.n_gpus; k++) {
        const agent_gpu *x = &a->gpus[j->rec.gpus[k]];
        double l = x->capped ? x->cap_w : agent_gpu_prior_w(x);
        if (k == 0)
            level = l;
        else if (!(fabs(l - level) <= LEVEL_TOL_W))
            level = NAN;
    }
    return level;
}

void agent_curve_tick(agent *a, agent_job *j, double t)
{
    double level = level_now(a, j);
    if (!isfinite(level) || !(fabs(level - j->level_w) <= LEVEL_TOL_W)) {
        j->level_w = level;
        j->level_ticks = 0;
    }
    j->level_ticks++;
    if (!agent_curve_steady(j) || !isfinite(j->last_power_w)) return;
    curve_point *c = find_point(j, level);
    if (!c) return; /* a point starts with its first report (tokens/s are not NULL) */
    c->power_sum += j->last_power_w;
    c->power_n++;
    c->p.power_w = c->power_sum / (double)c->power_n;
    c->p.t_last = t;
    c->dirty = 1;
}

int agent_curve_steady(const agent_job *j)
{
    return j->phase == PFI_PHASE_TRAINING && isfinite(j->level_w) && j->level_ticks > CURVE_HOLD;
}

void agent_curve_report(agent *a, agent_job *j, double t, double tokens_per_s)
{
    /* A cap set since the last tick: the report is not the new level's yet,
     * nor the old one's any more. */
    if (!agent_curve_steady(j) || !(fabs(level_now(a, j) - j->level_w) <= LEVEL_TOL_W)) return;
    curve_point *c = add_point(j, j->level_w, t);
    if (!c) return;
    c->p.n++;
    if (c->p.n == 1) c->p.tokens_per_s = 0;
    double d = tokens_per_s - c->p.tokens_per_s;
    c->p.tokens_per_s += d / (double)c->p.n;
    c->m2 += d * (tokens_per_s - c->p.tokens_per_s);
    c->p.tokens_sd = c->p.n > 1 ? sqrt(c->m2 / (double)(c->p.n - 1)) : 0;
    if (!isfinite(c->p.power_w) && isfinite(j->last_power_w)) {
        c->power_sum = j->last_power_w;
        c->power_n = 1;
        c->p.power_w = j->last_power_w;
    }
    c->p.t_last = t;
    c->dirty = 1;
}

size_t agent_curve_take_dirty(agent *a, pfi_store_point **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    for (size_t i = 0; i < a->n_jobs; i++) {
        agent_job *j = a->jobs[i];
        for (size_t k = 0; k < j->n_points; k++) {
            curve_point *c = &j->points[k];
            if (!c->dirty || !isfinite(c->p.power_w) || !isfinite(c->p.tokens_per_s)) continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 8;
                pfi_store_point *p = realloc(*out, cap * sizeof *p);
                if (!p) return n;
                *out = p;
            }
            (*out)[n++] = c->p;
            c->dirty = 0;
        }
    }
    return n;
}

void agent_curve_restore(agent *a, agent_job *j)
{
    pfi_store_point *pts;
    size_t n;
    pfi_error err;
    if (pfi_store_points(a->store, j->rec.id, &pts, &n, &err) != PFI_OK) {
        agent_log("job %s: curve points not read back: %s", j->rec.id, err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        curve_point *c = add_point(j, pts[i].cap_w, pts[i].t_first);
        if (!c || !(pts[i].n > 0)) continue;
        c->p = pts[i];
        c->m2 = pts[i].tokens_sd * pts[i].tokens_sd * (double)(pts[i].n - 1);
        c->power_sum = pts[i].power_w * (double)pts[i].n; /* its weight: the reports' */
        c->power_n = (unsigned long)pts[i].n;
    }
    free(pts);
}

static json_t *point_json(const pfi_store_point *p)
{
    json_t *o = json_object();
    pfi_json_set(o, "cap_w", pfi_json_num(p->cap_w));
    pfi_json_set(o, "power_w", pfi_json_num(p->power_w));
    pfi_json_set(o, "tokens_per_s", pfi_json_num(p->tokens_per_s));
    pfi_json_set(o, "tokens_sd", pfi_json_num(p->tokens_sd));
    pfi_json_set(o, "n", json_integer(p->n));
    pfi_json_set(o, "t_first", pfi_json_num(p->t_first));
    pfi_json_set(o, "t_last", pfi_json_num(p->t_last));
    return o;
}

static int by_cap(const void *x, const void *y)
{
    const pfi_store_point *a = x, *b = y;
    return (a->cap_w > b->cap_w) - (a->cap_w < b->cap_w);
}

json_t *agent_curve_json(const char *id, pfi_store_point *pts, size_t n)
{
    qsort(pts, n, sizeof *pts, by_cap);
    json_t *o = json_object(), *arr = json_array();
    pfi_json_set(o, "job", json_string(id));
    for (size_t i = 0; i < n; i++)
        if (isfinite(pts[i].power_w) && isfinite(pts[i].tokens_per_s))
            json_array_append_new(arr, point_json(&pts[i]));
    pfi_json_set(o, "points", arr);
    return o;
}

size_t agent_curve_copy(const agent_job *j, pfi_store_point **out)
{
    *out = malloc((j->n_points ? j->n_points : 1) * sizeof **out);
    if (!*out) return 0;
    for (size_t i = 0; i < j->n_points; i++) (*out)[i] = j->points[i].p;
    return j->n_points;
}
