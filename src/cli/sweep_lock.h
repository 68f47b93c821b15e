/* The lock on a sweep's --out folder: one sweep at a time may use DIR, since
 * two would overwrite each other's sweep-state.json, and the second, seeing
 * the first's state marked active, would "recover" (restore) the GPUs the
 * first is measuring. An exclusive flock(2) on DIR/sweep.lock holding the
 * owner's PID for the refusal's message; the kernel drops it when its holder
 * dies, so a crashed sweep never blocks the next start (which then repairs
 * its caps, see sweep_state.h). */
#ifndef PFI_SWEEP_LOCK_H
#define PFI_SWEEP_LOCK_H

#include "pfi/error.h"

/* Takes DIR's lock without waiting: PFI_OK with *fd (pass it to
 * pfi_lockfile_release), PFI_ESTATE naming the holder's PID when another
 * process holds it, PFI_EIO when the file cannot be opened. With check_only
 * (--dry-run) nothing is created or written: a missing lock file is PFI_OK
 * with *fd -1, and a free lock is released at once. */
int sweep_lock_take(const char *dir, int check_only, int *fd, pfi_error *err);

#endif
