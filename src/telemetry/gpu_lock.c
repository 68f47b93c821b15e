/* The per-GPU single-writer lock (see include/telemetry/pfi/gpu_lock.h). */
#include "pfi/gpu_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int pfi_gpu_lock_take(const char *dir, unsigned gpu, const char *uuid, const char *held_by,
                      const char *advice, int *fd, pfi_error *err)
{
    *fd = -1;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return pfi_error_set(err, PFI_EIO, dir, 0, "cannot create the GPU lock directory: %s (set --lock-dir)",
                             strerror(errno));
    char name[128], path[4096];
    size_t k = 0;
    for (const char *p = uuid ? uuid : ""; *p && k + 1 < sizeof name; p++)
        name[k++] = ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                     (*p >= '0' && *p <= '9') || *p == '-')
                        ? *p
                        : '_';
    name[k] = '\0';
    if (!k) snprintf(name, sizeof name, "index-%u", gpu);
    snprintf(path, sizeof path, "%s/gpu-%s.lock", dir, name);
    int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
    if (f < 0)
        return pfi_error_set(err, PFI_EIO, path, 0, "cannot open for locking: %s",
                             strerror(errno));
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char holder[32] = "";
        ssize_t n = pread(f, holder, sizeof holder - 1, 0);
        holder[n > 0 ? n : 0] = '\0';
        holder[strcspn(holder, "\n")] = '\0';
        close(f);
        if (e != EWOULDBLOCK)
            return pfi_error_set(err, PFI_EIO, path, 0, "cannot lock: %s", strerror(e));
        return pfi_error_set(err, PFI_ESTATE, path, 0,
                             "GPU %u (%s) is managed by another %s%s%s%s%s", gpu,
                             uuid && *uuid ? uuid : "no UUID", held_by, holder[0] ? " (pid " : "",
                             holder, holder[0] ? ")" : "", advice);
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(f, 0) != 0 || pwrite(f, pid, (size_t)n, 0) != n) {
        /* the pid is only for the message above; the lock is what counts */
    }
    *fd = f;
    return PFI_OK;
}
