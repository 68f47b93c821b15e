/* The controller's state, shared by its files (private to src/control/).
 * Two threads: the loop (controller.c, ctl_period.c), which owns everything
 * but the snapshot, and libmicrohttpd's (ctl_server.c), which reads the
 * snapshot and changes API targets; both under mu. */
#ifndef PFI_CTL_INTERNAL_H
#define PFI_CTL_INTERNAL_H

#include <pthread.h>
#include <stdio.h>

#include <jansson.h>
#include <microhttpd.h>

#include "ctl_index.h"
#include "pfi/agents.h"
#include "pfi/clock.h"
#include "pfi/log.h"
#include "pfi/controller.h"
#include "pfi/ctl_store.h"
#include "pfi/http_server.h"
#include "pfi/plan.h"
#include "pfi/target.h"
#include "pfi/ven.h"

/* A GPU the controller holds a cap on. */
typedef struct ctl_held {
    size_t agent;
    unsigned gpu;
    double watts, expires_at;
    int gone; /* released this period; dropped when the period's answers are in */
} ctl_held;

/* One job across nodes, rebuilt every period. */
typedef struct ctl_job {
    char id[PFI_CL_ID_MAX + 1];
    size_t n_gpus;
    size_t *gpu_agent; /* per GPU: agent index */
    unsigned *gpu_idx; /* per GPU: device index */
    double min_w, max_w, power_w, tps, pfi_sum;
    double tps_var; /* variance of tps (one report per node, summed); NaN unknown */
    size_t pfi_n;
    int capped;         /* any of its GPUs capped by pfid */
    int training;       /* in the training phase on every node (only then is it learned from) */
    double last_cap_w;  /* what we pushed last period, NaN none */
    double last_plan_w; /* what the plan gave it last period (before the one-period delay up) */
    int cap_periods;    /* periods that cap has held */
    double sla;         /* the highest sla_floor its registrations give, NaN none */
} ctl_job;

/* The site power over one OpenADR interval that asked for a report. */
typedef struct ctl_acc {
    char event[PFI_OADR_ID_MAX + 1];
    long interval;
    int sub;
    double sum;
    long n;
    int sent;
} ctl_acc;

typedef struct ctl_obs {
    char job[PFI_CL_ID_MAX + 1];
    pfi_plan_obs o; /* o.tput_sd: ctl_spread_sd(var) */
    double var;     /* variance of o.tput, the exponential mean; NaN unknown */
} ctl_obs;

/* pfid's observed curve of a job, read once (learn's prior points). */
typedef struct ctl_prior {
    char job[PFI_CL_ID_MAX + 1];
    pfi_plan_obs *pts;
    size_t n;
} ctl_prior;

typedef struct ctl_known {
    char job[PFI_CL_ID_MAX + 1];
    double pmax_w, tmax;
} ctl_known;

typedef struct ctl {
    pfi_ctl_opts o;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    int woken;
    volatile sig_atomic_t *stop;

    pfi_ctl_store *store;
    pfi_agents *agents;
    pfi_plan *plan;
    pfi_ven *ven;
    struct MHD_Daemon *httpd;
    pfi_http_service http; /* ctl_server.c's routes, served by httpd */

    /* targets of every source (under mu: the server adds API ones) */
    pfi_target *targets;
    size_t n_targets, cap_targets;
    unsigned long long target_seq;

    /* the loop's own */
    ctl_job *jobs;
    size_t n_jobs, cap_jobs;
    ctl_held *held;
    size_t n_held, cap_held;
    ctl_obs *obs;
    size_t n_obs, cap_obs;
    ctl_known *known;
    size_t n_known, cap_known;
    ctl_prior *priors;
    size_t n_priors;
    ctl_index job_ix, held_ix, obs_ix, known_ix,
        prior_ix; /* by id, (agent, GPU), (job, cap), id, id */
    pfi_oadr_event *events;
    size_t n_events;
    ctl_acc *accs;
    size_t n_accs, cap_accs;
    double next_vtn_poll;
    double budget_w; /* the budget after the ramp, NaN when none */
    double trim_w;
    double last_ramp; /* ramp of the last target in force */
    int prev_active, prev_push_ok;
    double prev_budget_w;
    double last_t;  /* the last period's time, NaN before the first */
    double other_w; /* the non-GPU load counted this period */
    const char *other_src;
    double other_hist[3]; /* the last meter-derived loads */
    size_t other_n;

    /* counters */
    unsigned long long periods, push_errors, pushes, releases;

    /* snapshot for the server (under mu) */
    json_t *status; /* GET /v1/status */
    json_t *flex;   /* GET /v1/flexibility */
    char *metrics;  /* GET /metrics text */
    size_t metrics_len;
} ctl;

/* ctl_period.c: one period of the loop. */
void ctl_period(ctl *c);
/* The period's job table: begin empties it (keeping each job's last cap,
 * by id, for get), get finds or adds a job, end drops what was kept. */
typedef struct ctl_carry ctl_carry;
ctl_carry *ctl_jobs_begin(ctl *c);
ctl_job *ctl_job_get(ctl *c, ctl_carry *carry, const char *id);
void ctl_jobs_end(ctl_carry *carry);
/* Folds one up agent's listing (number a; its GPUs and jobs, nd) into the
 * period's job table: each job's GPUs, power, limits, tokens/s and their
 * variance (summed over nodes), phase; exempt jobs' and idle GPUs' power
 * into *fixed_w. For an agent that takes caps (the rest is counted by
 * ctl_agent_count). */
void ctl_merge_node(ctl *c, ctl_carry *carry, size_t a, const pfi_cl_node *nd, double *fixed_w,
                    double *measured_w, double *live_w);
/* Job j's learn reading this period: last period's cap, its power and
 * tokens/s now, their SD (ctl_spread_sd: unknown is 0); all zero (no
 * reading) unless last period's caps were planned and pushed and j trains. */
pfi_plan_obs ctl_job_reading(const ctl *c, const ctl_job *j);
/* Counts an agent that cannot be moved (down, or refusing caps) at its
 * GPUs' maximum, one never seen at the size in the store; records an up
 * agent's size in the store now and then. */
void ctl_agent_count(ctl *c, pfi_agent_info *g, double now, double *fixed_w, double *measured_w);
/* ctl_prom.c: the same as polling and merging, from Prometheus
 * (--cluster-from prometheus). */
void ctl_prom_read(ctl *c, double now, double *fixed_w, double *measured_w, double *live_w,
                   size_t *up);
/* The index keys (ctl_period.c), for the entries the store gives back. */
uint64_t ctl_held_key(size_t agent, unsigned gpu);
uint64_t ctl_obs_key(const char *job, double cap_w);
/* ctl_priors.c: pfid's curve points of the jobs not read yet (learn). */
void ctl_priors_fetch(ctl *c);
const ctl_prior *ctl_prior_find(const ctl *c, const char *id);
void ctl_priors_free(ctl *c);
/* ctl_targets.c: targets in memory (call under mu). */
int ctl_targets_add(ctl *c, const pfi_target *t, pfi_error *err);
int ctl_targets_del(ctl *c, pfi_target_source src, const char *id);
int ctl_targets_replace(ctl *c, pfi_target_source src, const pfi_target *ts, size_t n);
/* ctl_ven_task.c: polls the VTN when due and sends the reports due. */
void ctl_ven_task(ctl *c, double now, double site_w);
/* ctl_server.c */
int ctl_server_start(ctl *c, pfi_error *err);
void ctl_server_stop(ctl *c);
/* ctl_render.c: the snapshot (metrics text) from the status JSON. */
char *ctl_render_metrics(ctl *c, const json_t *status, size_t *len);

#endif
