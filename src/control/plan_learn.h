/* The learn policy inside the plan (private to src/control/): the live
 * closed loop of include/core/pfi/learn_live.h kept across periods. The
 * plan hands it each period's jobs (their ranges from the plan's curves,
 * their readings, their prior points) and asks it for the jobs' powers.
 *
 * Jobs are keyed by their id string: each id gets a key of its own the
 * first time it is seen (no hash collisions), kept while the job is
 * present; a job absent from a period's list leaves the loop. A job's
 * range and prior are set again only when they change (every set starts
 * an epoch of the loop). Its prior points (pfid's observed curve) and the
 * controller's learned points (its store: how a restart resumes) enter
 * once, when the job joins the loop; a period's reading at the end of
 * each round. A job's range counts as changed when it moves by 1% (a
 * measured point's running mean moves the plan's curve a little).
 *
 * The budget: an epoch starts whenever the budget moves, and the
 * controller's budget moves a little every period (trim, idle GPUs,
 * ramps). So the loop is given a budget level L <= the budget that stays
 * put while the budget is within [L, L + 2%]; outside it L becomes the
 * budget less 1% (never below the floors). */
#ifndef PFI_PLAN_LEARN_H
#define PFI_PLAN_LEARN_H

#include <stddef.h>

#include "pfi/alloc.h"
#include "pfi/learn_live.h"
#include "pfi/plan.h"

typedef struct plan_learn plan_learn;

/* hold: periods per round of the loop (0 means 1): a proposal is kept that
 * many periods, and only the readings of a round's last period are fed
 * (the caps of its first periods are still moving: the controller raises
 * caps one period late). */
int plan_learn_create(const pfi_live_opts *o, size_t hold, plan_learn **out, pfi_error *err);
void plan_learn_destroy(plan_learn *l);

/* Brings the loop's jobs in line with jobs[0..n) (their ranges from prob,
 * built from the same jobs) and takes their readings at time now_s when a
 * round ends. */
int plan_learn_sync(plan_learn *l, const pfi_plan_job *jobs, size_t n,
                    const pfi_alloc_problem *prob, double now_s, pfi_error *err);

/* The jobs' powers for budget_w at now_s into out[0..n) (power_w, tput,
 * at_floor), in the order of the last sync. floor_total_w <= budget_w. A
 * new proposal at the end of a round, or when the job set, a job's range
 * or the budget level moved; the round's proposal again otherwise. */
int plan_learn_propose(plan_learn *l, double budget_w, double floor_total_w, double now_s,
                       pfi_alloc_out *out, size_t n, pfi_error *err);

/* The plan's tree for the loop (spans by the last sync's job order), so
 * that its rounds allocate under it; nd 0 clears. */
int plan_learn_tree(plan_learn *l, const pfi_alloc_domain *d, size_t nd, const pfi_alloc_span *s,
                    size_t ns, pfi_error *err);

/* The budget level the last proposal was made under (NaN before one). */
double plan_learn_level(const plan_learn *l);

#endif
