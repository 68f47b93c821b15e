/* pfi corr: Spearman correlation of every telemetry feature with PFI, with
 * Benjamini-Hochberg q-values across the features (paper Fig. 5 and 14). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_cli.h"
#include "cli.h"
#include "pfi/json.h"

static const char *about =
    "Spearman rank correlation between each group's PFI (from SWEEPS.csv) and every\n"
    "telemetry feature of its uncapped run (from TELEMETRY.csv): the 13 DCGM metrics\n"
    "and the composites of the paper's Fig. 14, with two-sided p and the\n"
    "Benjamini-Hochberg q over all features with a defined rho.\n";

int pfi_cmd_corr(int argc, char **argv)
{
    const char *holdout = NULL;
    double boost = PFI_FEAT_H200_BOOST_MHZ;
    int json = 0, first;
    const pfi_cli_opt opts[] = {
        PFI_OPT("holdout", "FILE", pfi_cli_set_str, &holdout, NULL,
                "validation groups, left out of every fit and test"),
        PFI_OPT("boost-mhz", "MHZ", pfi_cli_set_pos, &boost, NULL,
                "maximum SM clock for the clock fraction (1980, H200)"),
        PFI_OPT("json", NULL, pfi_cli_set_flag, &json, NULL, "print one JSON object"),
    };
    const pfi_cli_spec spec = {.cmd = "corr",
                               .usage = "[OPTIONS] SWEEPS.csv TELEMETRY.csv",
                               .about = about,
                               .opts = opts,
                               .n_opts = PFI_CLI_N(opts)};
    int pec = pfi_cli_parse(&spec, argc, argv, &first);
    if (pec >= 0) return pec;
    if (first != argc - 2)
        return pfi_cli_usage_error("corr", "expected SWEEPS.csv and TELEMETRY.csv");
    pfi_cli_dataset d;
    int ec = pfi_cli_dataset_load("corr", argv[first], argv[first + 1], holdout, boost, &d);
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
