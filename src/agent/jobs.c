/* The job registry: which job runs on which GPUs, its throughput reports,
 * its phase, and its training-phase aggregates over the rolling window. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "pfi/tm_aggregate.h"
#include "pfi/features.h"
#include "pfi/json.h"

/* The paper's steady-state statistic: mean of the top 10% of samples. */
#define TOP_FRAC 0.1
/* A limit within this of another is the same limit (NVML sets whole mW, a
 * backend may round). */
#define LIMIT_TOL_W 1.0

const char *agent_job_basis_name(job_basis b)
{
    switch (b) {
    case JOB_BASIS_UNCAPPED:
        return "uncapped";
    case JOB_BASIS_LAST_UNCAPPED:
        return "last_uncapped";
    default:
        return "none";
    }
}

int agent_job_find(const agent *a, const char *id)
{
    for (size_t i = 0; i < a->n_jobs; i++)
        if (strcmp(a->jobs[i]->rec.id, id) == 0) return (int)i;
    return -1;
}

static void job_free(agent_job *j)
{
    if (!j) return;
    pfi_trace_seg_destroy(j->seg);
    pfi_trace_roll_destroy(j->roll);
    pfi_trace_roll_destroy(j->tput);
    agent_curve_free(&j->curve);
    free(j->agg);
    free(j->basis);
    free(j);
}

/* Writes the job's curve points changed since the last write (caller holds
 * mu: job end and shutdown only, so a store write under mu is rare). */
static void curve_flush(agent *a, agent_job *j)
{
    pfi_store_point *pts;
    size_t n = agent_curve_take_dirty(j, pfi_clock_wall(), &pts);
    if (n) agent_curve_save(a, j->rec.id, pts, n);
    free(pts);
}

void agent_jobs_free(agent *a)
{
    for (size_t i = 0; i < a->n_jobs; i++) {
        if (a->store) curve_flush(a, a->jobs[i]);
        job_free(a->jobs[i]);
    }
    free(a->jobs);
    a->jobs = NULL;
    a->n_jobs = a->cap_jobs = 0;
}

/* GPU -> job index map, rebuilt after every change of the list. */
static void reindex(agent *a)
{
    for (unsigned g = 0; g < a->n_gpus; g++)
        a->gpus[g].job = -1;
    for (size_t i = a->n_jobs; i-- > 0;)
        for (size_t k = 0; k < a->jobs[i]->rec.n_gpus; k++)
            a->gpus[a->jobs[i]->rec.gpus[k]].job = (int)i;
}

int agent_job_register(agent *a, const pfi_store_job *rec, int persist, pfi_error *err)
{
    /* Samples at most every 0.05 s over the window, bounded so that a tiny
     * interval cannot make a job's history unbounded. */
    size_t max_samples = (size_t)ceil(a->o.window_s / a->o.interval_s) + 2;
    if (max_samples > 200000) max_samples = 200000;
    agent_job *j = calloc(1, sizeof *j);
    if (!j) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    j->rec = *rec;
    j->last_tput = NAN;
    j->last_power_w = NAN;
    j->uncapped_t = NAN;
    j->curve.level_w = NAN;
    j->agg = calloc(1, sizeof *j->agg);
    j->basis = calloc(1, sizeof *j->basis);
    /* Reports: 20/s over the window is far beyond a trainer's rate; beyond
     * it the window keeps the newest (older ones are in the store). */
    double tput_cap = a->o.window_s * 20;
    if (tput_cap > 100000) tput_cap = 100000;
    if (tput_cap < 1000) tput_cap = 1000;
    /* Reports can come far more often than samples (1000/s in the bench):
     * keep the window's worth up to a bound; older ones are in the store. */
    pfi_trace_params tp;
    pfi_trace_params_default(&tp);
    tp.sustain_s = a->o.phase_hold_s;
    if (pfi_trace_seg_create(&tp, &j->seg) != PFI_OK ||
        pfi_trace_roll_create(JF_COUNT, a->o.window_s, max_samples, &j->roll) != PFI_OK ||
        pfi_trace_roll_create(1, a->o.window_s, (size_t)tput_cap, &j->tput) != PFI_OK || !j->agg ||
        !j->basis) {
        job_free(j);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    /* The curve seen so far (a restart, or an id that ran before) goes on
     * from the store: points are written whole, so starting empty would
     * overwrite them. */
    int lrc = agent_curve_load(a, j, err);
    if (lrc != PFI_OK) {
        job_free(j);
        return lrc;
    }
    pthread_mutex_lock(&a->mu);
    int rc = PFI_OK;
    /* The id first: a restarted trainer re-registering its own job must
     * hear "already registered", not "GPU busy" (by itself). */
    if (agent_job_find(a, rec->id) >= 0)
        rc = pfi_error_set(err, PFI_ESTATE, NULL, 0, "job '%s' is already registered", rec->id);
    for (size_t k = 0; k < rec->n_gpus && rc == PFI_OK; k++) {
        unsigned g = rec->gpus[k];
        if (g >= a->n_gpus)
            rc = pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "GPU %u does not exist (%u GPUs)", g,
                               a->n_gpus);
        else if (a->gpus[g].job >= 0 && !a->o.share_gpus)
            rc = pfi_error_set(err, PFI_ESTATE, NULL, 0, "GPU %u is already used by job '%s'", g,
                               a->jobs[a->gpus[g].job]->rec.id);
    }
    if (rc == PFI_OK && a->n_jobs == a->cap_jobs) {
        size_t cap = a->cap_jobs ? 2 * a->cap_jobs : 16;
        agent_job **p = realloc(a->jobs, cap * sizeof *p);
        if (!p)
            rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        else {
            a->jobs = p;
            a->cap_jobs = cap;
        }
    }
    /* The store write happens under mu so that a concurrent registration of
     * the same id cannot pass the check above in between. */
    if (rc == PFI_OK && persist) rc = pfi_store_job_add(a->store, &j->rec, err);
    if (rc == PFI_OK) {
        a->jobs[a->n_jobs++] = j;
        reindex(a);
        a->gen++;
    }
    pthread_mutex_unlock(&a->mu);
    if (rc != PFI_OK) job_free(j);
    return rc;
}

int agent_job_end(agent *a, const char *id, json_t **summary, pfi_error *err)
{
    pthread_mutex_lock(&a->mu);
    int i = agent_job_find(a, id);
    if (i < 0) {
        pthread_mutex_unlock(&a->mu);
        return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "no job '%s'", id);
    }
    agent_job *j = a->jobs[i];
    int rc = pfi_store_job_end(a->store, id, pfi_clock_wall(), err);
    if (rc == PFI_OK || rc == PFI_ENOTFOUND) {
        rc = PFI_OK;
        curve_flush(a, j);
        if (summary) *summary = agent_job_json(a, j);
        memmove(&a->jobs[i], &a->jobs[i + 1], (a->n_jobs - (size_t)i - 1) * sizeof *a->jobs);
        a->n_jobs--;
        reindex(a);
        a->gen++;
        job_free(j);
    }
    pthread_mutex_unlock(&a->mu);
    return rc;
}

int agent_job_report(agent *a, const char *id, double tokens_per_s, unsigned long long *n,
                     pfi_error *err)
{
    double t = pfi_clock_wall();
    pthread_mutex_lock(&a->mu);
    int found = agent_job_find(a, id) >= 0;
    pthread_mutex_unlock(&a->mu);
    if (!found) return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "no job '%s'", id);
    /* Stored first (a report acknowledged is a report kept), outside mu so
     * that scrapes do not wait on SQLite. A job ended in between leaves a
     * stored report that nothing counts, which is harmless. */
    int rc = pfi_store_add_throughput(a->store, id, t, tokens_per_s, err);
    if (rc != PFI_OK) return rc;
    pfi_store_point *pts = NULL;
    size_t dirty = 0;
    char job[PFI_STORE_JOB_ID_MAX + 1];
    pthread_mutex_lock(&a->mu);
    int i = agent_job_find(a, id);
    if (i < 0) {
        rc = pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "job '%s' ended meanwhile", id);
    } else {
        agent_job *j = a->jobs[i];
        pfi_trace_roll_push(j->tput, t, &tokens_per_s);
        j->tput_pushes++;
        j->last_tput = tokens_per_s;
        j->last_tput_t = t;
        *n = ++j->reports;
        agent_curve_report(a, j, t, tokens_per_s);
        /* Curve points are written at most once an interval, outside mu
         * (a point is cumulative: the latest write has everything). */
        if (t - j->curve.saved_at >= a->o.interval_s) {
            dirty = agent_curve_take_dirty(j, t, &pts);
            snprintf(job, sizeof job, "%s", j->rec.id);
        }
        a->gen++;
    }
    pthread_mutex_unlock(&a->mu);
    if (dirty) agent_curve_save(a, job, pts, dirty);
    free(pts);
    return rc;
}

/* Whether GPU g's sample is uncapped telemetry, as the predictor was fitted
 * on (paper Sec. 6: "telemetry measured on the uncapped run"): taken at the
 * GPU's prior limit (the one in force before pfid's cap, or, without one, the
 * power-management limit: an out-of-band limit below it counts as a cap).
 * The power-cap clock event is allowed at the device's default limit, where
 * the predictor's runs had it too (a dense job is power-bound at 700 W on an
 * H200); at a prior limit below the default (a site policy) the sample
 * counts only while that limit does not bind. */
static int sample_uncapped(const agent *a, unsigned g, const pfi_gpu_sample *x)
{
    const agent_gpu *d = &a->gpus[g];
    double prior = agent_gpu_prior_w(d);
    double lim = pfi_gpu_sample_has(x, PFI_GF_LIMIT) ? x->v[PFI_GF_LIMIT]
                 : d->have_limits                    ? d->limits.enforced_w
                                                     : NAN;
    if (isfinite(prior) && isfinite(lim) && prior > 0 && lim > 0) {
        if (lim < prior - LIMIT_TOL_W) return 0;
    } else if (d->capped) {
        return 0; /* capped by pfid, and no way to tell the cap does not apply */
    }
    int binds = pfi_gpu_sample_has(x, PFI_GF_CLOCK_EVENTS) &&
                ((uint32_t)x->v[PFI_GF_CLOCK_EVENTS] & PFI_CLK_POWER_CAP);
    double def = d->have_limits ? d->limits.default_w : NAN;
    if (binds && !(def > 0 && isfinite(lim) && lim >= def - LIMIT_TOL_W)) return 0;
    return 1;
}

static void aggregate(agent *a, agent_job *j, job_agg *out);

/* The job's telemetry at one tick: each telemetry.csv field the mean over
 * the job's GPUs that read it (NaN when none did), in DCGM's units through
 * the GPU field table. by_gpu[g] is NULL for a GPU not read. A tick is
 * uncapped when every GPU of the job that was read (at least one) is. */
static void push_values(agent *a, agent_job *j, double t, const pfi_gpu_sample *const *by_gpu)
{
    double v[JF_COUNT], sum[PFI_TM_NFIELDS] = {0};
    size_t n[PFI_TM_NFIELDS] = {0};
    int read = 0, uncapped = 1;
    for (size_t k = 0; k < j->rec.n_gpus; k++) {
        const pfi_gpu_sample *x = by_gpu[j->rec.gpus[k]];
        if (!x) continue;
        read = 1;
        uncapped &= sample_uncapped(a, j->rec.gpus[k], x);
        pfi_tm_row row;
        pfi_tm_from_gpu_sample(x, &row);
        for (int f = 0; f < PFI_TM_NFIELDS; f++)
            if (row.valid & (1u << f)) {
                sum[f] += row.v[f];
                n[f]++;
            }
    }
    for (int f = 0; f < PFI_TM_NFIELDS; f++)
        v[f] = n[f] ? sum[f] / (double)n[f] : NAN;
    /* Total power counts only when every GPU of the job read it: a sum
     * over some GPUs would look like a power drop. */
    double total = 0;
    for (size_t k = 0; k < j->rec.n_gpus; k++) {
        const pfi_gpu_sample *x = by_gpu[j->rec.gpus[k]];
        if (!x || !pfi_gpu_sample_has(x, PFI_GF_POWER)) {
            total = NAN;
            break;
        }
        total += x->v[PFI_GF_POWER];
    }
    v[JF_TOTAL_POWER] = total;
    j->last_power_w = total;
    uncapped &= read;
    /* The first capped tick after uncapped ones: the basis is frozen as it
     * is now (the aggregate may not have been asked for since). */
    if (!uncapped && j->uncapped_now) {
        job_agg tmp;
        agent_job_aggregate(a, j, &tmp);
        j->basis_dirty = j->basis_valid;
    }
    /* The phase sees every tick; the telemetry window only uncapped ones. */
    double fb = v[PFI_TM_FB_USED], util = v[PFI_TM_GPU_UTIL];
    if (!uncapped)
        for (int f = 0; f < PFI_TM_NFIELDS; f++)
            v[f] = NAN;
    pfi_trace_roll_push(j->roll, t, v);
    j->ticks++;
    j->uncapped_now = uncapped;
    if (uncapped) j->uncapped_t = t;
    j->phase = pfi_trace_seg_push(j->seg, t, fb, util);
    agent_curve_tick(a, j, by_gpu);
}

void agent_job_push_tick(agent *a, agent_job *j, double t, const pfi_gpu_sample *const *by_gpu)
{
    push_values(a, j, t, by_gpu);
}

/* Replay after a restart: the samples of one tick, gathered by GPU. */
typedef struct {
    agent *a;
    double t;
    pfi_gpu_sample *s;
    const pfi_gpu_sample **map;
    size_t rows;
} replay;

static void replay_flush(replay *r)
{
    if (r->t < 0) return;
    for (size_t i = 0; i < r->a->n_jobs; i++)
        if (r->a->jobs[i]->rec.registered_at <= r->t)
            push_values(r->a, r->a->jobs[i], r->t, r->map);
    for (unsigned g = 0; g < r->a->n_gpus; g++)
        r->map[g] = NULL;
}

static int replay_sample(double t, unsigned gpu, const pfi_gpu_sample *x, void *ctx)
{
    replay *r = ctx;
    if (t != r->t) {
        replay_flush(r);
        r->t = t;
    }
    if (gpu < r->a->n_gpus && x->valid) {
        r->s[gpu] = *x;
        r->map[gpu] = &r->s[gpu];
    }
    r->rows++;
    return 0;
}

static int replay_report(double t, double tps, void *ctx)
{
    agent_job *j = ctx;
    pfi_trace_roll_push(j->tput, t, &tps);
    j->tput_pushes++;
    j->last_tput = tps;
    j->last_tput_t = t;
    return 0;
}

size_t agent_jobs_take_bases(agent *a, agent_basis_rec **out)
{
    *out = NULL;
    size_t n = 0;
    for (size_t i = 0; i < a->n_jobs; i++)
        n += a->jobs[i]->basis_dirty != 0;
    if (n == 0 || !(*out = calloc(n, sizeof **out))) return 0;
    size_t k = 0;
    for (size_t i = 0; i < a->n_jobs; i++) {
        agent_job *j = a->jobs[i];
        if (!j->basis_dirty) continue;
        snprintf((*out)[k].job, sizeof(*out)[k].job, "%s", j->rec.id);
        (*out)[k].t = j->basis->basis_t;
        memcpy((*out)[k].tm, j->basis->tm, sizeof(*out)[k].tm);
        j->basis_dirty = 0;
        k++;
    }
    return k;
}

void agent_jobs_save_bases(agent *a, const agent_basis_rec *b, size_t n)
{
    pfi_error err;
    for (size_t i = 0; i < n; i++)
        if (pfi_store_job_basis_put(a->store, b[i].job, b[i].t, b[i].tm, &err) != PFI_OK &&
            err.code != PFI_ENOTFOUND)
            pfi_log("job %s: cannot store its estimate's basis: %s", b[i].job, err.msg);
}

/* After the replay: the stored basis of a job whose replayed window has
 * no newer uncapped sample (capped for longer than the window, the window
 * saw none) is the one the estimate stood on before the restart. */
static void restore_basis(agent *a, agent_job *j)
{
    double t, tm[PFI_TM_NFIELDS];
    if (pfi_store_job_basis_get(a->store, j->rec.id, &t, tm, NULL) != PFI_OK) return;
    if (j->basis_valid && j->basis->basis_t > t) return; /* the replay saw a newer one */
    job_agg *b = j->basis;
    memset(b, 0, sizeof *b);
    b->training = 1;
    memcpy(b->tm, tm, sizeof b->tm);
    b->power_w = b->tput = b->pfi = NAN;
    b->basis = JOB_BASIS_UNCAPPED;
    b->basis_t = t;
    j->basis_valid = 1;
    j->basis_dirty = 0;
    j->agg_valid = 0;
    if (!(j->uncapped_t >= t)) j->uncapped_t = t;
}

void agent_jobs_replay(agent *a, double since)
{
    if (a->n_jobs == 0 || a->n_gpus == 0) return;
    replay r = {.a = a, .t = -1};
    r.s = calloc(a->n_gpus, sizeof *r.s);
    r.map = calloc(a->n_gpus, sizeof *r.map);
    pfi_error err;
    pthread_mutex_lock(&a->mu);
    if (r.s && r.map) {
        if (pfi_store_samples_since(a->store, since, replay_sample, &r, &err) != PFI_OK)
            pfi_log("replaying samples: %s", err.msg);
        replay_flush(&r);
        for (size_t i = 0; i < a->n_jobs; i++) {
            agent_job *j = a->jobs[i];
            double t0 = j->rec.registered_at > since ? j->rec.registered_at : since;
            if (pfi_store_throughput_since(a->store, j->rec.id, t0, replay_report, j, &err) !=
                PFI_OK)
                pfi_log("replaying reports of %s: %s", j->rec.id, err.msg);
            restore_basis(a, j);
            pfi_log("job %s: %s after replaying %zu stored samples", j->rec.id,
                    pfi_trace_phase_name(j->phase), pfi_trace_roll_count(j->roll));
        }
    }
    a->gen++;
    pthread_mutex_unlock(&a->mu);
    free(r.s);
    free(r.map);
}

void agent_job_aggregate(agent *a, agent_job *j, job_agg *out)
{
    if (!j->agg_valid || j->agg_ticks != j->ticks || j->agg_pushes != j->tput_pushes) {
        aggregate(a, j, j->agg);
        j->agg_ticks = j->ticks;
        j->agg_pushes = j->tput_pushes;
        j->agg_valid = 1;
    }
    *out = *j->agg;
}

static void aggregate(agent *a, agent_job *j, job_agg *out)
{
    memset(out, 0, sizeof *out);
    double since = pfi_trace_seg_start(j->seg, PFI_PHASE_TRAINING);
    out->training = !isnan(since);
    for (int f = 0; f < PFI_TM_NFIELDS; f++)
        out->tm[f] = NAN;
    out->power_w = out->tput = out->pfi = out->basis_t = NAN;
    out->basis = JOB_BASIS_NONE;
    if (!out->training) return;
    if (pfi_trace_roll_top_mean(j->roll, JF_TOTAL_POWER, since, TOP_FRAC, &out->power_w,
                                &out->n_samples) != PFI_OK)
        out->power_w = NAN;
    if (pfi_trace_roll_top_mean(j->tput, 0, since, TOP_FRAC, &out->tput, &out->n_reports) != PFI_OK)
        out->tput = NAN;
    if (!j->uncapped_now) {
        /* Capped: the telemetry and features stay as they were at the last
         * uncapped tick (none before one); the estimate is the current
         * model's on them (a SIGHUP reload applies to a capped job too). */
        if (j->basis_valid) {
            memcpy(out->tm, j->basis->tm, sizeof out->tm);
            job_agg b = *j->basis;
            agent_model_estimate(a, j, &b);
            out->has_pfi = b.has_pfi;
            out->pfi = b.pfi;
            out->basis = JOB_BASIS_LAST_UNCAPPED;
            out->basis_t = j->basis->basis_t;
        }
        return;
    }
    /* Capped ticks hold NaN telemetry: these are over the uncapped ones. */
    for (int f = 0; f < PFI_TM_NFIELDS; f++)
        if (pfi_trace_roll_top_mean(j->roll, (size_t)f, since, TOP_FRAC, &out->tm[f], NULL) !=
            PFI_OK)
            out->tm[f] = NAN;
    agent_model_estimate(a, j, out);
    out->basis = JOB_BASIS_UNCAPPED;
    out->basis_t = j->uncapped_t;
    *j->basis = *out;
    j->basis_valid = 1;
}

void agent_job_features(agent *a, const agent_job *j, const job_agg *agg, pfi_features *ft)
{
    pfi_tm_row row;
    memset(&row, 0, sizeof row);
    for (int k = 0; k < PFI_TM_NFIELDS; k++) {
        row.v[k] = agg->tm[k];
        if (isfinite(agg->tm[k])) row.valid |= 1u << k;
    }
    memset(ft, 0, sizeof *ft);
    if (pfi_features_compute(&row, a->boost_mhz, ft) != PFI_OK) ft->valid = 0;
    if (j->rec.arch[0] && j->rec.task[0])
        pfi_features_set_meta(ft, j->rec.arch, j->rec.task, (int)j->rec.n_gpus, NULL);
}

json_t *agent_job_json(agent *a, agent_job *j)
{
    json_t *o = json_object();
    pfi_json_set(o, "id", json_string(j->rec.id));
    json_t *g = json_array();
    for (size_t k = 0; k < j->rec.n_gpus; k++)
        json_array_append_new(g, json_integer(j->rec.gpus[k]));
    pfi_json_set(o, "gpus", g);
    pfi_json_set(o, "arch", j->rec.arch[0] ? json_string(j->rec.arch) : json_null());
    pfi_json_set(o, "task", j->rec.task[0] ? json_string(j->rec.task) : json_null());
    pfi_json_set(o, "sla_floor",
                 j->rec.sla_floor > 0 ? pfi_json_num(j->rec.sla_floor) : json_null());
    pfi_json_set(o, "exempt", json_boolean(j->rec.exempt));
    pfi_json_set(o, "class", j->rec.job_class[0] ? json_string(j->rec.job_class) : json_null());
    pfi_json_set(o, "registered_at", pfi_json_num(j->rec.registered_at));
    pfi_json_set(o, "phase", json_string(pfi_trace_phase_name(j->phase)));
    json_t *ps = json_object();
    for (int p = 0; p < PFI_PHASE_COUNT; p++)
        pfi_json_set(ps, pfi_trace_phase_name((pfi_phase)p),
                     pfi_json_num(pfi_trace_seg_start(j->seg, (pfi_phase)p)));
    pfi_json_set(o, "phase_started_at", ps);
    pfi_json_set(o, "power_w", pfi_json_num(j->last_power_w));
    pfi_json_set(o, "tokens_per_s", pfi_json_num(j->last_tput));
    pfi_json_set(o, "tokens_sd", pfi_json_num(agent_curve_sd(j)));
    pfi_json_set(o, "reports", json_integer((json_int_t)j->reports));
    job_agg agg;
    agent_job_aggregate(a, j, &agg);
    json_t *st = json_object();
    pfi_json_set(st, "power_w", pfi_json_num(agg.power_w));
    pfi_json_set(st, "tokens_per_s", pfi_json_num(agg.tput));
    pfi_json_set(st, "samples", json_integer((json_int_t)agg.n_samples));
    pfi_json_set(st, "reports", json_integer((json_int_t)agg.n_reports));
    pfi_json_set(o, "steady", st);
    json_t *tel = json_object();
    for (int f = 0; f < PFI_TM_NFIELDS; f++)
        pfi_json_set(tel, pfi_tm_field_name((pfi_tm_field)f), pfi_json_num(agg.tm[f]));
    pfi_json_set(o, "telemetry", tel);
    /* Features by the predictor's names (paper Fig. 14), from the telemetry. */
    json_t *fo = json_object();
    if (agg.training) {
        pfi_features ft;
        agent_job_features(a, j, &agg, &ft);
        for (int k = 0; k < PFI_FEAT_COUNT; k++)
            if (ft.valid & (1u << k))
                pfi_json_set(fo, pfi_feature_name((pfi_feature)k), pfi_json_num(ft.v[k]));
    }
    pfi_json_set(o, "features", fo);
    pfi_json_set(o, "pfi_estimate", agg.has_pfi ? pfi_json_num(agg.pfi) : json_null());
    /* the estimate's SD: the model's prediction SE (predictor.c) */
    pfi_json_set(o, "pfi_sd", agg.has_pfi ? pfi_json_num(agg.pfi_sd) : json_null());
    /* What the estimate stands on: "none" exactly when it is null. */
    job_basis b = agg.has_pfi ? agg.basis : JOB_BASIS_NONE;
    pfi_json_set(o, "estimate_basis", json_string(agent_job_basis_name(b)));
    pfi_json_set(o, "estimate_at", b != JOB_BASIS_NONE ? pfi_json_num(agg.basis_t) : json_null());
    pfi_json_set(o, "estimate_age_s",
                 b != JOB_BASIS_NONE ? pfi_json_num(pfi_clock_wall() - agg.basis_t) : json_null());
    return o;
}
