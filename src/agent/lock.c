#define _GNU_SOURCE /* struct ucred for SO_PEERCRED */
/* One writer per store and per GPU, whatever the flags.
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
 *    --read-only, for every GPU: the abstract Unix socket "\0pfid-gpu-UUID",
 *    bound and listening for pfid's life. Its name depends on no flag (a
 *    second pfid with another --db and another --lock-dir meets it all the
 *    same), it is keyed by UUID so that an index that moved still meets the
 *    same card, and a refused pfid learns the holder's pid by connecting
 *    (SO_PEERCRED). Abstract sockets are per network namespace: pfids in
 *    separate namespaces (a multi-host test) do not meet, as hosts don't;
 *  - then the flock on --lock-dir's DIR/gpu-UUID.lock that every pfi program
 *    that sets limits takes (pfi/gpu_lock.h), so a pfi sweep and a pfid
 *    never share a GPU either.
 *
 * The kernel drops every lock when the process dies however it dies, so no
 * stale lock survives a crash. The descriptors stay open for pfid's life.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <stddef.h>

#include "agent.h"
#include "pfi/gpu_lock.h"
#include "pfi/lockfile.h"

int agent_lock_store(agent *a, pfi_error *err)
{
    /* the store is SQLite's file: no PID goes into it */
    int rc = pfi_lockfile_take(a->o.db, PFI_LOCKFILE_NO_PID | PFI_LOCKFILE_PRIVATE,
                               &a->store_lock_fd, NULL, err);
    if (rc == PFI_ESTATE)
        return pfi_error_set(err, PFI_ESTATE, a->o.db, 0,
                             "the store is in use by another pfid (it holds the store's lock); "
                             "one pfid per store: stop the other one or use another --db");
    return rc;
}

/* The address of gpu's socket; its length. */
static socklen_t gpu_addr(const agent_gpu *x, unsigned gpu, struct sockaddr_un *sa)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    int n = x->info.uuid[0]
                ? snprintf(sa->sun_path + 1, sizeof sa->sun_path - 1, "pfid-gpu-%s", x->info.uuid)
                : snprintf(sa->sun_path + 1, sizeof sa->sun_path - 1, "pfid-gpu-index-%u", gpu);
    if (n < 0 || (size_t)n >= sizeof sa->sun_path - 1) n = (int)sizeof sa->sun_path - 2;
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* The pid of whoever listens on sa, 0 when it cannot be learnt. */
static long holder_pid(const struct sockaddr_un *sa, socklen_t len)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return 0;
    long pid = 0;
    struct ucred cr;
    socklen_t cl = sizeof cr;
    if (connect(fd, (const struct sockaddr *)sa, len) == 0 &&
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0)
        pid = cr.pid;
    close(fd);
    return pid;
}

static int lock_socket(agent_gpu *x, unsigned gpu, pfi_error *err)
{
    struct sockaddr_un sa;
    socklen_t len = gpu_addr(x, gpu, &sa);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return pfi_error_set(err, PFI_EIO, NULL, 0, "GPU %u: cannot lock it: socket: %s", gpu,
                             strerror(errno));
    if (bind(fd, (struct sockaddr *)&sa, len) == 0 && listen(fd, 4) == 0) {
        x->sock_fd = fd;
        return PFI_OK;
    }
    int e = errno;
    close(fd);
    if (e != EADDRINUSE)
        return pfi_error_set(err, PFI_EIO, NULL, 0, "GPU %u: cannot lock it: %s", gpu, strerror(e));
    long pid = holder_pid(&sa, len);
    char who[48] = "";
    if (pid > 0) snprintf(who, sizeof who, " (pid %ld)", pid);
    return pfi_error_set(err, PFI_ESTATE, NULL, 0,
                         "GPU %u (%s) is managed by another pfid%s; one pfid per GPU, whatever "
                         "its --db, --lock-dir or --state-dir",
                         gpu, x->info.uuid[0] ? x->info.uuid : "no UUID", who);
}

int agent_lock_gpus(agent *a, pfi_error *err)
{
    if (a->o.read_only || strcmp(a->o.backend, "nvml") != 0 || a->n_gpus == 0) return PFI_OK;
    for (unsigned g = 0; g < a->n_gpus; g++) {
        agent_gpu *x = &a->gpus[g];
        int rc = lock_socket(x, g, err);
        if (rc == PFI_OK)
            rc = pfi_gpu_lock_take(a->o.lock_dir, g, x->info.uuid, "pfid", "; one pfid per GPU",
                                   &x->lock_fd, err);
        if (rc != PFI_OK) return rc;
    }
    return PFI_OK;
}

/* Every fd is -1 until its lock is taken (pfid.c sets them as the GPUs are
 * counted), so 0 is a real lock: a pfid started with stdin closed gets fd 0
 * for its first lock file. */
void agent_unlock_all(agent *a)
{
    for (unsigned g = 0; a->gpus && g < a->n_gpus; g++) {
        pfi_lockfile_release(a->gpus[g].lock_fd);
        a->gpus[g].lock_fd = -1;
        if (a->gpus[g].sock_fd >= 0) close(a->gpus[g].sock_fd);
        a->gpus[g].sock_fd = -1;
    }
    pfi_lockfile_release(a->store_lock_fd);
    a->store_lock_fd = -1;
}
