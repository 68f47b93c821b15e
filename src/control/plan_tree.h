/* The plan's power tree (private to src/control/; include/control/pfi/plan.h,
 * issue 28): the domains of pfi_plan_set_tree, the jobs' spans built from
 * each period's pfi_plan_job.domains, and the tree set on the allocation
 * problem. A domain whose jobs' floors and fixed power already exceed its
 * limit cannot be helped by capping: its limit is raised to them for the
 * allocation (pfi_alloc_problem_relax_tree: every job under it at its floor) and the plan says
 * infeasible with the excess as its shortfall, while every other domain still holds. */
#ifndef PFI_PLAN_TREE_H
#define PFI_PLAN_TREE_H

#include <stddef.h>

#include "pfi/alloc.h"
#include "pfi/plan.h"

typedef struct plan_tree {
    pfi_alloc_domain *d; /* as set (names into names) */
    char *names;
    size_t nd;
    pfi_alloc_span *s;
    size_t ns, cap_s;
    double *dpow; /* nd: each domain's power after the last pfi_plan_run */
    int have_pow;
    double shortfall_w; /* the floors' excess over the limits, W (0: feasible) */
} plan_tree;

int plan_tree_set(plan_tree *t, const pfi_plan_domain *d, size_t n, pfi_error *err);
/* Builds the spans from jobs and sets the tree (limits raised as above) on
 * prob, built from the same jobs. Nothing when no tree is set. */
int plan_tree_apply(plan_tree *t, const pfi_plan_job *jobs, size_t n, pfi_alloc_problem *prob,
                    pfi_error *err);
/* Keeps each domain's power from prob's last run. */
void plan_tree_keep(plan_tree *t, const pfi_alloc_problem *prob);
void plan_tree_free(plan_tree *t);

#endif
