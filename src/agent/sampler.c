/* The sampler thread: reads every GPU each interval (monotonic schedule, no
 * drift), writes the samples to the store in one transaction, feeds the
 * jobs' segmenters and windows, and expires caps in between ticks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"

/* Prune the store once a minute, not every tick. */
#define PRUNE_EVERY_S 60.0

/* --sim-tokens: each registered job's modelled tokens/s, the sum over its
 * GPUs of the sim's model at their limits (pfi_backend_throughput), reported
 * as the job's training loop would, through the path of POST
 * /v1/jobs/ID/throughput; none while no GPU of the job trains. So a sim
 * fleet's throughput follows its caps with no reporter beside it. */
static void report_sim_tokens(agent *a)
{
    pthread_mutex_lock(&a->mu);
    size_t n = a->n_jobs;
    pfi_store_job *jobs = malloc((n ? n : 1) * sizeof *jobs);
    for (size_t i = 0; jobs && i < n; i++)
        jobs[i] = a->jobs[i]->rec;
    pthread_mutex_unlock(&a->mu);
    if (!jobs) return;
    for (size_t i = 0; i < n; i++) {
        double sum = 0, tok;
        for (size_t k = 0; k < jobs[i].n_gpus; k++)
            if (pfi_backend_throughput(a->be, jobs[i].gpus[k], &tok) == PFI_OK) sum += tok;
        unsigned long long reports;
        pfi_error err;
        /* a job ended since the copy is no report to make */
        if (sum > 0) agent_job_report(a, jobs[i].id, sum, &reports, &err);
    }
    free(jobs);
}

void agent_tick(agent *a)
{
    double m0 = pfi_clock_mono();
    double t = pfi_clock_wall();
    unsigned n = a->n_gpus;
    pfi_gpu_sample *s = calloc(n ? n : 1, sizeof *s);
    pfi_gpu_limits *lim = calloc(n ? n : 1, sizeof *lim);
    int *ok = calloc(n ? n : 1, sizeof *ok), *lok = calloc(n ? n : 1, sizeof *lok);
    const pfi_gpu_sample **by_gpu = calloc(n ? n : 1, sizeof *by_gpu);
    double *age = calloc(n ? n : 1, sizeof *age);
    char(*why)[sizeof a->gpus[0].read_error] = calloc(n ? n : 1, sizeof *why);
    if (!s || !lim || !ok || !lok || !by_gpu || !age || !why) {
        free(why);
        free(age);
        free(by_gpu);
        free(s);
        free(lim);
        free(ok);
        free(lok);
        pfi_log("out of memory in the sampler");
        return;
    }
    /* Backend calls happen without mu: a slow device must not block HTTP. */
    unsigned errors = 0;
    for (unsigned g = 0; g < n; g++) {
        ok[g] = pfi_backend_sample(a->be, g, &s[g]) == PFI_OK;
        if (!ok[g]) {
            memset(&s[g], 0, sizeof s[g]); /* stored as a row of NULLs */
            snprintf(why[g], sizeof why[g], "%s", pfi_backend_last_error(a->be));
            errors++;
        }
        /* Before limits(): a backend may scrape again for it (dcgm with a
         * short cache_ms), and the age is the sample's. */
        if (!ok[g] || pfi_backend_sample_age(a->be, g, &age[g]) != PFI_OK) age[g] = NAN;
        lok[g] = pfi_backend_limits(a->be, g, &lim[g]) == PFI_OK;
    }
    pfi_error err;
    int store_ok = pfi_store_add_samples(a->store, t, s, n, &err) == PFI_OK;
    pthread_mutex_lock(&a->mu);
    /* A full disk fails every tick: say so when it starts and when it ends
     * (pfi_agent_store_errors_total counts the ticks in between; /healthz
     * says it meanwhile). */
    if (!store_ok && !a->store_failing) pfi_log("store: %s; samples are not being kept", err.msg);
    if (store_ok && a->store_failing) pfi_log("store: writing samples again");
    a->store_failing = !store_ok;
    if (!store_ok) snprintf(a->store_error, sizeof a->store_error, "%s", err.msg);
    for (unsigned g = 0; g < n; g++) {
        agent_gpu *x = &a->gpus[g];
        x->sample_ok = ok[g];
        memcpy(x->read_error, why[g], sizeof x->read_error);
        if (ok[g]) {
            x->last = s[g];
            x->last_t = t;
            x->sample_age_s = age[g];
        }
        if (lok[g]) {
            x->limits = lim[g];
            x->have_limits = 1;
        }
    }
    for (unsigned g = 0; g < n; g++)
        by_gpu[g] = ok[g] ? &a->gpus[g].last : NULL;
    for (size_t i = 0; i < a->n_jobs; i++)
        agent_job_push_tick(a, a->jobs[i], t, by_gpu);
    pfi_store_point *pts;
    size_t n_pts = agent_curves_take_due(a, t, &pts);
    agent_basis_rec *bases;
    size_t n_bases = agent_jobs_take_bases(a, &bases);
    a->samples_total++;
    a->sample_errors_total += errors;
    if (!store_ok) a->store_errors_total++;
    a->last_tick_s = pfi_clock_mono() - m0;
    a->gen++;
    pthread_mutex_unlock(&a->mu);
    /* Outside mu: scrapes do not wait on SQLite. */
    for (size_t i = 0; i < n_pts; i++)
        agent_curve_save(a, pts[i].job, &pts[i], 1);
    free(pts);
    agent_jobs_save_bases(a, bases, n_bases);
    free(bases);
    if (a->o.sim_tokens) report_sim_tokens(a);
    free(s);
    free(lim);
    free(ok);
    free(lok);
    free(by_gpu);
    free(age);
    free(why);
}

static struct timespec mono_ts(double sec)
{
    struct timespec ts;
    ts.tv_sec = (time_t)floor(sec);
    ts.tv_nsec = (long)((sec - floor(sec)) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* The condition variable waits on CLOCK_MONOTONIC; the schedule runs on
 * pfi_clock_mono (the boot clock, which also counts a suspend): the deadline
 * is converted through the time left. */
static struct timespec deadline(double wake_mono)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double left = wake_mono - pfi_clock_mono();
    if (left < 0) left = 0;
    return mono_ts((double)now.tv_sec + (double)now.tv_nsec * 1e-9 + left);
}

static void *sampler_main(void *arg)
{
    agent *a = arg;
    double next = pfi_clock_mono() + a->o.interval_s;
    double next_prune = pfi_clock_mono();
    pfi_clock_watch watch = {0};
    pfi_clock_watch_step(&watch, 1.0);
    for (;;) {
        /* A step of the wall clock changes no cap (they expire on the boot
         * clock) but every timestamp after it: say so. */
        double step = pfi_clock_watch_step(&watch, 1.0);
        if (step != 0)
            pfi_log("the wall clock stepped by %+.1f s; caps still expire on time (they run on "
                    "the boot clock), timestamps from now on follow the new wall time",
                    step);
        /* Caps first: an expiry is due whatever the sampling does; the
         * node ceiling's too. */
        double expiry = agent_caps_expire(a);
        double node_exp = agent_node_expiry(a);
        if (node_exp <= agent_cap_now()) {
            agent_node_tick(a);
            node_exp = agent_node_expiry(a);
        }
        expiry = fmin(expiry, node_exp);
        double now_m = pfi_clock_mono();
        if (now_m >= next) {
            agent_tick(a);
            agent_caps_reconcile(a);
            agent_node_tick(a); /* the node ceiling on this sample */
            /* Skip missed ticks rather than bursting to catch up. */
            next += a->o.interval_s * (1 + floor((pfi_clock_mono() - next) / a->o.interval_s));
            if (pfi_clock_mono() >= next_prune) {
                pfi_error err;
                if (pfi_store_prune(a->store, pfi_clock_wall() - a->o.retention_s, &err) != PFI_OK)
                    pfi_log("store prune: %s", err.msg);
                next_prune = pfi_clock_mono() + PRUNE_EVERY_S;
            }
            continue;
        }
        double wake = next;
        if (isfinite(expiry)) {
            double until = expiry - agent_cap_now();
            if (now_m + until < wake) wake = now_m + (until > 0 ? until : 0);
        }
        pthread_mutex_lock(&a->mu);
        if (a->stop) {
            pthread_mutex_unlock(&a->mu);
            break;
        }
        struct timespec ts = deadline(wake);
        pthread_cond_timedwait(&a->wake, &a->mu, &ts);
        int stop = a->stop;
        pthread_mutex_unlock(&a->mu);
        if (stop) break;
    }
    return NULL;
}

int agent_sampler_start(agent *a)
{
    return pthread_create(&a->sampler, NULL, sampler_main, a);
}

void agent_sampler_stop(agent *a)
{
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_broadcast(&a->wake);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->sampler, NULL);
}
