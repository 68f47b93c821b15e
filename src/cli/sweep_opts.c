/* pfi sweep's command line (see sweep_opts.h). */
#include "sweep_opts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_cli.h"
#include "cli.h"
#include "pfi/gpu_lock.h"

static const char *about =
    "Measures COMMAND's Power Flexibility Index: for each cap it sets the cap on the\n"
    "GPUs, runs COMMAND for --duration while sampling the GPUs and reading tokens/s\n"
    "from its output, stops it, waits for the GPUs and --cooldown, and goes on. DIR\n"
    "gets sweeps.csv, telemetry.csv, trace-CAP.csv and run-CAP.log; the prior limits\n"
    "are put back at the end, on a signal, on error, and after a crash.\n";

/* The longest duration any option takes: a sweep that would run a cap for
 * longer is a typo (99999999999h was accepted), and a week keeps every sum
 * of durations and every deadline far inside a double's exact seconds. */
#define SWEEP_MAX_DURATION_S (7 * 86400.0)

/* "90", "90s", "30m", "1.5h" in seconds; -1 when bad, -2 when over a week. */
static double parse_duration(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v < 0) return -1;
    double mul = 1;
    if (*end == 's')
        end++;
    else if (*end == 'm')
        mul = 60, end++;
    else if (*end == 'h')
        mul = 3600, end++;
    if (*end) return -1;
    return v * mul > SWEEP_MAX_DURATION_S ? -2 : v * mul;
}

/* "0-3,6" into gpus; duplicates are an error naming the GPU. */
static int parse_gpus(const char *s, sweep_opts *o)
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
        if (*p == ',')
            p++;
        else if (*p)
            return pfi_cli_usage_error("sweep", "bad --gpus '%s'", s);
    }
    return o->n_gpus ? PFI_EXIT_OK : pfi_cli_usage_error("sweep", "empty --gpus");
}

static int set_caps(const pfi_cli_opt *opt, const char *arg)
{
    sweep_opts *o = opt->dst;
    free(o->caps);
    o->caps = NULL;
    if (pfi_cli_parse_doubles(arg, &o->caps, &o->n_caps) || o->n_caps > SWEEP_MAX_CAPS) return -1;
    for (size_t i = 0; i < o->n_caps; i++) {
        if (!(o->caps[i] > 0)) return -1;
        for (size_t k = 0; k < i; k++)
            if (fabs(o->caps[k] - o->caps[i]) < 0.5) {
                pfi_cli_usage_error("sweep", "cap %g W is listed twice", o->caps[i]);
                return -2;
            }
    }
    return 0;
}

static int set_gpus(const pfi_cli_opt *opt, const char *arg)
{
    return parse_gpus(arg, opt->dst) ? -2 : 0;
}

static int set_duration(const pfi_cli_opt *o, const char *arg)
{
    double v = parse_duration(arg);
    if (v == -2) {
        pfi_cli_usage_error("sweep", "--%s '%s' is longer than a week (168h)", o->name, arg);
        return -2;
    }
    if (v < 0) return -1;
    *(double *)o->dst = v;
    return 0;
}

static int set_backend(const pfi_cli_opt *o, const char *arg)
{
    if (strcmp(arg, "nvml") && strcmp(arg, "sim")) return -1;
    *(const char **)o->dst = arg;
    return 0;
}

static int set_port(const pfi_cli_opt *o, const char *arg)
{
    unsigned long long v;
    if (pfi_cli_parse_ulong(arg, &v) || v > 65535) return -1;
    *(long *)o->dst = (long)v;
    return 0;
}

static int set_one_of(const pfi_cli_opt *o, const char *arg, const char *a, const char *b)
{
    if (strcmp(arg, a) && strcmp(arg, b)) return -1;
    *(const char **)o->dst = arg;
    return 0;
}

static int set_arch(const pfi_cli_opt *o, const char *arg)
{
    return set_one_of(o, arg, "dense", "moe");
}

static int set_task(const pfi_cli_opt *o, const char *arg)
{
    return set_one_of(o, arg, "pt", "ft");
}

int sweep_opts_parse(int argc, char **argv, sweep_opts *o)
{
    *o = (sweep_opts){.backend = "nvml",
                      .backend_opts = "",
                      .tput_re = "hf",
                      .lock_dir = PFI_GPU_LOCK_DIR,
                      .duration = 1800,
                      .cooldown = 60,
                      .interval = 5,
                      .tput_scale = 1,
                      .tput_timeout = 600,
                      .release_timeout = 120,
                      .hold = 10,
                      .tput_port = -1};
    o->meta = (pfi_cli_meta){NULL, "", "", "dense", "pt", ""};
    const char *re = NULL;
#define DUR(name, dst, help) PFI_OPT(name, "D", set_duration, dst, "bad --" name " '%s'", help)
    const pfi_cli_opt opts[] = {
        PFI_OPT("caps", "LIST", set_caps, o, "bad --caps '%s'",
                "per-GPU caps, W (e.g. 200,300,400,500,600,700)"),
        PFI_OPT("gpus", "LIST", set_gpus, o, NULL, "GPU indices, e.g. 0-7 or 0,2,4"),
        PFI_OPT("out", "DIR", pfi_cli_set_str, &o->out, NULL,
                "results and state (created if missing)"),
        DUR("duration", &o->duration,
            "per cap (30m; D is N[s|m|h], at most a week, as every duration)"),
        DUR("cooldown", &o->cooldown, "between runs (60s)"),
        DUR("interval", &o->interval, "sampling interval (5s)"),
        PFI_OPT("backend", "B", set_backend, &o->backend, "--backend must be nvml or sim",
                "nvml (default) or sim"),
        PFI_OPT("backend-opts", "S", pfi_cli_set_str, &o->backend_opts, NULL,
                "the backend's options (sim: gpus=N,jobs=FILE)"),
        PFI_OPT("via-pfid", "URL", pfi_cli_set_str, &o->via_pfid, NULL,
                "through the node's pfid (its API) instead of a backend"),
        PFI_OPT("token-file", "F", pfi_cli_set_str, &o->token_file, NULL,
                "pfid's token (with --via-pfid)"),
        PFI_OPT("throughput-regex", "R", pfi_cli_set_str, &re, NULL,
                "hf (default), torchtitan, or a regex whose first group is tokens/s"),
        PFI_OPT("throughput-scale", "F", pfi_cli_set_pos, &o->tput_scale,
                "bad --throughput-scale '%s'", "multiply each reading (1)"),
        PFI_OPT("throughput-port", "N", set_port, &o->tput_port, "bad --throughput-port '%s'",
                "take reports on 127.0.0.1:N in pfid's API instead (0: any port)"),
        DUR("throughput-timeout", &o->tput_timeout,
            "a run without a throughput line by then fails (10m)"),
        DUR("release-timeout", &o->release_timeout, "longest wait for GPU memory release (120s)"),
        DUR("phase-hold", &o->hold, "how long utilisation must hold for training (10s)"),
        PFI_OPT("lock-dir", "DIR", pfi_cli_set_str, &o->lock_dir, NULL,
                "the GPU locks pfid holds (/run/pfid)"),
        PFI_OPT("group", "NAME", pfi_cli_set_str, &o->meta.group, NULL,
                "sweeps.csv group (default: COMMAND's name)"),
        PFI_OPT("platform", "P", pfi_cli_set_str, &o->meta.platform, NULL, "sweeps.csv platform"),
        PFI_OPT("model", "M", pfi_cli_set_str, &o->meta.model, NULL, "sweeps.csv model"),
        PFI_OPT("arch", "A", set_arch, &o->meta.arch, "bad --arch '%s'", "dense or moe"),
        PFI_OPT("task", "T", set_task, &o->meta.task, "bad --task '%s'", "pt or ft"),
        PFI_OPT("resume", NULL, pfi_cli_set_flag, &o->resume, NULL,
                "keep the caps DIR's state has measured"),
        PFI_OPT("dry-run", NULL, pfi_cli_set_flag, &o->dry_run, NULL,
                "check everything, print the plan and its total time, change nothing"),
        PFI_OPT("json", NULL, pfi_cli_set_flag, &o->json, NULL,
                "the results (with --dry-run, the plan) as JSON"),
    };
#undef DUR
    /* stop_at_arg: options stop at the first non-option, so COMMAND's own flags are its */
    const pfi_cli_spec spec = {.cmd = "sweep",
                               .usage =
                                   "--caps W,W,... --gpus LIST --out DIR [OPTIONS] -- COMMAND...",
                               .about = about,
                               .opts = opts,
                               .n_opts = PFI_CLI_N(opts),
                               .stop_at_arg = 1};
    int first, ec = pfi_cli_parse(&spec, argc, argv, &first);
    if (ec == PFI_EXIT_OK) return -1; /* --help */
    if (ec >= 0) return ec;
    if (re) o->tput_re = re;
    int re_given = re != NULL;
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
    if (first >= argc) return pfi_cli_usage_error("sweep", "no COMMAND (after --)");
    o->argv = argv + first;
    if (!o->meta.group) {
        const char *b = strrchr(o->argv[0], '/');
        o->meta.group = b ? b + 1 : o->argv[0];
    }
    return PFI_EXIT_OK;
}

/* The command exists and may be run (searched in PATH as execvp does). */
void sweep_opts_free(sweep_opts *o)
{
    free(o->caps);
    o->caps = NULL;
}
