/* What the store's files share (private to io's store): store.c opens,
 * closes and checks the database and keeps the sample rows, store_jobs.c
 * the job, throughput and curve point rows, store_caps.c the cap rows. */
#ifndef PFI_STORE_INT_H
#define PFI_STORE_INT_H

#include <pthread.h>
#include <stddef.h>

#include <sqlite3.h>

#include "pfi/error.h"
#include "pfi/store.h"

/* The prepared statements, by index into pfi_store.st (SQL in store.c). */
enum {
    ST_SAMPLE,
    ST_JOB_ADD,
    ST_JOB_END,
    ST_JOBS_RUNNING,
    ST_TPUT_ADD,
    ST_TPUT_COUNT,
    ST_CAP_PUT,
    ST_CAP_DEL,
    ST_CAPS,
    ST_PRUNE_SAMPLES,
    ST_PRUNE_TPUT,
    ST_PRUNE_JOBS,
    ST_SAMPLES_SINCE,
    ST_TPUT_SINCE,
    ST_JOBS_ALL,
    ST_POINT_PUT,
    ST_POINTS_ALL,
    ST_POINTS_JOB,
    ST_BASIS_PUT,
    ST_BASIS_GET,
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_COUNT
};

struct pfi_store {
    sqlite3 *db;
    sqlite3_stmt *st[ST_COUNT];
    char *sql[ST_COUNT]; /* the generated statements, freed at close */
    pthread_mutex_t mu;
    char path[256];
    pfi_store_bad_row_fn bad_row;
    void *bad_row_ctx;
    int readonly; /* pfi_store_open_readonly: every write is refused */
    int snapshot; /* pfi_store_snapshot_begin: a read transaction is open */
};

/* A row a read skips. Caller holds s->mu. */
void store_bad_row(pfi_store *s, const char *table, const char *id, const char *why);

/* SQLite's last error on s as PFI_EIO, prefixed with what. */
int store_db_error(pfi_store *s, pfi_error *err, const char *what);

/* Every write function on a read-only handle ends here before touching
 * SQLite: its connection may be an in-memory copy (readonly_schema), which
 * would take the write silently. */
int store_refuse_write(const pfi_store *s, pfi_error *err);

/* Runs a prepared statement that returns no rows, then resets it. */
int store_step_done(pfi_store *s, int which, pfi_error *err);

/* Reads every row of prepared statement `which` (its one parameter bound to
 * key when key is not NULL) into a grown array of
 * `elem`-byte items, one `row` call each; a row the reader refuses with
 * PFI_EPARSE (having reported it through bad_row) is skipped; on any other
 * failure nothing is returned. */
typedef int (*row_reader)(pfi_store *s, sqlite3_stmt *st, void *item, pfi_error *err);

int store_collect(pfi_store *s, int which, const char *key, size_t elem, row_reader row,
                  const char *what, void **out, size_t *n, pfi_error *err);

/* A REAL or INTEGER column as a finite double; NaN for NULL, text, blobs. */
double store_num_col(sqlite3_stmt *st, int i);

/* A short TEXT column into buf; -1 when NULL, not text or too long. */
int store_text_col(sqlite3_stmt *st, int i, char *buf, size_t len, int allow_null);

#endif
