/* Lock files that name their holder (see include/io/pfi/lockfile.h). */
#include "pfi/lockfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* The holder's PID from the file's first line; 0 when it holds none (a
 * holder between open and write, a foreign or damaged file). */
static long read_pid(int f)
{
    char buf[32];
    ssize_t n = pread(f, buf, sizeof buf - 1, 0);
    if (n <= 0) return 0;
    buf[n] = '\0';
    char *end;
    errno = 0;
    long pid = strtol(buf, &end, 10);
    if (errno || end == buf || pid <= 0 || (*end != '\n' && *end != '\0')) return 0;
    return pid;
}

/* The PID goes in first and the rest is cut after it, so a refused reader
 * never sees an empty file. A failure is ignored: the PID only serves the
 * refusal's message, the lock is what counts. */
static void write_pid(int f)
{
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (pwrite(f, pid, (size_t)n, 0) != n || ftruncate(f, n) != 0) {
        /* see above */
    }
}

int pfi_lockfile_take(const char *path, int flags, int *fd, long *holder_pid, pfi_error *err)
{
    int probe = flags & PFI_LOCKFILE_PROBE;
    *fd = -1;
    if (holder_pid) *holder_pid = 0;
    int f = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | (probe ? 0 : O_CREAT),
                 flags & PFI_LOCKFILE_PRIVATE ? 0600 : 0644);
    if (f < 0 && probe && (errno == ENOENT || errno == ENOTDIR)) return PFI_OK;
    if (f < 0)
        return pfi_error_set(err, PFI_EIO, path, 0, "cannot open for locking: %s", strerror(errno));
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        long pid = e == EWOULDBLOCK && !(flags & PFI_LOCKFILE_NO_PID) ? read_pid(f) : 0;
        close(f);
        if (e != EWOULDBLOCK)
            return pfi_error_set(err, PFI_EIO, path, 0, "cannot lock: %s", strerror(e));
        if (holder_pid) *holder_pid = pid;
        if (pid)
            return pfi_error_set(err, PFI_ESTATE, path, 0, "locked by another process (pid %ld)",
                                 pid);
        return pfi_error_set(err, PFI_ESTATE, path, 0, "locked by another process");
    }
    if (probe) {
        close(f); /* releases the lock */
        return PFI_OK;
    }
    if (!(flags & PFI_LOCKFILE_NO_PID)) write_pid(f);
    *fd = f;
    return PFI_OK;
}

void pfi_lockfile_release(int fd)
{
    if (fd >= 0) close(fd);
}
