/* The spread of a learn reading (README "The learn policy in the
 * controller"): pfid gives, per node, the SD of one throughput report at the
 * cap in force (GET /v1/jobs' tokens_sd, pfi_job_throughput_sd_tokens_per_
 * second); the controller sums a job's tokens/s over its nodes and, for its
 * learned points, smooths them period over period. These turn the one into
 * the SD of the other, on variances, reports taken as independent. NaN is
 * "unknown" throughout and stays so; ctl_spread_sd makes it 0 (exact) at the
 * end, what learn was given before pfid said a spread. Pure; no state. */
#ifndef PFI_CTL_SPREAD_H
#define PFI_CTL_SPREAD_H

/* The variance of a sum: var plus sd^2 (one more node's report). NaN when
 * either is unknown (NaN, or sd < 0). */
double ctl_spread_add(double var, double sd);
/* The variance of an exponential mean m' = m + a (x - m) of independent
 * terms: (1 - a)^2 var_m + a^2 var_x. NaN when either is unknown. Over
 * many terms of one variance it tends to a / (2 - a) of it (a = 0.3:
 * 0.176, an SD of 0.42 of one report's); after the first term, which is
 * the mean, it is all of it. */
double ctl_spread_ewma(double var_m, double var_x, double a);
/* The SD learn is given: sqrt(var), 0 when unknown. */
double ctl_spread_sd(double var);

#endif
