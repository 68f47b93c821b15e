/* The backend table and the generic wrappers over a handle's ops. */
#include "backend_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pfi_backend_ops *const backends[] = {
    &pfi_backend_nvml_ops,
    &pfi_backend_dcgm_ops,
    &pfi_backend_sim_ops,
};

const pfi_backend_ops *pfi_backend_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (strcmp(backends[i]->name, name) == 0) return backends[i];
    return NULL;
}

pfi_backend *pfi_backend_alloc(const pfi_backend_ops *ops, void *priv)
{
    pfi_backend *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    if (pthread_mutex_init(&b->lock, NULL) != 0) {
        free(b);
        return NULL;
    }
    b->ops = ops;
    b->priv = priv;
    return b;
}

void pfi_backend_free(pfi_backend *b)
{
    if (!b) return;
    pthread_mutex_destroy(&b->lock);
    free(b);
}

void pfi_backend_set_error(pfi_backend *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->last_error, sizeof b->last_error, fmt, ap);
    va_end(ap);
}

int pfi_backend_open(const char *name, const char *opts, pfi_backend **out, pfi_error *err)
{
    *out = NULL;
    const pfi_backend_ops *ops = pfi_backend_find(name);
    if (!ops)
        return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0,
                             "unknown backend '%s' (expected nvml, dcgm or sim)", name ? name : "");
    return ops->init(out, opts, err);
}

void pfi_backend_close(pfi_backend *b)
{
    if (b) b->ops->close(b);
}

const pfi_backend_ops *pfi_backend_ops_of(const pfi_backend *b)
{
    return b ? b->ops : NULL;
}

const char *pfi_backend_last_error(const pfi_backend *b)
{
    if (!b) return "";
    const char *s = b->ops->last_error(b);
    return s ? s : "";
}

int pfi_backend_count(pfi_backend *b, unsigned *n)
{
    return b->ops->count(b, n);
}

int pfi_backend_info(pfi_backend *b, unsigned gpu, pfi_gpu_info *out)
{
    return b->ops->info(b, gpu, out);
}

int pfi_backend_sample(pfi_backend *b, unsigned gpu, pfi_gpu_sample *out)
{
    return b->ops->sample(b, gpu, out);
}

int pfi_backend_limits(pfi_backend *b, unsigned gpu, pfi_gpu_limits *out)
{
    return b->ops->limits(b, gpu, out);
}

int pfi_backend_set_limit(pfi_backend *b, unsigned gpu, double w)
{
    return b->ops->set_limit(b, gpu, w);
}

int pfi_backend_throughput(pfi_backend *b, unsigned gpu, double *tok_s)
{
    if (!b->ops->throughput) return PFI_ENOTSUP;
    return b->ops->throughput(b, gpu, tok_s);
}

int pfi_backend_sample_age(pfi_backend *b, unsigned gpu, double *age_s)
{
    if (!b->ops->sample_age) return PFI_ENOTSUP;
    return b->ops->sample_age(b, gpu, age_s);
}

int pfi_backend_persistence(pfi_backend *b, unsigned gpu, int *enabled)
{
    if (!b->ops->persistence) return PFI_ENOTSUP;
    return b->ops->persistence(b, gpu, enabled);
}
