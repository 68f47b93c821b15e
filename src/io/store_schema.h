/* The store's schema: creating it, refusing a database that is not pfid's,
 * migrating an older one (private to io's store). */
#ifndef PFI_STORE_SCHEMA_H
#define PFI_STORE_SCHEMA_H

#include <stddef.h>

#include <sqlite3.h>

#include "pfi/error.h"

/* Reads, without writing, whether the database at path (open in db) is
 * pfid's schema 0 (empty) to PFI_STORE_SCHEMA_VERSION and sets *version;
 * refuses (PFI_ENOTSUP, "left untouched") another application's id, a newer
 * version, a table pfid does not make or one of its version missing. */
int store_schema_check(sqlite3 *db, const char *path, long long *version, pfi_error *err);

/* Checks that the database at path (open in db) is pfid's or empty, without
 * writing to it (store_schema_check), then switches it to WAL and creates or
 * migrates the schema to PFI_STORE_SCHEMA_VERSION in one transaction. On
 * error the file is as it was. */
int store_schema_open(sqlite3 *db, const char *path, pfi_error *err);

/* "INSERT INTO samples(t,gpu,valid,<cols>) VALUES(?,...)" and
 * "SELECT t,gpu,valid,<cols> FROM samples WHERE t>=? ORDER BY t, gpu", the
 * columns those of the GPU field table in pfi_gpu_field order,
 * malloc'd (caller frees); NULL when out of memory. */
char *store_sample_insert_sql(void);
char *store_sample_select_sql(void);

#endif
