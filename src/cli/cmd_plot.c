/* pfi plot: one figure of the report from a user's files (src/report draws it). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pfi/json.h"
#include "pfi/report.h"

static void usage_kinds(FILE *f)
{
    for (int k = 0; k < PFI_PLOT_COUNT; k++)
        fprintf(f, "  %-12s %s\n", pfi_plot_kind_name(k), pfi_plot_kind_inputs(k));
}

static const char *help_head =
    "Usage: pfi plot KIND [OPTIONS] FILE... -o OUT.svg|png|pdf\n"
    "\n"
    "Draws one figure of `pfi report` (same colours, markers and axes) from your\n"
    "files, for your own papers and slides. The format follows OUT's suffix.\n"
    "\n"
    "Kinds and the files they take:\n";
static const char *help_tail =
    "\n"
    "  trace: Fig. 2 a run's GPU power and throughput over time (--steps for the\n"
    "  throughput); curves: Fig. 3 power-throughput curves; pfi: Fig. 4 distribution, by regime\n"
    "  and GPUs; features: Fig. 5/14 PFI against each telemetry feature; clocks:\n"
    "  Fig. 6 SM and memory clock against cap (GPU model, and the probe with\n"
    "  --probe); predicted: Fig. 7; gap: Fig. 8 from `pfi simulate --json` output\n"
    "  (one file per mix); ce: Fig. 9, the paper's job; ce-groups: Fig. 9 for every\n"
    "  other group; definitions: Fig. 10; groups, groups2, groups3: Figs. 11, 12, 13,\n"
    "  raw and normalised curves, the groups split in order as the paper (at most 10\n"
    "  a figure over at most three).\n"
    "\n"
    "Options:\n"
    "  -o, --out FILE   the figure (.svg, .png or .pdf), written whole or not at all\n"
    "  --probe DIR      clocks: the H200 probe folder (trace.csv)\n"
    "  --steps FILE     trace: the step log, time_s[,run],step,tokens\n"
    "  --size WxH       pixels (points for PDF); default the report's size\n"
    "  --json           print {\"kind\",\"out\"} when done\n"
    "  -h, --help       show this help\n"
    "\n"
    "Exit status: 0 on success, 1 on bad input data, 2 on bad usage.\n";

int pfi_cmd_plot(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'},
        {"probe", required_argument, 0, 'p'},
        {"steps", required_argument, 0, 'S'},
        {"size", required_argument, 0, 's'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    pfi_plot_opts o = {0};
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o.out = optarg;
            break;
        case 'p':
            o.probe_dir = optarg;
            break;
        case 'S':
            o.steps = optarg;
            break;
        case 's':
            if (sscanf(optarg, "%dx%d", &o.width, &o.height) != 2 || o.width < 100 ||
                o.height < 100 || o.width > 10000 || o.height > 10000)
                return pfi_cli_usage_error("plot", "bad --size '%s' (want WxH, 100-10000)", optarg);
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            fputs(help_head, stdout);
            usage_kinds(stdout);
            fputs(help_tail, stdout);
            return PFI_EXIT_OK;
        default:
            return pfi_cli_usage_error("plot", "bad option");
        }
    }
    if (optind >= argc) return pfi_cli_usage_error("plot", "expected a KIND");
    pfi_plot_kind kind;
    if (pfi_plot_kind_parse(argv[optind], &kind))
        return pfi_cli_usage_error("plot", "unknown KIND '%s'", argv[optind]);
    if (!o.out) return pfi_cli_usage_error("plot", "expected -o OUT.svg|png|pdf");
    int nf = argc - optind - 1;
    char **f = argv + optind + 1;
    /* the per-group figures draw held-out groups too, after the others */
    int per_group = kind == PFI_PLOT_GROUPS || kind == PFI_PLOT_GROUPS2 ||
                    kind == PFI_PLOT_GROUPS3 || kind == PFI_PLOT_CE_GROUPS;
    int want_min = kind == PFI_PLOT_CLOCKS ? 0 : 1,
        want_max = kind == PFI_PLOT_CLOCKS                             ? 0
                   : kind == PFI_PLOT_PREDICTED                        ? 3
                   : kind == PFI_PLOT_FEATURES || kind == PFI_PLOT_GAP ? 2
                   : per_group                                         ? 2
                                                                       : 1;
    if (kind == PFI_PLOT_FEATURES || kind == PFI_PLOT_PREDICTED) want_min = 2;
    if (nf < want_min || nf > want_max)
        return pfi_cli_usage_error("plot", "%s takes %s", pfi_plot_kind_name(kind),
                                   pfi_plot_kind_inputs(kind));
    if (o.steps && kind != PFI_PLOT_TRACE)
        return pfi_cli_usage_error("plot", "--steps is for the trace kind");
    if (kind == PFI_PLOT_TRACE) {
        o.trace = f[0];
    } else if (kind == PFI_PLOT_GAP) {
        o.sim_json[0] = f[0];
        o.sim_json[1] = nf > 1 ? f[1] : NULL;
    } else if (per_group && nf == 2) {
        /* held-out groups need no telemetry here */
        o.sweeps = f[0];
        o.heldout = f[1];
    } else if (nf > 0) {
        o.sweeps = f[0];
        o.telemetry = nf > 1 ? f[1] : NULL;
        o.heldout = nf > 2 ? f[2] : NULL;
    }
    pfi_error err = {0};
    if (pfi_report_plot(kind, &o, &err) != PFI_OK) return pfi_cli_fail("plot", &err);
    if (json) {
        json_t *root = json_object();
        pfi_json_set(root, "kind", json_string(pfi_plot_kind_name(kind)));
        pfi_json_set(root, "out", json_string(o.out));
        int ec = pfi_json_print(stdout, root) == 0 ? PFI_EXIT_OK : PFI_EXIT_DATA;
        json_decref(root);
        return ec;
    }
    printf("%s\n", o.out);
    return PFI_EXIT_OK;
}
