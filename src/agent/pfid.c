/* pfid: the node agent. Parses options, opens the backend and the store,
 * recovers caps left by a previous run, starts the sampler and the HTTP
 * server, and on SIGTERM/SIGINT stops them and restores every cap. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "pfi/token_file.h"

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

/* The signals that would end pfid by default and that a process can catch:
 * each one stops it with every cap restored, except SIGHUP (model reload).
 * The synchronous faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP,
 * SIGSYS) mean pfid's own state is broken: they are left to kill it, and the
 * store's cap records make the next start restore the cards. SIGPIPE (a
 * client that went away) and SIGXFSZ (see main) are ignored. */
static void termination_signals(sigset_t *set)
{
    static const int sigs[] = {
        SIGHUP,    SIGINT,    SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2,
        SIGALRM,   SIGVTALRM, SIGPROF, SIGXCPU, SIGIO,
#ifdef SIGPWR
        SIGPWR,
#endif
#ifdef SIGSTKFLT
        SIGSTKFLT,
#endif
    };
    sigemptyset(set);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(set, sigs[i]);
    for (int r = SIGRTMIN; r <= SIGRTMAX; r++)
        sigaddset(set, r);
}

static const char *signal_name(int sig, char *buf, size_t len)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {{SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},       {SIGQUIT, "SIGQUIT"},
                 {SIGTERM, "SIGTERM"}, {SIGUSR1, "SIGUSR1"},     {SIGUSR2, "SIGUSR2"},
                 {SIGALRM, "SIGALRM"}, {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"},
                 {SIGXCPU, "SIGXCPU"}, {SIGIO, "SIGIO"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig) return names[i].name;
    if (sig >= SIGRTMIN && sig <= SIGRTMAX)
        snprintf(buf, len, "SIGRTMIN+%d", sig - SIGRTMIN);
    else
        snprintf(buf, len, "signal %d", sig);
    return buf;
}

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

static int open_backend(agent *a, pfi_error *err)
{
    char opts[1200] = "";
    if (strcmp(a->o.backend, "sim") == 0) {
        int n = snprintf(opts, sizeof opts, "gpus=%u", a->o.sim_gpus);
        if (a->o.sim_limit_w > 0)
            n += snprintf(opts + n, sizeof opts - (size_t)n, ",limit=%.3f", a->o.sim_limit_w);
        if (a->o.sim_jobs) {
            if (strchr(a->o.sim_jobs, ','))
                return pfi_error_set(err, PFI_EINVAL, a->o.sim_jobs, 0,
                                     "a jobs file path cannot contain a comma");
            snprintf(opts + n, sizeof opts - (size_t)n, ",jobs=%s", a->o.sim_jobs);
        }
    } else if (strcmp(a->o.backend, "dcgm") == 0) {
        snprintf(opts, sizeof opts, "%s",
                 a->o.dcgm_url ? a->o.dcgm_url : "http://127.0.0.1:9400/metrics");
    }
    int rc = pfi_backend_open(a->o.backend, opts, &a->be, err);
    if (rc != PFI_OK) return rc;
    if ((rc = pfi_backend_count(a->be, &a->n_gpus)) != PFI_OK)
        return pfi_error_set(err, rc, NULL, 0, "%s: cannot count GPUs: %s", a->o.backend,
                             pfi_backend_last_error(a->be));
    a->gpus = calloc(a->n_gpus ? a->n_gpus : 1, sizeof *a->gpus);
    if (!a->gpus) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (unsigned g = 0; g < a->n_gpus; g++) {
        agent_gpu *x = &a->gpus[g];
        x->job = -1;
        x->lock_fd = -1;
        x->sock_fd = -1;
        x->st.prior_w = NAN;
        if (pfi_backend_info(a->be, g, &x->info) != PFI_OK)
            snprintf(x->info.name, sizeof x->info.name, "unknown");
        if (pfi_backend_limits(a->be, g, &x->limits) == PFI_OK) x->have_limits = 1;
    }
    a->boost_mhz = PFI_AGENT_BOOST_MHZ;
    pfi_log("backend %s: %u GPU(s)%s", a->o.backend, a->n_gpus,
            a->n_gpus ? "" : " (nothing to sample)");
    return PFI_OK;
}

/* Jobs registered before a restart come back from the store. */
/* The ids of running jobs whose stored row could not be read (store.h's
 * bad-row hook, called under the store's lock: collected, ended after). */
typedef struct bad_jobs {
    char (*ids)[PFI_STORE_JOB_ID_MAX + 1];
    size_t n, cap;
} bad_jobs;

static void on_bad_row(const char *table, const char *id, const char *why, void *ctx)
{
    pfi_log("store: a %s row%s%s is unusable (%s); skipped", table, id ? " for " : "", id ? id : "",
            why);
    bad_jobs *b = ctx;
    if (!b || !id || strcmp(table, "jobs") != 0) return;
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 8;
        void *p = realloc(b->ids, cap * sizeof *b->ids);
        if (!p) return;
        b->ids = p;
        b->cap = cap;
    }
    snprintf(b->ids[b->n++], sizeof b->ids[0], "%s", id);
}

/* Jobs registered before a restart come back from the store; one whose row
 * is unusable is ended, so that its id and GPUs can be registered again. */
static void reload_jobs(agent *a)
{
    pfi_store_job *jobs;
    size_t n;
    pfi_error err;
    bad_jobs bad = {0};
    pfi_store_on_bad_row(a->store, on_bad_row, &bad);
    int rc = pfi_store_jobs_running(a->store, &jobs, &n, &err);
    pfi_store_on_bad_row(a->store, on_bad_row, NULL);
    for (size_t i = 0; i < bad.n; i++) {
        pfi_store_job_end(a->store, bad.ids[i], pfi_clock_wall(), NULL);
        pfi_log("job %s: marked ended (its stored row is unusable); it may register again",
                bad.ids[i]);
    }
    free(bad.ids);
    if (rc != PFI_OK) {
        pfi_log("cannot reload jobs: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (agent_job_register(a, &jobs[i], 0, &err) != PFI_OK) {
            pfi_log("job %s from the store not restored (%s); marking it ended", jobs[i].id,
                    err.msg);
            pfi_store_job_end(a->store, jobs[i].id, pfi_clock_wall(), NULL);
        } else {
            pfi_log("job %s restored from the store", jobs[i].id);
        }
    }
    free(jobs);
    /* Phases and aggregates come back from the stored history of the window. */
    if (n > 0) agent_jobs_replay(a, pfi_clock_wall() - a->o.window_s);
}

static void cleanup(agent *a)
{
    agent_jobs_free(a);
    pfi_store_close(a->store);
    agent_unlock_all(a); /* after the store is closed: no write after the lock goes */
    pfi_backend_close(a->be);
    free(a->gpus);
    free(a->model);
    pthread_mutex_destroy(&a->mu);
    pthread_mutex_destroy(&a->cap_mu);
    pthread_cond_destroy(&a->wake);
}

int main(int argc, char **argv)
{
    static agent a;
    pfi_log_init("pfid");
    a.o.backend = "nvml";
    a.o.sim_gpus = 8;
    a.o.listen = "127.0.0.1:9477";
    a.o.interval_s = 5;
    a.o.retention_s = 604800;
    a.o.window_s = 1800;
    a.o.phase_hold_s = 10;
    a.o.http_threads = 4;
    a.o.lock_dir = "/run/pfid";
    a.o.http_max_conns = 4096;
    a.o.http_conns_per_ip = 64;
    a.o.http_timeout_s = 10;
    a.listen_fd = -1;
    a.store_lock_fd = -1;

    enum {
        O_SIMG = 256,
        O_SIMJ,
        O_SIML,
        O_DCGM,
        O_LISTEN,
        O_DB,
        O_INT,
        O_TOK,
        O_RO,
        O_MODEL,
        O_RET,
        O_WIN,
        O_THR,
        O_HOLD,
        O_SHARE,
        O_LOCKDIR,
        O_MAXC,
        O_PERIP,
        O_HTO,
        O_STATE,
        O_KSOCK,
        O_KDCGM,
        O_KINT,
        O_KURL,
        O_KTOK,
        O_KCA,
        O_KLAB
    };
    static const struct option lo[] = {{"backend", required_argument, 0, 'b'},
                                       {"sim-gpus", required_argument, 0, O_SIMG},
                                       {"sim-jobs", required_argument, 0, O_SIMJ},
                                       {"sim-limit", required_argument, 0, O_SIML},
                                       {"dcgm-url", required_argument, 0, O_DCGM},
                                       {"listen", required_argument, 0, O_LISTEN},
                                       {"db", required_argument, 0, O_DB},
                                       {"interval", required_argument, 0, O_INT},
                                       {"token-file", required_argument, 0, O_TOK},
                                       {"read-only", no_argument, 0, O_RO},
                                       {"model", required_argument, 0, O_MODEL},
                                       {"retention", required_argument, 0, O_RET},
                                       {"window", required_argument, 0, O_WIN},
                                       {"http-threads", required_argument, 0, O_THR},
                                       {"phase-hold", required_argument, 0, O_HOLD},
                                       {"share-gpus", no_argument, 0, O_SHARE},
                                       {"lock-dir", required_argument, 0, O_LOCKDIR},
                                       {"http-max-conns", required_argument, 0, O_MAXC},
                                       {"http-conns-per-ip", required_argument, 0, O_PERIP},
                                       {"http-timeout", required_argument, 0, O_HTO},
                                       {"state-dir", required_argument, 0, O_STATE},
                                       {"kubelet-socket", required_argument, 0, O_KSOCK},
                                       {"k8s-from-dcgm", no_argument, 0, O_KDCGM},
                                       {"kubelet-interval", required_argument, 0, O_KINT},
                                       {"pods-url", required_argument, 0, O_KURL},
                                       {"pods-token-file", required_argument, 0, O_KTOK},
                                       {"pods-ca-file", required_argument, 0, O_KCA},
                                       {"k8s-group-labels", required_argument, 0, O_KLAB},
                                       {"help", no_argument, 0, 'h'},
                                       {"version", no_argument, 0, 'V'},
                                       {0, 0, 0, 0}};
    int c;
    double v;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "b:hV", lo, NULL)) != -1) {
        switch (c) {
        case 'b':
            a.o.backend = optarg;
            break;
        case O_SIMG:
            if (parse_seconds(optarg, 1, 1024, &v) || v != floor(v))
                return usage_error("--sim-gpus must be an integer 1-1024, not '%s'", optarg);
            a.o.sim_gpus = (unsigned)v;
            break;
        case O_SIMJ:
            a.o.sim_jobs = optarg;
            break;
        case O_SIML:
            if (parse_seconds(optarg, 1, 100000, &v))
                return usage_error("--sim-limit must be a power in W, not '%s'", optarg);
            a.o.sim_limit_w = v;
            break;
        case O_DCGM:
            a.o.dcgm_url = optarg;
            break;
        case O_LISTEN:
            a.o.listen = optarg;
            break;
        case O_DB:
            a.o.db = optarg;
            break;
        case O_INT:
            if (parse_seconds(optarg, 0.05, 3600, &a.o.interval_s))
                return usage_error("--interval must be 0.05-3600 seconds, not '%s'", optarg);
            break;
        case O_TOK:
            a.o.token_file = optarg;
            break;
        case O_RO:
            a.o.read_only = 1;
            break;
        case O_MODEL:
            a.o.model = optarg;
            break;
        case O_RET:
            if (parse_seconds(optarg, 60, 10 * 365 * 86400.0, &a.o.retention_s))
                return usage_error("--retention must be 60 s to 10 years, not '%s'", optarg);
            break;
        case O_WIN:
            if (parse_seconds(optarg, 10, 7 * 86400.0, &a.o.window_s))
                return usage_error("--window must be 10 s to a week, not '%s'", optarg);
            break;
        case O_SHARE:
            a.o.share_gpus = 1;
            break;
        case O_LOCKDIR:
            a.o.lock_dir = optarg;
            break;
        case O_STATE:
            if (!*optarg) return usage_error("%s", "--state-dir needs a directory");
            a.o.state_dir = optarg;
            break;
        case O_MAXC:
            if (parse_seconds(optarg, 16, 65536, &v) || v != floor(v))
                return usage_error("--http-max-conns must be an integer 16-65536, not '%s'",
                                   optarg);
            a.o.http_max_conns = (unsigned)v;
            break;
        case O_PERIP:
            if (parse_seconds(optarg, 1, 65536, &v) || v != floor(v))
                return usage_error("--http-conns-per-ip must be an integer 1-65536, not '%s'",
                                   optarg);
            a.o.http_conns_per_ip = (unsigned)v;
            break;
        case O_HTO:
            if (parse_seconds(optarg, 1, 3600, &v) || v != floor(v))
                return usage_error("--http-timeout must be 1-3600 whole seconds, not '%s'", optarg);
            a.o.http_timeout_s = (unsigned)v;
            break;
        case O_HOLD:
            if (parse_seconds(optarg, 0, 3600, &a.o.phase_hold_s))
                return usage_error("--phase-hold must be 0-3600 seconds, not '%s'", optarg);
            break;
        case O_THR:
            if (parse_seconds(optarg, 1, 64, &v) || v != floor(v))
                return usage_error("--http-threads must be an integer 1-64, not '%s'", optarg);
            a.o.http_threads = (unsigned)v;
            break;
        case O_KSOCK:
            a.o.k8s.socket = optarg;
            break;
        case O_KDCGM:
            a.o.k8s.from_dcgm = 1;
            break;
        case O_KINT:
            if (parse_seconds(optarg, 0.05, 3600, &a.o.k8s.interval_s))
                return usage_error("--kubelet-interval must be 0.05-3600 seconds, not '%s'",
                                   optarg);
            break;
        case O_KURL:
            a.o.k8s.pods_url = optarg;
            break;
        case O_KTOK:
            a.o.k8s.pods_token = optarg;
            break;
        case O_KCA:
            a.o.k8s.pods_ca = optarg;
            break;
        case O_KLAB:
            a.o.k8s.group_labels = optarg;
            break;
        case 'h':
            fputs(help, stdout);
            fputs(agent_k8s_help, stdout);
            fputs(help_api, stdout);
            return 0;
        case 'V':
            printf("pfid %s\n", PFI_VERSION);
            return 0;
        default:
            return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return usage_error("unexpected argument '%s'", argv[optind]);
    if (!pfi_backend_find(a.o.backend))
        return usage_error("--backend must be nvml, dcgm or sim, not '%s'", a.o.backend);
    if (!a.o.db) return usage_error("%s", "--db PATH is required");
    if (!a.o.token_file) return usage_error("%s", "--token-file FILE is required");
    if ((a.o.sim_jobs || a.o.sim_gpus != 8 || a.o.sim_limit_w > 0) &&
        strcmp(a.o.backend, "sim") != 0)
        return usage_error("%s", "--sim-gpus, --sim-jobs and --sim-limit need --backend sim");
    if (a.o.dcgm_url && strcmp(a.o.backend, "dcgm") != 0)
        return usage_error("%s", "--dcgm-url needs --backend dcgm");
    const char *k8s_bad = agent_k8s_check(&a.o);
    if (k8s_bad) return usage_error("%s", k8s_bad);
    /* A device that outlives pfid (nvml) keeps its state beside it; a
     * read-only pfid changes nothing, the state files included. */
    if (!a.o.state_dir && strcmp(a.o.backend, "nvml") == 0) a.o.state_dir = "/var/lib/pfid";
    if (a.o.read_only) a.o.state_dir = NULL;

    pfi_error err;
    pfi_error_clear(&err);
    char msg[1024];
    if (pfi_token_file_read(a.o.token_file, 16, 0, a.token, sizeof a.token, &err) != PFI_OK) {
        pfi_error_format(&err, msg, sizeof msg);
        pfi_log("%s", msg);
        return 1;
    }

    /* Every thread started from here on inherits the blocked signals; the
     * main thread takes them with sigwait, so shutdown runs in one place. */
    sigset_t sigs;
    termination_signals(&sigs);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* A store file over RLIMIT_FSIZE is a store failure (EFBIG, on /healthz),
     * not a reason to stop holding caps. */
    signal(SIGXFSZ, SIG_IGN);

    pthread_mutex_init(&a.mu, NULL);
    pthread_mutex_init(&a.cap_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&a.wake, &ca);
    pthread_condattr_destroy(&ca);
    a.started_at = pfi_clock_wall();

    /* Nothing changes on a GPU or in the store before every check that can
     * refuse the start has passed: the address, the store's lock, the
     * backend, the GPUs' locks, the store's schema, the model. Only then are
     * the recorded caps acted on. */
    int rc = agent_http_bind(&a, &err);
    if (rc == PFI_OK) rc = agent_lock_store(&a, &err);
    if (rc == PFI_OK) rc = open_backend(&a, &err);
    if (rc == PFI_OK) rc = agent_lock_gpus(&a, &err);
    if (rc == PFI_OK) rc = agent_state_dir_open(&a, &err);
    if (rc == PFI_OK) rc = pfi_store_open(a.o.db, &a.store, &err);
    if (rc == PFI_OK) pfi_store_on_bad_row(a.store, on_bad_row, NULL);
    if (rc == PFI_OK && a.o.model) rc = agent_model_load(&a, a.o.model, &err);
    if (rc != PFI_OK) {
        pfi_error_format(&err, msg, sizeof msg);
        pfi_log("%s; nothing was changed", msg);
        agent_http_stop(&a);
        cleanup(&a);
        return 1;
    }
    if ((rc = agent_caps_recover(&a, &err)) != PFI_OK) {
        pfi_error_format(&err, msg, sizeof msg);
        pfi_log("%s", msg);
        agent_http_stop(&a);
        agent_caps_restore_all(&a);
        cleanup(&a);
        return 1;
    }
    agent_caps_check_persistence(&a);
    reload_jobs(&a);
    agent_tick(&a); /* the first sample is there before the first request */
    if (agent_k8s_start(&a, &err) != PFI_OK) {
        pfi_error_format(&err, msg, sizeof msg);
        pfi_log("%s", msg);
        agent_caps_restore_all(&a);
        cleanup(&a);
        return 1;
    }
    if (agent_sampler_start(&a) != 0) {
        pfi_log("cannot start the sampler thread");
        agent_k8s_stop(&a);
        agent_caps_restore_all(&a);
        cleanup(&a);
        return 1;
    }
    if (agent_http_start(&a, &err) != PFI_OK) {
        pfi_error_format(&err, msg, sizeof msg);
        pfi_log("%s", msg);
        agent_k8s_stop(&a);
        agent_sampler_stop(&a);
        agent_caps_restore_all(&a);
        cleanup(&a);
        return 1;
    }

    int sig = 0;
    for (;;) {
        if (sigwait(&sigs, &sig) != 0) continue;
        if (sig != SIGHUP) break;
        /* SIGHUP reloads the model, as daemons reread their configuration;
         * every other signal of the set stops pfid. */
        if (!a.o.model) {
            pfi_log("SIGHUP: no --model to reload");
        } else if (agent_model_load(&a, a.o.model, &err) != PFI_OK) {
            pfi_error_format(&err, msg, sizeof msg);
            pfi_log("SIGHUP: %s; the model in use is kept", msg);
        }
    }
    char name[32];
    pfi_log("%s: shutting down", signal_name(sig, name, sizeof name));
    /* HTTP first (no new caps), then the pod poller and the sampler, then
     * restore. */
    agent_http_stop(&a);
    agent_k8s_stop(&a);
    agent_sampler_stop(&a);
    unsigned failed = agent_caps_restore_all(&a);
    cleanup(&a);
    if (failed) {
        pfi_log("stopped with %u cap(s) not restored (logged above; their records stay in "
                "the store and the next start restores them)",
                failed);
        return 3;
    }
    pfi_log("stopped");
    return 0;
}
