/* pfi control's service: the loop that holds the site under its targets.
 * See the README section "pfi control, the cluster controller".
 *
 * Every period: merge the targets (HTTP API, schedule file, OpenADR VEN)
 * into the limit in force; read every agent; count what cannot be moved
 * (dead or uncappable agents at their GPUs' maximum, idle GPUs at their
 * measured power); plan one cap per job across all its GPUs with the policy;
 * trim on measured power; push the caps with an expiry no later than the
 * target's end plus a margin; release them when no target is in force (after
 * ramping up). Every decision goes to the store, /metrics and /v1/status.
 */
#ifndef PFI_CONTROLLER_H
#define PFI_CONTROLLER_H

#include <signal.h>
#include <stddef.h>

#include "pfi/error.h"
#include "pfi/plan.h"
#include "pfi/sla_file.h"

typedef struct pfi_ctl_opts {
    const char *listen; /* "127.0.0.1:9478" */
    const char *db;     /* the store, required */
    const char *token;  /* bearer token of our API's writes, required */
    char **agents;      /* agent base URLs */
    size_t n_agents;
    const char *agent_token;      /* pfid's token for its cap calls */
    double period_s;              /* 5 */
    double agent_timeout_s;       /* 2 */
    pfi_plan_policy policy;       /* pfi */
    double other_load_w;          /* the non-GPU load, W (stated constant) */
    const char *prometheus_url;   /* for site_meter */
    const char *site_meter;       /* a query for the site's metered power, W, or NULL */
    int cluster_from_prometheus;  /* read jobs, GPUs and power from prometheus_url */
    const char *prometheus_match; /* its label matcher for pfid's series (job="pfid") */
    double margin_w;              /* kept below the limit, W */
    double ramp_w_per_s;          /* default ramp when a target has none; 0 = at once */
    double cap_margin_s;          /* caps expire this long after the target's end (60) */
    double cap_max_s;             /* and at most this far ahead, renewed (3600) */
    const char *schedule;         /* a schedule file, or NULL */
    const pfi_sla *sla;           /* SLA floors per job (--jobs-file) */
    size_t n_sla;
    const char *vtn_url; /* OpenADR VTN, or NULL */
    const char *vtn_program, *vtn_client_id, *vtn_client_secret;
    double vtn_poll_s;         /* 30 */
    unsigned vtn_max_failures; /* /healthz fails after this many failed polls in a row (0: 3) */
    double cut_lead_ramp_s;    /* a known step down is cut a period plus this early (s) */
    int http_threads;          /* 2 */
    size_t learn_rounds;       /* learn: exploring proposals per epoch; 0 = its default (8) */
    double confidence;         /* of every lower bound it states, (0, 1); 0 = 0.9 */
    const char *owner;         /* the id sent with every cap call; NULL: the store's (made once) */
    const char *topology;      /* the power tree (pfi/topology.h), or NULL: the site alone */
    const char *etcd;          /* active/standby: etcd endpoints "URL[,URL...]", NULL none */
    const char *ha_name;       /* the site's name under /pfi/ (required with etcd) */
    double ha_ttl_s;           /* the leader's lease; 0: 3 periods (at least 2 s) */
} pfi_ctl_opts;

/* Runs until *stop becomes non-zero (a signal handler sets it). On stop the
 * caps are left in place: they expire on their own, and a restarted
 * controller resumes from its store. PFI_OK on a clean stop; an error when
 * it cannot start (store, address, targets). */
int pfi_ctl_run(const pfi_ctl_opts *o, volatile sig_atomic_t *stop, pfi_error *err);

#endif
