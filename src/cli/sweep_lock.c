/* The lock on a sweep's folder (see sweep_lock.h). */
#include "sweep_lock.h"

#include <stdio.h>

#include "pfi/lockfile.h"

#define LOCK_NAME "sweep.lock"

int sweep_lock_take(const char *dir, int check_only, int *fd, pfi_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/" LOCK_NAME, dir);
    /* the lock file is O_CLOEXEC: the measured command must not inherit (and
     * outlive us with) the lock */
    long holder;
    int rc = pfi_lockfile_take(path, check_only ? PFI_LOCKFILE_PROBE : 0, fd, &holder, err);
    if (rc != PFI_ESTATE) return rc;
    char pid[24] = "unknown";
    if (holder) snprintf(pid, sizeof pid, "%ld", holder);
    return pfi_error_set(err, PFI_ESTATE, NULL, 0,
                         "%s is in use by another pfi sweep (PID %s); wait for it to end "
                         "or give another --out",
                         dir, pid);
}
