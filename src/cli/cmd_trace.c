/* pfi trace: steady-state points from traces people already have (paper
 * Appendix B.6): phases, then the top-10% mean of the training phase. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_cli.h"
#include "cli.h"
#include "pfi/json.h"
#include "pfi/trace_read.h"
#include "trace_cli.h"

static const char *help =
    "Usage: pfi trace [OPTIONS] TRACE...\n"
    "\n"
    "Splits each run of each TRACE into the paper's phases (warmup: frame\n"
    "buffer under 10 GiB; startup: loaded, GPU idle; training: GPU utilisation\n"
    ">= 50% held for --phase-hold seconds) and reduces the training phase to\n"
    "the mean of its top 10% of samples: total power over the run's GPUs (the\n"
    "samples with the highest power), every telemetry field (the same\n"
    "samples) and throughput (its own top 10%, from --steps).\n"
    "\n"
    "TRACE formats (told apart by the first line):\n"
    "  wide CSV      time_s (or t)[,gpu][,run],<DCGM field or probe name>...\n"
    "  h200-probe    ../shared/data/h200-probe/trace.csv: the phase column labels\n"
    "                the runs (NAME_warm is NAME's warmup, NAME its load)\n"
    "  dcgm-exporter concatenated /metrics pages, each after a '# time SECONDS' line\n"
    "Runs named 'idle' are left out; without a run column a file is one run\n"
    "named after the file.\n"
    "\n"
    "Output: sweeps.csv (with the SEM columns) on standard output, one row per\n"
    "run, and one line per run on standard error with its phases.\n"
    "\n"
    "Options:\n"
    "  --steps FILE       step log time_s[,run],step,tokens (cumulative tokens):\n"
    "                     throughput is the top 10% of the rates between rows\n"
    "  --telemetry FILE   also write telemetry.csv (per group, the run at its\n"
    "                     largest cap), all or nothing\n"
    "  --group NAME       one group for every run (a sweep: one trace per cap);\n"
    "                     default: each run is its own group\n"
    "  --platform P, --model M, --arch dense|moe, --task pt|ft, --config C\n"
    "                     sweeps.csv metadata (default '', '', dense, pt, '')\n"
    "  --cap W            per-GPU cap of every run (default: the trace's\n"
    "                     enforced limit, else the platform's TDP, else empty)\n"
    "  --top F            top share in (0, 1] (default 0.1, the paper's)\n"
    "  --loaded-fb-mib M  frame buffer that counts as loaded (default 10240)\n"
    "  --phase-hold S     how long utilisation must hold (default 10 s)\n"
    "  --json             {\"runs\":[{\"run\",\"gpus\",\"cap_w\",\"phases\":{\"warmup\",\n"
    "                     \"startup\",\"training\"},\"samples\",\"training_samples\",\n"
    "                     \"power_w\",\"power_sem_w\",\"throughput_tok_s\",\n"
    "                     \"throughput_sem_tok_s\",\"telemetry\":{DCGM_FI_*...}}]}\n"
    "  -h, --help         show this help\n"
    "\n"
    "A run that never reaches training is an error naming it; the other runs\n"
    "are still reported. Exit status: 0 on success, 1 on bad input data or a\n"
    "run without training, 2 on bad usage.\n";

typedef struct {
    const char *steps, *telemetry;
    pfi_cli_meta meta;
    double cap_w, top;
    pfi_trace_params params;
    int json;
} opts_t;

static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option opts[] = {
        {"steps", required_argument, 0, 's'},
        {"telemetry", required_argument, 0, 'T'},
        {"group", required_argument, 0, 'g'},
        {"platform", required_argument, 0, 'p'},
        {"model", required_argument, 0, 'm'},
        {"arch", required_argument, 0, 'a'},
        {"task", required_argument, 0, 't'},
        {"config", required_argument, 0, 'c'},
        {"cap", required_argument, 0, 'C'},
        {"top", required_argument, 0, 'o'},
        {"loaded-fb-mib", required_argument, 0, 'F'},
        {"phase-hold", required_argument, 0, 'H'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    *o = (opts_t){.cap_w = NAN, .top = 0.1};
    o->meta = (pfi_cli_meta){NULL, "", "", "dense", "pt", ""};
    pfi_trace_params_default(&o->params);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            o->steps = optarg;
            break;
        case 'T':
            o->telemetry = optarg;
            break;
        case 'g':
            o->meta.group = optarg;
            break;
        case 'p':
            o->meta.platform = optarg;
            break;
        case 'm':
            o->meta.model = optarg;
            break;
        case 'a':
            if (strcmp(optarg, "dense") && strcmp(optarg, "moe"))
                return pfi_cli_usage_error("trace", "--arch must be dense or moe");
            o->meta.arch = optarg;
            break;
        case 't':
            if (strcmp(optarg, "pt") && strcmp(optarg, "ft"))
                return pfi_cli_usage_error("trace", "--task must be pt or ft");
            o->meta.task = optarg;
            break;
        case 'c':
            o->meta.config = optarg;
            break;
        case 'C':
            if (pfi_cli_parse_positive(optarg, &o->cap_w))
                return pfi_cli_usage_error("trace", "bad --cap '%s'", optarg);
            break;
        case 'o':
            if (pfi_cli_parse_positive(optarg, &o->top) || o->top > 1)
                return pfi_cli_usage_error("trace", "--top must be in (0, 1]");
            break;
        case 'F':
            if (pfi_cli_parse_double(optarg, &o->params.loaded_fb_mib) ||
                o->params.loaded_fb_mib < 0)
                return pfi_cli_usage_error("trace", "bad --loaded-fb-mib '%s'", optarg);
            break;
        case 'H':
            if (pfi_cli_parse_double(optarg, &o->params.sustain_s) || o->params.sustain_s < 0)
                return pfi_cli_usage_error("trace", "bad --phase-hold '%s'", optarg);
            break;
        case 'j':
            o->json = 1;
            break;
        case 'h':
            fputs(help, stdout);
            return -1;
        default:
            return pfi_cli_usage_error("trace", "bad option");
        }
    }
    if (optind >= argc) return pfi_cli_usage_error("trace", "no TRACE file");
    return PFI_EXIT_OK;
}

int pfi_cmd_trace(int argc, char **argv)
{
    opts_t o;
    int ec = parse(argc, argv, &o);
    if (ec == -1) return PFI_EXIT_OK;
    if (ec != PFI_EXIT_OK) return ec;
    pfi_trace_set set = {0};
    pfi_error err;
    for (int i = optind; i < argc; i++)
        if (pfi_trace_read(argv[i], &set, &err) != PFI_OK) {
            pfi_trace_set_free(&set);
            return pfi_cli_fail("trace", &err);
        }
    if (o.steps && pfi_trace_steps_read(o.steps, &set, &err) != PFI_OK) {
        pfi_trace_set_free(&set);
        return pfi_cli_fail("trace", &err);
    }
    pfi_cli_measured *m = calloc(set.n, sizeof *m);
    char(*why)[600] = calloc(set.n, sizeof *why);
    if (!m || !why) {
        free(m), free(why);
        pfi_trace_set_free(&set);
        fprintf(stderr, "pfi trace: out of memory\n");
        return PFI_EXIT_DATA;
    }
    double tdp = pfi_platform_tdp_w(o.meta.platform);
    for (size_t i = 0; i < set.n; i++) {
        const pfi_trace_run *r = &set.runs[i];
        m[i].run = r;
        m[i].cap_w = isfinite(o.cap_w)    ? o.cap_w
                     : isfinite(r->cap_w) ? r->cap_w
                     : tdp > 0            ? tdp
                                          : NAN;
        m[i].ok = pfi_trace_run_summarize(r, &o.params, o.top, &m[i].sum, &err) == PFI_OK;
        if (!m[i].ok) {
            pfi_error_format(&err, why[i], sizeof why[i]);
            m[i].why = why[i];
            fprintf(stderr, "pfi trace: %s\n", why[i]);
            ec = PFI_EXIT_DATA;
            continue;
        }
        const pfi_trace_summary *s = &m[i].sum;
        fprintf(stderr,
                "pfi trace: %s: warmup %.3f s, startup %.3f s, training %.3f s; %zu of %zu "
                "samples in training, top %zu: %.1f W",
                r->name, s->start[PFI_PHASE_WARMUP], s->start[PFI_PHASE_STARTUP],
                s->start[PFI_PHASE_TRAINING], s->training_samples, s->samples, s->top_samples,
                s->power_w);
        if (s->tput_samples) fprintf(stderr, ", %.1f tokens/s", s->tput);
        fputc('\n', stderr);
    }
    if (o.json) {
        json_t *root = json_object(), *arr = json_array();
        for (size_t i = 0; i < set.n; i++)
            json_array_append_new(arr, pfi_cli_measured_json(&m[i]));
        pfi_json_set(root, "runs", arr);
        if (pfi_json_print(stdout, root) != 0) ec = PFI_EXIT_DATA;
        json_decref(root);
    } else if (pfi_cli_write_sweeps(stdout, &o.meta, m, set.n) != PFI_OK) {
        ec = PFI_EXIT_DATA;
    }
    if (o.telemetry && pfi_cli_write_telemetry_file(o.telemetry, &o.meta, m, set.n, &err) != PFI_OK)
        ec = pfi_cli_fail("trace", &err);
    free(m);
    free(why);
    pfi_trace_set_free(&set);
    return ec;
}
