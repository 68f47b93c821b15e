/* pfi corr: Spearman correlation of every telemetry feature with PFI, with
 * Benjamini-Hochberg q-values across the features (paper Fig. 5 and 14). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_cli.h"
#include "cli.h"
#include "pfi/json.h"

static const char *help =
    "Usage: pfi corr [OPTIONS] SWEEPS.csv TELEMETRY.csv\n"
    "\n"
    "Spearman rank correlation between each group's PFI (ratio definition,\n"
    "from SWEEPS.csv) and every telemetry feature of its uncapped run (from\n"
    "TELEMETRY.csv): the 13 DCGM metrics and the composites of the paper's\n"
    "Fig. 14 (DRAM copy product, arithmetic intensity, tensor/SM, DRAM/SM,\n"
    "power per SM, clock fraction of boost, NVLink per SM and per DRAM,\n"
    "copy/util fraction). p is two-sided (t approximation, n-2 df); q is the\n"
    "Benjamini-Hochberg FDR-adjusted p over all features with a defined rho.\n"
    "\n"
    "Options:\n"
    "  --holdout FILE   validation groups, left out of every fit and test: a\n"
    "                   sweeps.csv of extra groups whose telemetry rows are in\n"
    "                   TELEMETRY.csv (e.g. data/paper-h200/heldout-sweeps.csv),\n"
    "                   or a CSV whose `group` column names groups of SWEEPS.csv\n"
    "  --boost-mhz MHZ  maximum SM clock for the clock fraction (default 1980, H200)\n"
    "  --json           {\"n_groups\",\"features\":[{\"feature\",\"label\",\"n\",\"rho\",\n"
    "                   \"p\",\"q\"}]}; an undefined rho is null with a \"note\"\n"
    "  -h, --help       show this help\n"
    "\n"
    "Every telemetry row must name a sweep group and every group needs a row.\n"
    "A feature whose denominator activity is 0 for a group is undefined there\n"
    "and that group is left out of that feature's correlation (n shows it).\n"
    "\n"
    "Exit status: 0 on success, 1 on bad input data, 2 on bad usage.\n";

int pfi_cmd_corr(int argc, char **argv)
{
    static const struct option opts[] = {
        {"holdout", required_argument, 0, 'H'},
        {"boost-mhz", required_argument, 0, 'B'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *holdout = NULL;
    double boost = PFI_FEAT_H200_BOOST_MHZ;
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'H':
            holdout = optarg;
            break;
        case 'B':
            if (pfi_cli_parse_positive(optarg, &boost))
                return pfi_cli_usage_error("corr", "bad --boost-mhz '%s'", optarg);
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            fputs(help, stdout);
            return PFI_EXIT_OK;
        default:
            return pfi_cli_usage_error("corr", "bad option");
        }
    }
    if (optind != argc - 2)
        return pfi_cli_usage_error("corr", "expected SWEEPS.csv and TELEMETRY.csv");
    pfi_cli_dataset d;
    int ec = pfi_cli_dataset_load("corr", argv[optind], argv[optind + 1], holdout, boost, &d);
    if (ec != PFI_EXIT_OK) return ec;
    pfi_corr corr[PFI_FEAT_N_TELEMETRY];
    if (pfi_analysis_corr(d.obs, d.n, corr) != PFI_OK) {
        fprintf(stderr, "pfi corr: out of memory\n");
        pfi_cli_dataset_free(&d);
        return PFI_EXIT_DATA;
    }
    size_t ng = 0;
    for (size_t i = 0; i < d.n; i++)
        ng += !d.obs[i].holdout;
    if (json) {
        json_t *root = json_object(), *arr = json_array();
        pfi_json_set(root, "n_groups", json_integer((json_int_t)ng));
        for (int f = 0; f < PFI_FEAT_N_TELEMETRY; f++) {
            json_t *o = json_object();
            pfi_json_set(o, "feature", json_string(pfi_feature_name(f)));
            pfi_json_set(o, "label", json_string(pfi_feature_label(f)));
            pfi_json_set(o, "n", json_integer((json_int_t)corr[f].n));
            pfi_json_set(o, "rho", corr[f].has ? pfi_json_num(corr[f].rho) : json_null());
            pfi_json_set(o, "p", corr[f].has ? pfi_json_num(corr[f].p) : json_null());
            pfi_json_set(o, "q", corr[f].has ? pfi_json_num(corr[f].q) : json_null());
            if (!corr[f].has) pfi_json_set(o, "note", json_string(corr[f].why));
            json_array_append_new(arr, o);
        }
        pfi_json_set(root, "features", arr);
        if (pfi_json_print(stdout, root) != 0) ec = PFI_EXIT_DATA;
        json_decref(root);
    } else {
        printf("Spearman rho vs PFI over %zu groups (* q < 0.05, ** q < 0.01, BH over features)\n",
               ng);
        printf("%-22s %3s %8s %9s %9s\n", "feature", "n", "rho", "p", "q");
        for (int f = 0; f < PFI_FEAT_N_TELEMETRY; f++) {
            if (!corr[f].has) {
                printf("%-22s %3zu %8s  (%s)\n", pfi_feature_name(f), corr[f].n, "undefined",
                       corr[f].why);
                continue;
            }
            printf("%-22s %3zu %8.3f %9.3g %9.3g %s\n", pfi_feature_name(f), corr[f].n, corr[f].rho,
                   corr[f].p, corr[f].q,
                   corr[f].q < 0.01   ? "**"
                   : corr[f].q < 0.05 ? "*"
                                      : "");
        }
    }
    pfi_cli_dataset_free(&d);
    return ec;
}
