/* pfi sweep: measure a training job's PFI (the paper's protocol, Appendix
 * B.4-B.6): for each cap, set it on the job's GPUs before the command
 * starts, run the command for the duration while sampling the GPUs and
 * reading tokens/s from its output, stop it, wait for its GPU memory to be
 * released and for the cooldown; then write sweeps.csv, telemetry.csv and
 * the PFI with its CI. Every exit path puts the limits in force before the
 * sweep back; a crash is repaired by the next start (sweep_state.h). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pfi/limit.h"
#include "pfi/lockfile.h"
#include "sweep_gpu.h"
#include "sweep_lock.h"
#include "sweep_opts.h"
#include "sweep_report.h"
#include "sweep_run.h"
#include "sweep_state.h"

static volatile sig_atomic_t g_stop;
static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

static int command_found(const char *cmd)
{
    if (strchr(cmd, '/')) return access(cmd, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    char buf[4096];
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, cmd);
        struct stat st;
        if (n && stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

typedef struct {
    const sweep_opts *o;
    size_t idx, todo_left; /* this cap's index; caps still to run after it */
    int tty;
    double last_plain;
} progress_ctx;

static void progress(void *ctx, double t, double power_w, double tok_s)
{
    progress_ctx *p = ctx;
    const sweep_opts *o = p->o;
    double left = (o->duration - t) + (double)p->todo_left * (o->duration + o->cooldown) +
                  (p->todo_left ? o->cooldown : 0);
    char el[32], dur[32], rem[32], pw[32] = "-", tk[32] = "-";
    sweep_fmt_time(t, el, sizeof el);
    sweep_fmt_time(o->duration, dur, sizeof dur);
    sweep_fmt_time(left > 0 ? left : 0, rem, sizeof rem);
    if (isfinite(power_w)) snprintf(pw, sizeof pw, "%.0f W", power_w);
    if (isfinite(tok_s)) snprintf(tk, sizeof tk, "%.0f tok/s", tok_s);
    if (p->tty) {
        fprintf(stderr, "\r\033[Kpfi sweep: cap %.0f W (%zu/%zu) %s/%s, %s left; %s, %s",
                o->caps[p->idx], p->idx + 1, o->n_caps, el, dur, rem, pw, tk);
    } else if (t - p->last_plain >= 30 || p->last_plain < 0) {
        fprintf(stderr, "pfi sweep: cap %.0f W (%zu/%zu) %s/%s, %s left; %s, %s\n", o->caps[p->idx],
                p->idx + 1, o->n_caps, el, dur, rem, pw, tk);
        p->last_plain = t;
    }
}

/* Puts every GPU back to its prior limit; returns the number that failed
 * (each named on stderr). */
static int restore_all(sweep_gpu *g, const sweep_state *st)
{
    int failed = 0;
    for (size_t k = 0; k < st->n_gpus; k++) {
        pfi_error err;
        if (sweep_gpu_restore(g, st->gpus[k], st->prior_w[k], &err) != PFI_OK) {
            char buf[1024];
            pfi_error_format(&err, buf, sizeof buf);
            fprintf(stderr, "pfi sweep: GPU %u: restoring %.0f W FAILED: %s\n", st->gpus[k],
                    st->prior_w[k], buf);
            failed++;
        }
    }
    return failed;
}

/* A state file left active by a crashed sweep: its GPUs get their prior
 * limits back (through the backend or pfid it used) before anything else. */
static int recover(const sweep_opts *o, sweep_state *st)
{
    fprintf(stderr, "pfi sweep: %s: an earlier sweep did not finish; restoring its GPUs\n", o->out);
    sweep_gpu *g = NULL;
    pfi_error err;
    if (sweep_gpu_open(st->backend, st->backend_opts, st->via_pfid[0] ? st->via_pfid : NULL,
                       o->token_file, &g, &err) != PFI_OK)
        return pfi_cli_fail("sweep", &err);
    int failed = restore_all(g, st);
    sweep_gpu_close(g);
    if (failed) {
        fprintf(stderr, "pfi sweep: %d GPU(s) could not be restored; nothing else was done\n",
                failed);
        return PFI_EXIT_DATA;
    }
    for (size_t k = 0; k < st->n_gpus; k++)
        fprintf(stderr, "pfi sweep: GPU %u restored to %.0f W\n", st->gpus[k], st->prior_w[k]);
    st->active = 0;
    if (sweep_state_save(o->out, st, &err) != PFI_OK) return pfi_cli_fail("sweep", &err);
    return PFI_EXIT_OK;
}

/* Checks the GPUs and caps against the devices; fills the prior limits. */
static int validate(const sweep_opts *o, sweep_gpu *g, sweep_state *st, pfi_error *err)
{
    unsigned count;
    int rc = sweep_gpu_count(g, &count, err);
    if (rc != PFI_OK) return rc;
    for (size_t k = 0; k < o->n_gpus; k++) {
        if (o->gpus[k] >= count)
            return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0,
                                 "GPU %u does not exist (%u GPU%s: 0-%u)", o->gpus[k], count,
                                 count == 1 ? "" : "s", count ? count - 1 : 0);
        pfi_gpu_limits lim;
        if ((rc = sweep_gpu_limits(g, o->gpus[k], &lim, err)) != PFI_OK) return rc;
        for (size_t i = 0; i < o->n_caps; i++)
            if (o->caps[i] < lim.min_w - 0.0005 || o->caps[i] > lim.max_w + 0.0005)
                return pfi_error_set(
                    err, PFI_ERANGE, NULL, 0,
                    "cap %g W is outside GPU %u's limit constraints [%.0f, %.0f] W", o->caps[i],
                    o->gpus[k], lim.min_w, lim.max_w);
        st->gpus[k] = o->gpus[k];
        st->prior_w[k] = pfi_limit_in_force_w(&lim);
    }
    st->n_gpus = o->n_gpus;
    if (!command_found(o->argv[0]))
        return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "command '%s' not found", o->argv[0]);
    return PFI_OK;
}

/* Waits (at most the release timeout) until every GPU's frame buffer is back
 * near where it was before the sweep: the paper waits for GPU memory to be
 * released before the next run. */
static void wait_release(const sweep_opts *o, sweep_gpu *g, const double *base_b)
{
    double waited = 0;
    for (;;) {
        int busy = 0;
        for (size_t k = 0; k < o->n_gpus; k++) {
            pfi_gpu_sample s;
            if (sweep_gpu_sample(g, o->gpus[k], &s) == PFI_OK &&
                pfi_gpu_sample_has(&s, PFI_GF_FB_USED) && isfinite(base_b[k]) &&
                s.v[PFI_GF_FB_USED] > base_b[k] + 1024.0 * 1048576)
                busy = 1;
        }
        if (!busy) return;
        if (waited >= o->release_timeout) {
            fprintf(stderr, "pfi sweep: GPU memory still in use after %.0f s; going on\n", waited);
            return;
        }
        if (sweep_sleep(0.5, &g_stop)) return;
        waited += 0.5;
    }
}

static void summarize(const sweep_opts *o, double cap_w, const pfi_trace_run *r, int rc,
                      const pfi_error *rerr, sweep_result *res)
{
    *res = (sweep_result){.cap_w = cap_w, .gpus = (int)o->n_gpus};
    pfi_trace_params p;
    pfi_trace_params_default(&p);
    p.sustain_s = o->hold;
    pfi_trace_summary s;
    pfi_error err;
    if (rc != PFI_OK) {
        pfi_error_format(rerr, res->why, sizeof res->why);
        return;
    }
    if (pfi_trace_run_summarize(r, &p, 0.1, &s, &err) != PFI_OK) {
        pfi_error_format(&err, res->why, sizeof res->why);
        return;
    }
    if (s.tput_samples == 0) {
        snprintf(res->why, sizeof res->why, "no throughput line during training");
        return;
    }
    res->ok = 1;
    memcpy(res->start, s.start, sizeof res->start);
    res->samples = s.samples;
    res->training_samples = s.training_samples;
    res->power_w = s.power_w;
    res->power_sem_w = s.power_sem_w;
    res->tput = s.tput;
    res->tput_sem = s.tput_sem;
    res->telemetry = s.telemetry;
}

static FILE *open_in(const char *dir, const char *fmt, double cap)
{
    char path[4096], name[64];
    snprintf(name, sizeof name, fmt, cap);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return fopen(path, "w");
}

/* Runs every cap still to do. Returns 1 on a fatal error (message printed). */
static int run_caps(const sweep_opts *o, sweep_gpu *g, sweep_state *st, const pfi_tput_matcher *m,
                    sweep_port *port)
{
    double base[SWEEP_MAX_GPUS];
    for (size_t k = 0; k < o->n_gpus; k++) {
        pfi_gpu_sample s;
        base[k] =
            sweep_gpu_sample(g, o->gpus[k], &s) == PFI_OK && pfi_gpu_sample_has(&s, PFI_GF_FB_USED)
                ? s.v[PFI_GF_FB_USED]
                : NAN;
    }
    size_t todo = 0;
    for (size_t i = 0; i < o->n_caps; i++) {
        sweep_result *r = sweep_state_find(st, o->caps[i]);
        todo += !(r && r->ok);
    }
    int any_ok = 0;
    for (size_t i = 0; i < st->n_res; i++)
        any_ok |= st->res[i].ok;
    for (size_t i = 0; i < o->n_caps && !g_stop; i++) {
        double cap = o->caps[i];
        sweep_result *prev = sweep_state_find(st, cap);
        if (prev && prev->ok) {
            fprintf(stderr, "pfi sweep: cap %.0f W measured earlier, kept\n", cap);
            continue;
        }
        todo--;
        pfi_error err;
        for (size_t k = 0; k < o->n_gpus; k++)
            if (sweep_gpu_set(g, o->gpus[k], cap, o->duration + o->cooldown + 600, &err) !=
                PFI_OK) {
                pfi_cli_fail("sweep", &err);
                return 1;
            }
        FILE *log = open_in(o->out, "run-%.0f.log", cap),
             *tr = open_in(o->out, "trace-%.0f.csv", cap);
        if (!log || !tr) {
            fprintf(stderr, "pfi sweep: %s: cannot write the run's files: %s\n", o->out,
                    strerror(errno));
            if (log) fclose(log);
            if (tr) fclose(tr);
            return 1;
        }
        sweep_run_trace_header(tr);
        progress_ctx pc = {o, i, todo, isatty(2), -1};
        sweep_run_opts ro = {.argv = o->argv,
                             .cap_w = cap,
                             .duration_s = o->duration,
                             .interval_s = o->interval,
                             .tput_timeout_s = o->tput_timeout,
                             .tput_scale = o->tput_scale,
                             .m = port ? NULL : m,
                             .port = port,
                             .g = g,
                             .gpus = o->gpus,
                             .n_gpus = o->n_gpus,
                             .log = log,
                             .trace = tr,
                             .stop = &g_stop,
                             .progress = progress,
                             .progress_ctx = &pc};
        pfi_trace_run run = {.cap_w = NAN};
        char name[64];
        snprintf(name, sizeof name, "cap-%.0f", cap);
        run.name = strdup(name);
        int rc = sweep_run_cap(&ro, &run, &err);
        fclose(log);
        fclose(tr);
        if (pc.tty) fputc('\n', stderr);
        if (g_stop) {
            pfi_trace_run_free(&run);
            break;
        }
        sweep_result res;
        summarize(o, cap, &run, rc, &err, &res);
        pfi_trace_run_free(&run);
        if (!res.ok && !any_ok && (rc == PFI_ESTATE || rc == PFI_ENODATA || rc == PFI_EIO)) {
            /* the command cannot be measured at all: stop before the other caps */
            fprintf(stderr, "pfi sweep: cap %.0f W: %s (see %s/run-%.0f.log); stopping\n", cap,
                    res.why, o->out, cap);
            return 1;
        }
        any_ok |= res.ok;
        if (res.ok)
            fprintf(stderr, "pfi sweep: cap %.0f W: %.1f W, %.1f tokens/s (%zu training samples)\n",
                    cap, res.power_w, res.tput, res.training_samples);
        else
            fprintf(stderr, "pfi sweep: cap %.0f W FAILED: %s\n", cap, res.why);
        if (sweep_state_put(st, &res) != PFI_OK || sweep_state_save(o->out, st, &err) != PFI_OK) {
            pfi_cli_fail("sweep", &err);
            return 1;
        }
        wait_release(o, g, base);
        if (todo > 0 && o->cooldown > 0) sweep_sleep(o->cooldown, &g_stop);
    }
    return 0;
}

/* sweeps.csv, telemetry.csv and the PFI of the measured caps. */
/* After the runs: the prior limits back, the state closed, the report; the
 * exit status (130 when interrupted). */
static int finish(const sweep_opts *o, sweep_gpu *g, sweep_state *st, int fatal)
{
    pfi_error err = {0};
    int ec = PFI_EXIT_OK;
    int failed = restore_all(g, st);
    if (!failed) {
        st->active = 0;
        if (sweep_state_save(o->out, st, &err) != PFI_OK) pfi_cli_fail("sweep", &err);
        for (size_t k = 0; k < st->n_gpus; k++)
            fprintf(stderr, "pfi sweep: GPU %u restored to %.0f W\n", st->gpus[k], st->prior_w[k]);
    } else {
        fprintf(stderr, "pfi sweep: the next 'pfi sweep --out %s' retries the restore\n", o->out);
    }
    int complete = 0;
    if (!fatal && !g_stop) ec = sweep_report(o, st, &complete);
    if (g_stop) {
        fprintf(stderr, "pfi sweep: interrupted; caps restored; --resume continues\n");
        ec = 130;
    } else if (fatal || failed || !complete) {
        if (ec == PFI_EXIT_OK) ec = PFI_EXIT_DATA;
    }
    return ec;
}

int pfi_cmd_sweep(int argc, char **argv)
{
    sweep_opts o;
    int ec = sweep_opts_parse(argc, argv, &o);
    if (ec == -1) return PFI_EXIT_OK;
    if (ec != PFI_EXIT_OK) {
        sweep_opts_free(&o);
        return ec;
    }
    /* from here on a signal only asks to stop: whatever runs is wound down
     * and every limit put back before exit */
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sweep_state st;
    pfi_error err;
    sweep_gpu *g = NULL;
    sweep_port *port = NULL;
    pfi_tput_matcher *m = NULL;
    int lock_fd = -1;
    if (pfi_tput_matcher_create(o.tput_re, &m, &err) != PFI_OK) {
        sweep_opts_free(&o);
        return pfi_cli_fail("sweep", &err);
    }
    if (!o.dry_run && mkdir(o.out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "pfi sweep: %s: %s\n", o.out, strerror(errno));
        ec = PFI_EXIT_DATA;
        goto done;
    }
    /* before the state is read: another sweep's active state is not a crash */
    if (sweep_lock_take(o.out, o.dry_run, &lock_fd, &err) != PFI_OK) {
        ec = pfi_cli_fail("sweep", &err);
        goto done;
    }
    int rc = sweep_state_load(o.out, &st, &err);
    if (rc != PFI_OK && rc != PFI_ENOTFOUND) {
        ec = pfi_cli_fail("sweep", &err);
        goto done;
    }
    int pending = rc == PFI_OK && st.active; /* a crashed sweep's caps may be set */
    if (pending && !o.dry_run && (ec = recover(&o, &st)) != PFI_EXIT_OK) goto done;
    if (rc == PFI_OK && o.resume) {
        int same = st.n_gpus == o.n_gpus;
        for (size_t k = 0; same && k < o.n_gpus; k++)
            same = st.gpus[k] == o.gpus[k];
        if (!same) {
            fprintf(stderr, "pfi sweep: --resume with other GPUs than %s's sweep\n", o.out);
            ec = PFI_EXIT_USAGE;
            goto done;
        }
    }
    if (rc != PFI_OK || !o.resume) memset(&st, 0, sizeof st);
    st.active = 0;
    snprintf(st.backend, sizeof st.backend, "%s", o.backend);
    snprintf(st.backend_opts, sizeof st.backend_opts, "%s", o.backend_opts);
    snprintf(st.via_pfid, sizeof st.via_pfid, "%s", o.via_pfid ? o.via_pfid : "");
    if (sweep_gpu_open(o.backend, o.backend_opts, o.via_pfid, o.token_file, &g, &err) != PFI_OK ||
        validate(&o, g, &st, &err) != PFI_OK ||
        sweep_gpu_lock(g, o.gpus, o.n_gpus, o.lock_dir, &err) != PFI_OK) {
        ec = pfi_cli_fail("sweep", &err);
        goto done;
    }
    if (o.tput_port >= 0 && sweep_port_start((unsigned)o.tput_port, &port, &err) != PFI_OK) {
        ec = pfi_cli_fail("sweep", &err);
        goto done;
    }
    if (o.dry_run) {
        ec = sweep_dry_run(&o, &st, pending);
        goto done;
    }
    /* the priors reach the disk before any cap is set */
    st.active = 1;
    if (sweep_state_save(o.out, &st, &err) != PFI_OK) {
        ec = pfi_cli_fail("sweep", &err);
        goto done;
    }
    int fatal = run_caps(&o, g, &st, m, port);
    ec = finish(&o, g, &st, fatal);
done:
    sweep_port_stop(port);
    sweep_gpu_close(g);
    pfi_lockfile_release(lock_fd);
    pfi_tput_matcher_destroy(m);
    sweep_opts_free(&o);
    return ec;
}
