/* pfi sweep's command line (see sweep_opts.h). */
#include "sweep_opts.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_cli.h"
#include "cli.h"
#include "pfi/gpu_lock.h"

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
    "  --duration D         per cap (default 30m; D is N[s|m|h], at most a week;\n"
    "                       so is every other duration)\n"
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
    "  --json               the results (with --dry-run, the plan) as JSON on\n"
    "                       standard output\n"
    "  -h, --help           show this help\n"
    "\n"
    "Errors before anything runs: overlapping or unknown GPUs, caps outside a\n"
    "GPU's constraints, GPUs another program (a pfid) holds, a DIR another\n"
    "sweep is using (DIR/sweep.lock), a COMMAND that cannot be found; and, on\n"
    "the first cap, a COMMAND that exits before the duration or prints no\n"
    "throughput line in time. No cap is left behind.\n"
    "Exit status: 0 all caps measured, 1 an error or a failed run, 2 bad usage,\n"
    "130 interrupted (caps restored).\n";

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

int sweep_opts_parse(int argc, char **argv, sweep_opts *o)
{
    enum {
        O_CAPS = 256,
        O_GPUS,
        O_OUT,
        O_DUR,
        O_COOL,
        O_INT,
        O_BE,
        O_BEO,
        O_VIA,
        O_TOK,
        O_RE,
        O_SCALE,
        O_TTO,
        O_REL,
        O_HOLD,
        O_LOCK,
        O_GROUP,
        O_PLAT,
        O_MODEL,
        O_ARCH,
        O_TASK,
        O_RESUME,
        O_DRY,
        O_JSON,
        O_PORT
    };
    static const struct option opts[] = {
        {"caps", required_argument, 0, O_CAPS},
        {"gpus", required_argument, 0, O_GPUS},
        {"out", required_argument, 0, O_OUT},
        {"duration", required_argument, 0, O_DUR},
        {"cooldown", required_argument, 0, O_COOL},
        {"interval", required_argument, 0, O_INT},
        {"backend", required_argument, 0, O_BE},
        {"backend-opts", required_argument, 0, O_BEO},
        {"via-pfid", required_argument, 0, O_VIA},
        {"token-file", required_argument, 0, O_TOK},
        {"throughput-regex", required_argument, 0, O_RE},
        {"throughput-scale", required_argument, 0, O_SCALE},
        {"throughput-port", required_argument, 0, O_PORT},
        {"throughput-timeout", required_argument, 0, O_TTO},
        {"release-timeout", required_argument, 0, O_REL},
        {"phase-hold", required_argument, 0, O_HOLD},
        {"lock-dir", required_argument, 0, O_LOCK},
        {"group", required_argument, 0, O_GROUP},
        {"platform", required_argument, 0, O_PLAT},
        {"model", required_argument, 0, O_MODEL},
        {"arch", required_argument, 0, O_ARCH},
        {"task", required_argument, 0, O_TASK},
        {"resume", no_argument, 0, O_RESUME},
        {"dry-run", no_argument, 0, O_DRY},
        {"json", no_argument, 0, O_JSON},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
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
        case O_OUT:
            o->out = optarg;
            break;
        case O_DUR:
            d = &o->duration;
            bad = "--duration";
            break;
        case O_COOL:
            d = &o->cooldown;
            bad = "--cooldown";
            break;
        case O_INT:
            d = &o->interval;
            bad = "--interval";
            break;
        case O_TTO:
            d = &o->tput_timeout;
            bad = "--throughput-timeout";
            break;
        case O_REL:
            d = &o->release_timeout;
            bad = "--release-timeout";
            break;
        case O_HOLD:
            d = &o->hold;
            bad = "--phase-hold";
            break;
        case O_BE:
            if (strcmp(optarg, "nvml") && strcmp(optarg, "sim"))
                return pfi_cli_usage_error("sweep", "--backend must be nvml or sim");
            o->backend = optarg;
            break;
        case O_BEO:
            o->backend_opts = optarg;
            break;
        case O_VIA:
            o->via_pfid = optarg;
            break;
        case O_TOK:
            o->token_file = optarg;
            break;
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
        case O_LOCK:
            o->lock_dir = optarg;
            break;
        case O_GROUP:
            o->meta.group = optarg;
            break;
        case O_PLAT:
            o->meta.platform = optarg;
            break;
        case O_MODEL:
            o->meta.model = optarg;
            break;
        case O_ARCH:
            if (strcmp(optarg, "dense") && strcmp(optarg, "moe")) bad = "--arch";
            o->meta.arch = optarg;
            break;
        case O_TASK:
            if (strcmp(optarg, "pt") && strcmp(optarg, "ft")) bad = "--task";
            o->meta.task = optarg;
            break;
        case O_RESUME:
            o->resume = 1;
            break;
        case O_DRY:
            o->dry_run = 1;
            break;
        case O_JSON:
            o->json = 1;
            break;
        case 'h':
            fputs(help, stdout);
            return -1;
        default:
            return pfi_cli_usage_error("sweep", "bad option");
        }
        if (d) {
            *d = parse_duration(optarg);
            if (*d == -2)
                return pfi_cli_usage_error("sweep", "%s '%s' is longer than a week (168h)", bad,
                                           optarg);
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
void sweep_opts_free(sweep_opts *o)
{
    free(o->caps);
    o->caps = NULL;
}
