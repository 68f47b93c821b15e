/* The controller's targets: one timeline of power limits from three sources
 * (its HTTP API, a schedule file, OpenADR 3 events), and the rule that picks
 * the limit in force at an instant. Pure code: no clock, no I/O.
 *
 * The rule at time t (pfi_target_eval):
 *   1. a target is in force when start <= t < end;
 *   2. a default target (an OpenADR IMPORT_CAPACITY_SUBSCRIPTION) counts only
 *      when no other target is in force;
 *   3. among OpenADR targets in force, only those of the highest priority
 *      (the lowest priority number; none is the lowest priority) count;
 *   4. of what is left, the lowest GPU budget wins: a site limit less the
 *      non-GPU load and the margin, or a GPU limit as it is. Ties go to the
 *      earlier start, then the smaller id, so the answer is deterministic.
 * Ramp: a budget moves down at once and up at most ramp_w_per_s
 * (pfi_target_ramp), so that load comes back no faster than the grid allows.
 */
#ifndef PFI_TARGET_H
#define PFI_TARGET_H

#include <limits.h>
#include <stddef.h>

#include "pfi/error.h"

#define PFI_TARGET_ID_MAX 128
#define PFI_TARGET_NO_PRIORITY LONG_MAX /* OpenADR's null priority: the lowest */
#define PFI_TARGET_MAX_W 1e12
#define PFI_TARGET_DOMAIN_MAX 64 /* a topology domain's name (pfi/topology.h) */

typedef enum { PFI_TARGET_API, PFI_TARGET_SCHEDULE, PFI_TARGET_OPENADR } pfi_target_source;
typedef enum { PFI_TARGET_SITE, PFI_TARGET_GPU } pfi_target_kind;

typedef struct pfi_target {
    char id[PFI_TARGET_ID_MAX + 1]; /* unique within its source */
    pfi_target_source source;
    pfi_target_kind kind;
    double limit_w;      /* site import or total GPU power, W, [0, 1e12] */
    double start, end;   /* Unix s, start < end; end may be INFINITY */
    double ramp_w_per_s; /* how fast the budget may rise after it; 0 = at once */
    long priority;       /* OpenADR priority (>= 0); PFI_TARGET_NO_PRIORITY elsewhere */
    int is_default;      /* in force only where no other target is (rule 2) */
    /* The topology domain it limits (issue 28): "" for the site (the
     * root); the rule above applies among the targets of one domain. */
    char domain[PFI_TARGET_DOMAIN_MAX + 1];
} pfi_target;

/* What is in force at one instant. */
typedef struct pfi_target_now {
    int active;          /* 0: nothing in force (caps are released) */
    size_t winner;       /* index of the winning target when active */
    double gpu_budget_w; /* the winner's GPU budget, W (>= 0) */
    double site_limit_w; /* the winner's site limit, W; NaN for a GPU target */
    double until;        /* the winner's end, Unix s */
    double ramp_w_per_s; /* the winner's ramp */
} pfi_target_now;

const char *pfi_target_source_name(pfi_target_source s); /* "api", "schedule", "openadr" */

/* PFI_EINVAL (err names the target) for an empty or too long id, a limit
 * outside [0, 1e12] or NaN, start not finite, end <= start, a negative or
 * NaN ramp, a negative priority. */
int pfi_target_validate(const pfi_target *t, pfi_error *err);

/* The GPU budget of one target: site limits less other_w and margin_w (not
 * below 0), GPU limits as they are. */
double pfi_target_gpu_budget(const pfi_target *t, double other_w, double margin_w);

/* Applies the rule above to ts[0..n) at time t; out->active = 0 when nothing
 * is in force. */
void pfi_target_eval(const pfi_target *ts, size_t n, double t, double other_w, double margin_w,
                     pfi_target_now *out);

/* What the plan uses at t: the lowest GPU budget in force anywhere in
 * [t, t + lead_s] (the rule above at t and at every start or end in the
 * window), so that a step down already known is cut lead_s ahead of its
 * start (a period plus the time caps take to bite) while a raise still
 * waits for the lower target's end. lead_s <= 0 is pfi_target_eval. */
void pfi_target_eval_ahead(const pfi_target *ts, size_t n, double t, double lead_s, double other_w,
                           double margin_w, pfi_target_now *out);

/* The earliest start or end of any target strictly after t (INFINITY when
 * none): when the answer of pfi_target_eval may next change. */
double pfi_target_next_change(const pfi_target *ts, size_t n, double t);

/* The budget after dt_s seconds at the ramp: want_w when it is lower than
 * prev_w, when prev_w is not finite (no budget before), or when the ramp is
 * 0; else at most prev_w + ramp * dt_s. */
double pfi_target_ramp(double prev_w, double want_w, double dt_s, double ramp_w_per_s);

#endif
