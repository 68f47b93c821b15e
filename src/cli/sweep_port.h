/* pfi sweep --throughput-port N: a small HTTP endpoint on 127.0.0.1:N that
 * speaks the part of pfid's job API a training-loop reporter uses
 * (contrib/hf_trainer/pfid_callback.py): POST /v1/jobs (201), POST
 * /v1/jobs/ID/throughput {"tokens_per_s":X} (each reading kept), DELETE
 * /v1/jobs/ID. The command gets PFID_URL pointing here. Bodies are parsed
 * by pfid's own parser (agent_api.h); nothing else is served. */
#ifndef PFI_SWEEP_PORT_H
#define PFI_SWEEP_PORT_H

#include <stddef.h>

#include "pfi/error.h"

typedef struct sweep_port sweep_port;

/* Listens on 127.0.0.1:port (0: a free port); PFI_EIO when it cannot. */
int sweep_port_start(unsigned port, sweep_port **out, pfi_error *err);
void sweep_port_stop(sweep_port *p); /* NULL-safe */
/* The port listened on. */
unsigned sweep_port_number(const sweep_port *p);
/* Moves up to max readings (tokens/s, in arrival order) into v; returns how
 * many. Readings that arrive while none is taken are kept (at most 65536). */
size_t sweep_port_take(sweep_port *p, double *v, size_t max);

#endif
