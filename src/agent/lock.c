/* One writer per store and per GPU.
 *
 * A second pfid on the same store (or on the same GPUs through another
 * store) would re-apply the first one's caps, restore them on its way out
 * and delete their records while the first still believes it holds them. So
 * before pfid touches a GPU setting or a store record it takes:
 *
 *  - an exclusive flock(2) on the store file itself (created empty when
 *    missing, as SQLite would). flock locks are separate from the POSIX
 *    (fcntl) locks SQLite takes on the same file, so the sqlite3 CLI and
 *    backups still read it; a second path to the same file (a link, a
 *    symlink) is the same inode and the same lock;
 *  - for a backend whose devices outlive the process (nvml) and unless
 *    --read-only, an exclusive flock on DIR/gpu-UUID.lock for every GPU,
 *    keyed by UUID so that two stores, or an index that moved, still meet on
 *    the same card. The holder writes its pid into the file for the message
 *    of whoever is refused.
 *
 * The kernel drops every lock when the process dies however it dies, so no
 * stale lock survives a crash. The descriptors stay open for pfid's life.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"

/* Opens path (creating it) and takes an exclusive lock without waiting:
 * PFI_OK with *fd, PFI_ESTATE when another process holds it. */
static int lock_file(const char *path, int create_mode, int *fd, pfi_error *err)
{
    int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, create_mode);
    if (f < 0)
        return pfi_error_set(err, PFI_EIO, path, 0, "cannot open for locking: %s",
                             strerror(errno));
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(f);
        if (e == EWOULDBLOCK) return PFI_ESTATE;
        return pfi_error_set(err, PFI_EIO, path, 0, "cannot lock: %s", strerror(e));
    }
    *fd = f;
    return PFI_OK;
}

int agent_lock_store(agent *a, pfi_error *err)
{
    int rc = lock_file(a->o.db, 0600, &a->store_lock_fd, err);
    if (rc == PFI_ESTATE)
        return pfi_error_set(err, PFI_ESTATE, a->o.db, 0,
                             "the store is in use by another pfid (it holds the store's lock); "
                             "one pfid per store: stop the other one or use another --db");
    return rc;
}

/* A UUID as a file name: letters, digits and '-' kept, anything else '_'. */
static void uuid_name(const char *uuid, char *out, size_t len)
{
    size_t k = 0;
    for (const char *p = uuid; *p && k + 1 < len; p++)
        out[k++] = ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                    (*p >= '0' && *p <= '9') || *p == '-')
                       ? *p
                       : '_';
    out[k] = '\0';
}

int agent_lock_gpus(agent *a, pfi_error *err)
{
    if (a->o.read_only || strcmp(a->o.backend, "nvml") != 0 || a->n_gpus == 0) return PFI_OK;
    const char *dir = a->o.lock_dir;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return pfi_error_set(err, PFI_EIO, dir, 0,
                             "cannot create the GPU lock directory: %s (set --lock-dir)",
                             strerror(errno));
    for (unsigned g = 0; g < a->n_gpus; g++) {
        agent_gpu *x = &a->gpus[g];
        char name[128], path[4096];
        if (x->info.uuid[0])
            uuid_name(x->info.uuid, name, sizeof name);
        else
            snprintf(name, sizeof name, "index-%u", g); /* no UUID: the index is all there is */
        snprintf(path, sizeof path, "%s/gpu-%s.lock", dir, name);
        int fd = -1;
        int rc = lock_file(path, 0644, &fd, err);
        if (rc == PFI_ESTATE) {
            char holder[32] = "";
            int f = open(path, O_RDONLY | O_CLOEXEC);
            if (f >= 0) {
                ssize_t n = read(f, holder, sizeof holder - 1);
                holder[n > 0 ? n : 0] = '\0';
                holder[strcspn(holder, "\n")] = '\0';
                close(f);
            }
            return pfi_error_set(err, PFI_ESTATE, path, 0,
                                 "GPU %u (%s) is managed by another pfid%s%s%s; one pfid per GPU",
                                 g, x->info.uuid[0] ? x->info.uuid : "no UUID",
                                 holder[0] ? " (pid " : "", holder, holder[0] ? ")" : "");
        }
        if (rc != PFI_OK) return rc;
        x->lock_fd = fd;
        char pid[32];
        int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
            /* The pid is only for the message above; the lock is what counts. */
        }
    }
    return PFI_OK;
}

void agent_unlock_all(agent *a)
{
    for (unsigned g = 0; a->gpus && g < a->n_gpus; g++)
        if (a->gpus[g].lock_fd > 0) {
            close(a->gpus[g].lock_fd);
            a->gpus[g].lock_fd = -1;
        }
    if (a->store_lock_fd > 0) close(a->store_lock_fd);
    a->store_lock_fd = -1;
}
