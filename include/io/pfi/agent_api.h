/* The JSON request bodies of pfid's HTTP API, parsed and validated apart
 * from the server so that a fuzzer (tests/fuzz/fuzz_api_json.c) and the
 * controller's client can use them.
 *
 *   POST /v1/jobs               {"id":"llama-7","gpus":[0,1],"arch":"dense","task":"pt",
 *                                "sla_floor":0.8,"exempt":false,"class":"llama-70b-ft"}
 *   POST /v1/jobs/ID/throughput {"tokens_per_s":123456.7}
 *   PUT  /v1/gpus/N/limit       {"watts":450,"expires_s":3600}
 *   PUT  /v1/node/limit         {"watts":5600,"expires_s":60}
 *
 * The node ceiling (issue 28): the same body as a GPU limit, parsed by
 * pfi_api_parse_limit, fenced by the same Pfi-Owner / Pfi-Epoch headers as
 * a cap. pfid keeps the sum of its GPUs' power under it on its own, within
 * one sample interval, by capping its GPUs evenly (never above a GPU's own
 * cap or prior), until it expires or DELETE /v1/node/limit; so a branch
 * holds while the controller or the network is gone. GET /v1/node answers
 *   {"node":"gpu-017",            the --node-name, else the hostname: the
 *                                 name a topology file's "nodes" list
 *    "limit":{"watts":5600,"expires_in_s":41.2,"owner":"ctl-a","epoch":7,
 *             "enforcing":true,   its even caps are in force now
 *             "power_w":5480.0}   the GPUs' summed power at the last sample
 *    }                            ("limit": null when none)
 *
 * Bodies are strict: not an object, a missing or mistyped key, an unknown key
 * (a typo must not pass silently), a duplicate key, or a value out of range
 * is PFI_EINVAL (PFI_EPARSE for malformed JSON) with one sentence in err.
 * The parsers check what a body alone can say; the agent checks the rest
 * (that the GPUs exist, the device's limit constraints).
 */
#ifndef PFI_AGENT_API_H
#define PFI_AGENT_API_H

#include <stddef.h>

#include "pfi/error.h"
#include "pfi/store.h"

#define PFI_API_MAX_BODY 65536              /* bytes; larger bodies are refused */
#define PFI_API_MAX_EXPIRES_S (7 * 86400.0) /* a cap lasts at most a week */

/* True when id can name a job: 1..PFI_STORE_JOB_ID_MAX characters from
 * [A-Za-z0-9._:@+-] (safe in a URL path and a Prometheus label). */
int pfi_api_job_id_valid(const char *id);

/* POST /v1/jobs: id, gpus (1..PFI_STORE_MAX_JOB_GPUS distinct indices),
 * optional arch ("dense"|"moe"), task ("pt"|"ft"), sla_floor (in (0, 1], or
 * null: none, stored as 0), exempt (a boolean) and class (jobs expected to
 * share a curve: 1..PFI_STORE_CLASS_MAX characters of the id charset, or
 * null: none). Times are left 0. */
int pfi_api_parse_job(const char *body, size_t len, pfi_store_job *out, pfi_error *err);

/* POST /v1/jobs/ID/throughput: tokens_per_s, finite and >= 0. */
int pfi_api_parse_throughput(const char *body, size_t len, double *tokens_per_s, pfi_error *err);

/* PUT /v1/gpus/N/limit: watts (finite, > 0) and expires_s (in
 * (0, PFI_API_MAX_EXPIRES_S]). */
int pfi_api_parse_limit(const char *body, size_t len, double *watts, double *expires_s,
                        pfi_error *err);

#endif
