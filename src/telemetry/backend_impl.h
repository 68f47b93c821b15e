/* What every backend's handle starts with, so that the generic wrappers in
 * backend.c can dispatch and report errors without knowing the backend.
 * Private to src/telemetry. */
#ifndef PFI_TELEMETRY_BACKEND_IMPL_H
#define PFI_TELEMETRY_BACKEND_IMPL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>

#include "pfi/backend.h"

struct pfi_backend {
    const pfi_backend_ops *ops;
    pthread_mutex_t lock; /* serialises the backend's own state across threads */
    char last_error[512];
    void *priv; /* the backend's state */
};

/* Allocates a handle for ops with priv attached; NULL when out of memory. */
pfi_backend *pfi_backend_alloc(const pfi_backend_ops *ops, void *priv);
/* Frees the handle (not priv). */
void pfi_backend_free(pfi_backend *b);
/* Records a message as the handle's last error (call with b->lock held). */
void pfi_backend_set_error(pfi_backend *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* NVML's clocks event reasons mask (also what dcgm-exporter's
 * DCGM_FI_DEV_CLOCK*_REASONS carry) as pfi_clock_event bits; bits pfi does
 * not know become PFI_CLK_OTHER. */
uint32_t pfi_clock_events_from_nvml(uint64_t mask);

extern const pfi_backend_ops pfi_backend_nvml_ops;
extern const pfi_backend_ops pfi_backend_dcgm_ops;
extern const pfi_backend_ops pfi_backend_sim_ops;

#endif
