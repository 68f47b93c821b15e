/* pfi: the command-line tool. Dispatches to one subcommand per file. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const pfi_cli_cmd commands[] = {
    {"index", "PFI with confidence intervals from power-cap sweeps", pfi_cmd_index},
    {"model", "the GPU power-cap model: one job's clock, power, throughput under caps",
     pfi_cmd_model},
    {"dataset", "rebuild the embedded paper dataset (a reconstruction from its tables)",
     pfi_cmd_dataset},
    {"stats", "PFI by regime: medians, Kruskal-Wallis, Dunn's test (Tables 10-11)", pfi_cmd_stats},
    {"corr", "Spearman rho, p and BH q of every telemetry feature vs PFI", pfi_cmd_corr},
    {"fit", "PFI predictor ablation: OLS with LOO and LOCO CV (Table 3)", pfi_cmd_fit},
    {"predict", "PFI estimates from telemetry with a fitted model", pfi_cmd_predict},
    {"compare", "rank agreement of two platforms' PFI (Table 8)", pfi_cmd_compare},
    {"allocate", "per-job power caps under a cluster power budget, by policy", pfi_cmd_allocate},
    {"sweep", "measure a training job's PFI: run it under each power cap", pfi_cmd_sweep},
    {"trace", "steady-state points (phases, top-10% means) from GPU traces", pfi_cmd_trace},
    {"export", "sweeps.csv and telemetry.csv of the jobs a pfid store has seen", pfi_cmd_export},
    {"simulate", "the Sec. 6 curtailment experiment: policies vs the oracle (Fig. 8)",
     pfi_cmd_simulate},
    {"report", "the paper end to end as a folder: report.html, tables, figures", pfi_cmd_report},
    {"plot", "one figure of the report from your files, as SVG, PNG or PDF", pfi_cmd_plot},
    {"control", "the cluster controller: site power limits to per-job GPU caps", pfi_cmd_control},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "Usage: pfi [--version] [--help] COMMAND [ARGS...]\n\n"
               "The Power Flexibility Index toolkit: how much throughput a training job\n"
               "keeps when its GPUs' power is capped.\n\nCommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun 'pfi COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return PFI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return PFI_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("pfi %s\n", PFI_VERSION);
        return PFI_EXIT_OK;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(cmd, commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "pfi: unknown command '%s'\nTry 'pfi --help'.\n", cmd);
    return PFI_EXIT_USAGE;
}
