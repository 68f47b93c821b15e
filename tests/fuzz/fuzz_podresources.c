/* libFuzzer target: the kubelet PodResources List reply (gRPC frame, then
 * protobuf through protobuf-c) and the dcgm-exporter page's pod labels. Any
 * input gives PFI_OK with entries whose strings are bounded and
 * NUL-terminated, or an error with a message; never a crash. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/k8s.h"
#include "pfi/prom.h"

static void check(const pfi_k8s_gpu *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strnlen(v[i].ns, sizeof v[i].ns) >= sizeof v[i].ns || !v[i].ns[0]) __builtin_trap();
        if (strnlen(v[i].pod, sizeof v[i].pod) >= sizeof v[i].pod || !v[i].pod[0]) __builtin_trap();
        if (strnlen(v[i].device, sizeof v[i].device) >= sizeof v[i].device) __builtin_trap();
        if (strnlen(v[i].container, sizeof v[i].container) >= sizeof v[i].container)
            __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pfi_error err = {0};
    const uint8_t *msg;
    size_t ml;
    /* The framed reply as the socket gives it, and the bare message. */
    if (pfi_k8s_grpc_unframe(data, size, &msg, &ml, &err) == PFI_OK) {
        if (msg != data + 5 || ml != size - 5) __builtin_trap();
    } else if (!err.msg[0]) {
        __builtin_trap();
    }
    pfi_k8s_gpu *v = NULL;
    size_t n = 0;
    if (pfi_k8s_podresources_decode(data, size, &v, &n, &err) == PFI_OK)
        check(v, n);
    else if (!err.msg[0] || v || n)
        __builtin_trap();
    free(v);
    /* The same bytes as a dcgm-exporter page. */
    pfi_prom_doc *d = NULL;
    if (pfi_prom_parse((const char *)data, size, "fuzz", &d, &err) == PFI_OK) {
        v = NULL;
        if (pfi_k8s_gpus_from_prom(d, &v, &n, &err) != PFI_OK) __builtin_trap();
        check(v, n);
        for (size_t i = 0; i < n; i++)
            if (v[i].index < 0 || v[i].index > 1023) __builtin_trap();
        free(v);
    }
    pfi_prom_doc_destroy(d);
    return 0;
}
