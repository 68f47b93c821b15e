/* Writes the Prometheus text exposition format (version 0.0.4): a family
 * header (# HELP, # TYPE) followed by its samples, label values escaped
 * (backslash, double quote, newline), HELP text escaped (backslash, newline).
 *
 * A non-finite value is not written: a gauge we could not read is absent,
 * never NaN, so that a query cannot mistake it for a reading.
 * Label names and metric names are the caller's constants and are checked
 * only in debug builds (assert).
 */
#ifndef PFI_PROM_EMIT_H
#define PFI_PROM_EMIT_H

#include <stdio.h>

typedef enum { PFI_PROM_GAUGE, PFI_PROM_COUNTER, PFI_PROM_UNTYPED } pfi_prom_type;

/* Writes "# HELP name help" and "# TYPE name type". */
void pfi_prom_family(FILE *f, const char *name, pfi_prom_type type, const char *help);

/* Writes one sample line: name{k1="v1",...} value. labels is a NULL-ended
 * list of name/value pairs (may be NULL for none). Returns 1 when written,
 * 0 when the value was not finite and nothing was written. */
int pfi_prom_sample(FILE *f, const char *name, const char *const *labels, double value);

/* Writes s as an escaped label value (without the quotes). */
void pfi_prom_escape_label(FILE *f, const char *s);

#endif
