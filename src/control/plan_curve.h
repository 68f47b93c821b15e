/* A job's curve for the plan, with its band (private to src/control/):
 * the prior (plan_prior.h) at PFI_PLAN_PRIOR_POINTS caps, pinned by the
 * measured points (the job's own, then its class's where it has none),
 * every point with its SD in two parts: shared (the prior's and the
 * class's, alike for every job) and independent (a reading's). */
#ifndef PFI_PLAN_CURVE_H
#define PFI_PLAN_CURVE_H

#include <stddef.h>

#include "pfi/plan.h"
#include "plan_prior.h"

#define PLAN_NEAR_X 0.15 /* P / Pmax this far from a measured point: the prior's full SD */
/* A measured point's own spread beyond its readings': a period's tokens/s
 * wander about the steady state's mean (data loading, checkpoints), 0.5%. */
#define PLAN_WANDER 0.005
/* Between two measured points: the SD as a share of the gap to the lower one. */
#define PLAN_GAP_SD 0.78
#define PLAN_CLASS_SD 0.02 /* the spread between jobs of a class assumed from one job */

typedef struct plan_pt {
    double cap, P, T;
    double sdc, sdi; /* SD of T: shared, independent */
    double d;  /* depth: P / Pmax under the job's lowest own measured point (plan_cliff.h), >= 0 */
    double dm; /* the same under its lowest measured point, its class's too */
} plan_pt;

/* A point of a job's class: cap, P / Pmax, T / Tmax and its SD. */
typedef struct plan_cls_pt {
    double cap, x, y, sd;
} plan_cls_pt;

/* Job j's points into out (room PFI_PLAN_PRIOR_POINTS + j->n_obs + n_cls),
 * sorted by power; returns how many. pr: its prior; cls: its class's points
 * (n_cls of them, none where the job has its own within 5 W). *xr: its
 * lowest own measured point's P / Pmax (1, the uncapped point, for a job
 * with none), each point's depth under it in out[].d (class points too),
 * and under the lowest point measured, its class's too, in out[].dm. */
size_t plan_curve_build(const pfi_plan_job *j, const plan_prior *pr, const plan_cls_pt *cls,
                        size_t n_cls, plan_pt *out, double *xr);
/* The SD parts at power P on pts[0..n) (sorted), linear between points. */
void plan_curve_band(const plan_pt *pts, size_t n, double P, double *sdc, double *sdi);

/* Job j's T / Tmax at x = P / Pmax (pmax: its uncapped power) as its own
 * points at least gap above x say: the lowest of them (the uncapped point
 * when none) scaled by the prior pr's shape, as plan_curve_build prices a
 * point under its lowest point. NaN when its Tmax is unknown. */
double plan_curve_from_above(const pfi_plan_job *j, const plan_prior *pr, double pmax, double x,
                             double gap);

/* Throughput at power P on pts[0..n) (sorted): linear between points,
 * held at the ends. */
double plan_curve_tput_at(const plan_pt *pts, size_t n, double P);

/* Power and throughput at per-GPU cap on pts[0..n) (sorted by power, so by
 * cap): linear between points, held at the ends. */
void plan_curve_at_cap(const plan_pt *pts, size_t n, double cap, double *P, double *T);

/* The class points of every job of jobs[0..n) (classes pooled, each job's
 * own points excluded from its comparison): cls[i] and n_cls[i] into one
 * array the caller frees (*buf), split[i] 1 where job i was split out.
 * PFI_ENOMEM on no memory. */
int plan_class_pool(const pfi_plan_job *jobs, size_t n, plan_cls_pt **buf, plan_cls_pt **cls,
                    size_t *n_cls, int *split);

#endif
