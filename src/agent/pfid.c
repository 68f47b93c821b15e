/* pfid: the node agent. Parses options (pfid_opts.c), opens the backend
 * and the store, recovers caps left by a previous run, starts the sampler
 * and the HTTP server, and on SIGTERM/SIGINT stops them and restores every
 * cap. */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "pfid_opts.h"
#include "pfi/token_file.h"

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
        x->st.node_w = x->node_w = x->node_prior_w = NAN;
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

/* Starts pfid on a: 0, or 1 when it cannot (logged, every cap restored and
 * everything released). */
static int start(agent *a)
{
    pfi_error err;
    pfi_error_clear(&err);
    char msg[1024];
    /* Nothing changes on a GPU or in the store before every check that can
     * refuse the start has passed: the address, the store's lock, the
     * backend, the GPUs' locks, the store's schema, the model. Only then are
     * the recorded caps acted on. */
    int rc = agent_http_bind(a, &err);
    if (rc == PFI_OK) rc = agent_lock_store(a, &err);
    if (rc == PFI_OK) rc = open_backend(a, &err);
    if (rc == PFI_OK) rc = agent_lock_gpus(a, &err);
    if (rc == PFI_OK) rc = agent_state_dir_open(a, &err);
    if (rc == PFI_OK) rc = pfi_store_open(a->o.db, &a->store, &err);
    if (rc == PFI_OK) pfi_store_on_bad_row(a->store, on_bad_row, NULL);
    if (rc == PFI_OK && a->o.model) rc = agent_model_load(a, a->o.model, &err);
    if (rc != PFI_OK) {
        pfi_error_format(&err, msg, sizeof msg);
        pfi_log("%s; nothing was changed", msg);
        agent_http_stop(a);
        cleanup(a);
        return 1;
    }
    if ((rc = agent_caps_recover(a, &err)) != PFI_OK) {
        pfi_error_format(&err, msg, sizeof msg);
        pfi_log("%s", msg);
        agent_http_stop(a);
        agent_caps_restore_all(a);
        cleanup(a);
        return 1;
    }
    agent_node_open(a);
    agent_node_tick(a); /* a recovered node ceiling holds from the first sample */
    agent_caps_check_persistence(a);
    reload_jobs(a);
    agent_tick(a); /* the first sample is there before the first request */
    agent_node_tick(a);
    if (agent_k8s_start(a, &err) != PFI_OK) {
        pfi_error_format(&err, msg, sizeof msg);
        pfi_log("%s", msg);
        agent_node_release_all(a);
        agent_caps_restore_all(a);
        cleanup(a);
        return 1;
    }
    if (agent_sampler_start(a) != 0) {
        pfi_log("cannot start the sampler thread");
        agent_k8s_stop(a);
        agent_node_release_all(a);
        agent_caps_restore_all(a);
        cleanup(a);
        return 1;
    }
    if (agent_http_start(a, &err) != PFI_OK) {
        pfi_error_format(&err, msg, sizeof msg);
        pfi_log("%s", msg);
        agent_k8s_stop(a);
        agent_sampler_stop(a);
        agent_node_release_all(a);
        agent_caps_restore_all(a);
        cleanup(a);
        return 1;
    }
    return 0;
}

/* Waits for a signal of sigs that stops pfid, reloading the model on each
 * SIGHUP; returns the signal. */
static int wait_for_stop(agent *a, sigset_t *sigs)
{
    pfi_error err;
    pfi_error_clear(&err);
    char msg[1024];
    int sig = 0;
    for (;;) {
        if (sigwait(sigs, &sig) != 0) continue;
        if (sig != SIGHUP) break;
        /* SIGHUP reloads the model, as daemons reread their configuration;
         * every other signal of the set stops pfid. */
        if (!a->o.model) {
            pfi_log("SIGHUP: no --model to reload");
        } else if (agent_model_load(a, a->o.model, &err) != PFI_OK) {
            pfi_error_format(&err, msg, sizeof msg);
            pfi_log("SIGHUP: %s; the model in use is kept", msg);
        }
    }
    return sig;
}

int main(int argc, char **argv)
{
    static agent a;
    pfi_log_init("pfid");
    a.listen_fd = -1;
    a.store_lock_fd = -1;
    int exit_rc = pfid_opts_parse(argc, argv, &a.o);
    if (exit_rc >= 0) return exit_rc;

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

    if (start(&a) != 0) return 1;
    int sig = wait_for_stop(&a, &sigs);
    char name[32];
    pfi_log("%s: shutting down", signal_name(sig, name, sizeof name));
    /* HTTP first (no new caps), then the pod poller and the sampler, then
     * restore. */
    agent_http_stop(&a);
    agent_k8s_stop(&a);
    agent_sampler_stop(&a);
    agent_node_release_all(&a);
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
