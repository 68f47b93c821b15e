/* Sweeps: each group is one job measured at several per-GPU power caps.
 *
 * Ownership: a pfi_sweeps owns its groups, runs and strings; pointers it hands
 * out stay valid until pfi_sweeps_destroy (which accepts NULL) or the next
 * pfi_sweeps_add_run. Groups and runs are plain structs, read-only to callers.
 */
#ifndef PFI_CURVE_H
#define PFI_CURVE_H

#include <stddef.h>

#include "pfi/error.h"

typedef struct pfi_run {
    double cap_w;       /* per-GPU power cap, W */
    double power_w;     /* aggregate steady-state GPU power over the job's GPUs, W */
    double tput;        /* aggregate throughput, tokens/s */
    double power_sem_w; /* standard error of power_w, W; 0 = no noise known */
    double tput_sem;    /* standard error of tput, tokens/s; 0 = no noise known */
    long line;          /* source line of the run, 0 if not from a file */
} pfi_run;

/* Job metadata, as in sweeps.csv; strings may be "" but never NULL. */
typedef struct pfi_group_meta {
    const char *platform; /* e.g. "H200" */
    const char *model;    /* e.g. "Llama-3.1-70B" */
    const char *arch;     /* "dense" or "moe" */
    const char *task;     /* "pt" or "ft" */
    const char *config;   /* free text, e.g. "EP8, compile" */
    int gpus;             /* GPUs in the job, > 0 */
} pfi_group_meta;

typedef struct pfi_group {
    char *name;
    pfi_group_meta meta; /* strings owned by the sweeps */
    pfi_run *runs;       /* after finalize: sorted by cap_w, the uncapped run last */
    size_t n_runs;
    long line; /* line of the group's first run */
} pfi_group;

typedef struct pfi_sweeps pfi_sweeps;

pfi_sweeps *pfi_sweeps_create(void);
void pfi_sweeps_destroy(pfi_sweeps *s);

/* Adds one run to the named group, creating the group (with a copy of meta) on
 * first sight. Metadata that disagrees with the group's first row, a duplicate
 * cap or a non-finite/non-positive value is an error naming `file` and run->line. */
int pfi_sweeps_add_run(pfi_sweeps *s, const char *group, const pfi_group_meta *meta,
                       const pfi_run *run, const char *file, pfi_error *err);

/* Sorts runs by cap and checks every group: at least two runs and an uncapped
 * run. The uncapped run is the one at the largest cap; when tdp_w > 0 (or the
 * group's platform has a known TDP, see pfi_platform_tdp_w) that cap must reach
 * the TDP, else the group has no uncapped run. */
int pfi_sweeps_finalize(pfi_sweeps *s, double tdp_w, const char *file, pfi_error *err);

size_t pfi_sweeps_count(const pfi_sweeps *s);
const pfi_group *pfi_sweeps_group(const pfi_sweeps *s, size_t i);
const pfi_group *pfi_sweeps_find(const pfi_sweeps *s, const char *name);

/* A new, finalized sweeps holding only runs whose cap is in caps[] (within
 * 0.5 W): the paper's Table 9 recomputation on a sub-grid. A group left with
 * fewer than two runs or without its uncapped run is an error. */
int pfi_sweeps_subgrid(const pfi_sweeps *s, const double *caps, size_t n_caps, pfi_sweeps **out,
                       pfi_error *err);

/* The power a GPU is counted at when nothing says what it may draw (its
 * limits unknown or not exported): an H200's TDP, the one 700 W default. */
#define PFI_GPU_DEFAULT_W 700.0

/* The default power limit (TDP) of a known platform name, 0 if unknown. */
double pfi_platform_tdp_w(const char *platform);

#endif
