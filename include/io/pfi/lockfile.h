/* Lock files that name their holder: an exclusive flock(2) on a file, taken
 * without waiting, whose holder writes its PID into the file so that whoever
 * is refused can say who holds it. Used for the per-GPU lock (gpu_lock.h),
 * a sweep's folder (pfi sweep) and pfid's store.
 *
 * The kernel drops the lock when its holder dies, however it dies, so no
 * stale lock survives a crash; a PID left in a free file is never reported.
 * flock locks belong to an open file description: two opens of one file
 * conflict even within one process, while a fork's child shares its parent's.
 * The descriptor is O_CLOEXEC, so a command the holder runs neither inherits
 * the lock nor keeps it after the holder dies.
 */
#ifndef PFI_LOCKFILE_H
#define PFI_LOCKFILE_H

#include "pfi/error.h"

enum {
    /* Only see whether the lock is free (a --dry-run): no file is created
     * (a missing file is free), no PID written, and a free lock is released
     * at once, so *fd is -1 on PFI_OK. */
    PFI_LOCKFILE_PROBE = 1 << 0,
    /* The file is someone else's data (pfid locks its SQLite store itself):
     * its content is neither written nor read as a PID. */
    PFI_LOCKFILE_NO_PID = 1 << 1,
    /* Create the file with mode 0600 rather than 0644. */
    PFI_LOCKFILE_PRIVATE = 1 << 2,
};

/* Opens path (creating it unless PFI_LOCKFILE_PROBE) and takes its lock
 * without waiting. PFI_OK: *fd holds the lock (release it with
 * pfi_lockfile_release; -1 after a probe). PFI_ESTATE: another open file
 * description holds it; *holder_pid (when non-NULL) is the PID written in the
 * file, 0 when none can be read; callers word their own refusal. PFI_EIO: the
 * file cannot be opened or locked (err names path and cause). *fd is -1
 * unless the lock is held. */
int pfi_lockfile_take(const char *path, int flags, int *fd, long *holder_pid, pfi_error *err);

/* Releases a lock from pfi_lockfile_take; -1 is a no-op. */
void pfi_lockfile_release(int fd);

#endif
