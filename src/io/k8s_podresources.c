/* The kubelet PodResources v1 List reply, decoded with protobuf-c from the
 * messages in proto/podresources.proto (the build generates the decoder),
 * and gRPC's message frame around it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/k8s.h"

#ifdef PFI_HAVE_PROTOBUF_C
#include <podresources.pb-c.h>
#endif

int pfi_k8s_gpu_resource(const char *r)
{
    if (!r) return 0;
    return strcmp(r, "nvidia.com/gpu") == 0 || strncmp(r, "nvidia.com/gpu.", 15) == 0 ||
           strncmp(r, "nvidia.com/mig-", 15) == 0;
}

int pfi_k8s_grpc_unframe(const uint8_t *buf, size_t len, const uint8_t **msg, size_t *msg_len,
                         pfi_error *err)
{
    if (len < 5)
        return pfi_error_set(err, PFI_EPARSE, NULL, 0,
                             "gRPC reply of %zu bytes: shorter than a frame header", len);
    /* The kubelet never compresses (no grpc-encoding asked for). */
    if (buf[0] != 0)
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "gRPC reply compressed (flag %u)", buf[0]);
    uint32_t n = (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 | buf[4];
    if (n > PFI_K8S_GRPC_MAX)
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "gRPC message of %u bytes: over %u", n,
                             PFI_K8S_GRPC_MAX);
    if ((size_t)n != len - 5)
        return pfi_error_set(err, PFI_EPARSE, NULL, 0,
                             "gRPC frame says %u bytes, the reply holds %zu", n, len - 5);
    *msg = buf + 5;
    *msg_len = n;
    return PFI_OK;
}

#ifdef PFI_HAVE_PROTOBUF_C
/* Appends one entry; PFI_ENOMEM. */
static int push(pfi_k8s_gpu **v, size_t *n, size_t *cap, const V1__PodResources *p,
                const V1__ContainerResources *c, const char *dev)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        pfi_k8s_gpu *q = realloc(*v, nc * sizeof *q);
        if (!q) return PFI_ENOMEM;
        *v = q;
        *cap = nc;
    }
    pfi_k8s_gpu *g = &(*v)[(*n)++];
    memset(g, 0, sizeof *g);
    snprintf(g->ns, sizeof g->ns, "%s", p->namespace_ ? p->namespace_ : "");
    snprintf(g->pod, sizeof g->pod, "%s", p->name ? p->name : "");
    snprintf(g->container, sizeof g->container, "%s", c->name ? c->name : "");
    snprintf(g->device, sizeof g->device, "%s", dev);
    g->index = -1;
    return PFI_OK;
}

int pfi_k8s_podresources_decode(const uint8_t *msg, size_t len, pfi_k8s_gpu **out, size_t *n,
                                pfi_error *err)
{
    *out = NULL;
    *n = 0;
    V1__ListPodResourcesResponse *r = v1__list_pod_resources_response__unpack(NULL, len, msg);
    if (!r)
        return pfi_error_set(err, PFI_EPARSE, NULL, 0,
                             "not a PodResources ListPodResourcesResponse (%zu bytes)", len);
    pfi_k8s_gpu *v = NULL;
    size_t cap = 0, k = 0;
    int rc = PFI_OK;
    for (size_t i = 0; i < r->n_pod_resources && rc == PFI_OK; i++) {
        const V1__PodResources *p = r->pod_resources[i];
        /* Kubernetes' own bounds: longer names are not a kubelet's. */
        if (!p->name || !p->namespace_ || !*p->name || !*p->namespace_ ||
            strlen(p->name) > PFI_K8S_NAME_MAX || strlen(p->namespace_) > PFI_K8S_NS_MAX)
            continue;
        for (size_t ci = 0; ci < p->n_containers && rc == PFI_OK; ci++) {
            const V1__ContainerResources *c = p->containers[ci];
            for (size_t d = 0; d < c->n_devices && rc == PFI_OK; d++) {
                const V1__ContainerDevices *dv = c->devices[d];
                if (!pfi_k8s_gpu_resource(dv->resource_name)) continue;
                for (size_t e = 0; e < dv->n_device_ids && rc == PFI_OK; e++) {
                    const char *id = dv->device_ids[e];
                    if (!id || !*id || strlen(id) >= sizeof v->device) continue;
                    if (push(&v, &k, &cap, p, c, id) != PFI_OK)
                        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
                }
            }
        }
    }
    v1__list_pod_resources_response__free_unpacked(r, NULL);
    if (rc != PFI_OK) {
        free(v);
        return rc;
    }
    *out = v;
    *n = k;
    return PFI_OK;
}
#else
int pfi_k8s_podresources_decode(const uint8_t *msg, size_t len, pfi_k8s_gpu **out, size_t *n,
                                pfi_error *err)
{
    (void)msg;
    (void)len;
    *out = NULL;
    *n = 0;
    return pfi_error_set(err, PFI_ENOTSUP, NULL, 0,
                         "built without protobuf-c: the PodResources API cannot be read "
                         "(install libprotobuf-c-dev and protobuf-c-compiler, rebuild)");
}
#endif
