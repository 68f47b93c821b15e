/* telemetry.csv (DESIGN.md, "Data") read and written; the row and table
 * types are core's (telemetry.h).
 */
#ifndef PFI_TELEMETRY_CSV_H
#define PFI_TELEMETRY_CSV_H

#include <stdint.h>
#include <stdio.h>

#include "pfi/error.h"
#include "pfi/telemetry.h"

/* Reads telemetry.csv: `group` and every DCGM column must be present as
 * columns; a value may be empty (not valid) but never text, NaN, inf or
 * negative. A group listed twice is an error. */
int pfi_telemetry_read(const char *path, pfi_telemetry **out, pfi_error *err);
/* Writes the table as telemetry.csv text. */
int pfi_telemetry_write(FILE *f, const pfi_telemetry *t);

#endif
