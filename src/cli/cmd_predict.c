/* pfi predict: a fitted PFI predictor (pfi fit --out) applied to telemetry. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_cli.h"
#include "cli.h"
#include "pfi/json.h"
#include "pfi/model_json.h"
#include "pfi/sweeps_csv.h"

static const char *help =
    "Usage: pfi predict --model MODEL.json [OPTIONS] TELEMETRY.csv\n"
    "\n"
    "Estimates each telemetry row's PFI with a model saved by `pfi fit --out`:\n"
    "the intercept plus the coefficients times the row's features.\n"
    "\n"
    "Options:\n"
    "  --model FILE     the model (required)\n"
    "  --sweeps FILE    sweeps.csv giving each group's arch, task and GPU count,\n"
    "                   needed only by models with job metadata features\n"
    "  --json           {\"model\":{\"features\",\"intercept\",\"coefficients\"},\n"
    "                   \"predictions\":[{\"group\",\"pfi\"}]}\n"
    "  -h, --help       show this help\n"
    "\n"
    "A row missing a feature the model needs, or where it is undefined (a zero\n"
    "activity in a denominator), gets no estimate: \"undefined\" (null in JSON)\n"
    "with the reason. Estimates outside the model's training range are\n"
    "extrapolations; linear models do not know their limits.\n"
    "\n"
    "Exit status: 0 on success, 1 on bad input data, 2 on bad usage.\n";

int pfi_cmd_predict(int argc, char **argv)
{
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'}, {"sweeps", required_argument, 0, 's'},
        {"json", no_argument, 0, 'j'},        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *model = NULL, *sweeps = NULL;
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case 's': sweeps = optarg; break;
        case 'j': json = 1; break;
        case 'h': fputs(help, stdout); return PFI_EXIT_OK;
        default: return pfi_cli_usage_error("predict", "bad option");
        }
    }
    if (!model) return pfi_cli_usage_error("predict", "--model is required");
    if (optind != argc - 1) return pfi_cli_usage_error("predict", "expected one TELEMETRY.csv");
    const char *tpath = argv[optind];

    pfi_error err = {0};
    pfi_model_file mf;
    pfi_telemetry *tm = NULL;
    pfi_sweeps *sw = NULL;
    if (pfi_model_load(model, &mf, &err) != PFI_OK) return pfi_cli_fail("predict", &err);
    int need_meta = 0;
    for (size_t j = 0; j < mf.set.p; j++) need_meta |= mf.set.ids[j] >= PFI_FEAT_N_TELEMETRY;
    if (need_meta && !sweeps) {
        pfi_error_set(&err, PFI_EINVAL, model, 0,
                      "the model uses job metadata (arch, task, GPUs): pass --sweeps");
        return pfi_cli_fail("predict", &err);
    }
    int rc = pfi_telemetry_read(tpath, &tm, &err);
    if (rc == PFI_OK && sweeps) rc = pfi_sweeps_read(sweeps, 0, &sw, &err);
    if (rc != PFI_OK) {
        pfi_telemetry_destroy(tm);
        return pfi_cli_fail("predict", &err);
    }
    size_t n = tm->n;
    double *est = calloc(n ? n : 1, sizeof *est);
    char(*why)[200] = calloc(n ? n : 1, sizeof *why);
    int ec = PFI_EXIT_OK;
    if (!est || !why) {
        fprintf(stderr, "pfi predict: out of memory\n");
        ec = PFI_EXIT_DATA;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const pfi_tm_row *r = &tm->rows[i];
        pfi_features f;
        pfi_features_compute(r, mf.boost_mhz, &f);
        if (need_meta) {
            const pfi_group *g = pfi_sweeps_find(sw, r->group);
            if (!g) {
                pfi_error_set(&err, PFI_ENOTFOUND, tpath, r->line,
                              "group '%s' is not in %s", r->group, sweeps);
                ec = pfi_cli_fail("predict", &err);
                goto done;
            }
            if (pfi_features_set_meta(&f, g->meta.arch, g->meta.task, g->meta.gpus, &err) !=
                PFI_OK) {
                snprintf(err.file, sizeof err.file, "%s", sweeps);
                err.line = g->line;
                ec = pfi_cli_fail("predict", &err);
                goto done;
            }
        }
        double x[PFI_MODEL_MAX_P];
        for (size_t j = 0; j < mf.set.p && !why[i][0]; j++) {
            int id = mf.set.ids[j];
            if ((f.valid >> id) & 1u) x[j] = f.v[id];
            else
                snprintf(why[i], sizeof why[i], "%s %s", pfi_feature_name(id),
                         ((f.undefined >> id) & 1u) ? "undefined (zero activity)" : "missing");
        }
        if (!why[i][0]) est[i] = pfi_model_predict(&mf.ols, x);
    }
    if (json) {
        json_t *root = pfi_model_to_json(&mf), *arr = json_array();
        json_t *wrap = json_object();
        pfi_json_set(wrap, "model", root);
        for (size_t i = 0; i < n; i++) {
            json_t *o = json_object();
            pfi_json_set(o, "group", json_string(tm->rows[i].group));
            pfi_json_set(o, "pfi", why[i][0] ? json_null() : pfi_json_num(est[i]));
            if (why[i][0]) pfi_json_set(o, "note", json_string(why[i]));
            json_array_append_new(arr, o);
        }
        pfi_json_set(wrap, "predictions", arr);
        if (pfi_json_print(stdout, wrap) != 0) ec = PFI_EXIT_DATA;
        json_decref(wrap);
    } else {
        int w = 5;
        for (size_t i = 0; i < n; i++) {
            int l = (int)strlen(tm->rows[i].group);
            if (l > w) w = l;
        }
        printf("%-*s  %9s\n", w, "group", "pfi_hat");
        for (size_t i = 0; i < n; i++) {
            if (why[i][0]) printf("%-*s  %9s  (%s)\n", w, tm->rows[i].group, "undefined", why[i]);
            else printf("%-*s  %9.3f\n", w, tm->rows[i].group, est[i]);
        }
    }
done:
    free(est);
    free(why);
    pfi_sweeps_destroy(sw);
    pfi_telemetry_destroy(tm);
    return ec;
}
