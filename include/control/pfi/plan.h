/* One control period's decision, pure (no clock, no I/O): the jobs' curves
 * from what has been measured (observed points at caps) and, where nothing
 * has, a prior; the allocation of the GPU budget with a policy; one per-GPU
 * cap per job across all its GPUs; and the supply curve (what a cut would
 * cost) for GET /v1/flexibility.
 *
 * Curves. A job's points are (cap, power, throughput). Where the controller
 * has measured the job at a cap (its steady power and tokens/s while that
 * cap held) the measurement is used. Elsewhere the prior: at per-GPU cap c a
 * job of n GPUs draws at most min(n c, Pmax) (the hardware enforces the cap,
 * so this never under-counts power) and keeps Tmax y(P / Pmax), where y is
 * the embedded dataset's curves weighted by how near their PFI is to the
 * job's estimate given its SD (src/control/plan_prior.h); a job with no
 * estimate gets the dataset's least flexible curve (its lower envelope).
 * A measured point replaces the prior within 5 W of its cap, and pins the
 * prior around it: between two measured points (the uncapped one above the
 * highest) the prior keeps only its shape, below the lowest it is scaled
 * to it.
 *
 * Classes (issue 29). Jobs of one job_class are expected to share a curve:
 * where a job has no measurement of its own at a cap, the points its class
 * has there (the other jobs' measurements, relative to their Pmax and Tmax,
 * and class_obs) stand in, with the spread between the jobs. A job whose own
 * points disagree with its class beyond their noise (3 SD), or whose
 * estimate is far from the class's PFI, is split out: planned as if it had
 * no class. Until a job has a measurement of its own its lower bound is
 * never above its prior's, so a wrong class cannot make the promise worse.
 *
 * Bands. Every throughput comes with its SD and a lower bound at the plan's
 * confidence c (pfi_plan_set_confidence), tput - z_c SD. A point's SD is
 * the reading spread of a measured one (independent between jobs) or the
 * prior's and class's spread (counted as shared by all jobs: one predictor,
 * one bias), fading to 0 near a measured point; a total's SD adds the shared
 * parts linearly and the independent in quadrature. The readings (below)
 * under a job's own deepest measured point teach the plan the
 * fleet's cliffs there (src/control/plan_cliff.h): by share of Pmax, every
 * unmeasured point's expected value is lowered by their mean shortfall and
 * its bound by their 90% quantile.
 *
 * Policies: equal and pfi (the allocation library's), learn (the live
 * closed loop of pfi/learn_live.h kept across periods, pfi_plan_use_learn;
 * src/control/plan_learn.h).
 *
 * Budget. The jobs share budget_w - fixed_w - trim_w: fixed_w is GPU power
 * the controller cannot move (dead agents at their GPUs' maximum, idle or
 * uncappable GPUs), trim_w the feedback correction. When the floors alone
 * exceed it the plan is infeasible: every job at its floor, the shortfall
 * said.
 *
 * Ownership: pfi_plan keeps scratch space between periods (reset, not
 * reallocated); one thread at a time. Destroy is NULL-safe.
 */
#ifndef PFI_PLAN_H
#define PFI_PLAN_H

#include <stddef.h>

#include "pfi/alloc.h"
#include "pfi/error.h"

typedef enum { PFI_PLAN_EQUAL, PFI_PLAN_PFI, PFI_PLAN_LEARN } pfi_plan_policy;

/* "equal", "pfi", "learn". */
const char *pfi_plan_policy_name(pfi_plan_policy p);
int pfi_plan_policy_parse(const char *s, pfi_plan_policy *out);

#define PFI_PLAN_PRIOR_POINTS 8

typedef struct pfi_plan_obs {
    double cap_w;   /* the per-GPU cap that held; NaN unknown (learn readings only) */
    double power_w; /* the job's steady power at it, all GPUs, W */
    double tput;    /* its steady throughput, tokens/s */
    double tput_sd; /* learn: the spread (SD) of tput, >= 0; 0 = exact */
} pfi_plan_obs;

typedef struct pfi_plan_job {
    const char *id;
    size_t n_gpus;
    double min_w, max_w; /* per-GPU cap range valid on all its GPUs */
    double pmax_w;       /* uncapped power, all GPUs, W; NaN: n_gpus * max_w */
    double tmax;         /* uncapped throughput; NaN: unknown (1, relative) */
    double pfi;          /* live estimate (ratio PFI); NaN: none (the least flexible prior) */
    double sla_frac;     /* [0, 1] */
    const pfi_plan_obs *obs;
    size_t n_obs;
    /* reading: this period's measurement (power_w > 0 when there is one) of
     * the cap the job was given last period, every policy (the plan's
     * cliffs learn from it; learn's loop reads it too). learn only
     * (pfi_plan_use_learn): prior, points observed before the controller
     * saw the job (pfid's GET /v1/jobs/ID/curve), fed once as the loop's
     * prior points; obs above are fed once as its readings when the job
     * joins the loop (a restart resumes from them). Readings need a known
     * tmax (tokens/s). */
    const pfi_plan_obs *prior;
    size_t n_prior;
    pfi_plan_obs reading;
    /* Honest flexibility (issue 29). pfi_sd: the standard error of pfi
     * (0 or NaN: unknown); job_class: jobs expected to share a curve (the Slurm
     * job name, a Kubernetes label, "class" at registration), NULL none. */
    double pfi_sd;
    const char *job_class;
    /* Points of the job's class from jobs no longer in the set (the
     * controller's store), relative: cap_w, power_w = P / Pmax, tput =
     * T / Tmax, tput_sd its SD; the same array on every job of a class. */
    const pfi_plan_obs *class_obs;
    size_t n_class_obs;
    /* Topology (issue 28): the domains of pfi_plan_set_tree its power
     * lands in and the share in each (summing to 1); n_domains 0: the root. */
    const size_t *domains;
    const double *shares;
    size_t n_domains;
} pfi_plan_job;

typedef struct pfi_plan_cap {
    double power_w; /* planned power of the job, W */
    double cap_w;   /* its per-GPU cap, W, whole watts within [min_w, max_w] */
    double tput;    /* expected throughput at it */
    double tmax;    /* its uncapped throughput on the curve */
    double tput_lo; /* the lower bound of tput at the plan's confidence */
    double tput_sd; /* the SD the bound is made of: tput_lo = tput - z SD (>= 0) */
    int class_used; /* 1: its class's points entered its curve (not split out) */
    int at_floor;
} pfi_plan_cap;

typedef struct pfi_plan_result {
    double jobs_budget_w; /* what the jobs shared */
    double total_power_w, total_tput, uncapped_tput;
    double total_tput_lo; /* lower bound of total_tput at the plan's confidence */
    double total_tput_sd; /* its SD (shared parts added linearly) */
    double confidence;
    double pmax_total_w, floor_total_w;
    int infeasible;
    double shortfall_w; /* floors above the jobs' budget, W */
} pfi_plan_result;

typedef struct pfi_plan pfi_plan;

int pfi_plan_create(pfi_plan **out);
void pfi_plan_destroy(pfi_plan *p);

/* Enables the learn policy: the live closed loop (pfi/learn_live.h, with
 * explore_rounds proposals per epoch, 0 for its default) that learns each
 * job's curve from the readings set_jobs passes and keeps what it learned
 * across periods. A proposal holds for hold periods (0 means 1) and only
 * the readings of the last of them are taken. Without it PFI_PLAN_LEARN is
 * PFI_EINVAL. */
int pfi_plan_use_learn(pfi_plan *p, size_t explore_rounds, size_t hold, pfi_error *err);
/* The period's time (seconds, any clock that does not step back): the
 * time of set_jobs' readings and of the next learn proposal. */
void pfi_plan_set_time(pfi_plan *p, double now_s);

/* The confidence of every lower bound (tput_lo, kept_lo), in (0, 1);
 * 0.9 until set. */
void pfi_plan_set_confidence(pfi_plan *p, double confidence);

/* Topology (issue 28): the domains every later run keeps under their
 * limits (pfi/alloc.h's nested budgets), in pre-order; n 0 clears. The
 * jobs' pfi_plan_job.domains index them. limit_w is what the jobs and
 * fixed_w may use together (the controller has taken its margin off). */
typedef struct pfi_plan_domain {
    const char *name;
    size_t parent; /* PFI_ALLOC_NO_PARENT for the root */
    double limit_w;
    double fixed_w;
} pfi_plan_domain;
int pfi_plan_set_tree(pfi_plan *p, const pfi_plan_domain *d, size_t n, pfi_error *err);
/* After a run: domain d's planned power (jobs and fixed), W. */
double pfi_plan_domain_power(const pfi_plan *p, size_t d);

/* Builds the jobs' curves (valid until the next call). PFI_EINVAL naming
 * the job for a job without GPUs or a cap range (min_w <= max_w, > 0). */
int pfi_plan_set_jobs(pfi_plan *p, const pfi_plan_job *jobs, size_t n, pfi_error *err);

/* Allocates budget_w - fixed_w - trim_w over the jobs; caps[i] per job.
 * PFI_OK also when infeasible (res->infeasible). With learn each call is
 * one round of the loop (a proposal), except when the budget covers every
 * job uncapped (nothing is proposed: every job at Pmax). The learn loop
 * allocates a budget level a little under the budget that stays put while
 * the budget moves by less than 2% (src/control/plan_learn.h). */
int pfi_plan_run(pfi_plan *p, pfi_plan_policy policy, double budget_w, double fixed_w,
                 double trim_w, pfi_plan_cap *caps, pfi_plan_result *res, pfi_error *err);

/* Re-evaluates the last run's caps as they are pushed (caps[i].cap_w after
 * the controller's own step and delays: src/control/ctl_caps.c): each
 * job's power_w, tput, tput_lo and tput_sd at that cap on its curve, and
 * res's totals, so the promise is the one the pushed caps make. */
void pfi_plan_eval(const pfi_plan *p, pfi_plan_cap *caps, pfi_plan_result *res);

typedef struct pfi_plan_flex {
    double gpu_power_w; /* the jobs' power at this step, W */
    double tput;        /* the throughput they would keep */
    double kept;        /* tput / uncapped throughput */
    double tput_lo;     /* lower bound of tput at the plan's confidence */
    double kept_lo;     /* tput_lo / uncapped throughput */
    double tput_sd;     /* the SD the bound is made of */
} pfi_plan_flex;

/* The supply curve: n >= 2 steps from all jobs uncapped down to all at
 * their floors, evenly spaced in power. For learn, the exact oracle on the
 * current curves (what the loop converges to); the loop is not touched. */
int pfi_plan_flexibility(pfi_plan *p, pfi_plan_policy policy, size_t n, pfi_plan_flex *out,
                         pfi_error *err);

#endif
