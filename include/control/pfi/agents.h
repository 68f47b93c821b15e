/* The controller's client of its pfid agents: every period it reads each
 * agent's GPU and job listings (GET /v1/gpus, GET /v1/jobs) and pushes caps
 * (PUT /v1/gpus/N/limit {"watts","expires_s"}, DELETE to release), all
 * agents in parallel over one libcurl multi handle, each call with a timeout.
 *
 * An agent that does not answer keeps its last good listing (the controller
 * counts its GPUs at their maximum limit) and is marked down until it
 * answers again. The agents' token goes in the Authorization header only.
 *
 * Ownership: pfi_agents copies the URLs and the token; destroy is NULL-safe;
 * one thread at a time.
 */
#ifndef PFI_AGENTS_H
#define PFI_AGENTS_H

#include <limits.h>
#include <stddef.h>

#include "pfi/cluster.h"
#include "pfi/error.h"

typedef struct pfi_agent_info {
    char url[512];    /* base URL, no trailing '/' */
    int up;           /* both listings answered at the last poll */
    int ever_up;      /* node holds a listing (from a poll or the store) */
    char error[256];  /* why it is down */
    pfi_cl_node node; /* the last good listing */
    double last_ok;   /* Unix s of the last good poll; 0 never */
    int cannot_cap;   /* its last limit call was refused (409 read-only, 501) */
    size_t n_gpus;    /* its GPUs at the last good reading */
    double max_sum_w; /* what they may draw (their maximum limits), W */
} pfi_agent_info;

typedef struct pfi_agents pfi_agents;

int pfi_agents_create(const char *const *urls, size_t n, const char *token, double timeout_s,
                      pfi_agents **out, pfi_error *err);
void pfi_agents_destroy(pfi_agents *a);
size_t pfi_agents_count(const pfi_agents *a);
pfi_agent_info *pfi_agents_get(pfi_agents *a, size_t i);
/* The agent with that base URL (trailing '/' ignored), added (not polled
 * yet) when new: how agents found in Prometheus join. Indices never change;
 * pointers from pfi_agents_get do when one is added. */
int pfi_agents_add(pfi_agents *a, const char *url, size_t *index, pfi_error *err);
/* The index of the agent with that base URL, or SIZE_MAX. */
size_t pfi_agents_find(const pfi_agents *a, const char *url);

/* Reads every agent (in parallel); returns how many are up. */
size_t pfi_agents_poll(pfi_agents *a, double now);

/* pfi_cap_cmd.gpu for the node ceiling (PUT/DELETE /v1/node/limit,
 * pfi/agent_api.h) instead of a GPU's cap. */
#define PFI_CAP_NODE UINT_MAX

typedef struct pfi_cap_cmd {
    size_t agent;
    unsigned gpu;      /* or PFI_CAP_NODE */
    double watts;      /* per-GPU cap, W; <= 0 releases the cap (DELETE) */
    double expires_s;  /* for a cap: seconds from now, (0, 604800] */
    long status;       /* filled: the HTTP status, 0 on no answer */
    double enforced_w; /* filled: what pfid read back, NaN unknown */
    char error[160];   /* filled on failure */
    char owner[65];    /* filled on a 409 naming another owner (its "owner"); "" else */
    long long epoch;   /* and its "epoch" */
} pfi_cap_cmd;

/* The owner id and epoch sent with every cap call (headers Pfi-Owner and
 * Pfi-Epoch), so that pfid refuses a cap from a controller other than the
 * one holding the GPU (409 naming it). NULL or "": no headers. */
int pfi_agents_set_owner(pfi_agents *a, const char *owner, long long epoch, pfi_error *err);

/* Sends every command (in parallel) and fills their results; returns how
 * many succeeded (HTTP 200). A 409 that names an owner is that GPU held by
 * another controller (cmd.owner); any other 409 or a 501 marks the agent
 * cannot_cap (read-only). */
size_t pfi_agents_push(pfi_agents *a, pfi_cap_cmd *cmds, size_t n);

/* GET agent[i]'s base URL + path[i] for every i (in parallel): status[i]
 * (0 on no answer) and the body in body[i] (malloc'd, NUL-terminated,
 * len[i] bytes; NULL on no answer), which the caller frees. */
void pfi_agents_get_many(pfi_agents *a, const size_t *agent, const char *const *path, size_t n,
                         long *status, char **body, size_t *len);

/* Reads an agents file: one URL a line, '#' comments and blank lines
 * skipped. Appends to a malloc'd array of malloc'd strings. */
int pfi_agents_read_file(const char *path, char ***urls, size_t *n, pfi_error *err);
/* Splits "URL,URL,...". */
int pfi_agents_split(const char *list, char ***urls, size_t *n, pfi_error *err);
void pfi_agents_free_urls(char **urls, size_t n);

#endif
