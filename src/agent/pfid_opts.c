/* pfid's command line: one table row per option (its long name, whether
 * it takes an argument, its short letter, what it sets and within which
 * bounds, the words for a value out of them), read by one loop, as redis's
 * config table is; then the checks that take several options together. */
#include "pfid_opts.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *help =
    "Usage: pfid --backend nvml|dcgm|sim --db PATH --token-file FILE [OPTIONS]\n"
    "\n"
    "The node agent: samples the node's GPUs every interval into a SQLite store,\n"
    "keeps a registry of the training jobs on them with their throughput,\n"
    "segments each job's trace into warmup/startup/training, estimates its\n"
    "features and PFI, exports Prometheus metrics, and applies power caps that\n"
    "always expire and are restored to the prior limit (the one in force\n"
    "before pfid's first cap).\n"
    "\n"
    "Options:\n"
    "  --backend B       nvml (default; libnvidia-ml.so.1, or PFI_NVML_LIB),\n"
    "                    dcgm (scrape a dcgm-exporter; read-only) or sim\n"
    "  --sim-gpus N      sim: number of simulated H200s (default 8)\n"
    "  --sim-jobs FILE   sim: jobs file placing modelled jobs on GPUs\n"
    "  --sim-limit W     sim: the GPUs' power limit at start (default: the TDP)\n"
    "  --sim-tokens      sim: report each registered job's modelled tokens/s\n"
    "                    every sample, as its training loop would\n"
    "  --dcgm-url URL    dcgm: the exporter's metrics URL\n"
    "                    (default http://127.0.0.1:9400/metrics)\n"
    "  --listen A:P      HTTP address and port (default 127.0.0.1:9477; [::1]:P\n"
    "                    for IPv6; port 0 picks a free one, logged at start)\n"
    "  --db PATH         SQLite store (created if missing)\n"
    "  --interval S      sampling interval in seconds (default 5)\n"
    "  --token-file F    bearer token for state-changing calls; refused when the\n"
    "                    file is readable or writable by group or others\n"
    "  --read-only       never change a GPU setting: limit calls answer 409 and\n"
    "                    caps recorded by an earlier run are left untouched\n"
    "                    (jobs and throughput reports still work)\n"
    "  --model FILE      PFI predictor (JSON, from `pfi fit --out`) for the\n"
    "                    live estimate\n"
    "  --retention S     keep samples and reports this many seconds (default\n"
    "                    604800, a week)\n"
    "  --window S        rolling window of the per-job aggregates (default 1800)\n"
    "  --phase-hold S    training starts when gpu_util has held >= 50% for S\n"
    "                    seconds (default 10, two of the paper's 5 s samples)\n"
    "  --share-gpus      let several jobs register the same GPU (MPS,\n"
    "                    time-slicing); by default a busy GPU is a 409\n"
    "  --http-threads N  HTTP worker threads (default 4)\n"
    "  --state-dir DIR   per-GPU state files (prior limit, highest epoch, the cap\n"
    "                    held) that survive a lost store (default /var/lib/pfid\n"
    "                    with nvml; other backends keep none unless given)\n"
    "  --node-name NAME  the node's name in GET /v1/node, as a topology file\n"
    "                    lists it (default: the hostname)\n"
    "  --lock-dir DIR    per-GPU lock files a pfi sweep meets (default /run/pfid);\n"
    "                    one pfid per GPU holds whatever the flags\n"
    "  -h, --help        show this help\n"
    "  -V, --version     print the version\n"
    "\n";
static const char *help_api =
    "API (JSON; state-changing calls need \"Authorization: Bearer TOKEN\"):\n"
    "  GET /metrics  GET /v1/gpus  GET /v1/jobs  GET /v1/jobs/ID  GET /v1/jobs/ID/curve\n"
    "  GET /healthz\n"
    "  POST /v1/jobs {\"id\":\"ID\",\"gpus\":[0,1],\"arch\":\"dense\",\"task\":\"pt\"}\n"
    "  POST /v1/jobs/ID/throughput {\"tokens_per_s\":X}   DELETE /v1/jobs/ID\n"
    "  PUT /v1/gpus/N/limit {\"watts\":W,\"expires_s\":S}   DELETE /v1/gpus/N/limit\n"
    "  GET /v1/node   PUT /v1/node/limit {\"watts\":W,\"expires_s\":S}   DELETE /v1/node/limit\n"
    "    headers \"Pfi-Owner: ID\" and \"Pfi-Epoch: E\" (default \"\" and 0): another\n"
    "    owner's live cap, or an epoch below the highest seen, is a 409; a higher\n"
    "    epoch takes over\n"
    "\n"
    "Signals: SIGTERM, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2 and every other\n"
    "catchable terminating signal stop pfid and restore every cap; SIGHUP\n"
    "reloads --model.\n"
    "\n"
    "Exit status: 0 after a clean shutdown, 1 when it cannot start or run\n"
    "(nothing was changed), 2 on bad usage, 3 when a cap could not be\n"
    "restored, or its release recorded, at shutdown (each is logged with its\n"
    "GPU and watts).\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "pfid: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'pfid --help'.\n");
    return 2;
}

static int parse_seconds(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* What an option's row does with its argument. */
typedef enum {
    OPT_STR,     /* the argument, as given */
    OPT_DIR,     /* the argument, not empty */
    OPT_FLAG,    /* no argument: the int is set to 1 */
    OPT_DOUBLE,  /* a number within [lo, hi] */
    OPT_UINT,    /* a whole number within [lo, hi] */
    OPT_HELP,    /* prints --help and exits 0 */
    OPT_VERSION, /* prints the version and exits 0 */
} opt_kind;

typedef struct {
    const char *name; /* the long option */
    int has_arg;
    int letter; /* its short option, 0 none */
    opt_kind kind;
    size_t off; /* the agent_opts field it sets */
    double lo, hi;
    const char *bad; /* the usage error for a bad argument ('%s' is it) */
} pfid_opt;

#define F(field) offsetof(agent_opts, field)

/* The order decides nothing: every row answers its own value, so an
 * abbreviation two rows share is refused whichever comes first. */
static const pfid_opt opts[] = {
    {"backend", required_argument, 'b', OPT_STR, F(backend), 0, 0, NULL},
    {"sim-gpus", required_argument, 0, OPT_UINT, F(sim_gpus), 1, 1024,
     "--sim-gpus must be an integer 1-1024, not '%s'"},
    {"sim-jobs", required_argument, 0, OPT_STR, F(sim_jobs), 0, 0, NULL},
    {"sim-limit", required_argument, 0, OPT_DOUBLE, F(sim_limit_w), 1, 100000,
     "--sim-limit must be a power in W, not '%s'"},
    {"sim-tokens", no_argument, 0, OPT_FLAG, F(sim_tokens), 0, 0, NULL},
    {"dcgm-url", required_argument, 0, OPT_STR, F(dcgm_url), 0, 0, NULL},
    {"listen", required_argument, 0, OPT_STR, F(listen), 0, 0, NULL},
    {"db", required_argument, 0, OPT_STR, F(db), 0, 0, NULL},
    {"interval", required_argument, 0, OPT_DOUBLE, F(interval_s), 0.05, 3600,
     "--interval must be 0.05-3600 seconds, not '%s'"},
    {"token-file", required_argument, 0, OPT_STR, F(token_file), 0, 0, NULL},
    {"read-only", no_argument, 0, OPT_FLAG, F(read_only), 0, 0, NULL},
    {"model", required_argument, 0, OPT_STR, F(model), 0, 0, NULL},
    {"retention", required_argument, 0, OPT_DOUBLE, F(retention_s), 60, 10 * 365 * 86400.0,
     "--retention must be 60 s to 10 years, not '%s'"},
    {"window", required_argument, 0, OPT_DOUBLE, F(window_s), 10, 7 * 86400.0,
     "--window must be 10 s to a week, not '%s'"},
    {"http-threads", required_argument, 0, OPT_UINT, F(http_threads), 1, 64,
     "--http-threads must be an integer 1-64, not '%s'"},
    {"phase-hold", required_argument, 0, OPT_DOUBLE, F(phase_hold_s), 0, 3600,
     "--phase-hold must be 0-3600 seconds, not '%s'"},
    {"share-gpus", no_argument, 0, OPT_FLAG, F(share_gpus), 0, 0, NULL},
    {"lock-dir", required_argument, 0, OPT_STR, F(lock_dir), 0, 0, NULL},
    {"http-max-conns", required_argument, 0, OPT_UINT, F(http_max_conns), 16, 65536,
     "--http-max-conns must be an integer 16-65536, not '%s'"},
    {"http-conns-per-ip", required_argument, 0, OPT_UINT, F(http_conns_per_ip), 1, 65536,
     "--http-conns-per-ip must be an integer 1-65536, not '%s'"},
    {"http-timeout", required_argument, 0, OPT_UINT, F(http_timeout_s), 1, 3600,
     "--http-timeout must be 1-3600 whole seconds, not '%s'"},
    {"state-dir", required_argument, 0, OPT_DIR, F(state_dir), 0, 0,
     "--state-dir needs a directory"},
    {"node-name", required_argument, 0, OPT_DIR, F(node_name), 0, 0, "--node-name needs a name"},
    {"kubelet-socket", required_argument, 0, OPT_STR, F(k8s.socket), 0, 0, NULL},
    {"k8s-from-dcgm", no_argument, 0, OPT_FLAG, F(k8s.from_dcgm), 0, 0, NULL},
    {"kubelet-interval", required_argument, 0, OPT_DOUBLE, F(k8s.interval_s), 0.05, 3600,
     "--kubelet-interval must be 0.05-3600 seconds, not '%s'"},
    {"pods-url", required_argument, 0, OPT_STR, F(k8s.pods_url), 0, 0, NULL},
    {"pods-token-file", required_argument, 0, OPT_STR, F(k8s.pods_token), 0, 0, NULL},
    {"pods-ca-file", required_argument, 0, OPT_STR, F(k8s.pods_ca), 0, 0, NULL},
    {"k8s-group-labels", required_argument, 0, OPT_STR, F(k8s.group_labels), 0, 0, NULL},
    {"help", no_argument, 'h', OPT_HELP, 0, 0, 0, NULL},
    {"version", no_argument, 'V', OPT_VERSION, 0, 0, 0, NULL},
};

#undef F

#define N_OPTS (sizeof opts / sizeof opts[0])

/* The row's setting from arg: -1 when it was taken, else the exit status
 * (0 after --help or --version, 2 after a usage error). */
static int apply(const pfid_opt *p, const char *arg, agent_opts *o)
{
    char *field = (char *)o + p->off;
    double v;
    switch (p->kind) {
    case OPT_STR:
        *(const char **)field = arg;
        return -1;
    case OPT_DIR:
        if (!*arg) return usage_error("%s", p->bad);
        *(const char **)field = arg;
        return -1;
    case OPT_FLAG:
        *(int *)field = 1;
        return -1;
    case OPT_DOUBLE:
        if (parse_seconds(arg, p->lo, p->hi, (double *)field)) return usage_error(p->bad, arg);
        return -1;
    case OPT_UINT:
        if (parse_seconds(arg, p->lo, p->hi, &v) || v != floor(v)) return usage_error(p->bad, arg);
        *(unsigned *)field = (unsigned)v;
        return -1;
    case OPT_HELP:
        fputs(help, stdout);
        fputs(agent_k8s_help, stdout);
        fputs(help_api, stdout);
        return 0;
    case OPT_VERSION:
        printf("pfid %s\n", PFI_VERSION);
        return 0;
    }
    return 2;
}

/* What no single row can check: the operands, the required options, the
 * options that need another; then the defaults that depend on them. */
static int check(int argc, char **argv, agent_opts *o)
{
    if (optind < argc) return usage_error("unexpected argument '%s'", argv[optind]);
    if (!pfi_backend_find(o->backend))
        return usage_error("--backend must be nvml, dcgm or sim, not '%s'", o->backend);
    if (!o->db) return usage_error("%s", "--db PATH is required");
    if (!o->token_file) return usage_error("%s", "--token-file FILE is required");
    if ((o->sim_jobs || o->sim_gpus != 8 || o->sim_limit_w > 0 || o->sim_tokens) &&
        strcmp(o->backend, "sim") != 0)
        return usage_error(
            "%s", "--sim-gpus, --sim-jobs, --sim-limit and --sim-tokens need --backend sim");
    if (o->dcgm_url && strcmp(o->backend, "dcgm") != 0)
        return usage_error("%s", "--dcgm-url needs --backend dcgm");
    const char *k8s_bad = agent_k8s_check(o);
    if (k8s_bad) return usage_error("%s", k8s_bad);
    /* A device that outlives pfid (nvml) keeps its state beside it; a
     * read-only pfid changes nothing, the state files included. */
    if (!o->state_dir && strcmp(o->backend, "nvml") == 0) o->state_dir = "/var/lib/pfid";
    if (o->read_only) o->state_dir = NULL;
    return -1;
}

int pfid_opts_parse(int argc, char **argv, agent_opts *o)
{
    o->backend = "nvml";
    o->sim_gpus = 8;
    o->listen = "127.0.0.1:9477";
    o->interval_s = 5;
    o->retention_s = 604800;
    o->window_s = 1800;
    o->phase_hold_s = 10;
    o->http_threads = 4;
    o->lock_dir = "/run/pfid";
    o->http_max_conns = 4096;
    o->http_conns_per_ip = 64;
    o->http_timeout_s = 10;

    /* getopt_long's table from ours: a row without a letter answers 256 +
     * its index. */
    enum { FIRST = 256 };
    struct option lo[N_OPTS + 1];
    char shorts[2 * N_OPTS + 1];
    size_t ns = 0;
    for (size_t i = 0; i < N_OPTS; i++) {
        lo[i] = (struct option){opts[i].name, opts[i].has_arg, NULL,
                                opts[i].letter ? opts[i].letter : FIRST + (int)i};
        if (opts[i].letter) {
            shorts[ns++] = (char)opts[i].letter;
            if (opts[i].has_arg == required_argument) shorts[ns++] = ':';
        }
    }
    lo[N_OPTS] = (struct option){0, 0, 0, 0};
    shorts[ns] = '\0';

    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        const pfid_opt *p = NULL;
        if (c >= FIRST && c < FIRST + (int)N_OPTS) p = &opts[c - FIRST];
        for (size_t i = 0; !p && c != '?' && c != ':' && i < N_OPTS; i++)
            if (opts[i].letter == c) p = &opts[i];
        if (!p) return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
        int rc = apply(p, optarg, o);
        if (rc >= 0) return rc;
    }
    return check(argc, argv, o);
}
