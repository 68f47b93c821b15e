/* The curtailment simulation of the paper's Sec. 6 (Fig. 8): synthetic
 * workloads of jobs sampled with replacement from measured sweep groups, a
 * cluster power reduction, every allocation policy, and each policy's
 * throughput gap to the oracle.
 *
 * A job's true curve is its group's sweep (linear interpolation between
 * caps, as in alloc.h); the oracle is alloc.h's exact envelope optimum, so
 * the gaps are exact for the given curves. The pfi policy and learn's prior
 * use pfi_hat, the PFI predicted from telemetry (the caller fits the
 * model; the paper fits it on the uncapped runs' telemetry).
 *
 * Mixes:
 *   random      groups drawn uniformly;
 *   production  many small fine-tuning jobs, few large pretraining jobs: a
 *               job is fine-tuning with probability ft_share; a fine-tuning
 *               job is drawn from the FT groups with weight 1 / gpus (small
 *               jobs are common), a pretraining job from the PT groups with
 *               weight gpus (the few pretraining jobs are the large ones).
 *
 * Without reading noise a workload runs as one allocation entry per group
 * drawn, with its count (alloc.h: identical jobs are treated alike), which
 * gives the totals of running it job by job at a fifth of the cost; with
 * noise, job by job.
 *
 * Results do not depend on the thread count: workloads are drawn up front
 * from one seeded GSL generator (mt19937), measurement noise comes from one
 * stream per workload, and sums run in workload order. learn's score is the
 * true throughput of what it applied (rounds included), whatever it read.
 * Nothing here does I/O; progress is a callback (called from worker
 * threads, one call at a time).
 */
#ifndef PFI_SIM_H
#define PFI_SIM_H

#include <stddef.h>

#include "pfi/alloc.h"
#include "pfi/error.h"
#include "pfi/learn.h"

typedef struct pfi_sim_group {
    const char *name;
    const double *cap, *P, *T; /* the sweep: n points */
    size_t n;
    double pfi_hat;   /* predicted PFI (pfi policy, learn's prior) */
    double dram_copy; /* DRAM copy product of the uncapped run (dram-copy policy) */
    int moe, ft;      /* arch is MoE; task is fine-tuning */
    int gpus;         /* > 0 */
} pfi_sim_group;

typedef enum { PFI_SIM_RANDOM, PFI_SIM_PRODUCTION } pfi_sim_mix;
const char *pfi_sim_mix_name(pfi_sim_mix m); /* "random", "production" */
int pfi_sim_mix_parse(const char *s, pfi_sim_mix *out);

/* Policies compared: alloc.h's five, then learn. */
enum { PFI_SIM_LEARN = PFI_POLICY_COUNT, PFI_SIM_NPOLICIES };
const char *pfi_sim_policy_name(int policy); /* alloc names, "learn" */

#define PFI_SIM_DEFAULT_FT_SHARE 0.8

typedef struct pfi_sim_opts {
    pfi_sim_mix mix;
    size_t workloads;         /* W > 0 (paper: 500) */
    size_t jobs;              /* J > 0 per workload (paper: 100) */
    const double *reductions; /* fractions in [0, 1) */
    size_t n_reductions;
    unsigned long seed;
    double ft_share; /* production: probability a job is fine-tuning, [0, 1] */
    int threads;     /* >= 1 */
    pfi_learn_opts learn;
    int no_learn;     /* 1: leave learn out (its cells have ran = 0) */
    double noise_rel; /* learn's throughput readings are off by this relative
                         SD (Gaussian), [0, 1); its score uses the true values */
    /* what learn is told of which jobs share a curve (pfi_learn_job.class_id):
     * none; the group each job was drawn from (replicas, as a scheduler's
     * job name or array would say); or deliberately wrong labels, classes
     * of the same sizes by the job's position in its workload, which is
     * independent of its group (a wrong class must cost no more than none) */
    enum { PFI_SIM_CLASS_NONE, PFI_SIM_CLASS_GROUP, PFI_SIM_CLASS_WRONG } classes;
    void (*progress)(void *ctx, size_t done, size_t total); /* may be NULL */
    void *progress_ctx;
} pfi_sim_opts;

/* random mix, 500 workloads of 100 jobs, seed 1, ft_share 0.8, 1 thread,
 * learn defaults; reductions must be set by the caller. */
pfi_sim_opts pfi_sim_defaults(void);

typedef struct pfi_sim_cell {
    int ran;                  /* the policy was simulated */
    double tput_per_job;      /* mean over workloads of total throughput / J, tokens/s */
    double gap_per_job;       /* mean of (oracle - policy) / J, tokens/s (>= 0) */
    double recovered_per_job; /* equal's gap minus this policy's, tokens/s */
    double gap_recovered;     /* 1 - gap / equal's gap; valid when has_recovered */
    int has_recovered;        /* 0 when equal's gap is 0 (e.g. no reduction) */
} pfi_sim_cell;

typedef struct pfi_sim_result {
    size_t n_reductions;
    double *reductions;  /* copies of the requested fractions */
    pfi_sim_cell *cells; /* cells[r * PFI_SIM_NPOLICIES + policy] */
} pfi_sim_result;

void pfi_sim_result_free(pfi_sim_result *r); /* frees the arrays; NULL-safe */

/* Runs the experiment over ng groups. Errors: bad options (PFI_EINVAL), a
 * production mix without FT or PT groups, a reduction whose budget is below
 * a workload's floors (PFI_EINFEASIBLE, reduction named), a bad curve. */
int pfi_sim_run(const pfi_sim_group *g, size_t ng, const pfi_sim_opts *o, pfi_sim_result *out,
                pfi_error *err);

#endif
