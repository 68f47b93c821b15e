/* The controller's SQLite store: every decision, and what a restarted
 * controller needs to resume without releasing caps (targets, the caps it
 * holds on each agent's GPUs, the trim, what it learned of each job).
 *
 * Tables (schema version 3 in PRAGMA user_version; a newer one is refused,
 * an older store gains observations.tput_var and jobs.class, NULL, when
 * opened):
 *   targets(source, id, kind, limit_w, start, end, ramp_w_per_s, priority, is_default)
 *   caps(agent, gpu, watts, expires_at, pushed_at)      caps held now
 *   periods(t, target, site_limit_w, gpu_budget_w, fixed_w, trim_w,
 *           measured_gpu_w, site_w, infeasible, shortfall_w, agents_up, policy)
 *   allocations(t, job, power_w, cap_w, tput, tmax)    one row per job per period
 *   pushes(t, agent, gpu, watts, status)                every cap call and its answer
 *   observations(job, cap_w, power_w, tput, n, t, tput_var)  learned curve points
 *   jobs(job, pmax_w, tmax, t, class)                   uncapped power and throughput
 *                                                       seen, the job's class (issue 29)
 *   agents(url, n_gpus, max_w, t)                       each agent's size when last seen
 *   state(key, value)                                   trim_w, budget_w
 *   meta(key, value TEXT)                               owner (the controller's id)
 * WAL mode, synchronous=NORMAL, 5 s busy timeout. No secret is ever stored.
 * An infinite end or a null priority is stored as NULL.
 *
 * Ownership: close is NULL-safe. Safe from several threads: one mutex
 * serialises the calls, and begin holds it until commit.
 */
#ifndef PFI_CTL_STORE_H
#define PFI_CTL_STORE_H

#include <stddef.h>

#include "pfi/error.h"
#include "pfi/target.h"

typedef struct pfi_ctl_store pfi_ctl_store;

int pfi_ctl_store_open(const char *path, pfi_ctl_store **out, pfi_error *err);
void pfi_ctl_store_close(pfi_ctl_store *s);

int pfi_ctl_store_begin(pfi_ctl_store *s, pfi_error *err);
int pfi_ctl_store_commit(pfi_ctl_store *s, pfi_error *err);

/* Inserts or replaces a target (by source and id). */
int pfi_ctl_store_put_target(pfi_ctl_store *s, const pfi_target *t, pfi_error *err);
/* PFI_ENOTFOUND when there was none. */
int pfi_ctl_store_del_target(pfi_ctl_store *s, pfi_target_source src, const char *id,
                             pfi_error *err);
/* Replaces every target of one source with ts[0..n). */
int pfi_ctl_store_replace_source(pfi_ctl_store *s, pfi_target_source src, const pfi_target *ts,
                                 size_t n, pfi_error *err);
/* All targets, malloc'd (caller frees). */
int pfi_ctl_store_load_targets(pfi_ctl_store *s, pfi_target **out, size_t *n, pfi_error *err);

/* A cap held (watts > 0) or released (watts <= 0: the row goes). */
int pfi_ctl_store_put_cap(pfi_ctl_store *s, const char *agent, unsigned gpu, double watts,
                          double expires_at, double pushed_at, pfi_error *err);
typedef struct pfi_ctl_cap_rec {
    char agent[512];
    unsigned gpu;
    double watts, expires_at, pushed_at;
} pfi_ctl_cap_rec;
int pfi_ctl_store_load_caps(pfi_ctl_store *s, pfi_ctl_cap_rec **out, size_t *n, pfi_error *err);

typedef struct pfi_ctl_period_rec {
    double t;
    const char *target; /* NULL when none */
    double site_limit_w, gpu_budget_w, fixed_w, trim_w, measured_gpu_w, site_w;
    int infeasible;
    double shortfall_w;
    int agents_up;
    const char *policy;
} pfi_ctl_period_rec;
int pfi_ctl_store_add_period(pfi_ctl_store *s, const pfi_ctl_period_rec *r, pfi_error *err);
int pfi_ctl_store_add_alloc(pfi_ctl_store *s, double t, const char *job, double power_w,
                            double cap_w, double tput, double tmax, pfi_error *err);
int pfi_ctl_store_add_push(pfi_ctl_store *s, double t, const char *agent, unsigned gpu,
                           double watts, long status, pfi_error *err);

/* A learned point: an existing (job, cap) moves 0.3 of the way to it (the
 * loop's exponential mean; n counts the points). tput_var is the variance
 * of tput (NaN or < 0: unknown); the stored one is that of the mean,
 * 0.7^2 the old one's plus 0.3^2 tput_var, unknown once either is. */
int pfi_ctl_store_put_obs(pfi_ctl_store *s, const char *job, double cap_w, double power_w,
                          double tput, double tput_var, double t, pfi_error *err);
typedef struct pfi_ctl_obs_rec {
    char job[129];
    double cap_w, power_w, tput;
    double tput_var; /* NaN: unknown (and every point of a version-1 store) */
    long n;
} pfi_ctl_obs_rec;
int pfi_ctl_store_load_obs(pfi_ctl_store *s, pfi_ctl_obs_rec **out, size_t *n, pfi_error *err);

/* A job's uncapped power and throughput (kept at the highest seen). */
int pfi_ctl_store_put_job(pfi_ctl_store *s, const char *job, double pmax_w, double tmax, double t,
                          pfi_error *err);
/* The class a job was last seen with (its points pool with the class's
 * after it ends); "" none. */
int pfi_ctl_store_put_job_class(pfi_ctl_store *s, const char *job, const char *job_class, double t,
                                pfi_error *err);
typedef struct pfi_ctl_job_rec {
    char job[129];
    double pmax_w, tmax;
    char job_class[65]; /* "" none */
} pfi_ctl_job_rec;
int pfi_ctl_store_load_jobs(pfi_ctl_store *s, pfi_ctl_job_rec **out, size_t *n, pfi_error *err);

/* An agent's size when last seen: its GPU count and sum of max limits. */
int pfi_ctl_store_put_agent(pfi_ctl_store *s, const char *url, size_t n_gpus, double max_w,
                            double t, pfi_error *err);
int pfi_ctl_store_get_agent(pfi_ctl_store *s, const char *url, size_t *n_gpus, double *max_w,
                            pfi_error *err); /* PFI_ENOTFOUND when never seen */

int pfi_ctl_store_put_state(pfi_ctl_store *s, const char *key, double v, pfi_error *err);
/* PFI_ENOTFOUND when unset. */
int pfi_ctl_store_get_state(pfi_ctl_store *s, const char *key, double *v, pfi_error *err);
/* Text values (meta): get copies at most len - 1 bytes; PFI_ENOTFOUND when absent. */
int pfi_ctl_store_put_meta(pfi_ctl_store *s, const char *key, const char *v, pfi_error *err);
int pfi_ctl_store_get_meta(pfi_ctl_store *s, const char *key, char *v, size_t len, pfi_error *err);

#endif
