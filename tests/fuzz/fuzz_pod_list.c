/* libFuzzer target: the PodList reader (labels into job ids, annotations
 * into terms). Any input gives PFI_OK with valid job ids and terms, or an
 * error with a message; never a crash. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/agent_api.h"
#include "pfi/k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pfi_error err = {0};
    pfi_k8s_pod *v = NULL;
    size_t n = 0;
    if (pfi_k8s_pod_list_parse((const char *)data, size, NULL, &v, &n, &err) != PFI_OK) {
        if (!err.msg[0] || v || n) __builtin_trap();
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        /* a job id is one the API would take, or "" (no job) */
        if (v[i].job[0] && !pfi_api_job_id_valid(v[i].job)) __builtin_trap();
        if (v[i].sla_floor < 0 || v[i].sla_floor > 1) __builtin_trap();
        if (v[i].arch[0] && strcmp(v[i].arch, "dense") && strcmp(v[i].arch, "moe"))
            __builtin_trap();
        if (v[i].task[0] && strcmp(v[i].task, "pt") && strcmp(v[i].task, "ft")) __builtin_trap();
    }
    free(v);
    return 0;
}
