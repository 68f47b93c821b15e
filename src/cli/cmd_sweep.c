/* pfi sweep: measure a training job's PFI (the paper's protocol, Appendix
 * B.4-B.6): for each cap, set it on the job's GPUs before the command
 * starts, run the command for the duration while sampling the GPUs and
 * reading tokens/s from its output, stop it, wait for its GPU memory to be
 * released and for the cooldown; then write sweeps.csv, telemetry.csv and
 * the PFI with its CI. Every exit path puts the limits in force before the
 * sweep back; a crash is repaired by the next start (sweep_state.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis_cli.h"
#include "cli.h"
#include "pfi/ci.h"
#include "pfi/gpu_lock.h"
#include "pfi/index.h"
#include "pfi/json.h"
#include "pfi/limit.h"
#include "pfi/sweeps_csv.h"
#include "sweep_gpu.h"
#include "sweep_run.h"
#include "sweep_state.h"
#include "trace_cli.h"

static const char *help =
    "Usage: pfi sweep --caps W,W,... --gpus LIST --out DIR [OPTIONS] -- COMMAND...\n"
    "\n"
    "Measures COMMAND's Power Flexibility Index. For each cap (per GPU, in\n"
    "the order given) it sets the cap on the GPUs before COMMAND starts (its\n"
    "environment has PFI_SWEEP_CAP_W), runs it for --duration while sampling\n"
    "the GPUs every --interval and reading tokens/s from its output, stops it\n"
    "(SIGTERM to its process group, SIGKILL 5 s later), waits until the GPUs'\n"
    "memory is released and for --cooldown, then goes on. Each run is reduced\n"
    "as pfi trace does (phases, top 10% of the training samples). At the end\n"
    "DIR holds sweeps.csv, telemetry.csv, trace-CAP.csv (pfi trace reads\n"
    "them) and run-CAP.log, and the PFI with its 95% CI is printed.\n"
    "\n"
    "The limits in force before the sweep are put back at the end, on\n"
    "SIGINT/SIGTERM, on error, and, after a crash, at the next start in DIR\n"
    "(DIR/sweep-state.json). A failed run is recorded and the sweep goes on;\n"
    "--resume skips the caps already measured.\n"
    "\n"
    "Options:\n"
    "  --caps LIST          per-GPU caps, W (e.g. 200,300,400,500,600,700)\n"
    "  --gpus LIST          GPU indices, e.g. 0-7 or 0,2,4\n"
    "  --out DIR            results and state (created if missing)\n"
    "  --duration D         per cap (default 30m; D is N[s|m|h])\n"
    "  --cooldown D         between runs (default 60s)\n"
    "  --interval D         sampling interval (default 5s)\n"
    "  --backend B          nvml (default) or sim\n"
    "  --backend-opts S     the backend's options (sim: gpus=N,jobs=FILE)\n"
    "  --via-pfid URL       through the node's pfid (its API) instead of a backend\n"
    "  --token-file F       pfid's token (with --via-pfid)\n"
    "  --throughput-regex R hf (default), torchtitan, or a regex whose first\n"
    "                       group is tokens/s\n"
    "  --throughput-scale F multiply each reading (e.g. the GPU count for\n"
    "                       per-GPU logs; default 1)\n"
    "  --throughput-port N  instead, take reports on 127.0.0.1:N (0: any free\n"
    "                       port) in pfid's API: COMMAND's PFID_URL points there, so\n"
    "                       contrib/hf_trainer/pfid_callback.py reports to the sweep\n"
    "  --throughput-timeout D  a run without a throughput line by then fails\n"
    "                       (default 10m); so does the sweep when it is the first\n"
    "  --release-timeout D  longest wait for GPU memory release (default 120s)\n"
    "  --phase-hold D       how long utilisation must hold for training (10s)\n"
    "  --lock-dir DIR       the GPU locks pfid holds (default /run/pfid)\n"
    "  --group, --platform, --model, --arch dense|moe, --task pt|ft\n"
    "                       sweeps.csv metadata (group: COMMAND's name)\n"
    "  --resume             keep the caps DIR's state has measured\n"
    "  --dry-run            check everything, print the plan and its total time,\n"
    "                       change nothing\n"
    "  --json               the results as JSON on standard output\n"
    "  -h, --help           show this help\n"
    "\n"
    "Errors before anything runs: overlapping or unknown GPUs, caps outside a\n"
    "GPU's constraints, GPUs another program (a pfid) holds, a COMMAND that\n"
    "cannot be found; and, on the first cap, a COMMAND that exits before the\n"
    "duration or prints no throughput line in time. No cap is left behind.\n"
    "Exit status: 0 all caps measured, 1 an error or a failed run, 2 bad usage,\n"
    "130 interrupted (caps restored).\n";

static volatile sig_atomic_t g_stop;
static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

typedef struct {
    double *caps;
    size_t n_caps;
    unsigned gpus[SWEEP_MAX_GPUS];
    size_t n_gpus;
    const char *out, *backend, *backend_opts, *via_pfid, *token_file, *tput_re, *lock_dir;
    double duration, cooldown, interval, tput_scale, tput_timeout, release_timeout, hold;
    long tput_port; /* -1: none */
    pfi_cli_meta meta;
    int resume, dry_run, json;
    char **argv;
} opts_t;

/* "90", "90s", "30m", "1.5h" in seconds; -1 when bad. */
static double parse_duration(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v < 0) return -1;
    double mul = 1;
    if (*end == 's') end++;
    else if (*end == 'm') mul = 60, end++;
    else if (*end == 'h') mul = 3600, end++;
    return *end ? -1 : v * mul;
}

/* "0-3,6" into gpus; duplicates are an error naming the GPU. */
static int parse_gpus(const char *s, opts_t *o)
{
    const char *p = s;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0) return pfi_cli_usage_error("sweep", "bad --gpus '%s'", s);
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a) return pfi_cli_usage_error("sweep", "bad --gpus '%s'", s);
            p = end;
        }
        for (long g = a; g <= b; g++) {
            for (size_t k = 0; k < o->n_gpus; k++)
                if (o->gpus[k] == (unsigned)g)
                    return pfi_cli_usage_error("sweep", "GPU %ld is listed twice in --gpus", g);
            if (o->n_gpus == SWEEP_MAX_GPUS)
                return pfi_cli_usage_error("sweep", "more than %d GPUs", SWEEP_MAX_GPUS);
            o->gpus[o->n_gpus++] = (unsigned)g;
        }
        if (*p == ',') p++;
        else if (*p) return pfi_cli_usage_error("sweep", "bad --gpus '%s'", s);
    }
    return o->n_gpus ? PFI_EXIT_OK : pfi_cli_usage_error("sweep", "empty --gpus");
}

static int parse(int argc, char **argv, opts_t *o)
{
    enum { O_CAPS = 256, O_GPUS, O_OUT, O_DUR, O_COOL, O_INT, O_BE, O_BEO, O_VIA, O_TOK, O_RE,
           O_SCALE, O_TTO, O_REL, O_HOLD, O_LOCK, O_GROUP, O_PLAT, O_MODEL, O_ARCH, O_TASK,
           O_RESUME, O_DRY, O_JSON, O_PORT };
    static const struct option opts[] = {
        {"caps", required_argument, 0, O_CAPS},     {"gpus", required_argument, 0, O_GPUS},
        {"out", required_argument, 0, O_OUT},       {"duration", required_argument, 0, O_DUR},
        {"cooldown", required_argument, 0, O_COOL}, {"interval", required_argument, 0, O_INT},
        {"backend", required_argument, 0, O_BE},    {"backend-opts", required_argument, 0, O_BEO},
        {"via-pfid", required_argument, 0, O_VIA},  {"token-file", required_argument, 0, O_TOK},
        {"throughput-regex", required_argument, 0, O_RE},
        {"throughput-scale", required_argument, 0, O_SCALE},
        {"throughput-port", required_argument, 0, O_PORT},
        {"throughput-timeout", required_argument, 0, O_TTO},
        {"release-timeout", required_argument, 0, O_REL},
        {"phase-hold", required_argument, 0, O_HOLD}, {"lock-dir", required_argument, 0, O_LOCK},
        {"group", required_argument, 0, O_GROUP},   {"platform", required_argument, 0, O_PLAT},
        {"model", required_argument, 0, O_MODEL},   {"arch", required_argument, 0, O_ARCH},
        {"task", required_argument, 0, O_TASK},     {"resume", no_argument, 0, O_RESUME},
        {"dry-run", no_argument, 0, O_DRY},         {"json", no_argument, 0, O_JSON},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0},
    };
    *o = (opts_t){.backend = "nvml", .backend_opts = "", .tput_re = "hf",
                  .lock_dir = PFI_GPU_LOCK_DIR, .duration = 1800, .cooldown = 60, .interval = 5,
                  .tput_scale = 1, .tput_timeout = 600, .release_timeout = 120, .hold = 10,
                  .tput_port = -1};
    o->meta = (pfi_cli_meta){NULL, "", "", "dense", "pt", ""};
    int c, re_given = 0;
    double *d = NULL;
    optind = 1;
    /* '+': options stop at the first non-option, so COMMAND's own flags are its */
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        const char *bad = NULL;
        switch (c) {
        case O_CAPS:
            free(o->caps);
            if (pfi_cli_parse_doubles(optarg, &o->caps, &o->n_caps) || o->n_caps > SWEEP_MAX_CAPS)
                bad = "--caps";
            for (size_t i = 0; !bad && i < o->n_caps; i++) {
                if (!(o->caps[i] > 0)) bad = "--caps";
                for (size_t k = 0; !bad && k < i; k++)
                    if (fabs(o->caps[k] - o->caps[i]) < 0.5)
                        return pfi_cli_usage_error("sweep", "cap %g W is listed twice", o->caps[i]);
            }
            break;
        case O_GPUS: {
            int ec = parse_gpus(optarg, o);
            if (ec) return ec;
            break;
        }
        case O_OUT: o->out = optarg; break;
        case O_DUR: d = &o->duration; bad = "--duration"; break;
        case O_COOL: d = &o->cooldown; bad = "--cooldown"; break;
        case O_INT: d = &o->interval; bad = "--interval"; break;
        case O_TTO: d = &o->tput_timeout; bad = "--throughput-timeout"; break;
        case O_REL: d = &o->release_timeout; bad = "--release-timeout"; break;
        case O_HOLD: d = &o->hold; bad = "--phase-hold"; break;
        case O_BE:
            if (strcmp(optarg, "nvml") && strcmp(optarg, "sim"))
                return pfi_cli_usage_error("sweep", "--backend must be nvml or sim");
            o->backend = optarg;
            break;
        case O_BEO: o->backend_opts = optarg; break;
        case O_VIA: o->via_pfid = optarg; break;
        case O_TOK: o->token_file = optarg; break;
        case O_RE:
            o->tput_re = optarg;
            re_given = 1;
            break;
        case O_SCALE:
            if (pfi_cli_parse_positive(optarg, &o->tput_scale)) bad = "--throughput-scale";
            break;
        case O_PORT: {
            unsigned long long v;
            if (pfi_cli_parse_ulong(optarg, &v) || v > 65535) bad = "--throughput-port";
            o->tput_port = (long)v;
            break;
        }
        case O_LOCK: o->lock_dir = optarg; break;
        case O_GROUP: o->meta.group = optarg; break;
        case O_PLAT: o->meta.platform = optarg; break;
        case O_MODEL: o->meta.model = optarg; break;
        case O_ARCH:
            if (strcmp(optarg, "dense") && strcmp(optarg, "moe")) bad = "--arch";
            o->meta.arch = optarg;
            break;
        case O_TASK:
            if (strcmp(optarg, "pt") && strcmp(optarg, "ft")) bad = "--task";
            o->meta.task = optarg;
            break;
        case O_RESUME: o->resume = 1; break;
        case O_DRY: o->dry_run = 1; break;
        case O_JSON: o->json = 1; break;
        case 'h': fputs(help, stdout); return -1;
        default: return pfi_cli_usage_error("sweep", "bad option");
        }
        if (d) {
            *d = parse_duration(optarg);
            if (*d >= 0) bad = NULL;
            d = NULL;
        }
        if (bad) return pfi_cli_usage_error("sweep", "bad %s '%s'", bad, optarg);
    }
    if (!o->n_caps) return pfi_cli_usage_error("sweep", "--caps is required");
    if (!o->n_gpus) return pfi_cli_usage_error("sweep", "--gpus is required");
    if (!o->out) return pfi_cli_usage_error("sweep", "--out is required");
    if (!(o->interval > 0) || !(o->duration > 0))
        return pfi_cli_usage_error("sweep", "--interval and --duration must be positive");
    if (o->tput_port >= 0 && re_given)
        return pfi_cli_usage_error("sweep", "--throughput-port and --throughput-regex exclude "
                                            "each other (one reading per report)");
    if (o->via_pfid && !o->token_file)
        return pfi_cli_usage_error("sweep", "--via-pfid needs --token-file");
    if (optind >= argc) return pfi_cli_usage_error("sweep", "no COMMAND (after --)");
    o->argv = argv + optind;
    if (!o->meta.group) {
        const char *b = strrchr(o->argv[0], '/');
        o->meta.group = b ? b + 1 : o->argv[0];
    }
    return PFI_EXIT_OK;
}

/* The command exists and may be run (searched in PATH as execvp does). */
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

static void fmt_time(double s, char *buf, size_t len)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

typedef struct {
    const opts_t *o;
    size_t idx, todo_left; /* this cap's index; caps still to run after it */
    int tty;
    double last_plain;
} progress_ctx;

static void progress(void *ctx, double t, double power_w, double tok_s)
{
    progress_ctx *p = ctx;
    const opts_t *o = p->o;
    double left = (o->duration - t) + (double)p->todo_left * (o->duration + o->cooldown) +
                  (p->todo_left ? o->cooldown : 0);
    char el[32], dur[32], rem[32], pw[32] = "-", tk[32] = "-";
    fmt_time(t, el, sizeof el);
    fmt_time(o->duration, dur, sizeof dur);
    fmt_time(left > 0 ? left : 0, rem, sizeof rem);
    if (isfinite(power_w)) snprintf(pw, sizeof pw, "%.0f W", power_w);
    if (isfinite(tok_s)) snprintf(tk, sizeof tk, "%.0f tok/s", tok_s);
    if (p->tty) {
        fprintf(stderr, "\r\033[Kpfi sweep: cap %.0f W (%zu/%zu) %s/%s, %s left; %s, %s",
                o->caps[p->idx], p->idx + 1, o->n_caps, el, dur, rem, pw, tk);
    } else if (t - p->last_plain >= 30 || p->last_plain < 0) {
        fprintf(stderr, "pfi sweep: cap %.0f W (%zu/%zu) %s/%s, %s left; %s, %s\n",
                o->caps[p->idx], p->idx + 1, o->n_caps, el, dur, rem, pw, tk);
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
static int recover(const opts_t *o, sweep_state *st)
{
    fprintf(stderr, "pfi sweep: %s: an earlier sweep did not finish; restoring its GPUs\n",
            o->out);
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
static int validate(const opts_t *o, sweep_gpu *g, sweep_state *st, pfi_error *err)
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
                return pfi_error_set(err, PFI_ERANGE, NULL, 0,
                                     "cap %g W is outside GPU %u's limit constraints [%.0f, %.0f] W",
                                     o->caps[i], o->gpus[k], lim.min_w, lim.max_w);
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
static void wait_release(const opts_t *o, sweep_gpu *g, const double *base_b)
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

static void summarize(const opts_t *o, double cap_w, const pfi_trace_run *r, int rc,
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
static int run_caps(const opts_t *o, sweep_gpu *g, sweep_state *st, const pfi_tput_matcher *m,
                    sweep_port *port)
{
    double base[SWEEP_MAX_GPUS];
    for (size_t k = 0; k < o->n_gpus; k++) {
        pfi_gpu_sample s;
        base[k] = sweep_gpu_sample(g, o->gpus[k], &s) == PFI_OK &&
                          pfi_gpu_sample_has(&s, PFI_GF_FB_USED)
                      ? s.v[PFI_GF_FB_USED]
                      : NAN;
    }
    size_t todo = 0;
    for (size_t i = 0; i < o->n_caps; i++) {
        sweep_result *r = sweep_state_find(st, o->caps[i]);
        todo += !(r && r->ok);
    }
    int any_ok = 0;
    for (size_t i = 0; i < st->n_res; i++) any_ok |= st->res[i].ok;
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
        FILE *log = open_in(o->out, "run-%.0f.log", cap), *tr = open_in(o->out, "trace-%.0f.csv", cap);
        if (!log || !tr) {
            fprintf(stderr, "pfi sweep: %s: cannot write the run's files: %s\n", o->out,
                    strerror(errno));
            if (log) fclose(log);
            if (tr) fclose(tr);
            return 1;
        }
        sweep_run_trace_header(tr);
        progress_ctx pc = {o, i, todo, isatty(2), -1};
        sweep_run_opts ro = {.argv = o->argv, .cap_w = cap, .duration_s = o->duration,
                             .interval_s = o->interval, .tput_timeout_s = o->tput_timeout,
                             .tput_scale = o->tput_scale, .m = port ? NULL : m, .port = port,
                             .g = g, .gpus = o->gpus,
                             .n_gpus = o->n_gpus, .log = log, .trace = tr, .stop = &g_stop,
                             .progress = progress, .progress_ctx = &pc};
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
static int report(const opts_t *o, const sweep_state *st, int *complete)
{
    pfi_cli_measured m[SWEEP_MAX_CAPS];
    pfi_trace_run stub[SWEEP_MAX_CAPS];
    char names[SWEEP_MAX_CAPS][32];
    size_t n = 0;
    *complete = 1;
    for (size_t i = 0; i < o->n_caps; i++) {
        const sweep_result *r = sweep_state_find((sweep_state *)st, o->caps[i]);
        if (!r || !r->ok) *complete = 0;
        if (!r) continue;
        snprintf(names[n], sizeof names[n], "cap-%.0f", r->cap_w);
        stub[n] = (pfi_trace_run){.name = names[n], .gpus = r->gpus, .n = r->samples};
        m[n] = (pfi_cli_measured){.run = &stub[n], .ok = r->ok, .cap_w = r->cap_w,
                                  .why = r->ok ? NULL : r->why};
        pfi_trace_summary *s = &m[n].sum;
        memcpy(s->start, r->start, sizeof s->start);
        s->samples = r->samples;
        s->training_samples = r->training_samples;
        s->power_w = r->power_w;
        s->power_sem_w = r->power_sem_w;
        s->tput = r->tput;
        s->tput_sem = r->tput_sem;
        s->telemetry = r->telemetry;
        n++;
    }
    pfi_error err;
    if (pfi_cli_write_outputs(o->out, &o->meta, m, n, &err) != PFI_OK)
        return pfi_cli_fail("sweep", &err);
    /* PFI with its CI over the runs that worked */
    pfi_sweeps *sw = pfi_sweeps_create();
    pfi_group_meta gm = {o->meta.platform, o->meta.model, o->meta.arch, o->meta.task, "",
                         (int)o->n_gpus};
    int have = sw != NULL;
    for (size_t i = 0; have && i < n; i++) {
        if (!m[i].ok) continue;
        pfi_run r = {.cap_w = m[i].cap_w, .power_w = m[i].sum.power_w, .tput = m[i].sum.tput,
                     .power_sem_w = m[i].sum.power_sem_w, .tput_sem = m[i].sum.tput_sem};
        have = pfi_sweeps_add_run(sw, o->meta.group, &gm, &r, NULL, &err) == PFI_OK;
    }
    char why[600] = "fewer than two measured caps";
    if (have && pfi_sweeps_finalize(sw, 0, NULL, &err) != PFI_OK) {
        pfi_error_format(&err, why, sizeof why);
        have = 0;
    }
    pfi_index_result ir = {0};
    pfi_ci ci = {0};
    if (have) {
        const pfi_group *grp = pfi_sweeps_group(sw, 0);
        pfi_index_group(grp, PFI_METHOD_RATIO, NULL, &ir);
        pfi_ci_opts co = {.draws = 10000, .seed = 1, .level = 0.95, .method = PFI_METHOD_RATIO};
        pfi_ci_group(grp, &co, &ci);
    }
    if (o->json) {
        json_t *root = json_object(), *runs = json_array();
        pfi_json_set(root, "group", json_string(o->meta.group));
        pfi_json_set(root, "out", json_string(o->out));
        for (size_t i = 0; i < n; i++) json_array_append_new(runs, pfi_cli_measured_json(&m[i]));
        pfi_json_set(root, "runs", runs);
        pfi_json_set(root, "pfi", ir.has_pfi ? pfi_json_num(ir.pfi) : json_null());
        json_t *c = json_null();
        if (ci.has) {
            c = json_array();
            json_array_append_new(c, pfi_json_num(ci.low));
            json_array_append_new(c, pfi_json_num(ci.high));
        }
        pfi_json_set(root, "ci95", c);
        pfi_json_print(stdout, root);
        json_decref(root);
    } else {
        printf("%8s %10s %14s  %s\n", "cap_w", "power_w", "tokens/s", "run");
        for (size_t i = 0; i < n; i++)
            if (m[i].ok)
                printf("%8.0f %10.1f %14.1f  ok\n", m[i].cap_w, m[i].sum.power_w, m[i].sum.tput);
            else
                printf("%8.0f %10s %14s  failed: %s\n", m[i].cap_w, "-", "-", m[i].why);
        if (ir.has_pfi && ci.has)
            printf("PFI %.4f (95%% CI %.4f to %.4f) over %zu capped runs\n", ir.pfi, ci.low,
                   ci.high, ir.n_terms);
        else if (ir.has_pfi)
            printf("PFI %.4f over %zu capped runs (no CI)\n", ir.pfi, ir.n_terms);
        else
            printf("PFI undefined: %s\n",
                   have ? "no capped run below the uncapped run's throughput" : why);
    }
    pfi_sweeps_destroy(sw);
    return PFI_EXIT_OK;
}

static void dry_run(const opts_t *o, const sweep_state *st)
{
    size_t todo = 0;
    printf("pfi sweep plan: %zu GPU%s, every %g s, %s\n", o->n_gpus, o->n_gpus == 1 ? "" : "s",
           o->interval, o->via_pfid ? o->via_pfid : o->backend);
    for (size_t i = 0; i < o->n_caps; i++) {
        const sweep_result *r = sweep_state_find((sweep_state *)st, o->caps[i]);
        int keep = o->resume && r && r->ok;
        char d[32];
        fmt_time(o->duration, d, sizeof d);
        printf("  cap %4.0f W  %s%s\n", o->caps[i], keep ? "measured earlier, kept" : d,
               keep ? "" : " + cooldown");
        todo += !keep;
    }
    double total = (double)todo * o->duration + (todo > 1 ? (double)(todo - 1) * o->cooldown : 0);
    char t[32];
    fmt_time(total, t, sizeof t);
    printf("total: %s (%zu runs; plus up to %g s per run for GPU memory release)\n", t, todo,
           o->release_timeout);
    for (size_t k = 0; k < st->n_gpus; k++)
        printf("  GPU %u: limit in force %.0f W, restored at the end\n", st->gpus[k],
               st->prior_w[k]);
}

int pfi_cmd_sweep(int argc, char **argv)
{
    opts_t o;
    int ec = parse(argc, argv, &o);
    if (ec == -1) return PFI_EXIT_OK;
    if (ec != PFI_EXIT_OK) {
        free(o.caps);
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
    if (pfi_tput_matcher_create(o.tput_re, &m, &err) != PFI_OK) {
        free(o.caps);
        return pfi_cli_fail("sweep", &err);
    }
    if (!o.dry_run && mkdir(o.out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "pfi sweep: %s: %s\n", o.out, strerror(errno));
        ec = PFI_EXIT_DATA;
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
        for (size_t k = 0; same && k < o.n_gpus; k++) same = st.gpus[k] == o.gpus[k];
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
        validate(&o, g, &st, &err) != PFI_OK || sweep_gpu_lock(g, o.gpus, o.n_gpus, o.lock_dir, &err) != PFI_OK) {
        ec = pfi_cli_fail("sweep", &err);
        goto done;
    }
    if (o.tput_port >= 0 && sweep_port_start((unsigned)o.tput_port, &port, &err) != PFI_OK) {
        ec = pfi_cli_fail("sweep", &err);
        goto done;
    }
    if (o.dry_run) {
        dry_run(&o, &st);
        if (pending)
            printf("note: an earlier sweep in %s did not finish: the next run restores its GPUs "
                   "first (the limits above may be its caps)\n",
                   o.out);
        goto done;
    }
    /* the priors reach the disk before any cap is set */
    st.active = 1;
    if (sweep_state_save(o.out, &st, &err) != PFI_OK) {
        ec = pfi_cli_fail("sweep", &err);
        goto done;
    }
    int fatal = run_caps(&o, g, &st, m, port);
    int failed = restore_all(g, &st);
    if (!failed) {
        st.active = 0;
        if (sweep_state_save(o.out, &st, &err) != PFI_OK) pfi_cli_fail("sweep", &err);
        for (size_t k = 0; k < st.n_gpus; k++)
            fprintf(stderr, "pfi sweep: GPU %u restored to %.0f W\n", st.gpus[k], st.prior_w[k]);
    } else {
        fprintf(stderr, "pfi sweep: the next 'pfi sweep --out %s' retries the restore\n", o.out);
    }
    int complete = 0;
    if (!fatal && !g_stop) ec = report(&o, &st, &complete);
    if (g_stop) {
        fprintf(stderr, "pfi sweep: interrupted; caps restored; --resume continues\n");
        ec = 130;
    } else if (fatal || failed || !complete) {
        if (ec == PFI_EXIT_OK) ec = PFI_EXIT_DATA;
    }
done:
    sweep_port_stop(port);
    sweep_gpu_close(g);
    pfi_tput_matcher_destroy(m);
    free(o.caps);
    return ec;
}
