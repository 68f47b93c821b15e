/* Setting a GPU's power limit safely through a backend: refused outside the
 * device's constraints (never clamped), read back, and the limit in force
 * told apart from the default (what a restore must put back is the limit
 * that was in force, which an administrator may have set below the default).
 */
#ifndef PFI_LIMIT_H
#define PFI_LIMIT_H

#include "pfi/backend.h"

/* The limit in force (W): the one set through power management, or the
 * enforced one when the backend does not report it. */
double pfi_limit_in_force_w(const pfi_gpu_limits *lim);

/* Sets gpu's limit to w watts and reads it back (within 1 W); *after (may be
 * NULL) gets the limits read back. PFI_ERANGE outside [min, max],
 * PFI_ENOTSUP when the backend cannot set limits, PFI_EBACKEND when the call
 * failed or the device reports another limit; err says which GPU and why. */
int pfi_limit_set_checked(pfi_backend *b, unsigned gpu, double w, pfi_gpu_limits *after,
                          pfi_error *err);

#endif
