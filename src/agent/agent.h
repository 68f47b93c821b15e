/* pfid's internal state, shared by its files (private to src/agent).
 *
 * Threads: the main thread waits for SIGTERM/SIGINT; the sampler thread
 * reads the GPUs every interval and expires caps; libmicrohttpd's threads
 * answer HTTP. `mu` guards every field marked (mu); cap changes are also
 * serialised by `cap_mu` (taken before mu, never the other way round) so that
 * a set, its read-back and its store record are one step.
 */
#ifndef PFI_AGENT_H
#define PFI_AGENT_H

#include <pthread.h>
#include <stdint.h>

#include <jansson.h>

#include "pfi/backend.h"
#include "pfi/store.h"
#include "pfi/telemetry_csv.h"
#include "pfi/trace.h"

struct MHD_Daemon;
struct MHD_Response;
struct MHD_Connection;
typedef struct http_guard http_guard;

typedef struct agent_opts {
    const char *backend;
    unsigned sim_gpus;
    const char *sim_jobs;
    const char *dcgm_url;
    const char *listen;
    const char *db;
    double interval_s;
    const char *token_file;
    int read_only;
    const char *model;
    double retention_s;
    double window_s;
    double phase_hold_s; /* how long util must hold for training (trace.h sustain_s) */
    int share_gpus;      /* several jobs may register the same GPU (MPS, time-slicing) */
    unsigned http_threads;
    const char *lock_dir; /* per-GPU lock files (lock.c) */
    unsigned http_max_conns, http_conns_per_ip;
    unsigned http_timeout_s; /* a connection idle this long is closed */
} agent_opts;

typedef struct agent_gpu {
    pfi_gpu_info info;
    pfi_gpu_sample last; /* (mu) */
    double last_t;       /* (mu) Unix s of `last`, 0 before the first sample */
    int sample_ok;       /* (mu) the last read succeeded */
    char read_error[160]; /* (mu) why it did not */
    double data_age_s;   /* (mu) age of the data behind it (dcgm's page), NaN: read live */
    pfi_gpu_limits limits; /* (mu) */
    int have_limits;       /* (mu) */
    /* The cap pfid holds on this GPU (mu). */
    int capped;
    double cap_w, cap_set_at, cap_expires_at, cap_prior_w;
    int restore_failed; /* (mu) an expired cap could not be restored yet */
    int drifting;       /* (mu) the device's limit moved off the cap; re-applying */
    int persistence;    /* NVML persistence mode at start: 1, 0, -1 unknown */
    int job;            /* (mu) index into agent.jobs of the (first) job on this GPU, -1 */
    int lock_fd;        /* this GPU's lock file (lock.c), -1 when not locked */
} agent_gpu;

/* Per-tick values of a job kept in its rolling window: the 14 telemetry.csv
 * fields (mean over the job's GPUs) and the job's total power. */
enum { JF_TOTAL_POWER = PFI_TM_NFIELDS, JF_COUNT };

typedef struct curve_point curve_point; /* job_curve.c */

typedef struct agent_job {
    pfi_store_job rec;
    pfi_trace_seg *seg;
    pfi_trace_roll *roll; /* JF_COUNT fields per tick */
    pfi_trace_roll *tput; /* 1 field: tokens/s reports */
    double last_tput, last_tput_t;
    unsigned long long reports;
    double last_power_w; /* total over the job's GPUs, last tick; NaN unknown */
    pfi_phase phase;
    /* Aggregates change only with a tick or a report: computed once per
     * change, however many scrapes ask (see agent_job_aggregate). */
    unsigned long long ticks, tput_pushes, agg_ticks, agg_pushes;
    int agg_valid;
    /* The live estimate is from uncapped telemetry only (jobs.c). */
    double last_t, last_uncapped_t; /* Unix s of the newest tick, of the newest uncapped one */
    int capped_now;                  /* the newest tick was capped telemetry */
    double kept_pfi, kept_t;         /* the last estimate from uncapped samples, and their time */
    int has_kept;
    /* The curve seen so far (job_curve.c): one point per steady cap level. */
    curve_point *points;
    size_t n_points, cap_points;
    double level_w;             /* the level of the newest tick, NaN when mixed */
    unsigned long level_ticks;  /* ticks at that level in a row */
    struct job_agg *agg;
} agent_job;

typedef struct agent {
    agent_opts o;
    pfi_backend *be;
    unsigned n_gpus;
    agent_gpu *gpus;
    pfi_store *store;
    char token[256];
    double boost_mhz; /* for the clock-fraction feature */
    struct pfi_model_file *model; /* the --model predictor, NULL without one */

    pthread_mutex_t mu;
    pthread_mutex_t cap_mu;
    pthread_cond_t wake; /* (mu) the sampler's sleep: new cap, stop */
    int stop;            /* (mu) */
    agent_job **jobs;    /* (mu) running jobs */
    size_t n_jobs, cap_jobs;
    unsigned long long gen; /* (mu) bumps on every change /metrics shows */
    unsigned long long samples_total, sample_errors_total, store_errors_total;
    unsigned long long caps_set_total, caps_restored_total, cap_restore_errors_total;
    unsigned long long cap_drift_total; /* (mu) episodes of a held cap found changed */
    double last_tick_s;  /* (mu) seconds the last sampler tick took */
    int store_failing;   /* (mu) the last tick's samples could not be written */
    char store_error[512]; /* (mu) why, while store_failing */
    double started_at;   /* Unix s */

    /* The cached /metrics response, rebuilt when gen moved (mu). */
    struct MHD_Response *metrics_resp;
    unsigned long long metrics_gen;

    struct MHD_Daemon *httpd;
    http_guard *guard; /* http_guard.c */
    int listen_fd;     /* bound at start, before anything else (http.c), -1 */
    int store_lock_fd; /* the store file's lock (lock.c), -1 */
    pthread_t sampler;
} agent;

/* Clocks: wall (Unix s) for records that must survive a restart, monotonic
 * for intervals. */
double agent_now(void);
double agent_mono(void);

void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* sampler.c */
int agent_sampler_start(agent *a);
void agent_sampler_stop(agent *a);
/* One tick: read every GPU, store, update jobs. Exposed for start-up. */
void agent_tick(agent *a);

/* jobs.c (caller holds mu unless noted) */
int agent_job_find(const agent *a, const char *id);
/* Registers a job; status PFI_ESTATE (409) for a running id or a busy GPU,
 * PFI_ENOTFOUND (400) for a GPU that does not exist. Takes mu itself. */
int agent_job_register(agent *a, const pfi_store_job *rec, int persist, pfi_error *err);
int agent_job_end(agent *a, const char *id, json_t **summary, pfi_error *err); /* takes mu */
int agent_job_report(agent *a, const char *id, double tokens_per_s, unsigned long long *n,
                     pfi_error *err); /* takes mu */
/* One tick of a job: by_gpu[g] is GPU g's sample, NULL when not read;
 * prior_w[g] its prior limit (agent_gpu_prior_w). */
void agent_job_push_tick(agent_job *j, double t, const pfi_gpu_sample *const *by_gpu,
                         const double *prior_w);
/* After a restart: feeds the stored samples and reports since `since` into
 * the reloaded jobs, so phases and aggregates survive a crash. Takes mu. */
void agent_jobs_replay(agent *a, double since);
json_t *agent_job_json(agent *a, agent_job *j);
void agent_jobs_free(agent *a);

/* Aggregates of a job over its training phase in the rolling window (mu). */
typedef struct job_agg {
    int training;              /* training has begun */
    double tm[PFI_TM_NFIELDS]; /* top-10% means, NaN when not available */
    double power_w;            /* total power top-10% mean, NaN */
    double tput;               /* throughput top-10% mean, NaN */
    size_t n_samples, n_reports;
    int has_pfi;
    double pfi;     /* the model's live estimate, from uncapped samples */
    double basis_t; /* Unix s of the newest uncapped sample behind it */
} job_agg;
void agent_job_aggregate(agent *a, agent_job *j, job_agg *out);
struct pfi_features;
/* The predictor's features from the aggregates (and arch/task/GPUs). */
void agent_job_features(agent *a, const agent_job *j, const job_agg *agg,
                        struct pfi_features *ft);

/* caps.c (each takes cap_mu and mu itself) */
int agent_cap_set(agent *a, unsigned gpu, double watts, double expires_s, json_t **resp,
                  pfi_error *err);
int agent_cap_clear(agent *a, unsigned gpu, const char *why, json_t **resp, pfi_error *err);
/* Restores every expired cap; returns the earliest remaining expiry (Unix s)
 * or INFINITY. */
double agent_caps_expire(agent *a);
/* After each tick: a held cap the device no longer shows (a driver reload
 * brings the stock limit back) is re-applied and counted. */
void agent_caps_reconcile(agent *a);
/* At start: warns when persistence mode is off (caps may revert). */
void agent_caps_check_persistence(agent *a);
/* The limit the GPU runs at without pfid: the recorded prior while capped,
 * else the limit in force; NaN when unknown. Caller holds mu. */
double agent_gpu_prior_w(const agent_gpu *x);
/* An out-of-band limiter holds the enforced limit below the one set. */
int agent_externally_limited(const pfi_gpu_limits *l);
/* At start: restore expired recorded caps, re-apply unexpired ones. */
int agent_caps_recover(agent *a, pfi_error *err);
/* At shutdown: restore every cap; returns how many could not be (each
 * logged with its GPU and watts). */
unsigned agent_caps_restore_all(agent *a);

/* lock.c: one pfid per store and per GPU (see there). Taken before any GPU
 * setting or store record is touched; PFI_ESTATE when another pfid holds one. */
int agent_lock_store(agent *a, pfi_error *err);
int agent_lock_gpus(agent *a, pfi_error *err); /* after the backend is open */
void agent_unlock_all(agent *a);

/* job_curve.c (caller holds mu). A tick, after agent_job_push_tick; a report. */
void agent_curve_tick(agent *a, agent_job *j, double t);
void agent_curve_report(agent *a, agent_job *j, double t, double tokens_per_s);
int agent_curve_steady(const agent_job *j);
/* Copies of the points changed since the last call, for the store; *out
 * malloc'd (caller frees). */
size_t agent_curve_take_dirty(agent *a, pfi_store_point **out);
/* A job restored after a restart gets its stored points back. */
void agent_curve_restore(agent *a, agent_job *j);
size_t agent_curve_copy(const agent_job *j, pfi_store_point **out); /* malloc'd */
/* {"job","points":[...]} by cap, from pts (sorted in place). */
json_t *agent_curve_json(const char *id, pfi_store_point *pts, size_t n);

/* http.c: agent_http_bind takes the address first (a pfid that cannot listen
 * stops before it changes anything); agent_http_start serves on it. */
int agent_http_bind(agent *a, pfi_error *err);
int agent_http_start(agent *a, pfi_error *err);
void agent_http_stop(agent *a);

/* render.c (caller holds mu) */
char *agent_render_metrics(agent *a, size_t *len);
json_t *agent_gpus_json(agent *a);
json_t *agent_jobs_json(agent *a);

/* predictor.c: the --model file and the live PFI estimate. Loading takes mu
 * (SIGHUP reloads while pfid runs); a failed load keeps the model in use. */
int agent_model_load(agent *a, const char *path, pfi_error *err);
/* The clock-fraction feature's boost clock without a model saying otherwise:
 * H200, the GPU the model was fitted on and the only one the backends know. */
#define PFI_AGENT_BOOST_MHZ 1980.0
/* Fills agg->pfi from agg->tm when a model is loaded and every feature it
 * needs is present. */
void agent_model_estimate(agent *a, const agent_job *j, job_agg *agg);

#endif
