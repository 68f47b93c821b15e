/* What the controller sees of one node: its GPUs and jobs, parsed from
 * pfid's GET /v1/gpus and GET /v1/jobs answers (README, "pfid, the node
 * agent"). Parsing is lenient about keys it does not use (pfid may add
 * some) and strict about the types of those it does. A value pfid could not
 * read (null) is NaN here. The two listings are read in one pass without a
 * DOM (pfi/json_scan.h), refusing what Jansson refuses; a refusal names the
 * entry and, for a mistyped value, its field ("GPU 3: \"limits.min_w\" is
 * not a number").
 *
 * Ownership: a pfi_cl_node owns its arrays; pfi_cl_node_clear frees them
 * and leaves an empty node (NULL-safe).
 */
#ifndef PFI_CLUSTER_H
#define PFI_CLUSTER_H

#include <stddef.h>

#include "pfi/error.h"

#define PFI_CL_ID_MAX 128
#define PFI_CL_JOB_GPUS 64
#define PFI_CL_MAX_GPUS 4096 /* per node; more is refused */
#define PFI_CL_MAX_JOBS 4096

typedef struct pfi_cl_gpu {
    unsigned index;
    int up;                                     /* the last sample was read */
    double power_w;                             /* last sample, W; NaN unknown */
    double enforced_w, default_w, min_w, max_w; /* limits, W; NaN unknown */
    double prior_w;                             /* limits.prior_w: the site's own limit */
    int capped;                                 /* pfid holds a cap on it */
    double cap_w, cap_expires_at;
    double cap_prior_w; /* cap.prior_w: the limit in force before the cap */
    int restore_failed;
} pfi_cl_gpu;

#define PFI_CL_CLASS_MAX 64

typedef struct pfi_cl_job {
    char id[PFI_CL_ID_MAX + 1];
    unsigned gpus[PFI_CL_JOB_GPUS];
    size_t n_gpus;
    char phase[16];      /* warmup, startup, training */
    double power_w;      /* its GPUs on this node, last sample, W */
    double tokens_per_s; /* last report from this node */
    double tokens_sd;    /* SD of one report at the cap in force; NaN unknown */
    double steady_power_w, steady_tokens_per_s; /* top-10% means over training */
    double pfi_estimate;                        /* NaN when pfid has none */
    double pfi_sd;                              /* its SD, NaN unknown */
    char job_class[PFI_CL_CLASS_MAX + 1];       /* registration's class, "" none */
    double sla_floor; /* registration's minimum throughput share, (0, 1]; NaN none */
    int exempt;       /* registration: never cap it */
} pfi_cl_job;

typedef struct pfi_cl_node {
    pfi_cl_gpu *gpus;
    size_t n_gpus;
    pfi_cl_job *jobs;
    size_t n_jobs;
} pfi_cl_node;

/* {"gpus":[...]} into node->gpus (replacing them). PFI_EPARSE/PFI_EINVAL
 * with one sentence on a body that is not that shape. */
int pfi_cl_parse_gpus(const char *text, size_t len, pfi_cl_node *node, pfi_error *err);
/* {"jobs":[...]} into node->jobs (replacing them). */
int pfi_cl_parse_jobs(const char *text, size_t len, pfi_cl_node *node, pfi_error *err);
void pfi_cl_node_clear(pfi_cl_node *node);

/* One point of a job's observed curve (GET /v1/jobs/ID/curve). */
typedef struct pfi_cl_point {
    double cap_w;   /* per-GPU limit, W */
    double power_w; /* the job's total power on the node, W */
    double tput;    /* its tokens/s on the node */
    double tput_sd; /* the reports' SD (0 for one) */
    double n;       /* reports */
} pfi_cl_point;

#define PFI_CL_MAX_POINTS 4096

/* {"points":[{"cap_w","power_w","tokens_per_s","tokens_sd","n"},...]} into a
 * malloc'd array (*pts, *n; NULL and 0 for none). A point with a value
 * missing, null or out of range (power or cap <= 0, tokens/s < 0) is an
 * error naming it. */
int pfi_cl_parse_curve(const char *text, size_t len, pfi_cl_point **pts, size_t *n, pfi_error *err);

/* The GPU with device index idx, or NULL. */
const pfi_cl_gpu *pfi_cl_node_gpu(const pfi_cl_node *node, unsigned idx);

#endif
