/* "learn": a closed-loop allocation policy that learns each job's curve
 * from the powers it actually applies (our policy; README "The learn
 * policy"), replayed round by round against an observer. The loop itself
 * is pfi/learn_live.h (a controller runs it live); this is the replay that
 * pfi allocate --policy learn and pfi simulate use.
 *
 * It knows what a cluster controller knows before a curtailment: each job's
 * uncapped power and throughput (Pmax, Tmax), the lowest power it may be
 * given, and a telemetry-predicted PFI (the prior). It does not know the
 * curves. The curtailment lasts event_s seconds and starts with K measured
 * rounds of round_s seconds, each meeting the budget:
 *
 *   round 1      the equal share;
 *   rounds 2..K  the exact oracle (alloc.h) on the curves estimated so far,
 *                optimistic where nothing was read;
 *
 * after each round every job's throughput at the power it was given is read
 * (observe()). The event is played period by period as a controller runs
 * it: every round_s seconds a proposal of the live loop (learn_live.h),
 * applied and read. After the K rounds each proposal is the one kept (the
 * best combination of measured points, the best round or the equal share,
 * whichever the readings show to gain most), chosen again on all readings
 * so far as they pool (learn_live.h). The event's periods are at most
 * PFI_LEARN_MAX_PERIODS, the last one lasting what is left of the event;
 * with exact readings, once a kept proposal stands the rest of the event
 * is read as one period (reading it period by period gives the same). The
 * reported throughput is the time average over the whole event, so the
 * rounds spent learning count against it. It uses no sweep, no cap grid
 * and nothing of how the dataset was made.
 *
 * Nothing here does I/O; observe() is the only window onto the jobs.
 */
#ifndef PFI_LEARN_H
#define PFI_LEARN_H

#include <stddef.h>
#include <stdint.h>

#include "pfi/alloc.h"
#include "pfi/error.h"

enum { PFI_LEARN_MAX_PERIODS = 1024 };

typedef struct pfi_learn_opts {
    size_t rounds;    /* K measured rounds, 1..64 (default 8) */
    double round_s;   /* seconds a round lasts, > 0 (default 30) */
    double event_s;   /* seconds the curtailment lasts, >= rounds * round_s (default 3600) */
    double noise_rel; /* the readings' relative SD, known to the estimator, [0, 1) (default 0) */
} pfi_learn_opts;

/* rounds 8, round_s 30, event_s 3600, noise_rel 0. */
pfi_learn_opts pfi_learn_defaults(void);

typedef struct pfi_learn_job {
    double pmax_w;     /* uncapped power, W, > 0 */
    double tmax;       /* uncapped throughput, tokens/s, > 0 */
    double floor_w;    /* lowest power the job can be given, W, in (0, pmax_w] */
    double pfi_hat;    /* predicted PFI (the prior slope below the lowest reading) */
    size_t count;      /* identical jobs this entry stands for, as in alloc.h (0 means 1):
                          they are given one power and read as one */
    uint64_t class_id; /* entries expected to share a curve, as in learn_live.h; 0 none */
} pfi_learn_job;

/* Runs `jobs` of entry `job`'s jobs (>= 1) at power_w (W, within its
 * range) for secs seconds (> 0) and reports their measured throughput, per
 * job; non-zero aborts the run with that status. The time average over
 * the event is the sum of jobs x secs x true throughput over every call,
 * divided by event_s: an observer that knows the truth (the simulation)
 * sums it for itself. */
typedef int (*pfi_learn_observe)(void *ctx, size_t job, double power_w, size_t jobs, double secs,
                                 double *tput);

typedef struct pfi_learn_result { /* totals count every job an entry stands for */
    double avg_tput;              /* total throughput averaged over the event, rounds included */
    double final_tput;            /* total throughput read in the event's last period */
    size_t rounds;                /* exploring rounds played (K) */
    size_t periods; /* periods played, rounds included: event_s / round_s rounded up */
} pfi_learn_result;

/* Allocates budget_w (>= sum of floors, else PFI_EINFEASIBLE) over n jobs as
 * described above; power_w (n entries, may be NULL) receives the allocation
 * in force at the event's end (per job of the entry). */
int pfi_learn_run(const pfi_learn_job *jobs, size_t n, double budget_w, const pfi_learn_opts *o,
                  pfi_learn_observe observe, void *ctx, double *power_w, pfi_learn_result *res,
                  pfi_error *err);

/* learn replayed against prob's own curves (they answer for the jobs, as
 * `pfi allocate --policy learn` replays sweeps): pfi_hat[i] is entry i's
 * prior PFI (NaN is an error). Fills out[] (per entry) and res like
 * pfi_alloc_run, and lr with the loop's figures. */
int pfi_learn_replay(pfi_alloc_problem *prob, const double *pfi_hat, double budget_w,
                     const pfi_learn_opts *o, pfi_alloc_out *out, pfi_alloc_result *res,
                     pfi_learn_result *lr, pfi_error *err);

/* The same, in two steps, for callers that allocate many budgets over one
 * set of jobs (the simulation: 41 reductions per workload): a plan keeps
 * the jobs and its scratch, so each run pays for the rounds alone.
 * A run gives exactly what pfi_learn_run gives. _reset reuses a plan's
 * memory for new jobs; destroy is NULL-safe; one plan, one thread. */
typedef struct pfi_learn_plan pfi_learn_plan;
int pfi_learn_plan_create(const pfi_learn_job *jobs, size_t n, const pfi_learn_opts *o,
                          pfi_learn_plan **out, pfi_error *err);
int pfi_learn_plan_reset(pfi_learn_plan *pl, const pfi_learn_job *jobs, size_t n,
                         const pfi_learn_opts *o, pfi_error *err);
int pfi_learn_plan_run(pfi_learn_plan *pl, double budget_w, pfi_learn_observe observe, void *ctx,
                       double *power_w, pfi_learn_result *res, pfi_error *err);
void pfi_learn_plan_destroy(pfi_learn_plan *pl);
/* Nested budgets (issue 28): the loop's rounds allocate under a tree of
 * domains (pfi_live_set_tree; span jobs index the plan's jobs) until the
 * next reset; nd 0 clears. pfi_learn_replay sets prob's tree, if any, and
 * brings the loop's final allocation under it (pfi_alloc_problem_fit_tree):
 * a probe during the replayed event may pass a limit for one round. */
int pfi_learn_plan_set_tree(pfi_learn_plan *pl, const pfi_alloc_domain *d, size_t nd,
                            const pfi_alloc_span *s, size_t ns, pfi_error *err);

#endif
