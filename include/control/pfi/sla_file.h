/* SLA floors per job for pfi control (--jobs-file): CSV with a header naming
 * `job` and `sla`, one row per job: the lowest throughput the job may be cut
 * to, as a fraction of its uncapped throughput, in [0, 1]. Errors name the
 * file and line (a duplicate job, a value out of range). */
#ifndef PFI_SLA_FILE_H
#define PFI_SLA_FILE_H

#include <stddef.h>

#include "pfi/error.h"

typedef struct pfi_sla {
    char job[129];
    double frac;
} pfi_sla;

/* A malloc'd array of *n entries (caller frees). */
int pfi_sla_read(const char *path, pfi_sla **out, size_t *n, pfi_error *err);

/* The floor of job id in s[0..n), 0 when it has none. */
double pfi_sla_of(const pfi_sla *s, size_t n, const char *id);

#endif
