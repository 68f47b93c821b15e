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
#include "pfi/clock.h"
#include "pfi/http_server.h"
#include "pfi/log.h"
#include "pfi/model.h"
#include "pfi/store.h"
#include "pfi/telemetry_csv.h"
#include "pfi/trace.h"

struct MHD_Daemon;
struct MHD_Response;
struct MHD_Connection;
typedef struct http_guard http_guard;

/* kubelet.c: jobs from Kubernetes' view of the node. */
typedef struct agent_k8s_opts {
    const char *socket;       /* --kubelet-socket: the PodResources API, NULL none */
    int from_dcgm;            /* --k8s-from-dcgm: the dcgm-exporter page's pod labels */
    double interval_s;        /* --kubelet-interval, 0: --interval */
    const char *pods_url;     /* --pods-url: a PodList (labels, annotations), NULL none */
    const char *pods_token;   /* --pods-token-file */
    const char *pods_ca;      /* --pods-ca-file */
    const char *group_labels; /* --k8s-group-labels, comma-separated; NULL the defaults */
} agent_k8s_opts;

typedef struct agent_opts {
    const char *backend;
    unsigned sim_gpus;
    const char *sim_jobs;
    double sim_limit_w; /* sim: the limit in force at start (the site's own), 0 = the TDP */
    int sim_tokens;     /* sim: report each job's modelled tokens/s every sample */
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
    const char *lock_dir;  /* per-GPU lock files for pfi sweep to meet (lock.c) */
    const char *state_dir; /* per-GPU state files (cap_state.c); NULL: none */
    const char *node_name; /* --node-name: GET /v1/node's name, NULL the hostname */
    unsigned http_max_conns, http_conns_per_ip;
    unsigned http_timeout_s; /* a connection idle this long is closed */
    agent_k8s_opts k8s;
} agent_opts;

/* Who may change a GPU's cap (the HTTP headers Pfi-Owner and Pfi-Epoch): an
 * owner of 1-64 characters of [A-Za-z0-9._:@-], "" the anonymous one. */
#define AGENT_OWNER_MAX 64
typedef struct agent_caller {
    char owner[AGENT_OWNER_MAX + 1];
    long long epoch;
} agent_caller;

/* A GPU's state file (cap_state.c), where a lost store cannot take it. */
typedef struct agent_state {
    int present;    /* the file was there */
    double prior_w; /* the site's own limit, NaN when none recorded */
    long long max_epoch;
    char max_epoch_owner[AGENT_OWNER_MAX + 1];
    int capped;
    double watts, set_at, expires_at; /* set_at, expires_at: wall, for people */
    double expires_mono;              /* the expiry on the cap clock (agent_cap_now) */
    char boot_id[40];                 /* of the boot expires_mono counts from */
    char owner[AGENT_OWNER_MAX + 1];
    long long epoch;
    double node_w; /* the node ceiling's share on the device (W), NaN none */
} agent_state;

typedef struct agent_gpu {
    pfi_gpu_info info;
    pfi_gpu_sample last;   /* (mu) */
    double last_t;         /* (mu) Unix s of `last`, 0 before the first sample */
    double sample_age_s;   /* (mu) how old `last`'s data were when read (dcgm: the
                              exporter's page), NaN when the backend reads live */
    int sample_ok;         /* (mu) the last read succeeded */
    char read_error[160];  /* (mu) why it did not */
    pfi_gpu_limits limits; /* (mu) */
    int have_limits;       /* (mu) */
    /* The cap pfid holds on this GPU (mu). */
    int capped;
    double cap_w, cap_set_at, cap_expires_at, cap_prior_w; /* set_at, expires_at: wall */
    double cap_expires_m;                /* the expiry that counts, on agent_cap_now's clock */
    char cap_owner[AGENT_OWNER_MAX + 1]; /* who set it, and at which epoch */
    /* Recovered from a store row alone (no state file): who set it is not
     * known, so the first caller to renew or release it becomes its owner
     * rather than being refused as another. */
    int cap_owner_unknown;
    long long cap_epoch;
    agent_state st;          /* (cap_mu; read under mu) the state file as last written */
    int release_pending;     /* (mu) the prior is back but the release is not recorded */
    char release_error[512]; /* (mu) why, while release_pending */
    int below_prior;         /* (mu) found below its recorded prior at start, not restored */
    char refused_owner[AGENT_OWNER_MAX + 1]; /* (cap_mu) the last refusal logged */
    int refused_logged;
    /* The node ceiling's share (node_limit.c): the device holds the lower
     * of it and the cap (mu). node_prior_w is the limit before the share
     * while no cap is held (the prior a cap or a release returns to). */
    double node_w, node_prior_w;
    int node_failed;    /* (mu) setting the share failed; logged once */
    int restore_failed; /* (mu) an expired cap could not be restored yet */
    int drifting;       /* (mu) the device's limit moved off the cap; re-applying */
    int persistence;    /* NVML persistence mode at start: 1, 0, -1 unknown */
    int job;            /* (mu) index into agent.jobs of the (first) job on this GPU, -1 */
    int lock_fd;        /* this GPU's lock file (lock.c), -1 when not locked */
    int sock_fd;        /* this GPU's abstract socket lock (lock.c), -1 */
} agent_gpu;

/* Per-tick values of a job kept in its rolling window: the 14 telemetry.csv
 * fields (mean over the job's GPUs; NaN on a tick that was not uncapped, so
 * that the features see uncapped telemetry only) and the job's total power
 * (every tick). */
enum { JF_TOTAL_POWER = PFI_TM_NFIELDS, JF_COUNT };

/* job_curve.c: the steady-state points of a job's curve as the agent sees it
 * (GET /v1/jobs/ID/curve, the store's job_points). A point per per-GPU
 * limit (whole W) the job has trained at for CURVE_HOLD_TICKS ticks; each
 * throughput report then made is a sample of it, paired with the job's total
 * power at the last tick. (mu) */
typedef struct agent_curve {
    pfi_store_point *pts; /* by cap_w, ascending */
    double *m2;           /* per point: Welford's sum of squared tokens/s deviations */
    unsigned char *dirty; /* per point: changed since it was last written */
    size_t n, cap;
    double level_w;     /* the job's GPUs' limit at the last tick, NaN unknown or mixed */
    unsigned long held; /* consecutive training ticks at level_w */
    double saved_at;    /* Unix s of the last write of the dirty points */
} agent_curve;

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
    struct job_agg *agg;
    /* The live estimate's basis: whether the newest tick was uncapped
     * telemetry, the time of the newest that was, and the aggregates as
     * they were at it (kept, and shown, while the job is capped). */
    int uncapped_now;
    double uncapped_t; /* Unix s, NaN before any */
    int basis_valid;
    struct job_agg *basis;
    int basis_dirty; /* frozen (the job was capped) and not yet in the store */
    agent_curve curve;
} agent_job;

/* The node ceiling (node_limit.c; agent_api.h's PUT /v1/node/limit):
 * fenced like a cap, expiring on the cap clock, kept in --state-dir. (mu;
 * changed under cap_mu) */
typedef struct agent_node {
    int set;
    double watts, set_at, expires_at; /* set_at, expires_at: wall, for people */
    double expires_m;                 /* agent_cap_now's clock */
    char owner[AGENT_OWNER_MAX + 1];
    long long epoch;
    long long max_epoch; /* the highest epoch seen on the node limit */
    char max_epoch_owner[AGENT_OWNER_MAX + 1];
    int enforcing;  /* its even shares are on the GPUs */
    double power_w; /* the GPUs' summed power at the last sample, NaN unknown */
    char name[256]; /* --node-name, else the hostname */
} agent_node;

typedef struct agent {
    agent_opts o;
    pfi_backend *be;
    unsigned n_gpus;
    agent_gpu *gpus;
    pfi_store *store;
    char token[256];
    double boost_mhz;             /* for the clock-fraction feature */
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
    unsigned long long cap_drift_total;      /* (mu) episodes of a held cap found changed */
    unsigned long long cap_refused_total[3]; /* (mu) by agent_refusal */
    double last_tick_s;                      /* (mu) seconds the last sampler tick took */
    int store_failing;                       /* (mu) the last tick's samples could not be written */
    char store_error[512];                   /* (mu) why, while store_failing */
    double started_at;                       /* Unix s */
    agent_node node;                         /* node_limit.c */

    /* The cached /metrics response, rebuilt when gen moved (mu). */
    struct MHD_Response *metrics_resp;
    unsigned long long metrics_gen;

    struct MHD_Daemon *httpd;
    pfi_http_service http; /* http.c's routes, served by httpd */
    http_guard *guard;     /* http_guard.c */
    int listen_fd;         /* bound at start, before anything else (http.c), -1 */
    int store_lock_fd;     /* the store file's lock (lock.c), -1 */
    pthread_t sampler;
    struct agent_k8s *k8s; /* kubelet.c's poller, NULL when not configured */
} agent;

/* The clock cap expiry runs on: the boot clock (pfi_clock_mono) moved
 * forward by the seconds in the file PFID_TEST_CLOCK names, if set (a test
 * hook; cap_clock.c). Wall time is only for timestamps people read. */
double agent_cap_now(void);
/* The wall time at which cap-clock time t falls, as the wall clock now reads. */
double agent_cap_wall(double t);

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
/* One tick of a job: by_gpu[g] is GPU g's sample, NULL when not read. */
void agent_job_push_tick(agent *a, agent_job *j, double t, const pfi_gpu_sample *const *by_gpu);
/* After a restart: feeds the stored samples and reports since `since` into
 * the reloaded jobs, so phases and aggregates survive a crash. Takes mu. */
void agent_jobs_replay(agent *a, double since);
json_t *agent_job_json(agent *a, agent_job *j);
/* The bases frozen since the last call (a job capped: its estimate stands
 * on them until it is uncapped), copied for the store (*out malloc'd, NULL
 * when none), and their write outside mu (no lock needed): a restart then
 * finds the estimate of a job capped for longer than the window. */
typedef struct agent_basis_rec {
    char job[PFI_STORE_JOB_ID_MAX + 1];
    double t, tm[PFI_TM_NFIELDS];
} agent_basis_rec;
size_t agent_jobs_take_bases(agent *a, agent_basis_rec **out);
void agent_jobs_save_bases(agent *a, const agent_basis_rec *b, size_t n);
void agent_jobs_free(agent *a);

/* What the telemetry, features and estimate of a job were computed from. */
typedef enum {
    JOB_BASIS_NONE,         /* no uncapped training telemetry (yet) */
    JOB_BASIS_UNCAPPED,     /* the window's uncapped samples; the newest tick is one */
    JOB_BASIS_LAST_UNCAPPED /* the job is capped now: as they were at its last uncapped tick */
} job_basis;

/* Aggregates of a job over its training phase in the rolling window (mu). */
typedef struct job_agg {
    int training;              /* training has begun */
    double tm[PFI_TM_NFIELDS]; /* top-10% means, NaN when not available */
    double power_w;            /* total power top-10% mean, NaN */
    double tput;               /* throughput top-10% mean, NaN */
    size_t n_samples, n_reports;
    int has_pfi;
    double pfi;      /* the model's live estimate */
    double pfi_sd;   /* its SD (agent_model_estimate), NaN unknown */
    job_basis basis; /* of tm, the features and pfi */
    double basis_t;  /* Unix s of the newest uncapped sample behind them, NaN none */
} job_agg;
const char *agent_job_basis_name(job_basis b);
void agent_job_aggregate(agent *a, agent_job *j, job_agg *out);
struct pfi_features;
/* The predictor's features from the aggregates (and arch/task/GPUs). */
void agent_job_features(agent *a, const agent_job *j, const job_agg *agg, struct pfi_features *ft);

/* Why a cap call was refused (pfi_cap_refused_total's reason label). */
typedef enum { AGENT_REFUSED_OWNER, AGENT_REFUSED_EPOCH, AGENT_REFUSED_CEILING } agent_refusal;
/* The holder named by a 409 (owner or epoch refusal). */
typedef struct agent_holder {
    int set;
    char owner[AGENT_OWNER_MAX + 1];
    long long epoch;
} agent_holder;

/* caps.c (each takes cap_mu and mu itself). by: the caller (NULL: the
 * anonymous owner at epoch 0; a clear by NULL is pfid's own, never fenced);
 * holder, when non-NULL, is filled on a 409. A
 * cap above the GPU's prior limit is PFI_ERANGE (400); a release the store
 * or the state file cannot record is PFI_EIO (500), retried. */
int agent_cap_set(agent *a, unsigned gpu, double watts, double expires_s, const agent_caller *by,
                  json_t **resp, agent_holder *holder, pfi_error *err);
int agent_cap_clear(agent *a, unsigned gpu, const char *why, const agent_caller *by, json_t **resp,
                    agent_holder *holder, pfi_error *err);
/* cap_fence.c: whether by may change gpu's cap (caller holds cap_mu):
 * PFI_ESTATE naming the holder when its epoch is below the highest seen or
 * another owner holds a live cap at an epoch as high; logs a refusal once
 * per owner, a takeover always. */
int agent_cap_fence(agent *a, unsigned gpu, const agent_caller *by, agent_holder *holder,
                    pfi_error *err);
/* The fence's decision for any limit (cap_fence.c): live, whether a holder's
 * limit is in force; what names it in messages ("GPU 3", "node"), thing the
 * limit ("cap"). PFI_ESTATE with *h, *why and msg filled when refused; a
 * takeover is logged. */
typedef struct agent_fence {
    int live;
    char holder[AGENT_OWNER_MAX + 1];
    long long holder_epoch, max_epoch;
    char max_owner[AGENT_OWNER_MAX + 1];
} agent_fence;
int agent_fence_decide(const agent_fence *f, const char *what, const char *thing,
                       const agent_caller *by, agent_holder *h, agent_refusal *why, char *msg,
                       size_t len);
/* Counts a refusal and logs it once per refused owner (caller holds cap_mu). */
void agent_cap_refused(agent *a, unsigned gpu, agent_refusal why, const agent_caller *by,
                       const char *msg);
/* cap_fence.c: parses the Pfi-Owner and Pfi-Epoch header values (NULL:
 * absent); PFI_EINVAL with a message when malformed. */
int agent_caller_parse(const char *owner, const char *epoch, agent_caller *out, pfi_error *err);

/* cap_state.c: the per-GPU state files. */
const char *agent_boot_id(void);
int agent_state_path(const agent *a, unsigned gpu, char *buf, size_t len);
/* Creates --state-dir if needed and loads every GPU's file (after the
 * backend is open: files are named by UUID). */
int agent_state_dir_open(agent *a, pfi_error *err);
int agent_state_load(agent *a, unsigned gpu, agent_state *st, pfi_error *err);
/* Writes st atomically (fsync'd); PFI_OK doing nothing without --state-dir. */
int agent_state_save(agent *a, unsigned gpu, const agent_state *st, pfi_error *err);
/* The records in --state-dir (a GPU's state, the node limit) share one
 * writer: o as JSON to path, atomically (a temporary file, fsync, rename,
 * fsync of the directory); `what` names the record in errors. And their
 * readers: a number (NaN when absent) and a string ("" when absent). */
int agent_record_save(const agent *a, const char *path, json_t *o, const char *what,
                      pfi_error *err);
double agent_record_num(json_t *o, const char *k);
void agent_record_str(json_t *o, const char *k, char *buf, size_t len);
/* Restores every expired cap and retries releases not yet recorded; returns
 * the earliest remaining expiry (agent_cap_now's clock) or INFINITY. */
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
/* That, or the GPU was found below its recorded prior at start and could not
 * be put back (caller holds mu). */
int agent_gpu_externally_limited(const agent_gpu *x);
/* The limit set through power management (current_w; the enforced limit
 * when the backend does not report it), and whether it is w within 1 W. */
double agent_in_force_w(const pfi_gpu_limits *l);
int agent_at_w(const pfi_gpu_limits *l, double w);
/* Sets w on gpu and reads it back (caller holds cap_mu). */
int agent_set_verify(agent *a, unsigned gpu, double w, pfi_gpu_limits *lim, pfi_error *err);
/* One cap as caps.c records it. */
typedef struct agent_cap {
    double watts, set_at, expires_at; /* set_at, expires_at: wall */
    double expires_m;                 /* agent_cap_now's clock */
    double prior_w;
    char owner[AGENT_OWNER_MAX + 1];
    long long epoch;
} agent_cap;
/* Records c (state file, then store; by raises the highest epoch, may be
 * NULL); restores the prior limit and records the release. Caller holds
 * cap_mu. */
int agent_cap_record(agent *a, unsigned gpu, const agent_cap *c, const agent_caller *by,
                     pfi_error *err);
int agent_cap_restore(agent *a, unsigned gpu, double prior_w, const char *why,
                      const agent_caller *by, pfi_gpu_limits *after, pfi_error *err);
/* Records a release the device took but the records did not (caller holds
 * cap_mu). */
int agent_cap_clear_record(agent *a, unsigned gpu, pfi_error *err);
/* Copies c into the GPU's live state (caller holds mu). */
void agent_cap_note(agent_gpu *x, const agent_cap *c);
/* At start: restore expired recorded caps, re-apply unexpired ones. */
int agent_caps_recover(agent *a, pfi_error *err);
/* At shutdown: restore every cap; returns how many could not be (each
 * logged with its GPU and watts). */
unsigned agent_caps_restore_all(agent *a);

/* job_curve.c (caller holds mu unless noted) */
/* Loads the job's stored points (before the job is listed; no lock). */
int agent_curve_load(agent *a, agent_job *j, pfi_error *err);
/* After a tick's phase update: the job's level and how long it held. */
void agent_curve_tick(agent *a, agent_job *j, const pfi_gpu_sample *const *by_gpu);
/* A throughput report: a sample of the current level's point when steady. */
void agent_curve_report(agent *a, agent_job *j, double t, double tokens_per_s);
/* The spread of one throughput report at the limit in force: the SD of the
 * reports of the current level's point, NaN below 2 reports or with no level
 * (GET /v1/jobs' tokens_sd; the controller's learn readings). */
double agent_curve_sd(const agent_job *j);
/* The points changed since the last write, copied (*out malloc'd, NULL when
 * none); marks them written. */
size_t agent_curve_take_dirty(agent_job *j, double now, pfi_store_point **out);
/* Every job's points left unwritten for an interval (the sampler's tick: the
 * reports since a write are stored even when no report follows, so a
 * SIGKILL loses at most an interval of them); *out malloc'd, NULL when none. */
size_t agent_curves_take_due(agent *a, double now, pfi_store_point **out);
/* Writes points to the store (no lock needed; logs failures). */
void agent_curve_save(agent *a, const char *job, const pfi_store_point *pts, size_t n);
void agent_curve_free(agent_curve *c);
/* GET /v1/jobs/ID/curve: a running job's points, else the stored ones of an
 * ended job; PFI_ENOTFOUND when neither. Takes mu itself. */
int agent_curve_get(agent *a, const char *id, json_t **out, pfi_error *err);

/* node_limit.c: the node ceiling. Each takes cap_mu and mu itself. */
/* At start, after agent_caps_recover: the node limit from --state-dir (an
 * expired one, or one from before a reboot, is dropped) and the name. */
void agent_node_open(agent *a);
/* PUT /v1/node/limit and DELETE: fenced like a cap (by NULL: anonymous);
 * *resp is GET /v1/node's object. */
int agent_node_set(agent *a, double watts, double expires_s, const agent_caller *by, json_t **resp,
                   agent_holder *holder, pfi_error *err);
int agent_node_clear(agent *a, const agent_caller *by, json_t **resp, agent_holder *holder,
                     pfi_error *err);
json_t *agent_node_json(agent *a); /* GET /v1/node; caller holds mu */
/* After each tick: expiry, then the shares the summed power calls for. */
void agent_node_tick(agent *a);
/* When the node limit expires (agent_cap_now's clock), INFINITY when none. */
double agent_node_expiry(agent *a);
/* At shutdown, before agent_caps_restore_all: every share off its GPU (the
 * limit itself stays recorded). */
void agent_node_release_all(agent *a);
/* The limit the device should hold: the lower of the cap and the node share;
 * NaN when neither (caller holds mu). */
double agent_gpu_target_w(const agent_gpu *x);

/* lock.c: one pfid per store and per GPU (see there). Taken before any GPU
 * setting or store record is touched; PFI_ESTATE when another pfid holds one. */
int agent_lock_store(agent *a, pfi_error *err);
int agent_lock_gpus(agent *a, pfi_error *err); /* after the backend is open */
void agent_unlock_all(agent *a);

/* http.c: agent_http_bind takes the address first (a pfid that cannot listen
 * stops before it changes anything); agent_http_start serves on it. */
int agent_http_bind(agent *a, pfi_error *err);
int agent_http_start(agent *a, pfi_error *err);
void agent_http_stop(agent *a);

/* kubelet.c: with --kubelet-socket or --k8s-from-dcgm, a thread registers
 * the node's pods as jobs every --kubelet-interval and ends them when their
 * pods go (see there). start is a no-op without either option. */
int agent_k8s_start(agent *a, pfi_error *err);
extern const char agent_k8s_help[]; /* the options' part of pfid --help */
/* A usage error in the options, NULL when they hold together. */
const char *agent_k8s_check(const agent_opts *o);
void agent_k8s_stop(agent *a); /* NULL-safe on a->k8s; joins the thread */
/* One poll, on the calling thread (start-up and tests). */
void agent_k8s_poll(agent *a);

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
/* The SD of a model's estimate for a new job (predictor.c). */
double agent_model_sd(const pfi_ols *m);

#endif
