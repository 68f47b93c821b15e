/* The node agent's SQLite store: GPU samples, jobs, throughput reports, the
 * power caps pfid has applied and the steady-state points of each job's curve.
 *
 * The cap table is what makes crash recovery possible: a cap is written
 * before it is applied and deleted only after the prior limit is back, so
 * a pfid that dies in between finds the row at its next start and restores
 * the card (see pfi_store_caps).
 *
 * The database runs in WAL mode with synchronous=NORMAL (a commit survives a
 * process crash; a power loss can lose the last commits, never corrupt the
 * file), a busy timeout for other readers (sqlite3 CLI, backups), and a
 * schema version in PRAGMA user_version (3) and pfid's PRAGMA application_id
 * ('pfid'). A database of schema 1 or 2 is migrated in one transaction that
 * keeps every row; a newer schema, another application's id or tables that are not
 * pfid's are refused and the file is left untouched. Times are Unix seconds
 * (wall clock: they must mean the same after a restart). Samples are stored
 * in SI units, one column per GPU field (W, J, Hz, ratio 0-1, C, bytes,
 * bytes/s; clock_events holds pfi_clock_event bits).
 *
 * Ownership: pfi_store_open and pfi_store_open_readonly return a handle
 * closed by pfi_store_close (NULL-safe). Every function is safe to call from
 * several threads: one connection, one mutex, prepared statements reused.
 */
#ifndef PFI_STORE_H
#define PFI_STORE_H

#include <stddef.h>

#include "pfi/gpu_sample.h"
#include "pfi/error.h"

#define PFI_STORE_SCHEMA_VERSION 4
#define PFI_STORE_APPLICATION_ID 0x70666964 /* 'pfid' */
#define PFI_STORE_JOB_ID_MAX 128
#define PFI_STORE_MAX_JOB_GPUS 64
#define PFI_STORE_CLASS_MAX 64

typedef struct pfi_store pfi_store;

typedef struct pfi_store_job {
    char id[PFI_STORE_JOB_ID_MAX + 1];
    unsigned gpus[PFI_STORE_MAX_JOB_GPUS];
    size_t n_gpus;
    char arch[16];        /* "dense", "moe" or "" */
    char task[16];        /* "pt", "ft" or "" */
    double registered_at; /* Unix s */
    double ended_at;      /* Unix s, 0 while the job runs */
    double sla_floor;     /* minimum throughput as a fraction of uncapped, (0, 1]; 0: none */
    int exempt;           /* 1: never cap this job */
    /* jobs expected to share a curve (the Slurm job name, a Kubernetes label,
     * "class" at registration; the id charset), "" none */
    char job_class[PFI_STORE_CLASS_MAX + 1];
} pfi_store_job;

typedef struct pfi_store_cap {
    unsigned gpu;
    double watts;      /* the cap pfid applied, W */
    double set_at;     /* Unix s */
    double expires_at; /* Unix s */
    double prior_w;    /* the limit in force before pfid's first cap on this GPU: what a
                          restore puts back, W */
} pfi_store_cap;

/* One steady-state point of a job's curve as the agent saw it: power_w and
 * tokens_per_s are the job's totals over its GPUs at cap cap_w, the mean of
 * n windows seen between t_first and t_last (tokens_sd their sd). */
typedef struct pfi_store_point {
    char job[PFI_STORE_JOB_ID_MAX + 1];
    double cap_w, power_w, tokens_per_s, tokens_sd;
    long n;
    double t_first, t_last;
} pfi_store_point;

/* Opens (creating if needed) the database at path. A file that is damaged
 * (PRAGMA quick_check), not SQLite, or another application's is refused
 * (PFI_EPARSE, PFI_ENOTSUP) without a byte of it written. A database written by a
 * newer schema is refused rather than misread. */
int pfi_store_open(const char *path, pfi_store **out, pfi_error *err);
/* Opens an existing database for reading only (`pfi export`), also while a
 * pfid writes it (WAL readers do not block the writer): nothing is written
 * to the file, no lock is taken beyond a reader's. A missing file is
 * PFI_ENOTFOUND (and is not created); a damaged, foreign or newer file is
 * refused as by pfi_store_open. A schema-1 (or empty) file is copied into
 * memory and migrated (created) there, so reads return schema 2's rows while
 * the file stays as it was. Every write function on the handle fails with
 * PFI_ESTATE. */
int pfi_store_open_readonly(const char *path, pfi_store **out, pfi_error *err);
void pfi_store_close(pfi_store *s);

/* One moment across several reads of a read-only handle (`pfi export`'s
 * jobs, points and samples while pfid writes): between begin and end every
 * read sees the database as it was at begin; the writer is not blocked
 * (WAL). PFI_ESTATE on a read-write handle or when one is open; end (and
 * close) ends it, NULL-safe, once. */
int pfi_store_snapshot_begin(pfi_store *s, pfi_error *err);
void pfi_store_snapshot_end(pfi_store *s);

/* Reads skip a row with an unusable value rather than fail on it: a jobs row
 * (no id, a bad GPU list, arch, task, time, sla_floor or exempt) is left
 * out of pfi_store_jobs_running, a caps row without a GPU index out of
 * pfi_store_caps (other unusable cap values come back as NaN). Each skipped
 * row is passed to fn with its table, its id (jobs; NULL when unreadable)
 * and why; fn runs under the store's lock and must not call the store.
 * Without a hook the rows are written to stderr. */
typedef void (*pfi_store_bad_row_fn)(const char *table, const char *id, const char *why, void *ctx);
void pfi_store_on_bad_row(pfi_store *s, pfi_store_bad_row_fn fn, void *ctx);

/* One sample per GPU taken at time t, written in one transaction. Fields
 * whose bit is clear in valid are stored as NULL. */
int pfi_store_add_samples(pfi_store *s, double t, const pfi_gpu_sample *samples, unsigned n,
                          pfi_error *err);

/* PFI_ESTATE when a running job has the same id; PFI_EINVAL when sla_floor is
 * outside [0, 1] or exempt is not 0 or 1. */
int pfi_store_job_add(pfi_store *s, const pfi_store_job *job, pfi_error *err);
/* Marks the job ended at t; PFI_ENOTFOUND when no running job has that id. */
int pfi_store_job_end(pfi_store *s, const char *id, double t, pfi_error *err);
/* The jobs not yet ended, in registration order; *out is malloc'd (caller
 * frees), NULL when *n is 0. */
int pfi_store_jobs_running(pfi_store *s, pfi_store_job **out, size_t *n, pfi_error *err);
/* Every stored job, ended or not (ended_at filled), in registration order
 * (`pfi export`); *out as above. */
int pfi_store_jobs(pfi_store *s, pfi_store_job **out, size_t *n, pfi_error *err);

int pfi_store_add_throughput(pfi_store *s, const char *job, double t, double tokens_per_s,
                             pfi_error *err);
/* The live estimate's basis of a running job (agent.h): the telemetry
 * aggregates, in telemetry.csv units by pfi_tm_field (PFI_TM_NFIELDS
 * values, NaN when missing), at its last uncapped sample t. Put replaces
 * it; PFI_ENOTFOUND when no running job has the id. Get gives PFI_ENODATA
 * when none was put (or it is unreadable). */
int pfi_store_job_basis_put(pfi_store *s, const char *id, double t, const double *tm,
                            pfi_error *err);
int pfi_store_job_basis_get(pfi_store *s, const char *id, double *t, double *tm, pfi_error *err);

/* Number of throughput rows stored for a job (tests, benchmarks). */
int pfi_store_throughput_count(pfi_store *s, const char *job, long long *n, pfi_error *err);

/* Calls fn for every stored sample with t0 <= t, in time then GPU order (a
 * restarted agent replays a job's recent history); fn returning non-zero
 * stops the walk. Fields whose bit is clear in valid are 0. */
int pfi_store_samples_since(pfi_store *s, double t0,
                            int (*fn)(double t, unsigned gpu, const pfi_gpu_sample *x, void *ctx),
                            void *ctx, pfi_error *err);
/* Calls fn for each throughput report of a job with t0 <= t, in time order. */
int pfi_store_throughput_since(pfi_store *s, const char *job, double t0,
                               int (*fn)(double t, double tokens_per_s, void *ctx), void *ctx,
                               pfi_error *err);

/* Records (insert or replace) the cap on a GPU. */
int pfi_store_cap_put(pfi_store *s, const pfi_store_cap *cap, pfi_error *err);
/* Forgets a GPU's cap (after its default limit was restored); deleting a
 * GPU without a cap is not an error. */
int pfi_store_cap_delete(pfi_store *s, unsigned gpu, pfi_error *err);
/* Every recorded cap, by GPU; *out malloc'd (caller frees). */
int pfi_store_caps(pfi_store *s, pfi_store_cap **out, size_t *n, pfi_error *err);

/* Records (insert or replace, keyed by job and cap_w) a point of a job's
 * curve; PFI_EINVAL for an empty or too long job id, a non-finite value or a
 * negative n. */
int pfi_store_point_put(pfi_store *s, const pfi_store_point *p, pfi_error *err);
/* The points of one job (job non-NULL) or of every job (NULL), by job then
 * cap_w; *out malloc'd (caller frees), NULL when *n is 0. */
int pfi_store_points(pfi_store *s, const char *job, pfi_store_point **out, size_t *n,
                     pfi_error *err);

/* Deletes samples and throughput reports older than `before` and jobs that
 * ended before it. Caps and curve points are never pruned (a point outlives
 * its job: it is what `pfi export` and the controller learn from). */
int pfi_store_prune(pfi_store *s, double before, pfi_error *err);

#endif
