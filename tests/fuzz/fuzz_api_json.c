/* libFuzzer target: every JSON request body of pfid's HTTP API (job
 * registration, throughput report, power limit). Each input goes through all
 * three parsers; success must yield values the agent can use as they are
 * (finite, in range), failure a message. Never a crash or a leak. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pfi/agent_api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *body = (const char *)data;
    pfi_error err;

    pfi_store_job j;
    pfi_error_clear(&err);
    if (pfi_api_parse_job(body, size, &j, &err) == PFI_OK) {
        if (!pfi_api_job_id_valid(j.id) || j.n_gpus == 0 || j.n_gpus > PFI_STORE_MAX_JOB_GPUS)
            __builtin_trap();
        for (size_t i = 0; i < j.n_gpus; i++)
            for (size_t k = 0; k < i; k++)
                if (j.gpus[i] == j.gpus[k]) __builtin_trap();
    } else if (!err.msg[0]) {
        __builtin_trap();
    }

    double tps;
    pfi_error_clear(&err);
    if (pfi_api_parse_throughput(body, size, &tps, &err) == PFI_OK) {
        if (!isfinite(tps) || tps < 0) __builtin_trap();
    } else if (!err.msg[0]) {
        __builtin_trap();
    }

    double w, e;
    pfi_error_clear(&err);
    if (pfi_api_parse_limit(body, size, &w, &e, &err) == PFI_OK) {
        if (!isfinite(w) || w <= 0 || !(e > 0 && e <= PFI_API_MAX_EXPIRES_S)) __builtin_trap();
    } else if (!err.msg[0]) {
        __builtin_trap();
    }
    return 0;
}
