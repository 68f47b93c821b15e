/* Kubernetes' view of a node's GPUs, decoded: which pod holds which GPU (the
 * kubelet PodResources API's List reply, or dcgm-exporter's pod labels) and
 * which pods form one job (their labels and annotations, from a PodList:
 * the API server's pods on this node, or the kubelet's /pods). Pure decoding
 * and grouping, no I/O: pfi/kubelet.h (telemetry) fetches, pfid's kubelet.c
 * registers.
 *
 * Ownership: every array handed out is malloc'd and the caller's to free(). */
#ifndef PFI_K8S_H
#define PFI_K8S_H

#include <stddef.h>
#include <stdint.h>

#include "pfi/error.h"

/* Kubernetes' own bounds: a namespace is a DNS label (63), a pod name a DNS
 * subdomain (253), a label value 63 characters. */
#define PFI_K8S_NS_MAX 63
#define PFI_K8S_NAME_MAX 253
/* The GRPC message size the kubelet's own clients accept (16 MiB). */
#define PFI_K8S_GRPC_MAX (16u << 20)

/* One device of a container: a GPU as the device plugin names it (a UUID
 * "GPU-...", a MIG instance "MIG-...", or an index with the plugin's
 * DEVICE_ID_STRATEGY=index). */
typedef struct pfi_k8s_gpu {
    char ns[PFI_K8S_NS_MAX + 1];
    char pod[PFI_K8S_NAME_MAX + 1];
    char container[PFI_K8S_NAME_MAX + 1];
    char device[128];
    int index; /* the GPU index when the source gives one (dcgm's gpu label), else -1 */
} pfi_k8s_gpu;

/* Whether a resource name is an NVIDIA GPU's (nvidia.com/gpu, its renamed
 * shared variants nvidia.com/gpu.shared, and MIG's nvidia.com/mig-*). */
int pfi_k8s_gpu_resource(const char *resource_name);

/* gRPC's length-prefixed message (1 byte compressed flag, 4 bytes big-endian
 * length): the one message of buf[0..len), *msg pointing into buf. PFI_EPARSE
 * for a short, compressed, oversized or trailing-bytes frame. */
int pfi_k8s_grpc_unframe(const uint8_t *buf, size_t len, const uint8_t **msg, size_t *msg_len,
                         pfi_error *err);

/* Decodes a v1 ListPodResourcesResponse (protobuf, no gRPC frame) into one
 * entry per GPU device of every container. PFI_ENOTSUP when pfi was built
 * without protobuf-c. */
int pfi_k8s_podresources_decode(const uint8_t *msg, size_t len, pfi_k8s_gpu **out, size_t *n,
                                pfi_error *err);

/* The GPUs of the pods on a dcgm-exporter page (its series' pod, namespace
 * and container labels, which it takes from the same PodResources API): one
 * entry per GPU, or per MIG instance, that a pod holds, the device its UUID
 * label, index its gpu label. */
struct pfi_prom_doc;
int pfi_k8s_gpus_from_prom(const struct pfi_prom_doc *doc, pfi_k8s_gpu **out, size_t *n,
                           pfi_error *err);

/* What pfid needs of a pod: the job it belongs to and that job's terms. */
typedef struct pfi_k8s_pod {
    char ns[PFI_K8S_NS_MAX + 1];
    char name[PFI_K8S_NAME_MAX + 1];
    char job[129];           /* pfi_k8s_job_id's, "" when the id would be too long */
    double sla_floor;        /* annotation pfi.io/sla-floor, (0, 1]; 0 none or invalid */
    int exempt;              /* annotation pfi.io/exempt "true" */
    char arch[16], task[16]; /* label pfi.io/class "ARCH-TASK" (dense|moe, pt|ft) */
    char job_class[65];      /* label pfi.io/job-class: jobs sharing a curve, "" none */
    int ended;               /* status.phase Succeeded or Failed */
    char warning[160];       /* a bad annotation or label, "" none */
} pfi_k8s_pod;

/* The label keys that name a pod's job, first match wins, when the caller
 * gives none: JobSet, Kueue's pod groups, LeaderWorkerSet, KubeRay, the batch
 * Job (after JobSet: a JobSet's pods also carry their child Job's name). */
extern const char *const pfi_k8s_default_group_labels[];

/* The job id of a pod: "NAMESPACE:VALUE" of the first group label it has,
 * else "NAMESPACE:POD" (a pod of its own). ':' appears in neither part and is
 * allowed in pfi job ids, '/' is not (it splits /v1/jobs/ID/...). Returns 0
 * when the id would exceed 128 characters (a pod name over 64). */
int pfi_k8s_job_id(const char *ns, const char *group_value, const char *pod, char *out, size_t len);

/* Parses a PodList (kind "PodList", JSON) into one entry per pod. labels is
 * a NULL-ended list of group label keys (NULL: the defaults). */
int pfi_k8s_pod_list_parse(const char *json, size_t len, const char *const *labels,
                           pfi_k8s_pod **out, size_t *n, pfi_error *err);

#endif
