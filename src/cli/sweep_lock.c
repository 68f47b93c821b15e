/* The lock on a sweep's folder (see sweep_lock.h). */
#include "sweep_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define LOCK_NAME "sweep.lock"

int sweep_lock_take(const char *dir, int check_only, int *fd, pfi_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/" LOCK_NAME, dir);
    *fd = -1;
    /* O_CLOEXEC: the measured command must not inherit (and outlive us with) the lock */
    int f = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | (check_only ? 0 : O_CREAT), 0644);
    if (f < 0 && check_only && (errno == ENOENT || errno == ENOTDIR)) return PFI_OK;
    if (f < 0)
        return pfi_error_set(err, PFI_EIO, path, 0, "cannot open for locking: %s",
                             strerror(errno));
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char pid[32] = "";
        ssize_t n = pread(f, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        close(f);
        if (e != EWOULDBLOCK)
            return pfi_error_set(err, PFI_EIO, path, 0, "cannot lock: %s", strerror(e));
        return pfi_error_set(err, PFI_ESTATE, NULL, 0,
                             "%s is in use by another pfi sweep (PID %s); wait for it to end "
                             "or give another --out",
                             dir, pid[0] ? pid : "unknown");
    }
    if (check_only) {
        close(f); /* releases the lock */
        return PFI_OK;
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(f, 0) != 0 || pwrite(f, pid, (size_t)len, 0) != len) {
        /* the PID only serves the refusal's message; the lock is what counts */
    }
    *fd = f;
    return PFI_OK;
}

void sweep_lock_release(int fd)
{
    if (fd >= 0) close(fd);
}
