/* The node agent's SQLite store: GPU samples, jobs, throughput reports and
 * the power caps pfid has applied.
 *
 * The cap table is what makes crash recovery possible: a cap is written
 * before it is applied and deleted only after the default limit is back, so
 * a pfid that dies in between finds the row at its next start and restores
 * the card (see pfi_store_caps).
 *
 * The database runs in WAL mode with synchronous=NORMAL (a commit survives a
 * process crash; a power loss can lose the last commits, never corrupt the
 * file), a busy timeout for other readers (sqlite3 CLI, backups), and a
 * schema version in PRAGMA user_version. Times are Unix seconds (wall clock:
 * they must mean the same after a restart).
 *
 * Ownership: pfi_store_open returns a handle closed by pfi_store_close
 * (NULL-safe). Every function is safe to call from several threads: one
 * connection, one mutex, prepared statements reused.
 */
#ifndef PFI_STORE_H
#define PFI_STORE_H

#include <stddef.h>

#include "pfi/gpu_sample.h"
#include "pfi/error.h"

#define PFI_STORE_SCHEMA_VERSION 1
#define PFI_STORE_JOB_ID_MAX 128
#define PFI_STORE_MAX_JOB_GPUS 64

typedef struct pfi_store pfi_store;

typedef struct pfi_store_job {
    char id[PFI_STORE_JOB_ID_MAX + 1];
    unsigned gpus[PFI_STORE_MAX_JOB_GPUS];
    size_t n_gpus;
    char arch[16]; /* "dense", "moe" or "" */
    char task[16]; /* "pt", "ft" or "" */
    double registered_at; /* Unix s */
    double ended_at;      /* Unix s, 0 while the job runs */
} pfi_store_job;

typedef struct pfi_store_cap {
    unsigned gpu;
    double watts;      /* the cap pfid applied, W */
    double set_at;     /* Unix s */
    double expires_at; /* Unix s */
    double default_w;  /* the limit to restore, W */
} pfi_store_cap;

/* Opens (creating if needed) the database at path. A database written by a
 * newer schema is refused rather than misread. */
int pfi_store_open(const char *path, pfi_store **out, pfi_error *err);
void pfi_store_close(pfi_store *s);

/* One sample per GPU taken at time t, written in one transaction. Fields
 * whose bit is clear in valid are stored as NULL. */
int pfi_store_add_samples(pfi_store *s, double t, const pfi_gpu_sample *samples, unsigned n,
                          pfi_error *err);

int pfi_store_job_add(pfi_store *s, const pfi_store_job *job, pfi_error *err);
/* Marks the job ended at t; PFI_ENOTFOUND when no running job has that id. */
int pfi_store_job_end(pfi_store *s, const char *id, double t, pfi_error *err);
/* The jobs not yet ended, in registration order; *out is malloc'd (caller
 * frees), NULL when *n is 0. */
int pfi_store_jobs_running(pfi_store *s, pfi_store_job **out, size_t *n, pfi_error *err);

int pfi_store_add_throughput(pfi_store *s, const char *job, double t, double tokens_per_s,
                             pfi_error *err);
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

/* Deletes samples and throughput reports older than `before` and jobs that
 * ended before it. Caps are never pruned. */
int pfi_store_prune(pfi_store *s, double before, pfi_error *err);

#endif
