/* What a job's curve does below the deepest point it was measured at,
 * learned from the fleet (issue 29; private to src/control/). The plan
 * prices a cap under a job's lowest own measured point on the prior's
 * shape scaled to that point (or on its class's points), and the dataset's
 * curves have no dead zones: a job that duty-cycles below a clock floor
 * keeps a third of what that shape says, and no reading above the floor
 * shows it. So every learn reading taken where the plan had not measured
 * the job (its P / Pmax at least PLAN_CLIFF_MIN_D under the lowest own
 * point, the uncapped one for a job with none) is a sample of how far the
 * curve overshot there: s = 1 - y / base at x = P / Pmax, y = read / Tmax,
 * base the job's curve there as its own points at least PLAN_CLIFF_MIN_D
 * above x say (plan_curve_from_above: the lowest of them, the uncapped one
 * when none, scaled by its prior's shape; what the plan prices a job at
 * under its lowest point). The sample keeps what was read and whose it is,
 * and its s is taken again every period the job is in the set: a reading
 * taken on the prior alone, which is too pessimistic above a dead zone,
 * counts once a later point above it has pinned the job's curve (a job
 * that left keeps its last s). Dead zones sit at a share of Pmax, so the
 * samples are pooled by x: on the prior's grid, their kernel-weighted
 * (PLAN_CLIFF_H) mean and upper quantile at the plan's confidence. At every point of a job's curve
 * under its own lowest point, by depth d, with ramp min(1, d / PLAN_CLIFF_D) (continuous at the
 * measured point): the lower bound is never above curve x (1 - quantile x
 * ramp), and the expected throughput is lowered by mean x ramp, its depth
 * counted under the class's points too (where its replicas were read, the
 * expected value is theirs; the bound allows for a class that hides a
 * cliff: a mislabelled class on dead zones covered 0.78 without it). A mean
 * under zero (the prior too pessimistic there) lowers nothing: the
 * allowance is for cliffs, the prior's own band stays. A job's own samples
 * are its curve where the plan has no point: they set its expected value
 * there, over its class's points (plan_cliff_apply; learn reads jobs under
 * their points in every probe, the plan keeps a point only where a cap
 * held a period). Samples are kept
 * for the plan's life (the last PLAN_CLIFF_KEEP); a restarted controller
 * learns them again from its first readings. */
#ifndef PFI_PLAN_CLIFF_H
#define PFI_PLAN_CLIFF_H

#include <stddef.h>
#include <stdint.h>

#include "plan_curve.h"
#include "plan_prior.h"

#define PLAN_CLIFF_D 0.05     /* the depth (P / Pmax) at which the full allowance holds */
#define PLAN_CLIFF_MIN_D 0.02 /* shallower readings are noise, not a sample */
#define PLAN_CLIFF_MIN_N 4    /* samples (effective, by weight) before any allowance */
#define PLAN_CLIFF_KEEP 512   /* the latest samples kept */
#define PLAN_CLIFF_H 0.05     /* the samples' kernel width in P / Pmax */
#define PLAN_CLIFF_PTS 8      /* a job's own samples made points of its curve, at most */
#define PLAN_CLIFF_SEP 0.01   /* P / Pmax: none nearer than this to a point it has */

typedef struct plan_cliff {
    /* a ring: P / Pmax, read / Tmax, the reading's relative SD, the
     * shortfall, the job (its id's hash, 0: none) */
    double x[PLAN_CLIFF_KEEP], y[PLAN_CLIFF_KEEP], rsd[PLAN_CLIFF_KEEP], s[PLAN_CLIFF_KEEP];
    uint64_t job[PLAN_CLIFF_KEEP];
    size_t n, next;
    /* their fit (plan_cliff_fit) on the prior's grid: 0 until PLAN_CLIFF_MIN_N near */
    double mean[PLAN_PRIOR_GRID], hi[PLAN_PRIOR_GRID];
    int any;
} plan_cliff;

/* The allowance's ramp at depth d. */
double plan_cliff_ramp(double d);
/* Job job's reading of y = read / Tmax (relative SD rsd) at x = P / Pmax,
 * depth d under its lowest own point, where its base (above) is base_y
 * (samples only at d >= MIN_D). */
void plan_cliff_add(plan_cliff *c, uint64_t job, double x, double d, double y, double rsd,
                    double base_y);
/* Sample k's shortfall taken again against its job's base now (NaN: kept). */
void plan_cliff_rebase(plan_cliff *c, size_t k, double base_y);
/* mean and hi (the quantile at confidence) on the grid from the samples;
 * none at a grid point with fewer than PLAN_CLIFF_MIN_N samples' worth of
 * weight near it. */
void plan_cliff_fit(plan_cliff *c, double confidence);
/* Points pts[0..n) of job j (prior pr, uncapped power pmax, its lowest own
 * point at xr; its samples' indices own[0..n_own)) lowered and widened as
 * above; z: the plan's one-sided normal quantile. Where the job itself was
 * read under xr, the expected value is its readings' (their shortfall
 * against its curve now, linear between them); above the highest of them
 * the fleet's, never under that reading; under the lowest, its shortfall
 * or the fleet's mean ramped in from it, the deeper. The bound stays the
 * fleet's, never above the expected value less z x the reading part, which
 * is at least the readings' own spread (their SD and PLAN_WANDER).
 * Up to room - n of its samples (at most PLAN_CLIFF_PTS, spread over them
 * by x) become points of the curve between two of pts, each PLAN_CLIFF_SEP
 * away at least, on the line between them in cap and power (the caps the
 * plan gives for a power stay as they were), the throughput there read:
 * the grid of caps is coarser than a dead zone's edge. Returns the count
 * of points, still sorted by power. */
size_t plan_cliff_apply(const plan_cliff *c, double z, const pfi_plan_job *j, const plan_prior *pr,
                        double pmax, double xr, const size_t *own, size_t n_own, plan_pt *pts,
                        size_t n, size_t room);

#endif
