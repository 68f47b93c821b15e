/* Power allocation: given jobs' power-throughput curves and a cluster power
 * budget, choose each job's power (and the cap that gives it) so that the
 * cluster fits under the budget. Paper Sec. 6 and Eq. 2.
 *
 * A job's curve is its sweep: points (P_i, T_i) measured at per-GPU caps
 * c_i. Throughput at a power between two points is the linear interpolation
 * of the neighbouring points, and so is the cap that gives that power. A job
 * cannot go below its lowest point's power, nor above its highest (Pmax; Tmax
 * is the throughput there). An optional SLA floor (a minimum fraction of Tmax)
 * raises the lowest power a job may be given.
 *
 * Policies (pfi_alloc_policy):
 *   equal      shed proportional to Pmax;
 *   pfi        shed proportional to Pmax * PFI / Tmax (Eq. 2);
 *   moe-ft     equal, with a double share for MoE fine-tuning jobs;
 *   dram-copy  shed proportional to the raw DRAM copy product;
 *   oracle     the exact maximum of total throughput over the jobs' upper
 *              concave envelopes (a point on an envelope between two caps is
 *              reached by alternating between them; the output says so).
 * The proportional policies hold a job that would pass its floor at the floor
 * and share the rest among the others in proportion to their weights, until
 * the budget is met; when every job with a positive weight is at its floor the
 * remainder goes to zero-weight jobs in proportion to Pmax. When every job is
 * at its floor and the budget is still exceeded the budget is infeasible
 * (PFI_EINFEASIBLE).
 *
 * A job may stand for `count` identical jobs (a simulated workload draws
 * the same group several times): they are given the same power, and budgets,
 * totals and the oracle count each of them. Every policy treats identical
 * jobs alike (the oracle shares the watts left at its threshold slope among
 * all segments of that slope in proportion to their widths), so an entry
 * with count c gives exactly what c copies of it would, at a c-th of the cost.
 *
 * Ownership: a pfi_alloc_problem copies what it needs from the jobs passed
 * to _create (the caller's arrays may be freed afterwards) and owns scratch
 * space, so one problem must not be run from two threads at once. Destroy is
 * NULL-safe. Nothing here does I/O.
 */
#ifndef PFI_ALLOC_H
#define PFI_ALLOC_H

#include <stddef.h>

#include "pfi/error.h"

typedef enum {
    PFI_POLICY_EQUAL,
    PFI_POLICY_PFI,
    PFI_POLICY_MOE_FT,
    PFI_POLICY_DRAM_COPY,
    PFI_POLICY_ORACLE,
    PFI_POLICY_COUNT
} pfi_alloc_policy;

/* "equal", "pfi", "moe-ft", "dram-copy", "oracle". */
const char *pfi_alloc_policy_name(pfi_alloc_policy p);
/* PFI_OK and *out, or PFI_ENOTFOUND for an unknown name. */
int pfi_alloc_policy_parse(const char *name, pfi_alloc_policy *out);

/* Sane magnitudes, so that the budget's absolute slack (1e-9 W) and the
 * relative ones mean something: a power (W) in [1e-3, 1e12], a throughput in
 * [0, 1e18] tokens/s, a cap in [0, 1e12] W, |PFI| <= 1e6, |DRAM copy| <= 1e12,
 * a count <= 1e9. */
#define PFI_ALLOC_MIN_W 1e-3
#define PFI_ALLOC_MAX_W 1e12
#define PFI_ALLOC_MAX_TPUT 1e18
#define PFI_ALLOC_MAX_COUNT 1e9

typedef struct pfi_alloc_job {
    const char *name;  /* label used in errors; not copied, may be NULL */
    const double *cap; /* n per-GPU caps, W; NULL when unknown (caps reported as 0) */
    const double *P;   /* n aggregate powers, W, > 0, finite */
    const double *T;   /* n throughputs, tokens/s, >= 0, finite */
    size_t n;          /* points, >= 2, any order */
    double pfi;        /* PFI for the pfi policy; NaN when unknown */
    double dram_copy;  /* DRAM copy product for dram-copy; NaN when unknown */
    int moe_ft;        /* 1 for a MoE fine-tuning job (moe-ft policy) */
    double sla_frac;   /* minimum throughput as a fraction of Tmax, [0, 1]; 0 = none */
    size_t count;      /* identical jobs this entry stands for, <= 1e9; 0 means 1 */
} pfi_alloc_job;

typedef struct pfi_alloc_problem pfi_alloc_problem;

/* Validates and copies the jobs, sorts each curve by power (of points with
 * equal power the higher throughput is kept), computes floors and envelopes.
 * Errors (PFI_EINVAL with the job named in err): fewer than two points, a
 * NaN or a value outside the magnitudes above, an SLA fraction outside
 * [0, 1], a zero Tmax. */
int pfi_alloc_problem_create(const pfi_alloc_job *jobs, size_t n, pfi_alloc_problem **out,
                             pfi_error *err);
void pfi_alloc_problem_destroy(pfi_alloc_problem *p);

/* Rebuilds p from new jobs, reusing its memory: a controller that re-plans
 * every few seconds keeps one problem and pays no page faults (fresh memory
 * costs about 1 ms per MB on a small VM, more than the computation). Same
 * errors as _create; after an error p holds no jobs (runs fail) but stays
 * valid to reset or destroy. */
int pfi_alloc_problem_reset(pfi_alloc_problem *p, const pfi_alloc_job *jobs, size_t n,
                            pfi_error *err);

/* The same as _reset(p, jobs, n, err) when only the jobs listed in
 * changed[0..k) differ from those p was built from: only those are rebuilt
 * (a closed loop that re-estimates a few curves per round pays for those
 * alone), also when their point counts changed (the other jobs' points
 * move, they are not rebuilt). Falls back to a full reset when n differs
 * from p's or a changed job's name differs from what it replaces. Same
 * errors. */
int pfi_alloc_problem_update(pfi_alloc_problem *p, const pfi_alloc_job *jobs, size_t n,
                             const size_t *changed, size_t k, pfi_error *err);

size_t pfi_alloc_problem_jobs(const pfi_alloc_problem *p); /* entries (0 after an error) */
/* Sums over jobs, each entry counted count times. */
double pfi_alloc_problem_pmax_total(const pfi_alloc_problem *p);  /* sum of Pmax, W */
double pfi_alloc_problem_floor_total(const pfi_alloc_problem *p); /* sum of floors, W */
/* One entry's Pmax, Tmax and floor (max of its lowest power and its SLA
 * power), per job, and how many jobs it stands for. */
size_t pfi_alloc_problem_job_count(const pfi_alloc_problem *p, size_t i);
void pfi_alloc_problem_job_range(const pfi_alloc_problem *p, size_t i, double *pmax, double *tmax,
                                 double *floor_w);

/* Throughput of job i at power_w on its interpolated curve (clamped to the
 * job's power range), and the per-GPU cap that gives that power. */
double pfi_alloc_problem_tput_at(const pfi_alloc_problem *p, size_t i, double power_w);
double pfi_alloc_problem_cap_at(const pfi_alloc_problem *p, size_t i, double power_w);

typedef struct pfi_alloc_out {
    double power_w; /* the job's power, W (time average when alternating) */
    double cap_w;   /* the per-GPU cap giving power_w on the interpolated curve;
                       when alternating, the time-weighted mean of the two caps */
    double tput;    /* throughput, tokens/s (oracle: on the envelope) */
    int at_floor;   /* held at its floor (lowest power or SLA) */
    int alternates; /* oracle only: alternate between the two caps below */
    double alt_low_cap_w, alt_high_cap_w; /* per-GPU caps, W */
    double alt_high_share;                /* share of time at alt_high_cap_w, (0, 1) */
} pfi_alloc_out;

/* Totals count every job an entry stands for. */
typedef struct pfi_alloc_result {
    double budget_w;      /* the budget allocated under, W */
    double total_power_w; /* sum of the jobs' power, W (<= budget + 1e-6 relative) */
    double total_tput;    /* sum of the jobs' throughput, tokens/s */
    size_t n_at_floor;    /* jobs held at their floor */
    size_t n_alternating; /* oracle: jobs alternating between two caps */
} pfi_alloc_result;

/* The budget for a reduction fraction R in [0, 1): (1 - R) * sum of Pmax. */
int pfi_alloc_budget_for_reduction(const pfi_alloc_problem *p, double reduction, double *budget_w,
                                   pfi_error *err);

/* Allocates budget_w (>= 0, finite) with a policy; out has one entry per job
 * entry, the power of each job it stands for (may be NULL when only the
 * totals are wanted). A budget of at least the
 * sum of Pmax leaves every job at Pmax. PFI_EINFEASIBLE when the floors
 * alone exceed the budget; PFI_EINVAL when the policy needs a PFI or DRAM
 * copy product a job lacks (job named in err). */
int pfi_alloc_run(pfi_alloc_problem *p, pfi_alloc_policy policy, double budget_w,
                  pfi_alloc_out *out, pfi_alloc_result *res, pfi_error *err);

/* The shares of the proportional policies, exposed for callers that bring
 * their own weights: sheds sum(Pmax) - budget_w in proportion to w[i] >= 0
 * (finite) with the floor rule above, writing each job's power to power_w. */
int pfi_alloc_proportional(pfi_alloc_problem *p, const double *w, double budget_w, double *power_w,
                           pfi_error *err);

/* The oracle's powers alone (no per-job output): power_w[i] (per job of
 * entry i) and the total envelope throughput. */
int pfi_alloc_oracle(pfi_alloc_problem *p, double budget_w, double *power_w, double *total_tput,
                     pfi_error *err);

/* Nested budgets (issue 28). A tree of domains (a site, its feeds, PDUs,
 * racks), each with a limit that holds on the power of everything under it;
 * each job's power lands in domains in fixed shares (a job with GPUs in two
 * racks puts each rack's share of its GPUs there and takes one cap on all).
 * With a tree set, pfi_alloc_run keeps every domain's jobs' power plus its
 * fixed_w (and its subtree's) under its limit, as well as the whole under
 * budget_w: the root's limit and budget_w both hold, the tighter binds
 * (budget_w, as without a tree, holds on the jobs' power alone; a limit on
 * the jobs' and the fixed power). The
 * oracle stays the exact optimum over the envelopes under the nested limits
 * (for jobs in one domain each, greedy by marginal throughput per watt is
 * optimal on a laminar family; with a job spread over domains it is not,
 * and a linear program (GLPK) finds the optimum); the proportional policies shed within each
 * domain over its limit by their weights. PFI_EINFEASIBLE names the first
 * domain whose floors and fixed power exceed its limit.
 *
 * A tree is kept until pfi_alloc_problem_set_tree is called again (n_domains
 * 0 clears it) and is cleared by _reset and _update when the job count
 * changes. Domains are in pre-order (a parent before its children). */
#define PFI_ALLOC_NO_PARENT ((size_t)-1)

typedef struct pfi_alloc_domain {
    const char *name; /* for errors; not copied, may be NULL */
    size_t parent;    /* PFI_ALLOC_NO_PARENT for the root (domain 0 only); < own index */
    double limit_w;   /* >= 0; INFINITY for none */
    double fixed_w;   /* power in it (not its subtree) no job can move, W, >= 0 */
} pfi_alloc_domain;

typedef struct pfi_alloc_span {
    size_t job;    /* job entry */
    size_t domain; /* the domain its share lands in (any domain, usually a leaf) */
    double share;  /* (0, 1]; a job's shares sum to 1 (within 1e-9) */
} pfi_alloc_span;

/* Sets (or with nd 0 clears) the tree. A job with no span is in the root.
 * PFI_EINVAL (naming the domain or job) for a parent out of order, a
 * negative or NaN limit or fixed power, a span out of range, shares that do
 * not sum to 1. */
int pfi_alloc_problem_set_tree(pfi_alloc_problem *p, const pfi_alloc_domain *d, size_t nd,
                               const pfi_alloc_span *s, size_t ns, pfi_error *err);
size_t pfi_alloc_problem_domains(const pfi_alloc_problem *p);
/* The checks of _set_tree on the domains alone (for a caller that keeps a
 * tree before it has jobs). */
int pfi_alloc_tree_check(const pfi_alloc_domain *d, size_t nd, pfi_error *err);
/* Raises the limit of every domain whose jobs' floors and fixed power
 * exceed it to exactly those (capping cannot bring it lower: its jobs go to
 * their floors) and returns the largest excess, W (0 when every domain is
 * feasible, and without a tree). */
double pfi_alloc_problem_relax_tree(pfi_alloc_problem *p);
/* Brings powers from elsewhere (a learning loop's proposal) under the tree
 * and budget_w: in every domain over its limit the watts above the floors
 * of its jobs shrink by one factor (a job below its floor is raised to it);
 * then each domain's power is available as after a run. PFI_EINFEASIBLE as
 * pfi_alloc_run's. Without a tree only the budget is applied. */
int pfi_alloc_problem_fit_tree(pfi_alloc_problem *p, double budget_w, double *power_w,
                               pfi_error *err);
/* After a successful run: domain d's power, its subtree's jobs plus fixed
 * power, W (each job counted count times). */
double pfi_alloc_problem_domain_power(const pfi_alloc_problem *p, size_t d);

#endif
