/* One number from Prometheus' HTTP query API (GET /api/v1/query): what
 * `--site-meter QUERY` reads each period (the site's metered power). */
#ifndef PFI_PROM_QUERY_H
#define PFI_PROM_QUERY_H

#include <stddef.h>

#include "pfi/error.h"

/* Parses an /api/v1/query answer holding one number: a scalar, or a vector
 * of exactly one sample. PFI_EPARSE/PFI_EINVAL (err says which: an error
 * status, no sample, several, not a finite number) otherwise. */
int pfi_prom_query_parse(const char *text, size_t len, double *value, pfi_error *err);

/* Runs query against base (e.g. http://127.0.0.1:9090). */
int pfi_prom_query(const char *base, const char *query, double timeout_s, double *value,
                   pfi_error *err);

#endif
