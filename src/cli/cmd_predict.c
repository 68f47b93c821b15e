/* pfi predict: a fitted PFI predictor (pfi fit --out) applied to telemetry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_cli.h"
#include "cli.h"
#include "pfi/index.h"
#include "pfi/json.h"
#include "pfi/model_json.h"
#include "pfi/probe_trace.h"
#include "pfi/sweeps_csv.h"
#include "pfi/tm_aggregate.h"

static const char *about =
    "Estimates each telemetry row's PFI with a model saved by `pfi fit --out`: the\n"
    "intercept plus the coefficients times the row's features. With --trace, the\n"
    "rows come from a per-sample NVML/GPM probe trace, one per phase, averaged\n"
    "over the phase's top --top share of samples by power. A row missing a\n"
    "feature gets no estimate (\"undefined\", with the reason). Usage also:\n"
    "  pfi predict --model MODEL.json --trace TRACE.csv --phases A,B [OPTIONS]\n";

/* One telemetry row per phase of a probe trace (see the help text). */
static int read_trace(const char *path, const char *list, double top, pfi_telemetry **out,
                      pfi_error *err)
{
    char *copy = strdup(list);
    size_t np = 1;
    for (const char *q = list; *q; q++)
        np += *q == ',';
    const char **names = calloc(np + 1, sizeof *names);
    pfi_telemetry *t = calloc(1, sizeof *t);
    pfi_tm_row *rows = calloc(np, sizeof *rows);
    pfi_gpumodel_sample *smp = NULL;
    pfi_tm_row *tmp = NULL;
    size_t *ph = NULL, n = 0;
    int rc = PFI_OK;
    if (t) t->rows = rows; /* owned by t from here: destroy frees it */
    if (!copy || !names || !t || !rows) {
        rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
        goto done;
    }
    np = 0;
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ","))
        names[np++] = tok;
    if (np == 0) {
        rc = pfi_error_set(err, PFI_EINVAL, path, 0, "--phases lists no phase");
        goto done;
    }
    rc = pfi_probe_trace_read(path, names, &smp, &ph, &n, err);
    if (rc != PFI_OK) goto done;
    tmp = calloc(n ? n : 1, sizeof *tmp);
    if (!tmp) {
        rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < np && rc == PFI_OK; k++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (ph[i] == k) pfi_tm_from_probe_sample(&smp[i], &tmp[m++]);
        if (m == 0) {
            rc = pfi_error_set(err, PFI_ENOTFOUND, path, 0, "no sample of phase '%s'", names[k]);
            break;
        }
        rows[k].group = strdup(names[k]);
        t->n = k + 1;
        if (!rows[k].group) rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
        if (rc == PFI_OK) rc = pfi_tm_aggregate(tmp, m, top, &rows[k], err);
    }
done:
    if (rc == PFI_OK) {
        *out = t;
    } else {
        pfi_telemetry_destroy(t);
        if (!t) free(rows);
    }
    free(tmp);
    free(smp);
    free(ph);
    free(names);
    free(copy);
    return rc;
}

typedef struct {
    const char *model, *sweeps, *trace, *phases;
    double top;
    int json;
} args;

static int set_top(const pfi_cli_opt *o, const char *arg)
{
    double v;
    if (pfi_cli_parse_positive(arg, &v) || v > 1) return -1;
    *(double *)o->dst = v;
    return 0;
}

static int parse(int argc, char **argv, args *a, const char **tpath)
{
    *a = (args){.top = 0.1};
    const pfi_cli_opt opts[] = {
        PFI_OPT("model", "FILE", pfi_cli_set_str, &a->model, NULL,
                "the model from `pfi fit --out` (required)"),
        PFI_OPT("sweeps", "FILE", pfi_cli_set_str, &a->sweeps, NULL,
                "sweeps.csv: job metadata, and measured PFI with the validation"),
        PFI_OPT("trace", "FILE", pfi_cli_set_str, &a->trace, NULL,
                "a probe trace instead of TELEMETRY.csv"),
        PFI_OPT("phases", "LIST", pfi_cli_set_str, &a->phases, NULL,
                "the trace phases to estimate, comma-separated (with --trace)"),
        PFI_OPT("top", "FRAC", set_top, &a->top, "bad --top '%s' (want 0 < FRAC <= 1)",
                "share of each phase's samples, by power, to average (0.1)"),
        PFI_OPT("json", NULL, pfi_cli_set_flag, &a->json, NULL, "print one JSON object"),
    };
    const pfi_cli_spec spec = {.cmd = "predict",
                               .usage = "--model MODEL.json [OPTIONS] TELEMETRY.csv",
                               .about = about,
                               .opts = opts,
                               .n_opts = PFI_CLI_N(opts)};
    int first, ec = pfi_cli_parse(&spec, argc, argv, &first);
    if (ec >= 0) return ec;
    if (!a->model) return pfi_cli_usage_error("predict", "--model is required");
    if (a->trace && !a->phases) return pfi_cli_usage_error("predict", "--trace needs --phases");
    if (!a->trace && a->phases) return pfi_cli_usage_error("predict", "--phases needs --trace");
    if (first != argc - (a->trace ? 0 : 1))
        return pfi_cli_usage_error("predict", a->trace ? "no TELEMETRY.csv with --trace"
                                                       : "expected one TELEMETRY.csv");
    *tpath = a->trace ? a->trace : argv[first];
    return -1;
}

/* The estimates (and, with --sweeps, the measured PFI) of every row. */
typedef struct {
    double *est, *actual, *vx, *vy;
    char (*why)[200];
    char *has_actual;
    size_t nv;
} preds;

static int estimate(const args *A, const char *tpath, const pfi_model_file *mfp, int need_meta,
                    const pfi_telemetry *tm, const pfi_sweeps *sw, preds *P)
{
    const pfi_model_file mf = *mfp;
    const char *sweeps = A->sweeps, *trace = A->trace;
    double *est = P->est, *actual = P->actual, *vx = P->vx, *vy = P->vy;
    char(*why)[200] = P->why;
    char *has_actual = P->has_actual;
    size_t n = tm->n, nv = 0;
    pfi_error err = {0};
    for (size_t i = 0; i < n; i++) {
        const pfi_tm_row *r = &tm->rows[i];
        pfi_features f;
        pfi_features_compute(r, mf.boost_mhz, &f);
        if (need_meta) {
            const pfi_group *g = pfi_sweeps_find(sw, r->group);
            if (!g) {
                pfi_error_set(&err, PFI_ENOTFOUND, tpath, r->line, "group '%s' is not in %s",
                              r->group, sweeps);
                return pfi_cli_fail("predict", &err);
            }
            if (pfi_features_set_meta(&f, g->meta.arch, g->meta.task, g->meta.gpus, &err) !=
                PFI_OK) {
                snprintf(err.file, sizeof err.file, "%s", sweeps);
                err.line = g->line;
                return pfi_cli_fail("predict", &err);
            }
        }
        double x[PFI_MODEL_MAX_P];
        for (size_t j = 0; j < mf.set.p && !why[i][0]; j++) {
            int id = mf.set.ids[j];
            if ((f.valid >> id) & 1u)
                x[j] = f.v[id];
            else
                snprintf(why[i], sizeof why[i], "%s %s", pfi_feature_name(id),
                         ((f.undefined >> id) & 1u) ? "undefined (zero activity)" : "missing");
        }
        if (!why[i][0]) est[i] = pfi_model_predict(&mf.ols, x);
        const pfi_group *g = sw && !trace ? pfi_sweeps_find(sw, r->group) : NULL;
        pfi_index_result res;
        if (g && pfi_index_group(g, PFI_METHOD_RATIO, NULL, &res) == PFI_OK && res.has_pfi) {
            actual[i] = res.pfi;
            has_actual[i] = 1;
            if (!why[i][0]) {
                /* the validation sees the estimate as a one-feature model y = est */
                vx[nv] = est[i];
                vy[nv++] = res.pfi;
            }
        }
    }
    P->nv = nv;
    return PFI_EXIT_OK;
}

static int print(const args *A, pfi_model_file *mfp, const pfi_telemetry *tm, const pfi_sweeps *sw,
                 const preds *P, int has_val, const pfi_validation *valp)
{
    pfi_model_file mf = *mfp;
    const pfi_validation val = *valp;
    const char *trace = A->trace;
    int json = A->json, ec = PFI_EXIT_OK;
    size_t n = tm->n;
    const double *est = P->est, *actual = P->actual;
    const char(*why)[200] = (const char(*)[200])P->why;
    const char *has_actual = P->has_actual;
    if (json) {
        json_t *root = pfi_model_to_json(&mf), *arr = json_array();
        json_t *wrap = json_object();
        pfi_json_set(wrap, "model", root);
        for (size_t i = 0; i < n; i++) {
            json_t *o = json_object();
            pfi_json_set(o, "group", json_string(tm->rows[i].group));
            pfi_json_set(o, "pfi", why[i][0] ? json_null() : pfi_json_num(est[i]));
            if (sw && !trace)
                pfi_json_set(o, "pfi_actual",
                             has_actual[i] ? pfi_json_num(actual[i]) : json_null());
            if (why[i][0]) pfi_json_set(o, "note", json_string(why[i]));
            json_array_append_new(arr, o);
        }
        pfi_json_set(wrap, "predictions", arr);
        if (has_val) {
            json_t *v = json_object();
            pfi_json_set(v, "n", json_integer((json_int_t)val.n));
            pfi_json_set(v, "r2", val.has_r2 ? pfi_json_num(val.r2) : json_null());
            pfi_json_set(v, "rmse", pfi_json_num(val.rmse));
            pfi_json_set(v, "rho", val.has_rho ? pfi_json_num(val.rho) : json_null());
            pfi_json_set(wrap, "validation", v);
        }
        if (pfi_json_print(stdout, wrap) != 0) ec = PFI_EXIT_DATA;
        json_decref(wrap);
    } else {
        int w = 5;
        for (size_t i = 0; i < n; i++) {
            int l = (int)strlen(tm->rows[i].group);
            if (l > w) w = l;
        }
        int with_actual = sw && !trace;
        printf("%-*s  %9s%s\n", w, "group", "pfi_hat", with_actual ? "  pfi_actual" : "");
        for (size_t i = 0; i < n; i++) {
            char a[32] = "";
            if (with_actual) {
                if (has_actual[i])
                    snprintf(a, sizeof a, "  %10.3f", actual[i]);
                else
                    snprintf(a, sizeof a, "  %10s", "-");
            }
            if (why[i][0])
                printf("%-*s  %9s%s  (%s)\n", w, tm->rows[i].group, "undefined", a, why[i]);
            else
                printf("%-*s  %9.3f%s\n", w, tm->rows[i].group, est[i], a);
        }
        if (has_val) {
            char r2[16] = "undefined", rho[16] = "undefined";
            if (val.has_r2) snprintf(r2, sizeof r2, "%.3f", val.r2);
            if (val.has_rho) snprintf(rho, sizeof rho, "%.3f", val.rho);
            printf("validation over %zu groups: R2 = %s, RMSE = %.3f, Spearman rho = %s\n", val.n,
                   r2, val.rmse, rho);
        }
    }
    return ec;
}

int pfi_cmd_predict(int argc, char **argv)
{
    args A;
    const char *tpath = NULL;
    int ec = parse(argc, argv, &A, &tpath);
    if (ec >= 0) return ec;
    const char *model = A.model, *sweeps = A.sweeps, *trace = A.trace, *phases = A.phases;
    double top = A.top;
    pfi_error err = {0};
    pfi_model_file mf;
    pfi_telemetry *tm = NULL;
    pfi_sweeps *sw = NULL;
    if (pfi_model_load(model, &mf, &err) != PFI_OK) return pfi_cli_fail("predict", &err);
    int need_meta = 0;
    for (size_t j = 0; j < mf.set.p; j++)
        need_meta |= mf.set.ids[j] >= PFI_FEAT_N_TELEMETRY;
    if (need_meta && !sweeps) {
        pfi_error_set(&err, PFI_EINVAL, model, 0,
                      "the model uses job metadata (arch, task, GPUs): pass --sweeps");
        return pfi_cli_fail("predict", &err);
    }
    int rc =
        trace ? read_trace(trace, phases, top, &tm, &err) : pfi_telemetry_read(tpath, &tm, &err);
    if (rc == PFI_OK && sweeps) rc = pfi_sweeps_read(sweeps, 0, &sw, &err);
    if (rc != PFI_OK) {
        pfi_telemetry_destroy(tm);
        return pfi_cli_fail("predict", &err);
    }
    size_t n = tm->n;
    double *est = calloc(n ? n : 1, sizeof *est), *actual = calloc(n ? n : 1, sizeof *actual);
    double *vx = calloc(n ? n : 1, sizeof *vx), *vy = calloc(n ? n : 1, sizeof *vy);
    char(*why)[200] = calloc(n ? n : 1, sizeof *why);
    char *has_actual = calloc(n ? n : 1, 1);
    pfi_validation val = {0};
    int has_val = 0;
    ec = PFI_EXIT_OK;
    if (!est || !why || !actual || !vx || !vy || !has_actual) {
        fprintf(stderr, "pfi predict: out of memory\n");
        ec = PFI_EXIT_DATA;
        goto done;
    }
    preds P = {est, actual, vx, vy, why, has_actual, 0};
    ec = estimate(&A, tpath, &mf, need_meta, tm, sw, &P);
    if (ec != PFI_EXIT_OK) goto done;
    size_t nv = P.nv;
    if (nv > 0) {
        pfi_ols ident = {.p = 1, .n = nv, .coef = {0, 1}};
        has_val = pfi_model_validate(&ident, vx, vy, nv, &val) == PFI_OK;
    }
    ec = print(&A, &mf, tm, sw, &P, has_val, &val);
done:
    free(est);
    free(actual);
    free(vx);
    free(vy);
    free(has_actual);
    free(why);
    pfi_sweeps_destroy(sw);
    pfi_telemetry_destroy(tm);
    return ec;
}
