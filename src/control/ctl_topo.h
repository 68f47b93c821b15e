/* The power tree in the controller (issue 28; private to src/control/):
 * which agent feeds which leaf, and every period each domain's power (its
 * GPUs, dead agents at their maximum, what it cannot move), its limit (its
 * rating and its own targets, less the margin and its trim) and the plan's
 * domains (pfi_plan_set_tree). Without --topology the site is one domain,
 * the root, and nothing changes.
 *
 * A domain's power is its subtree's: GPUs as measured (an agent that cannot
 * be moved at its GPUs' maximum) plus the non-GPU load of every domain in
 * it (its file's other_load_w or other_load_query; the root's own is the
 * site's load, --other-load-w or --site-meter, less its descendants'). */
#ifndef PFI_CTL_TOPO_H
#define PFI_CTL_TOPO_H

#include <stddef.h>

#include "pfi/plan.h"
#include "pfi/target.h"
#include "pfi/topology.h"

#include "ctl_trim.h"

/* One domain's period. Powers in W; "sub" is its subtree's. */
typedef struct ctl_dom {
    double own_other_w, sub_other_w; /* non-GPU load */
    double own_fixed_w;              /* GPU power no job moves, in its own leaf */
    double sub_gpu_w;                /* GPUs measured, dead agents at their maximum */
    double sub_demand_w;             /* every job uncapped: jobs' Pmax share + fixed + other */
    size_t sub_agents, sub_dead;     /* agents in it, those down */
    double other_query_w;            /* the last good other_load_query answer, NaN none */
    /* its own targets (domain == its name; the root's are the site's) */
    int active;
    pfi_target win;   /* the winner when active */
    double target_w;  /* the winner's limit on the domain's power, NaN none */
    double tbudget_w; /* the ramped target budget on the domain's power, NaN none */
    double last_ramp; /* the ramp of the last target in force */
    double limit_w;   /* what it may draw: min(rating, target) - margin; INF none */
    double plan_w;    /* limit_w less the trim: the plan's domain limit */
    double planned_w; /* the plan's power in it (jobs and fixed); NaN no plan */
    ctl_trim trim;
    double prev_limit_w; /* last period's limit_w */
    int binding;         /* every job uncapped would exceed limit_w */
    int over_periods;    /* periods in a row measured over min(rating, target) */
} ctl_dom;

typedef struct ctl_topo {
    pfi_topo *t; /* the file's tree; NULL: the site alone, one domain "site" */
    size_t n;    /* domains */
    ctl_dom *d;  /* per domain */
    pfi_plan_domain *pd;
    /* per agent (indices of pfi_agents) */
    size_t n_ag;
    size_t *leaf;       /* the leaf it feeds; the root (0) while unplaced */
    int *placed;        /* its leaf is known (agents: from the file; nodes: GET /v1/node) */
    double *next_ask;   /* nodes: when to ask GET /v1/node again */
    double *ag_fixed_w; /* this period: its GPU power no job moves */
    double *ag_gpu_w;   /* its GPUs measured (dead: their maximum) */
    int *ag_down;       /* it did not answer this period */
    int *ceil_err;      /* its last ceiling call failed (logged once) */
    double *ceil_w;     /* the node ceiling last sent, NaN none */
    double *ceil_at;    /* when */
    /* per job this period: its domains and shares, flat (pfi_plan_job's) */
    size_t *jdom;
    double *jshare;
    size_t cap_j;
    size_t *joff; /* job i's spans are [joff[i], joff[i + 1]) */
    size_t cap_joff;
    /* the site's target on the root's power (its GPU budget plus the
     * non-GPU load), INFINITY none: set by the period for the ceilings and
     * the status (the plan has it as its budget) */
    double site_w;
    int binding;    /* any domain other than by the site's targets */
    int has_limits; /* some domain has a rating or may get a target */
} ctl_topo;

/* Domain d's name, parent (PFI_TOPO_NONE for the root) and rating (INFINITY
 * none), whatever the tree. */
const char *ctl_topo_name(const ctl_topo *T, size_t d);
size_t ctl_topo_parent(const ctl_topo *T, size_t d);
double ctl_topo_rating(const ctl_topo *T, size_t d);

/* Loads path (NULL: a one-domain site named "site") for agents urls[0..n):
 * with leaves of agents, every URL must be in a leaf (PFI_EINVAL naming
 * it); *extra (malloc'd, caller frees) gets the leaves' URLs not among
 * urls, which the controller adds. Notes from the parser are logged. */
int ctl_topo_init(ctl_topo *T, const char *path, const char *const *urls, size_t n, char ***extra,
                  size_t *n_extra, pfi_error *err);
/* Sizes the per-agent arrays for n agents (agents kind: places them). */
int ctl_topo_agents(ctl_topo *T, const char *const *urls, size_t n, pfi_error *err);
void ctl_topo_free(ctl_topo *T);
/* The domain a target names ("" or the root's name: the root), or
 * PFI_TOPO_NONE. */
size_t ctl_topo_domain_of(const ctl_topo *T, const char *name);

/* The period's arithmetic (pure): jobs' spans from their GPUs' agents,
 * each domain's power, demand, limit and plan limit, and the tree for the
 * plan (T->pd). Inputs: per job i its GPUs' agents (gpu_agent[i][k] for k
 * < n_gpus[i]) and its Pmax (pmax[i]); the non-GPU loads (ctl_topo_other);
 * margin_w (taken off every limit); fresh and pushed as for the trim. The
 * targets per domain must be evaluated first (ctl_topo_targets). */
int ctl_topo_build(ctl_topo *T, size_t n_jobs, const size_t *const *gpu_agent, const size_t *n_gpus,
                   const double *pmax, double margin_w, int fresh, int pushed);
/* Evaluates each non-root domain's targets at now (those naming it, by
 * the rule of pfi/target.h, lead as pfi_target_eval_ahead) and ramps them
 * (default ramp when a target has none); call after ctl_topo_other (a site
 * limit on a domain is less its non-GPU load). */
void ctl_topo_targets(ctl_topo *T, const pfi_target *ts, size_t n, double now, double dt,
                      double lead_s, double margin_w, double ramp_w_per_s);
/* The non-GPU load per domain this period (the file's constants, its
 * queries through prometheus_url, the root's from the site's other_w). */
void ctl_topo_other(ctl_topo *T, const char *prometheus_url, double other_w, int log_now);
/* The targets that name domain d (the root: "" or its name) into out
 * (room for n); how many. */
size_t ctl_topo_filter(const ctl_topo *T, size_t d, const pfi_target *ts, size_t n,
                       pfi_target *out);
/* The domain an OpenADR event targets: the first domain whose
 * openadr.resource is among the event's targets, else one whose
 * openadr.program is the event's programID or program (the VEN's --program
 * as given), else the root (0). */
struct pfi_oadr_event;
size_t ctl_topo_oadr_domain(const ctl_topo *T, const struct pfi_oadr_event *e, const char *program);
/* After the plan ran: each domain's planned power and its over-limit
 * count; planned NULL when there was no plan. */
void ctl_topo_after(ctl_topo *T, const double *planned);

#endif
