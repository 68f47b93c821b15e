/* The store's schema: creating it, refusing a database that is not pfid's,
 * migrating an older one (private to io's store). */
#ifndef PFI_STORE_SCHEMA_H
#define PFI_STORE_SCHEMA_H

#include <stddef.h>

#include <sqlite3.h>

#include "pfi/error.h"
#include "pfi/gpu_sample.h"

/* One column of samples after t, gpu and valid: a GPU field in SI units. */
typedef struct store_col {
    const char *name;    /* column name */
    pfi_gpu_field field; /* its bit in valid */
    int integer;         /* stored as INTEGER (bit masks), else REAL */
    size_t off;          /* the value in pfi_gpu_sample */
    double to_si;        /* sample unit to the column's SI unit */
} store_col;

extern const store_col store_sample_cols[];
extern const size_t store_n_sample_cols;

/* Checks that the database at path (open in db) is pfid's or empty, without
 * writing to it, then switches it to WAL and creates or migrates the schema
 * to PFI_STORE_SCHEMA_VERSION in one transaction. On error the file is as it
 * was. */
int store_schema_open(sqlite3 *db, const char *path, pfi_error *err);

/* "INSERT INTO samples(t,gpu,valid,<cols>) VALUES(?,...)" and
 * "SELECT t,gpu,valid,<cols> FROM samples WHERE t>=? ORDER BY t, gpu",
 * malloc'd (caller frees); NULL when out of memory. */
char *store_sample_insert_sql(void);
char *store_sample_select_sql(void);

#endif
