/* The per-GPU single-writer lock (see include/telemetry/pfi/gpu_lock.h). */
#include "pfi/gpu_lock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "pfi/lockfile.h"

int pfi_gpu_lock_take(const char *dir, unsigned gpu, const char *uuid, const char *held_by,
                      const char *advice, int *fd, pfi_error *err)
{
    *fd = -1;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return pfi_error_set(err, PFI_EIO, dir, 0,
                             "cannot create the GPU lock directory: %s (set --lock-dir)",
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
    long holder;
    int rc = pfi_lockfile_take(path, 0, fd, &holder, err);
    if (rc != PFI_ESTATE) return rc;
    char pid[48] = "";
    if (holder) snprintf(pid, sizeof pid, " (pid %ld)", holder);
    return pfi_error_set(err, PFI_ESTATE, path, 0, "GPU %u (%s) is managed by another %s%s%s", gpu,
                         uuid && *uuid ? uuid : "no UUID", held_by, pid, advice);
}
