/* Live learn: the learn policy (learn.h, README "The learn policy") as a
 * loop that a controller runs period by period (issue 12, item 4).
 *
 * OWNERSHIP: this header belongs to the allocation module (branch `alloc`,
 * src/core/learn*.c); the controller (branch `control`) codes against it.
 * Changes to these declarations go through the lead, so that both sides
 * move together. Fields may be added at the end of the option struct
 * (callers start from pfi_live_defaults()), nothing is removed.
 *
 * Core layer: no I/O, no clock. Times are the caller's, in seconds on any
 * monotonic clock, passed in with every reading and every proposal.
 *
 * The loop, once per control period:
 *
 *   pfi_live_propose(l, budget_w, now_s, shares, n, &err);  // apply shares
 *   ... the period runs; the agents measure ...
 *   pfi_live_observe(l, readings, k, &err);                 // as they arrive
 *
 * Jobs come and go at any time (pfi_live_job_set / _remove); the budget may
 * change from one proposal to the next; readings may stop (a job with no
 * reading for stale_s is planned on what is known of it and not probed);
 * curve points observed before the event enter as readings flagged prior.
 *
 * What it learns from: per job, its uncapped power and throughput, the
 * lowest power it may be given, a telemetry-predicted PFI, and readings
 * (power drawn, tokens/s, spread). Nothing of how a curve was made.
 *
 * Epochs: a proposal whose budget differs from the last one's (relative
 * 1e-9), or a change to the job set, starts an epoch. Its first proposal
 * is the equal-weight share (shed in proportion to Pmax, floors held);
 * the next explore_rounds - 1 explore: the exact oracle (alloc.h) on the
 * current estimates, each job cut at most a trust region below its lowest
 * reading, the last of them on the plain estimates. From then on it
 * proposes the best combination of measured points, or the epoch's best
 * measured proposal, or the equal share, whichever its readings show to
 * gain most beyond their uncertainty (none: the equal share). Do no harm:
 * exploring stops early when the equal round's measured losses (Tmax - T)
 * are within 4 SD of their noise (no gain could be told from luck: the
 * equal share is kept), or when the exploring rounds' measured losses
 * against the equal round add up to more than twice those losses; a
 * round that measures worse than equal halves the trust region, one that
 * gains widens it (probing is 0 once exploring has stopped). Readings are
 * kept across epochs: a budget change re-explores from what was learned.
 * With exact readings the kept proposal never measures below the equal
 * share of its epoch.
 *
 * Kept proposals are chosen again every period on all readings so far
 * (with exact readings, until nothing moves). Readings pool every period: a kept point's with
 * the earlier ones at its power, a repeated equal or best proposal's total
 * with that round's. With noisy readings a kept combination is drawn anew
 * every period (Thompson sampling): the combination of measured points
 * that is best on one draw of each pooled reading, moved by its SD times
 * a normal deviate times a scale that falls from 1 to 0.3 over the first
 * 60 kept periods. Draws are deterministic (a function of the
 * period's number and the job's id). The choice between combination,
 * best proposal and equal share is made on the readings less one SD.
 * With exact readings, when exploring ran its rounds and a combination or
 * round gains, the first kept periods probe around it (polish, flagged
 * probing): the oracle on optimistic estimates, each job cut at most 5% of
 * Pmax below its kept power; a probe that measures more than the kept
 * proposal joins the readings, polishing ends after 2 probes that do not
 * (one more allowed per probe that does, 5 at most) or 40 in all.
 *
 * Changes (issue 12, branch alloc2; no declaration changed): exploring may
 * stop before explore_rounds proposals (do no harm, above); the kept
 * proposal may be the equal share or the best measured proposal rather
 * than the best combination when readings are noisy. (Stop 18, no
 * declaration changed:) kept proposals chosen again as above; the best
 * measured proposal is an exploring one. (Stop 19, no declaration
 * changed:) a kept combination drawn every period with noisy readings,
 * and the kept choice made every period (no longer on a growing gap).
 * (Stop 20, no declaration changed:) the keep rule on the readings less one
 * SD; polish with exact readings (probing set in kept periods).
 *
 * A pfi_live owns its memory; one pfi_live, one thread. Destroy is
 * NULL-safe.
 */
#ifndef PFI_LEARN_LIVE_H
#define PFI_LEARN_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "pfi/alloc.h"
#include "pfi/error.h"

typedef struct pfi_live pfi_live;

typedef struct pfi_live_opts {
    size_t explore_rounds; /* proposals per epoch before the best is kept, 1..64 (default 8) */
    double stale_s;        /* a job with no reading for this long is silent (default 90 s) */
} pfi_live_opts;

/* explore_rounds 8, stale_s 90. */
pfi_live_opts pfi_live_defaults(void);

int pfi_live_create(const pfi_live_opts *o, pfi_live **out, pfi_error *err);
void pfi_live_destroy(pfi_live *l);

typedef struct pfi_live_job {
    uint64_t id;    /* the caller's key, unique among the jobs present */
    double pmax_w;  /* uncapped power, W (all its GPUs), > 0 */
    double tmax;    /* uncapped throughput, tokens/s, > 0 */
    double floor_w; /* lowest power it may be given (lowest cap or SLA), W, (0, pmax_w] */
    double pfi_hat; /* telemetry-predicted PFI (the prior); NaN when unknown */
    size_t count;   /* identical jobs this entry stands for (0 means 1): one power, read as one */
    uint64_t class_id; /* jobs expected to share a curve pool readings (issue 29), each
                          only those of classmates whose readings agree with its own
                          (learn_class.c); 0 none */
} pfi_live_job;

/* Adds a job, or updates the one with that id (its range and prior; its
 * readings are kept). PFI_EINVAL for a bad range. Starts an epoch. */
int pfi_live_job_set(pfi_live *l, const pfi_live_job *j, pfi_error *err);
/* Removes a job and its readings; PFI_ENOTFOUND for an unknown id. Starts
 * an epoch. */
int pfi_live_job_remove(pfi_live *l, uint64_t id, pfi_error *err);
size_t pfi_live_jobs(const pfi_live *l);

typedef struct pfi_live_reading {
    uint64_t id;    /* the job */
    double power_w; /* power the job drew over the reading's window, W (may sit below
                       the cap applied); within (0, 1e12] */
    double cap_w;   /* per-GPU cap in force, W; NaN when not known */
    double tput;    /* tokens/s measured over the window, >= 0 */
    double tput_sd; /* the reading's spread (SD of tput), >= 0; 0 = exact */
    double t_s;     /* the window's end, on the caller's clock */
    int prior;      /* 1: a point observed before the event (kept by pfi_live_forget) */
} pfi_live_reading;

/* Takes readings (any order, any jobs). A reading with t_s after the last
 * proposal's now_s counts towards that proposal's measured total. Unknown
 * ids and bad values: PFI_EINVAL naming the reading; the readings before it
 * are kept. */
int pfi_live_observe(pfi_live *l, const pfi_live_reading *r, size_t n, pfi_error *err);

typedef struct pfi_live_share {
    uint64_t id;
    double power_w;  /* proposed power, W, per job of the entry, in [floor, Pmax] */
    double cap_w;    /* per-GPU cap expected to give it, interpolated from readings that
                        carried one (proportional to power beyond them); NaN if none did */
    double tput_est; /* estimated tokens/s at power_w (at a power read: the readings' mean) */
    int probing;     /* 1 during the epoch's exploring proposals and, with exact readings,
                        the probes around the kept one that follow them */
} pfi_live_share;

/* Proposes the next allocation of budget_w (>= the floors' sum, else
 * PFI_EINFEASIBLE) at time now_s (not before the last proposal's): one
 * share per job into out[0..n), n >= pfi_live_jobs(l) (else PFI_ERANGE),
 * in the order of pfi_live_job_id. The shares' powers times counts sum to
 * at most budget_w. */
int pfi_live_propose(pfi_live *l, double budget_w, double now_s, pfi_live_share *out, size_t n,
                     pfi_error *err);

/* The id of the k-th job (k < pfi_live_jobs(l)), the order of proposals. */
uint64_t pfi_live_job_id(const pfi_live *l, size_t k);

/* The event is over: drops every reading not flagged prior and starts an
 * epoch; jobs stay. */
void pfi_live_forget(pfi_live *l);

/* Nested budgets (issue 28): the domains (pfi/alloc.h's tree, copied;
 * names not kept) every later proposal's allocations run under, and where
 * each job's power lands, by id (a job listed in no span is in the root);
 * nd 0 clears. A domain whose jobs' floors exceed its limit is relaxed to
 * them (pfi_alloc_problem_relax_tree). The oracle and the equal share of
 * every round hold the tree; a probe around a kept proposal may not, so a
 * caller that must hold it fits the proposal (pfi_alloc_problem_fit_tree).
 * PFI_EINVAL as pfi_alloc_tree_check; spans are checked when applied. */
typedef struct pfi_live_span {
    uint64_t id;
    size_t domain;
    double share;
} pfi_live_span;
int pfi_live_set_tree(pfi_live *l, const pfi_alloc_domain *d, size_t nd, const pfi_live_span *s,
                      size_t ns, pfi_error *err);

#endif
