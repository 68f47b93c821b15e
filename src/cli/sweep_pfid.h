/* pfid's HTTP API as the GPUs of a sweep (--via-pfid): GET /v1/gpus for
 * samples and limits, PUT and DELETE /v1/gpus/N/limit with the bearer token
 * for caps. pfid validates, reads back, expires and restores its caps; this
 * client only asks. */
#ifndef PFI_SWEEP_PFID_H
#define PFI_SWEEP_PFID_H

#include "pfi/error.h"
#include "pfi/gpu_sample.h"

typedef struct sweep_pfid sweep_pfid;

/* url: pfid's base URL (http://127.0.0.1:9477); token_file: its first line
 * is the token. Fails when pfid does not answer GET /v1/gpus. */
int sweep_pfid_open(const char *url, const char *token_file, sweep_pfid **out, pfi_error *err);
void sweep_pfid_close(sweep_pfid *p); /* NULL-safe */

int sweep_pfid_count(sweep_pfid *p, unsigned *n, pfi_error *err);
int sweep_pfid_limits(sweep_pfid *p, unsigned gpu, pfi_gpu_limits *out, pfi_error *err);
int sweep_pfid_sample(sweep_pfid *p, unsigned gpu, pfi_gpu_sample *out);
int sweep_pfid_set(sweep_pfid *p, unsigned gpu, double w, double expires_s, pfi_error *err);
int sweep_pfid_restore(sweep_pfid *p, unsigned gpu, pfi_error *err);

#endif
