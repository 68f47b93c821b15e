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
    free(j->points);
    free(j->agg);
    free(j);
}

void agent_jobs_free(agent *a)
{
    for (size_t i = 0; i < a->n_jobs; i++) job_free(a->jobs[i]);
    free(a->jobs);
    a->jobs = NULL;
    a->n_jobs = a->cap_jobs = 0;
}

/* GPU -> job index map, rebuilt after every change of the list. */
static void reindex(agent *a)
{
    for (unsigned g = 0; g < a->n_gpus; g++) a->gpus[g].job = -1;
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
    j->level_w = NAN;
    j->agg = calloc(1, sizeof *j->agg);
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
        pfi_trace_roll_create(1, a->o.window_s, (size_t)tput_cap, &j->tput) != PFI_OK ||
        !j->agg) {
        job_free(j);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
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
            rc = pfi_error_set(err, PFI_ESTATE, NULL, 0, "GPU %u is already used by job '%s'",
                               g, a->jobs[a->gpus[g].job]->rec.id);
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
    int rc = pfi_store_job_end(a->store, id, agent_now(), err);
    if (rc == PFI_OK || rc == PFI_ENOTFOUND) {
        rc = PFI_OK;
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
    double t = agent_now();
    pthread_mutex_lock(&a->mu);
    int found = agent_job_find(a, id) >= 0;
    pthread_mutex_unlock(&a->mu);
    if (!found) return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "no job '%s'", id);
    /* Stored first (a report acknowledged is a report kept), outside mu so
     * that scrapes do not wait on SQLite. A job ended in between leaves a
     * stored report that nothing counts, which is harmless. */
    int rc = pfi_store_add_throughput(a->store, id, t, tokens_per_s, err);
    if (rc != PFI_OK) return rc;
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
        agent_curve_report(a, j, t, tokens_per_s);
        *n = ++j->reports;
        a->gen++;
    }
    pthread_mutex_unlock(&a->mu);
    return rc;
}

/* Whether x is capped telemetry: the predictor was fitted on uncapped runs
 * (paper Sec. 6), so a sample taken under a limit below the GPU's prior one
 * that binds (the clock-event power-cap bit set, or not known) would move
 * the estimate with the cap. At the prior limit the power-cap bit is the
 * uncapped run's own behaviour (a dense job binds at its 700 W TDP) and the
 * sample counts; so does one under a cap that does not bind. */
static int capped_sample(const pfi_gpu_sample *x, double prior_w)
{
    if (!pfi_gpu_sample_has(x, PFI_GF_LIMIT) || !(prior_w > 0)) return 0;
    if (!(x->v[PFI_GF_LIMIT] < prior_w - 1.0)) return 0;
    return !pfi_gpu_sample_has(x, PFI_GF_CLOCK_EVENTS) ||
           ((uint32_t)x->v[PFI_GF_CLOCK_EVENTS] & PFI_CLK_POWER_CAP);
}

/* The job's telemetry at one tick: each telemetry.csv field the mean over
 * the job's GPUs that read it (NaN when none did), in DCGM's units through
 * the GPU field table. by_gpu[g] is NULL for a GPU not read; prior_w[g] is
 * its prior limit. A tick where any of the job's GPUs is capped telemetry
 * keeps its power and phase but not its features (NaN: the aggregates skip
 * it), so the estimate stays the uncapped one. */
static void push_values(agent_job *j, double t, const pfi_gpu_sample *const *by_gpu,
                        const double *prior_w)
{
    double v[JF_COUNT], sum[PFI_TM_NFIELDS] = {0};
    size_t n[PFI_TM_NFIELDS] = {0};
    for (size_t k = 0; k < j->rec.n_gpus; k++) {
        const pfi_gpu_sample *x = by_gpu[j->rec.gpus[k]];
        if (!x) continue;
        pfi_tm_row row;
        pfi_tm_from_gpu_sample(x, &row);
        for (int f = 0; f < PFI_TM_NFIELDS; f++)
            if (row.valid & (1u << f)) {
                sum[f] += row.v[f];
                n[f]++;
            }
    }
    for (int f = 0; f < PFI_TM_NFIELDS; f++) v[f] = n[f] ? sum[f] / (double)n[f] : NAN;
    double fb = v[PFI_TM_FB_USED], util = v[PFI_TM_GPU_UTIL];
    int capped = 0;
    for (size_t k = 0; k < j->rec.n_gpus; k++) {
        unsigned g = j->rec.gpus[k];
        if (by_gpu[g] && capped_sample(by_gpu[g], prior_w[g])) capped = 1;
    }
    if (capped)
        for (int f = 0; f < PFI_TM_NFIELDS; f++) v[f] = NAN;
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
    pfi_trace_roll_push(j->roll, t, v);
    j->ticks++;
    j->phase = pfi_trace_seg_push(j->seg, t, fb, util);
    j->last_t = t;
    j->capped_now = capped;
    if (!capped) j->last_uncapped_t = t;
}

void agent_job_push_tick(agent_job *j, double t, const pfi_gpu_sample *const *by_gpu,
                         const double *prior_w)
{
    push_values(j, t, by_gpu, prior_w);
}

/* Replay after a restart: the samples of one tick, gathered by GPU. */
typedef struct {
    agent *a;
    double t;
    pfi_gpu_sample *s;
    const pfi_gpu_sample **map;
    double *prior_w; /* today's: the past's are not stored */
    size_t rows;
} replay;

static void replay_flush(replay *r)
{
    if (r->t < 0) return;
    for (size_t i = 0; i < r->a->n_jobs; i++)
        if (r->a->jobs[i]->rec.registered_at <= r->t)
            push_values(r->a->jobs[i], r->t, r->map, r->prior_w);
    for (unsigned g = 0; g < r->a->n_gpus; g++) r->map[g] = NULL;
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

void agent_jobs_replay(agent *a, double since)
{
    if (a->n_jobs == 0 || a->n_gpus == 0) return;
    replay r = {.a = a, .t = -1};
    r.s = calloc(a->n_gpus, sizeof *r.s);
    r.map = calloc(a->n_gpus, sizeof *r.map);
    r.prior_w = calloc(a->n_gpus, sizeof *r.prior_w);
    pfi_error err;
    pthread_mutex_lock(&a->mu);
    for (unsigned g = 0; r.prior_w && g < a->n_gpus; g++)
        r.prior_w[g] = agent_gpu_prior_w(&a->gpus[g]);
    if (r.s && r.map && r.prior_w) {
        if (pfi_store_samples_since(a->store, since, replay_sample, &r, &err) != PFI_OK)
            agent_log("replaying samples: %s", err.msg);
        replay_flush(&r);
        for (size_t i = 0; i < a->n_jobs; i++) {
            agent_job *j = a->jobs[i];
            double t0 = j->rec.registered_at > since ? j->rec.registered_at : since;
            if (pfi_store_throughput_since(a->store, j->rec.id, t0, replay_report, j, &err) !=
                PFI_OK)
                agent_log("replaying reports of %s: %s", j->rec.id, err.msg);
            agent_log("job %s: %s after replaying %zu stored samples", j->rec.id,
                      pfi_trace_phase_name(j->phase), pfi_trace_roll_count(j->roll));
        }
    }
    a->gen++;
    pthread_mutex_unlock(&a->mu);
    free(r.s);
    free(r.map);
    free(r.prior_w);
}

static void aggregate(agent *a, agent_job *j, job_agg *out);

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
    for (int f = 0; f < PFI_TM_NFIELDS; f++) out->tm[f] = NAN;
    out->power_w = out->tput = out->pfi = NAN;
    if (!out->training) return;
    for (int f = 0; f < PFI_TM_NFIELDS; f++)
        if (pfi_trace_roll_top_mean(j->roll, (size_t)f, since, TOP_FRAC, &out->tm[f], NULL) !=
            PFI_OK)
            out->tm[f] = NAN;
    if (pfi_trace_roll_top_mean(j->roll, JF_TOTAL_POWER, since, TOP_FRAC, &out->power_w,
                                &out->n_samples) != PFI_OK)
        out->power_w = NAN;
    if (pfi_trace_roll_top_mean(j->tput, 0, since, TOP_FRAC, &out->tput, &out->n_reports) !=
        PFI_OK)
        out->tput = NAN;
    agent_model_estimate(a, j, out);
    /* The window's uncapped samples give the estimate; once a cap has held
     * longer than the window there are none, and the last one is kept. */
    if (out->has_pfi) {
        j->kept_pfi = out->pfi;
        j->kept_t = j->last_uncapped_t;
        j->has_kept = 1;
    } else if (j->has_kept) {
        out->pfi = j->kept_pfi;
        out->has_pfi = 1;
    }
    out->basis_t = j->has_kept ? j->kept_t : NAN;
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
    for (size_t k = 0; k < j->rec.n_gpus; k++) json_array_append_new(g, json_integer(j->rec.gpus[k]));
    pfi_json_set(o, "gpus", g);
    pfi_json_set(o, "arch", j->rec.arch[0] ? json_string(j->rec.arch) : json_null());
    pfi_json_set(o, "task", j->rec.task[0] ? json_string(j->rec.task) : json_null());
    pfi_json_set(o, "registered_at", pfi_json_num(j->rec.registered_at));
    pfi_json_set(o, "phase", json_string(pfi_trace_phase_name(j->phase)));
    json_t *ps = json_object();
    for (int p = 0; p < PFI_PHASE_COUNT; p++)
        pfi_json_set(ps, pfi_trace_phase_name((pfi_phase)p),
                     pfi_json_num(pfi_trace_seg_start(j->seg, (pfi_phase)p)));
    pfi_json_set(o, "phase_started_at", ps);
    pfi_json_set(o, "power_w", pfi_json_num(j->last_power_w));
    pfi_json_set(o, "tokens_per_s", pfi_json_num(j->last_tput));
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
    /* "uncapped": the newest sample is uncapped telemetry; "last_uncapped":
     * a cap binds now and the estimate is from the samples before it, taken
     * estimate_age_s before the newest sample. */
    pfi_json_set(o, "estimate_basis",
                 !agg.has_pfi ? json_null()
                              : json_string(j->capped_now ? "last_uncapped" : "uncapped"));
    pfi_json_set(o, "estimate_age_s",
                 agg.has_pfi ? pfi_json_num(j->last_t - agg.basis_t) : json_null());
    return o;
}
