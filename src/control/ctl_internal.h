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
#include "ctl_topo.h"
#include "ctl_trim.h"
#include "pfi/agents.h"
#include "pfi/clock.h"
#include "pfi/log.h"
#include "pfi/controller.h"
#include "pfi/ctl_store.h"
#include "pfi/http_server.h"
#include "pfi/plan.h"
#include "pfi/target.h"
#include "pfi/ven.h"

#define PFI_CTL_OWNER_MAX 64

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
    double pfi_sd;      /* the widest SD its nodes give its estimate, NaN unknown */
    char job_class[PFI_CL_CLASS_MAX + 1]; /* its registration's class, "" none */
} ctl_job;

/* The site power over one OpenADR interval that asked for a report. */
typedef struct ctl_acc {
    char event[PFI_OADR_ID_MAX + 1];
    long interval;
    int sub;
    double wsum, wdur;     /* sum of power x time held, and the time, inside the interval */
    double last_t, last_w; /* the last sample inside it (held until the next) */
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
    char job_class[PFI_CL_CLASS_MAX + 1]; /* the class it was last seen with, "" none */
} ctl_known;

/* The jobs (ctl_jobs.c, ctl_learned.c, ctl_priors.c): this period's job
 * table, merged from the agents' listings (or Prometheus), and what is
 * known of each job's curve across periods. */
typedef struct ctl_jobs {
    ctl_job *v; /* this period's jobs */
    size_t n, cap;
    ctl_index ix;     /* by id */
    ctl_known *known; /* uncapped figures, by id (known_ix) */
    size_t n_known, cap_known;
    ctl_index known_ix;
    ctl_obs *obs; /* learned points, by (job, cap) (obs_ix) */
    size_t n_obs, cap_obs;
    ctl_index obs_ix;
    ctl_prior *priors; /* pfid's observed curves (learn), by id (prior_ix) */
    size_t n_priors;
    ctl_index prior_ix;
} ctl_jobs;

/* A GPU another controller holds a cap on (pfid answered 409 naming it):
 * not ours, counted at its measured power, tried again every period. */
typedef struct ctl_conflict {
    size_t agent;
    unsigned gpu;
    char owner[65];
    long long epoch;
    char job[PFI_CL_ID_MAX + 1]; /* the job on it at the last listing, "" none */
    double cap_w;                /* the other owner's cap in force, NaN unknown */
} ctl_conflict;

/* The caps held (ctl_caps.c): what was pushed and answered, per GPU, with
 * its expiry; the GPUs other controllers hold; the cap calls' counters. */
typedef struct ctl_caps {
    ctl_held *v;
    size_t n, cap;
    ctl_index ix; /* by (agent, GPU) */
    ctl_conflict *conf;
    size_t n_conf, cap_conf;
    unsigned long long pushes, errors, releases, refused;
} ctl_caps;

/* One period's figures (ctl_status.c), from which GET /v1/status and
 * /metrics are both built (ctl_render.c). Pointers are borrowed from the
 * loop's state for the period's rendering. */
typedef struct ctl_status {
    double t;
    int active, controlling;
    const pfi_target *target; /* the winner, NULL when none */
    double site_limit_w, gpu_budget_w, fixed_w, trim_w, measured_gpu_w, other_w, margin_w;
    const char *other_src;
    int infeasible;
    double shortfall_w;
    const char *policy;
    size_t agents_up;
    pfi_agents *agents;
    const ctl_job *jobs; /* this period's, n_jobs of them */
    size_t n_jobs;
    const pfi_plan_cap *caps;  /* per job, NULL when the plan failed */
    double tput_lo, tput_sd;   /* the jobs' total's lower bound and SD (the plan's) */
    double confidence;         /* of every lower bound */
    const pfi_plan_flex *flex; /* the supply curve, n_flex steps (0: none) */
    size_t n_flex;
    const ctl_caps *held;
    unsigned long long periods;
    pfi_ven *ven; /* NULL without a VTN */
    const char *owner;
    double period_s;      /* the last period's duration (its work, not the sleep), NaN none */
    const ctl_topo *topo; /* the domains' figures */
    struct ctl_ha *ha;    /* the HA role (ctl_ha.h), NULL without --etcd */
} ctl_status;

typedef struct ctl_ha ctl_ha;

typedef struct ctl {
    pfi_ctl_opts o;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    int woken;
    volatile sig_atomic_t *stop;

    pfi_ctl_store *store;
    int lock_fd;                       /* the store's lock (DB.lock), -1 none */
    char owner[PFI_CTL_OWNER_MAX + 1]; /* the id our caps carry */
    struct ctl_ha *ha;                 /* active/standby on etcd (ctl_ha.h), NULL none */
    int passive;                       /* a follower: the period runs, nothing is pushed */
    pfi_agents *agents;
    pfi_plan *plan;
    pfi_ven *ven;
    struct MHD_Daemon *httpd;
    pfi_http_service http; /* ctl_server.c's routes, served by httpd */

    /* targets of every source (under mu: the server adds API ones) */
    pfi_target *targets;
    size_t n_targets, cap_targets;
    unsigned long long target_seq;

    /* the loop's own, by concern */
    ctl_jobs jobs;
    ctl_caps caps;
    ctl_trim trim;
    ctl_topo topo; /* the power tree (ctl_topo.h): the site alone without --topology */
    pfi_oadr_event *events;
    size_t n_events;
    ctl_acc *accs;
    size_t n_accs, cap_accs;
    double next_vtn_poll;
    pfi_ven_health vtn_health; /* the last poll's, for the HTTP thread (under mu) */
    /* the period's sequence (ctl_period.c) */
    double budget_w;  /* the budget after the ramp, NaN when none */
    double last_ramp; /* ramp of the last target in force */
    int prev_active, prev_push_ok;
    double prev_budget_w;
    double last_t;  /* the last period's time, NaN before the first */
    double other_w; /* the non-GPU load counted this period */
    const char *other_src;
    double other_hist[3]; /* the last meter-derived loads */
    size_t other_n;
    unsigned long long periods;
    double period_s; /* the last period's duration, NaN before one ended */
    size_t prev_up;  /* agents up last period, SIZE_MAX before the first */

    /* snapshot for the server (under mu) */
    json_t *status; /* GET /v1/status */
    json_t *flex;   /* GET /v1/flexibility */
    char *metrics;  /* GET /metrics text */
    size_t metrics_len;
} ctl;

/* ctl_period.c: one period of the loop. */
void ctl_period(ctl *c);

/* ctl_jobs.c: the period's job table. begin empties it (keeping each job's
 * last cap, by id, for get), get finds or adds a job, end drops what was
 * kept; NULL from begin or get on no memory. */
typedef struct ctl_carry ctl_carry;
ctl_carry *ctl_jobs_begin(ctl_jobs *J);
ctl_job *ctl_job_get(ctl_jobs *J, ctl_carry *carry, const char *id);
void ctl_jobs_end(ctl_carry *carry);
ctl_job *ctl_job_find(const ctl_jobs *J, const char *id);
void ctl_jobs_free(ctl_jobs *J);
/* Folds one up agent's listing (number a; its GPUs and jobs, nd) into the
 * period's job table: each job's GPUs, power, limits, tokens/s and their
 * variance (summed over nodes), phase; exempt jobs' and idle GPUs' power
 * into *fixed_w. For an agent that takes caps (the rest is counted by
 * ctl_agent_count). A GPU another controller holds (K's conflicts; K may
 * be NULL) is fixed at its measured power, and its conflict is dropped
 * when the listing shows it uncapped. */
void ctl_merge_node(ctl_jobs *J, ctl_caps *K, ctl_carry *carry, size_t a, const pfi_cl_node *nd,
                    double *fixed_w, double *measured_w, double *live_w);
/* Every up, cappable agent's jobs merged by id; everything else fixed. */
void ctl_jobs_merge(ctl *c, double now, double *fixed_w, double *measured_w, double *live_w,
                    size_t *up);
/* Counts an agent that cannot be moved (down, or refusing caps) at its
 * GPUs' maximum, one never seen at the size in the store; records an up
 * agent's size in the store now and then. */
void ctl_agent_count(ctl *c, pfi_agent_info *g, double now, double *fixed_w, double *measured_w);
/* The power a GPU is counted at when it cannot be moved. */
double ctl_gpu_counted_max(const pfi_cl_gpu *g);
/* The most a cap on it may be: min(its maximum limit, its prior), NaN unknown. */
double ctl_gpu_ceiling(const pfi_cl_gpu *g);

/* ctl_learned.c: what is known of the jobs' curves. */
/* Job j's learn reading this period: last period's cap, its power and
 * tokens/s now, their SD (ctl_spread_sd: unknown is 0); all zero (no
 * reading) unless last period's caps were planned and pushed (pushed) and
 * j trains. */
pfi_plan_obs ctl_job_reading(const ctl_job *j, int pushed);
const ctl_known *ctl_known_find(const ctl_jobs *J, const char *id);
/* Records a job's uncapped figures (the highest seen), in the store too. */
void ctl_known_put(ctl_jobs *J, pfi_ctl_store *st, const char *id, double pmax, double tmax,
                   double now);
/* Folds this period's reading at cap into the job's learned point. */
void ctl_obs_put(ctl_jobs *J, pfi_ctl_store *st, const char *id, double cap, double p, double t,
                 double var, double now);
/* As another controller has them (the HA shared state): the point set,
 * not averaged; the job's figures and class as given. Memory only. */
void ctl_obs_set(ctl_jobs *J, const char *id, double cap, double p, double t, double var);
void ctl_known_set(ctl_jobs *J, const char *id, double pmax, double tmax, const char *job_class);
/* Job j's cap this period is cap: counts the periods it has held and,
 * after two, learns from the job's reading at it. */
void ctl_job_capped(ctl_jobs *J, pfi_ctl_store *st, ctl_job *j, double cap, double now);
/* The plan's inputs: *pj one per job (known points, SLA floors, priors and
 * readings for learn, estimates with their SD, classes), *po their learned
 * points and, after them, the points of jobs no longer listed, relative,
 * for their classes (pj[i].obs and .class_obs point into it). PFI_ENOMEM,
 * with nothing allocated, on no memory. */
int ctl_jobs_plan_inputs(ctl_jobs *J, const pfi_ctl_opts *o, pfi_ctl_store *st, int pushed,
                         double now, pfi_plan_job **pj, pfi_plan_obs **po);

/* ctl_caps.c: the caps held and their pushes. */
ctl_held *ctl_held_find(const ctl_caps *K, size_t agent, unsigned gpu);
int ctl_held_add(ctl_caps *K, size_t agent, unsigned gpu, double watts, double expires_at);
void ctl_caps_free(ctl_caps *K);
ctl_conflict *ctl_conflict_find(const ctl_caps *K, size_t agent, unsigned gpu);
/* Drops conflict k (its GPU is free, or ours). */
void ctl_conflict_drop(ctl_caps *K, size_t k);
/* This period's per-GPU cap from the plan's (planned_w, at_floor): on the
 * 5 W step (down, up for a job at its floor), within [min_w, max_w], and no
 * higher than last period's plan (*last_plan_w, NaN none), which becomes
 * this period's: a raise waits one period. */
double ctl_caps_next(double planned_w, int at_floor, double min_w, double max_w,
                     double *last_plan_w);
/* This period's commands (*out, malloc'd): caps[i].cap_w on every GPU of
 * job i (none when caps is NULL), then a release of each cap held but not
 * wanted on an agent that answers (keep: renewed at its watts instead);
 * with caps, every GPU another controller holds is tried again at the
 * lower of its owner's cap and its job's. */
int ctl_caps_commands(const ctl_caps *K, pfi_agents *ag, const ctl_job *jobs,
                      const pfi_plan_cap *caps, size_t n_jobs, int keep, double expires_s,
                      pfi_cap_cmd **out, size_t *n_out);
/* Sends cmds (lowering first) and folds the answers into the held table and
 * the store (opening the period's transaction, which the caller commits).
 * PFI_OK when every call succeeded, else PFI_EIO (the failures counted and
 * logged) or PFI_ENOMEM (an answered cap could not be recorded). */
int ctl_caps_push(ctl_caps *K, pfi_agents *ag, pfi_ctl_store *st, pfi_cap_cmd *cmds, size_t n,
                  double now);

/* ctl_status.c: GET /v1/status and GET /v1/flexibility from the period's figures. */
json_t *ctl_status_json(const ctl_status *s);
json_t *ctl_flex_json(const ctl_status *s);
/* The supply curve for the status (flex[0..n), n >= 2); 0 steps when
 * there are no jobs or it fails. */
size_t ctl_flex_steps(pfi_plan *plan, pfi_plan_policy policy, pfi_plan_flex *flex, size_t n);
/* One job's row: its loss to the cap, and what it adds to the throughput
 * kept and uncapped (shared by the JSON and the metrics). */
void ctl_status_job(const ctl_status *s, size_t i, double *cap_w, double *planned_w, double *loss,
                    double *kept, double *uncapped);
/* ctl_render.c: the /metrics text from the same figures. */
char *ctl_render_metrics(const ctl_status *s, size_t *len);

/* ctl_prom.c: the same as polling and merging, from Prometheus
 * (--cluster-from prometheus). */
void ctl_prom_read(ctl *c, double now, double *fixed_w, double *measured_w, double *live_w,
                   size_t *up);
/* The index keys, for the entries the store gives back. */
uint64_t ctl_held_key(size_t agent, unsigned gpu);
uint64_t ctl_obs_key(const char *job, double cap_w);
/* ctl_priors.c: pfid's curve points of the jobs not read yet (learn). */
void ctl_priors_fetch(ctl_jobs *J, pfi_agents *agents);
const ctl_prior *ctl_prior_find(const ctl_jobs *J, const char *id);
void ctl_priors_free(ctl_jobs *J);
/* ctl_targets.c: targets in memory (call under mu). */
int ctl_targets_add(ctl *c, const pfi_target *t, pfi_error *err);
int ctl_targets_del(ctl *c, pfi_target_source src, const char *id);
int ctl_targets_replace(ctl *c, pfi_target_source src, const pfi_target *ts, size_t n);
/* ctl_ven_task.c: polls the VTN when due and sends the reports due. */
void ctl_ven_task(ctl *c, double now, double site_w);
/* ctl_ven_health.c: the VTN's health; NULL, 0 and nothing without a VEN. */
json_t *ctl_vtn_json(ctl *c);                         /* /v1/status "vtn" */
int ctl_vtn_unhealthy(ctl *c, char *why, size_t len); /* /healthz: 1 and why */
void ctl_vtn_metrics(pfi_ven *ven, FILE *f);          /* loop thread only */
/* ctl_topo_place.c: asks unplaced agents their node name (leaves of nodes). */
void ctl_topo_place(ctl *c, double now);
/* ctl_ceiling.c: node ceilings. ctl_ceilings: per agent from its planned
 * power (W) and GPU count, INFINITY where no limited domain is above it
 * (pure). ctl_ceiling_push: computes and sends them (caps: the period's
 * plan per job, NULL none). */
void ctl_ceilings(const ctl_topo *T, const double *planned_w, const double *gpus, double *out);
void ctl_ceiling_push(ctl *c, const pfi_plan_cap *caps, double now);
/* ctl_topo_status.c: /v1/status "domains" and the pfi_control_domain_* metrics. */
json_t *ctl_domains_json(const ctl_status *s);
void ctl_domains_metrics(const ctl_status *s, FILE *f);
/* ctl_server.c */
int ctl_server_start(ctl *c, pfi_error *err);
void ctl_server_stop(ctl *c);

#endif
