/* The single-writer lock on a GPU's power limit, shared by every pfi program
 * that sets limits (pfid, pfi sweep): an exclusive flock(2) on
 * DIR/gpu-UUID.lock (the UUID with anything but letters, digits and '-' as
 * '_'; "index-N" without one), holding the owner's pid for the message of
 * whoever is refused. pfid's --lock-dir default is /run/pfid. The kernel
 * drops the lock when its holder dies, so no stale lock survives a crash.
 */
#ifndef PFI_GPU_LOCK_H
#define PFI_GPU_LOCK_H

#include "pfi/error.h"

#define PFI_GPU_LOCK_DIR "/run/pfid"

/* Takes gpu's lock without waiting (creating dir when missing): PFI_OK with
 * *fd (close it to release), PFI_ESTATE naming the holder's pid when another
 * process holds it ("GPU N (UUID) is managed by another HELD_BY (pid P)"
 * then ADVICE, both the caller's words), PFI_EIO when the file cannot be
 * opened. */
int pfi_gpu_lock_take(const char *dir, unsigned gpu, const char *uuid, const char *held_by,
                      const char *advice, int *fd, pfi_error *err);

#endif
