/* Telemetry backends behind one table of function pointers (nvtop's
 * struct gpu_vendor): nvml (dlopen of libnvidia-ml.so.1), dcgm (scrape of a
 * dcgm-exporter /metrics URL), sim (GPUs simulated through gpumodel).
 *
 * The sample, limits and info structs are plain data of core (gpu_sample.h).
 * Ownership: pfi_backend_open (or ops->init) returns a handle the caller
 * closes with pfi_backend_close (or ops->close); both are NULL-safe.
 * GPU indices are the device's own (NVML index, dcgm-exporter "gpu" label).
 */
#ifndef PFI_BACKEND_H
#define PFI_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "pfi/error.h"
#include "pfi/gpu_sample.h"

typedef struct pfi_backend pfi_backend;

typedef struct pfi_backend_ops {
    const char *name;
    /* opts is the backend's own option string (e.g. a URL, a jobs file);
     * a missing library or endpoint fails here with a clear message. */
    int (*init)(pfi_backend **b, const char *opts, pfi_error *err);
    void (*close)(pfi_backend *b);
    const char *(*last_error)(const pfi_backend *b);
    int (*count)(pfi_backend *b, unsigned *n);
    int (*info)(pfi_backend *b, unsigned gpu, pfi_gpu_info *out);
    /* Reads every field it can; per-field failures clear the field's bit. */
    int (*sample)(pfi_backend *b, unsigned gpu, pfi_gpu_sample *out);
    int (*limits)(pfi_backend *b, unsigned gpu, pfi_gpu_limits *out);
    /* Sets the power limit, W; PFI_ENOTSUP when the backend cannot (read-only
     * backends), never PFI_OK for an action that did not happen. */
    int (*set_limit)(pfi_backend *b, unsigned gpu, double w);
    /* Optional (NULL when the backend has no such knowledge): the modelled
     * throughput of the job on the GPU, tokens/s (sim only). */
    int (*throughput)(pfi_backend *b, unsigned gpu, double *tok_s);
    /* Optional (NULL for backends that read the device when asked): how old
     * the data of the GPU's last sample were when it was taken, s (dcgm: the
     * exporter's page; PFI_ENODATA before a sample). */
    int (*sample_age)(pfi_backend *b, unsigned gpu, double *age_s);
    /* Optional (NULL: unknown): whether the driver stays loaded with no
     * client (NVML persistence mode). Without it an idle GPU's driver may
     * unload and the power limit a cap set is lost (nvml only). */
    int (*persistence)(pfi_backend *b, unsigned gpu, int *enabled);
} pfi_backend_ops;

/* The table entry for a backend name ("nvml", "dcgm", "sim"), or NULL. */
const pfi_backend_ops *pfi_backend_find(const char *name);

/* Finds the backend by name and runs its init: PFI_ENOTFOUND for an unknown
 * name, else init's status (err says why). */
int pfi_backend_open(const char *name, const char *opts, pfi_backend **out, pfi_error *err);
void pfi_backend_close(pfi_backend *b); /* NULL-safe */

/* The ops table a handle was opened with. */
const pfi_backend_ops *pfi_backend_ops_of(const pfi_backend *b);

/* Thin wrappers over the ops of b's table; every op may be called from
 * several threads at once (each backend serialises its own state). */
/* The last error or warning, "" if none; never NULL. The text lives in b and
 * may be overwritten by the next call on b from any thread. */
const char *pfi_backend_last_error(const pfi_backend *b);
int pfi_backend_count(pfi_backend *b, unsigned *n);
int pfi_backend_info(pfi_backend *b, unsigned gpu, pfi_gpu_info *out);
int pfi_backend_sample(pfi_backend *b, unsigned gpu, pfi_gpu_sample *out);
int pfi_backend_limits(pfi_backend *b, unsigned gpu, pfi_gpu_limits *out);
int pfi_backend_set_limit(pfi_backend *b, unsigned gpu, double w);
/* PFI_ENOTSUP when the backend does not model throughput. */
int pfi_backend_throughput(pfi_backend *b, unsigned gpu, double *tok_s);
/* PFI_ENOTSUP when the backend reads live (its samples are as old as the call). */
int pfi_backend_sample_age(pfi_backend *b, unsigned gpu, double *age_s);
/* PFI_ENOTSUP when the backend cannot tell. */
int pfi_backend_persistence(pfi_backend *b, unsigned gpu, int *enabled);

#endif
