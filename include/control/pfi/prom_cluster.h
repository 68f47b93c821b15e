/* The cluster as Prometheus sees it: what `pfi control run --cluster-from
 * prometheus` reads every period instead of polling every agent. A few
 * instant queries over the series pfid exports (README, "pfid ... Metrics"),
 * aggregated by Prometheus per node (instance) and per job (job_id), so that
 * the controller reads about one row per node and a few per job, not one
 * object per GPU. The queries, and what each row gives:
 *
 *   DOWN     up{M} == 0                                  a node Prometheus cannot scrape
 *   RO       pfi_agent_read_only{M} == 1                 a node that refuses caps
 *   GPUS     count by (instance) (..._limit_max_watts)   its GPUs
 *   MAXSUM   sum by (instance) (..._limit_max_watts)     what they may draw
 *   LO, HI   max/min by (instance) (..._min/max_watts)   the cap range valid on all of them
 *   IDLE     per node: GPU power less its jobs' power    what no job draws
 *   CAPPED   count by (instance) (pfi_gpu_cap_watts)     GPUs pfid holds a cap on
 *   MEMBERS  pfi_job_info{M}                             a job's GPUs on a node ("gpus" label)
 *   JPOWER, JTPS  sum by (job_id) (...)                  a job's power and tokens/s, all nodes
 *   JPFI     avg by (job_id) (pfi_job_pfi_estimate)      its live PFI estimate
 *   JTRAIN   min by (job_id) (pfi_job_phase{phase="training"})  1 when training on every node
 *   JTVAR    sum by (job_id) (..._throughput_sd_... ^ 2 or ..._tokens_per_second * NaN)
 *            the variance of JTPS: one report's per node, summed; NaN (a node
 *            without a spread) or no row: unknown
 *   JEXEMPT  max by (job_id) (pfi_job_exempt)            1 when any node registered it exempt
 *   JFLOOR   max by (job_id) (pfi_job_sla_floor_ratio)   its registration's SLA floor, the
 *            highest over nodes (pfid exports none for a job without one)
 *            A job without a row (an older pfid): not exempt, no floor, as
 *            the agents' JSON gives for one.
 *
 * M is a label matcher list selecting pfid's series (default job="pfid").
 * pfi_pc_view_build is pure (answers in, view out); pfi_pc_fetch runs the
 * queries in parallel.
 *
 * Ownership: a pfi_pc_view owns its arrays; pfi_pc_view_clear frees them
 * (NULL-safe).
 */
#ifndef PFI_PROM_CLUSTER_H
#define PFI_PROM_CLUSTER_H

#include <stddef.h>

#include "pfi/cluster.h"
#include "pfi/error.h"
#include "pfi/prom_vector.h"

typedef enum pfi_pc_query {
    PFI_PC_DOWN,
    PFI_PC_RO,
    PFI_PC_GPUS,
    PFI_PC_MAXSUM,
    PFI_PC_LO,
    PFI_PC_HI,
    PFI_PC_IDLE,
    PFI_PC_CAPPED,
    PFI_PC_MEMBERS,
    PFI_PC_JPOWER,
    PFI_PC_JTPS,
    PFI_PC_JPFI,
    PFI_PC_JTRAIN,
    PFI_PC_JTVAR,
    PFI_PC_JEXEMPT,
    PFI_PC_JFLOOR,
    PFI_PC_NQ
} pfi_pc_query;

#define PFI_PC_DEFAULT_MATCH "job=\"pfid\""
#define PFI_PC_INSTANCE_MAX 255

/* The text of query q over matcher match (e.g. job="pfid"), into buf.
 * PFI_EINVAL when match has a brace or quote out of place or buf is too short. */
int pfi_pc_query_text(pfi_pc_query q, const char *match, char *buf, size_t len, pfi_error *err);
/* The labels q's rows are read for (the list to give pfi_prom_vec_parse). */
const char *const *pfi_pc_query_labels(pfi_pc_query q, size_t *n);

typedef struct pfi_pc_node {
    char instance[PFI_PC_INSTANCE_MAX + 1];
    int down; /* up == 0 */
    int read_only;
    double n_gpus;                        /* NaN: unknown (no limits exported) */
    double max_sum_w, lo_w, hi_w, idle_w; /* NaN unknown */
    double capped;                        /* GPUs capped, 0 none */
} pfi_pc_node;

typedef struct pfi_pc_member {
    size_t node, job; /* positions in the view */
    unsigned gpus[PFI_CL_JOB_GPUS];
    size_t n_gpus;
} pfi_pc_member;

typedef struct pfi_pc_job {
    char id[PFI_CL_ID_MAX + 1];
    double power_w, tokens_per_s, pfi; /* NaN unknown */
    double tokens_var;                 /* variance of tokens_per_s (JTVAR); NaN unknown */
    int training;                      /* 1 when in the training phase on every node */
    int exempt;                        /* registered "exempt" on any node: never cap it */
    double sla_floor; /* registration's minimum throughput share, (0, 1]; NaN none */
} pfi_pc_job;

typedef struct pfi_pc_view {
    pfi_pc_node *nodes;
    size_t n_nodes;
    pfi_pc_job *jobs; /* only jobs with at least one member */
    size_t n_jobs;
    pfi_pc_member *members;
    size_t n_members;
    size_t skipped; /* rows left out: no instance, a bad job id or "gpus" label */
} pfi_pc_view;

/* Builds the view from the answers (a[q] for each query q, parsed with
 * pfi_pc_query_labels(q)). Rows that cannot be used are counted in
 * skipped, never guessed at. v is replaced. */
int pfi_pc_view_build(const pfi_prom_vec a[PFI_PC_NQ], pfi_pc_view *v, pfi_error *err);
void pfi_pc_view_clear(pfi_pc_view *v);

/* Runs every query against base (http://host:9090) in parallel, each with
 * timeout_s, JEXEMPT after the others have answered (a job MEMBERS lists
 * was registered before its flag is asked), and parses the answers into
 * a[]. On any failure (no answer, an HTTP error, a bad answer) a[] is left
 * empty and err says which query. */
int pfi_pc_fetch(const char *base, const char *match, double timeout_s, pfi_prom_vec a[PFI_PC_NQ],
                 pfi_error *err);

#endif
