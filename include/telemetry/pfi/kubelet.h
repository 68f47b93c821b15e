/* Reads Kubernetes' view of the node for pfid: the kubelet PodResources
 * API's List over its Unix socket (gRPC: HTTP/2 with prior knowledge,
 * through libcurl), and a PodList from the API server or the kubelet (HTTPS
 * GET with the pod's ServiceAccount token). Decoding is pfi/k8s.h's.
 * Each call is independent (its own curl handle): call from one thread or
 * many. */
#ifndef PFI_KUBELET_H
#define PFI_KUBELET_H

#include <stddef.h>

#include "pfi/k8s.h"

/* /v1.PodResourcesLister/List on the socket: one entry per GPU device held
 * by a container (*out malloc'd). PFI_EIO when the socket does not answer,
 * PFI_EBACKEND for a gRPC error status (its message in err), PFI_EPARSE for
 * a reply that is not the API's. */
int pfi_kubelet_list(const char *socket_path, long timeout_ms, pfi_k8s_gpu **out, size_t *n,
                     pfi_error *err);

/* GET url (http, https or file), with "Authorization: Bearer" and the first
 * line of token_file when given (read on every call: ServiceAccount tokens
 * are rotated), verifying TLS against ca_file when given. *body is
 * malloc'd and NUL-terminated; a reply over 64 MiB or a status other than
 * 200 is an error. */
int pfi_k8s_fetch(const char *url, const char *token_file, const char *ca_file, long timeout_ms,
                  char **body, size_t *len, pfi_error *err);

#endif
