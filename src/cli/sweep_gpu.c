/* GPUs through a telemetry backend or a pfid (see sweep_gpu.h). */
#include "sweep_gpu.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pfi/backend.h"
#include "pfi/gpu_lock.h"
#include "pfi/limit.h"
#include "sweep_pfid.h"

struct sweep_gpu {
    pfi_backend *b;   /* direct */
    sweep_pfid *pfid; /* or through pfid */
    int lock_fd[64];
    size_t n_locks;
};

int sweep_gpu_open(const char *name, const char *opts, const char *via_pfid, const char *token_file,
                   sweep_gpu **out, pfi_error *err)
{
    *out = NULL;
    sweep_gpu *g = calloc(1, sizeof *g);
    if (!g) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int rc = via_pfid ? sweep_pfid_open(via_pfid, token_file, &g->pfid, err)
                      : pfi_backend_open(name, opts, &g->b, err);
    if (rc != PFI_OK) {
        free(g);
        return rc;
    }
    *out = g;
    return PFI_OK;
}

void sweep_gpu_close(sweep_gpu *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->n_locks; i++)
        close(g->lock_fd[i]);
    pfi_backend_close(g->b);
    sweep_pfid_close(g->pfid);
    free(g);
}

int sweep_gpu_count(sweep_gpu *g, unsigned *n, pfi_error *err)
{
    if (g->pfid) return sweep_pfid_count(g->pfid, n, err);
    if (pfi_backend_count(g->b, n) != PFI_OK)
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0, "counting GPUs failed: %s",
                             pfi_backend_last_error(g->b));
    return PFI_OK;
}

int sweep_gpu_limits(sweep_gpu *g, unsigned gpu, pfi_gpu_limits *out, pfi_error *err)
{
    if (g->pfid) return sweep_pfid_limits(g->pfid, gpu, out, err);
    if (pfi_backend_limits(g->b, gpu, out) != PFI_OK)
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0, "GPU %u: reading its limits failed: %s",
                             gpu, pfi_backend_last_error(g->b));
    return PFI_OK;
}

int sweep_gpu_sample(sweep_gpu *g, unsigned gpu, pfi_gpu_sample *out)
{
    if (g->pfid) return sweep_pfid_sample(g->pfid, gpu, out);
    return pfi_backend_sample(g->b, gpu, out);
}

int sweep_gpu_lock(sweep_gpu *g, const unsigned *gpus, size_t n, const char *lock_dir,
                   pfi_error *err)
{
    /* pfid holds the locks itself; like pfid, only devices that outlive the
     * process (nvml) are locked, not the in-process sim */
    if (g->pfid || strcmp(pfi_backend_ops_of(g->b)->name, "nvml") != 0) return PFI_OK;
    for (size_t i = 0; i < n && g->n_locks < 64; i++) {
        pfi_gpu_info info = {0};
        if (pfi_backend_info(g->b, gpus[i], &info) != PFI_OK) info.uuid[0] = '\0';
        int fd, rc = pfi_gpu_lock_take(lock_dir, gpus[i], info.uuid, "program",
                                       " (a pfid: use --via-pfid)", &fd, err);
        if (rc != PFI_OK) return rc;
        g->lock_fd[g->n_locks++] = fd;
    }
    return PFI_OK;
}

int sweep_gpu_set(sweep_gpu *g, unsigned gpu, double w, double expires_s, pfi_error *err)
{
    if (g->pfid) return sweep_pfid_set(g->pfid, gpu, w, expires_s, err);
    return pfi_limit_set_checked(g->b, gpu, w, NULL, err);
}

int sweep_gpu_restore(sweep_gpu *g, unsigned gpu, double prior_w, pfi_error *err)
{
    if (g->pfid) return sweep_pfid_restore(g->pfid, gpu, err);
    return pfi_limit_set_checked(g->b, gpu, prior_w, NULL, err);
}
