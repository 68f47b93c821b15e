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
#include <string.h>
#include <unistd.h>

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

/* The per-GPU lock is the one every pfi program that sets limits takes
 * (pfi/gpu_lock.h), so a pfi sweep and a pfid never share a GPU either. */
int agent_lock_gpus(agent *a, pfi_error *err)
{
    if (a->o.read_only || strcmp(a->o.backend, "nvml") != 0 || a->n_gpus == 0) return PFI_OK;
    for (unsigned g = 0; g < a->n_gpus; g++) {
        agent_gpu *x = &a->gpus[g];
        int rc = pfi_gpu_lock_take(a->o.lock_dir, g, x->info.uuid, "pfid", "; one pfid per GPU",
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
    }
    pfi_lockfile_release(a->store_lock_fd);
    a->store_lock_fd = -1;
}
