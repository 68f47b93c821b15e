/* The calibration of the controller's promises (issue 29, item 2): a sim
 * fleet whose jobs' true curves are drawn from a curve family
 * (families.h) is planned period after period through several events by
 * the plan layer (include/control/pfi/plan.h) as the controller plans it:
 * each job's estimate is its group's predicted PFI with the predictor's
 * residual SD, the points it is read at are kept (an exponential mean per
 * cap, as ctl_learned.c keeps them) from one event to the next, and a job
 * that leaves the fleet leaves its points to its class. Per event: the
 * share of periods whose realised throughput (the true curves at the caps
 * pushed) is at or above the plan's lower bound, and |expected - realised|
 * / realised. Shared by bench/bench_calibration.c and
 * tests/unit/test_plan_calibration.c. Test code: aborts on no memory. */
#ifndef PFI_TEST_CALIB_H
#define PFI_TEST_CALIB_H

#include <stddef.h>

#include "families.h"
#include "pfi/plan.h"

typedef enum {
    CALIB_NO_CLASS,   /* no job has a class */
    CALIB_CLASS,      /* the jobs of one group share a class */
    CALIB_MISLABELLED /* two groups' jobs share each class */
} calib_classes;

typedef struct calib_opts {
    fam_kind family;
    unsigned long seed;
    size_t groups; /* groups drawn; each runs jobs_per_group jobs */
    size_t jobs_per_group;
    size_t events, periods; /* periods per event */
    double noise_rel;       /* the readings' relative SD */
    double churn;           /* share of the jobs replaced by new ones (same group) after an event */
    calib_classes classes;
    pfi_plan_policy policy;
    double confidence;
} calib_opts;

/* groups 8, jobs_per_group 3, events 4, periods 12, noise 1%, churn 0.25,
 * classes none, pfi policy, confidence 0.9. */
calib_opts calib_defaults(void);

typedef struct calib_event {
    double budget_frac;       /* the event's budget over the fleet's uncapped power */
    size_t periods, covered;  /* periods; those with realised >= the lower bound */
    double err_mean, err_max; /* |expected - realised| / realised */
    double width_mean;        /* (expected - lower bound) / expected */
    double realised;          /* total throughput realised over the event, tokens/s x periods */
    size_t over;              /* periods whose true power was over the budget (0 expected) */
    double first_expected, first_lo, first_realised; /* the event's first period, kept share */
} calib_event;

/* Runs o->events events into ev[0..events). PFI_OK or the plan's error. */
int calib_run(const calib_opts *o, calib_event *ev, pfi_error *err);

/* Group g's true power and throughput at per-GPU cap c, linear between its
 * sweep's caps (held at the ends): what a simulated job draws and keeps. */
void calib_truth(const pfi_sim_group *g, double c, double *P, double *T);

#endif
