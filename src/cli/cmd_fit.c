/* pfi fit: the PFI predictor ablation of the paper's Table 3, validation on
 * held-out groups, and the sensitivity checks of Tables 12 and 13. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_cli.h"
#include "cli.h"
#include "pfi/json.h"
#include "pfi/model_json.h"

static const char *about =
    "Fits least-squares predictors of PFI from telemetry (paper Sec. 5): for the\n"
    "seven predictor sets of Table 3 and any --features set, in-sample R2, LOO and\n"
    "LOCO (arch x task) R2, RMSE and Spearman rho, and the validation R2 on held-out\n"
    "groups; then the DRAM copy product's rho as high-leverage groups are dropped\n"
    "(Table 12) and within subgroups (Table 13).\n";

static json_t *cv_json(const pfi_cv_outcome *o)
{
    json_t *j = json_object();
    if (o->rc != PFI_OK) {
        pfi_json_set(j, "r2", json_null());
        pfi_json_set(j, "rmse", json_null());
        pfi_json_set(j, "rho", json_null());
        pfi_json_set(j, "note", json_string(o->msg));
        return j;
    }
    pfi_json_set(j, "r2", pfi_json_num(o->cv.r2_oos));
    pfi_json_set(j, "rmse", pfi_json_num(o->cv.rmse));
    pfi_json_set(j, "rho", o->cv.has_rho ? pfi_json_num(o->cv.rho) : json_null());
    pfi_json_set(j, "folds", json_integer((json_int_t)o->cv.folds));
    return j;
}

static json_t *set_json(const pfi_ablation *a)
{
    json_t *o = json_object();
    pfi_json_set(o, "predictors", json_string(a->set.name));
    pfi_json_set(o, "p", json_integer((json_int_t)a->set.p));
    pfi_json_set(o, "n", json_integer((json_int_t)a->n));
    if (a->fit_rc == PFI_OK) {
        pfi_json_set(o, "r2_in", pfi_json_num(a->ols.r2));
        pfi_json_set(o, "intercept", pfi_json_num(a->ols.coef[0]));
        json_t *co = json_object();
        for (size_t j = 0; j < a->set.p; j++)
            pfi_json_set(co, pfi_feature_name(a->set.ids[j]), pfi_json_num(a->ols.coef[j + 1]));
        pfi_json_set(o, "coefficients", co);
    } else {
        pfi_json_set(o, "r2_in", json_null());
        pfi_json_set(o, "note", json_string(a->fit_msg));
    }
    pfi_json_set(o, "loo", cv_json(&a->loo));
    pfi_json_set(o, "loco", cv_json(&a->loco));
    if (a->has_val) {
        json_t *v = json_object();
        pfi_json_set(v, "n", json_integer((json_int_t)a->val.n));
        pfi_json_set(v, "r2", a->val.has_r2 ? pfi_json_num(a->val.r2) : json_null());
        pfi_json_set(v, "rmse", pfi_json_num(a->val.rmse));
        pfi_json_set(v, "rho", a->val.has_rho ? pfi_json_num(a->val.rho) : json_null());
        pfi_json_set(o, "validation", v);
    }
    return o;
}

static void fmt(char *b, size_t len, int ok, double v, const char *f)
{
    if (ok)
        snprintf(b, len, f, v);
    else
        snprintf(b, len, "undef");
}

static void print_set(const pfi_ablation *a)
{
    char r2[16], lr[16], lm[16], lh[16], cr[16], cm[16], ch[16], vr[16];
    int loo = a->loo.rc == PFI_OK, loco = a->loco.rc == PFI_OK;
    fmt(r2, sizeof r2, a->fit_rc == PFI_OK, a->ols.r2, "%.3f");
    fmt(lr, sizeof lr, loo, a->loo.cv.r2_oos, "%.3f");
    fmt(lm, sizeof lm, loo, a->loo.cv.rmse, "%.3f");
    fmt(lh, sizeof lh, loo && a->loo.cv.has_rho, a->loo.cv.rho, "%.3f");
    fmt(cr, sizeof cr, loco, a->loco.cv.r2_oos, "%.3f");
    fmt(cm, sizeof cm, loco, a->loco.cv.rmse, "%.3f");
    fmt(ch, sizeof ch, loco && a->loco.cv.has_rho, a->loco.cv.rho, "%.3f");
    fmt(vr, sizeof vr, a->has_val && a->val.has_r2, a->val.r2, "%.3f");
    printf("%-40s %2zu %6s | %7s %6s %6s | %8s %6s %6s | %6s\n", a->set.name, a->set.p, r2, lr, lm,
           lh, cr, cm, ch, a->has_val ? vr : "-");
}

/* What the command prints. */
typedef struct {
    const pfi_cli_dataset *d;
    const pfi_ablation *ab;
    size_t nsets, nh, kmax;
    const pfi_leverage_step *lev;
    int lev_ok;
    const size_t *idx;
    const pfi_subgroup_rho *sub;
    const char *out;
} fit_out;

static int print_json(const fit_out *F)
{
    const pfi_cli_dataset d = *F->d;
    const pfi_ablation *ab = F->ab;
    const pfi_leverage_step *lev = F->lev;
    const pfi_subgroup_rho *sub = F->sub;
    const size_t *idx = F->idx, nsets = F->nsets, nh = F->nh, kmax = F->kmax;
    int lev_ok = F->lev_ok, ec = PFI_EXIT_OK;
    const char *out = F->out;
    json_t *root = json_object(), *arr = json_array();
    pfi_json_set(root, "n_train", json_integer((json_int_t)(d.n - nh)));
    pfi_json_set(root, "n_holdout", json_integer((json_int_t)nh));
    pfi_json_set(root, "r2_oos_definition",
                 json_string("1 - SS_res(held-out predictions) / SS_tot(full-sample mean)"));
    for (size_t i = 0; i < nsets; i++)
        json_array_append_new(arr, set_json(&ab[i]));
    pfi_json_set(root, "sets", arr);
    json_t *lj = json_array();
    for (size_t k = 0; lev_ok && k <= kmax; k++) {
        json_t *o = json_object();
        pfi_json_set(o, "k", json_integer((json_int_t)k));
        pfi_json_set(o, "n", json_integer((json_int_t)lev[k].n));
        pfi_json_set(o, "rho", lev[k].has ? pfi_json_num(lev[k].rho) : json_null());
        pfi_json_set(o, "p", lev[k].has ? pfi_json_num(lev[k].p) : json_null());
        if (k > 0) pfi_json_set(o, "dropped", json_string(d.obs[idx[lev[k].dropped]].name));
        json_array_append_new(lj, o);
    }
    pfi_json_set(root, "leverage", lj);
    json_t *sj = json_array();
    for (int s = 0; s < PFI_TABLE13_SUBGROUPS; s++) {
        json_t *o = json_object();
        pfi_json_set(o, "subgroup", json_string(sub[s].name));
        pfi_json_set(o, "n", json_integer((json_int_t)sub[s].n));
        pfi_json_set(o, "rho", sub[s].has ? pfi_json_num(sub[s].rho) : json_null());
        pfi_json_set(o, "p", sub[s].has ? pfi_json_num(sub[s].p) : json_null());
        json_array_append_new(sj, o);
    }
    pfi_json_set(root, "subgroups", sj);
    if (out) pfi_json_set(root, "model", json_string(out));
    if (pfi_json_print(stdout, root) != 0) ec = PFI_EXIT_DATA;
    json_decref(root);
    return ec;
}

static void print_text(const fit_out *F)
{
    const pfi_cli_dataset d = *F->d;
    const pfi_ablation *ab = F->ab;
    const pfi_leverage_step *lev = F->lev;
    const pfi_subgroup_rho *sub = F->sub;
    const size_t *idx = F->idx, nsets = F->nsets, nh = F->nh, kmax = F->kmax;
    int lev_ok = F->lev_ok;
    printf("PFI predictor ablation (Table 3): %zu training groups, %zu held out\n", d.n - nh, nh);
    printf("%-40s %2s %6s | %7s %6s %6s | %8s %6s %6s | %6s\n", "predictors", "p", "R2in", "LOO R2",
           "RMSE", "rho", "LOCO R2", "RMSE", "rho", "R2val");
    for (size_t i = 0; i < nsets; i++)
        print_set(&ab[i]);
    for (size_t i = 0; i < nsets; i++) {
        if (ab[i].fit_rc != PFI_OK)
            printf("note: %s: %s\n", ab[i].set.name, ab[i].fit_msg);
        else if (ab[i].loo.rc != PFI_OK)
            printf("note: %s: LOO: %s\n", ab[i].set.name, ab[i].loo.msg);
        if (ab[i].fit_rc == PFI_OK && ab[i].loco.rc != PFI_OK)
            printf("note: %s: LOCO: %s\n", ab[i].set.name, ab[i].loco.msg);
    }
    printf("out-of-sample R2 = 1 - SS_res(held-out) / SS_tot(full-sample mean)\n");
    if (lev_ok) {
        printf("\nDRAM copy product vs PFI, k highest-leverage groups dropped (Table 12):\n");
        for (size_t k = 0; k <= kmax; k++) {
            char r[16];
            fmt(r, sizeof r, lev[k].has, lev[k].rho, "%.3f");
            printf("  k=%zu n=%-3zu rho=%s%s%s\n", k, lev[k].n, r, k ? "  dropped " : "",
                   k ? d.obs[idx[lev[k].dropped]].name : "");
        }
    }
    printf("\nDRAM copy product vs PFI by subgroup (Table 13):\n");
    for (int s = 0; s < PFI_TABLE13_SUBGROUPS; s++) {
        char r[16], p[16];
        fmt(r, sizeof r, sub[s].has, sub[s].rho, "%.3f");
        fmt(p, sizeof p, sub[s].has, sub[s].p, "%.3g");
        printf("  %-15s n=%-3zu rho=%-6s p=%s\n", sub[s].name, sub[s].n, r, p);
    }
}

static int set_features(const pfi_cli_opt *o, const char *arg)
{
    pfi_error err = {0};
    if (pfi_analysis_parse_set(arg, o->dst, &err) != PFI_OK) {
        pfi_cli_usage_error("fit", "--features: %s", err.msg);
        return -2;
    }
    return 0;
}

int pfi_cmd_fit(int argc, char **argv)
{
    const char *holdout = NULL, *out = NULL, *features = NULL;
    double boost = PFI_FEAT_H200_BOOST_MHZ;
    int json = 0;
    pfi_feature_set extra = {0};
    pfi_error err = {0};
    const pfi_cli_opt opts[] = {
        PFI_OPT("features", "LIST", set_features, &extra, NULL,
                "another predictor set: names joined by ',' or '+', job_metadata, all_dcgm"),
        PFI_OPT("out", "FILE", pfi_cli_set_str, &out, NULL,
                "save the fitted model (--features, else DRAM copy product) for pfi predict"),
        PFI_OPT("holdout", "FILE", pfi_cli_set_str, &holdout, NULL,
                "validation groups, left out of every fit (sweeps.csv or a group list)"),
        PFI_OPT("boost-mhz", "MHZ", pfi_cli_set_pos, &boost, NULL,
                "maximum SM clock for the clock fraction (1980)"),
        PFI_OPT("json", NULL, pfi_cli_set_flag, &json, NULL, "print one JSON object"),
    };
    const pfi_cli_spec spec = {.cmd = "fit",
                               .usage = "[OPTIONS] SWEEPS.csv TELEMETRY.csv",
                               .about = about,
                               .opts = opts,
                               .n_opts = PFI_CLI_N(opts)};
    int optind_, pec = pfi_cli_parse(&spec, argc, argv, &optind_);
    if (pec >= 0) return pec;
    features = extra.p ? "set" : NULL;
    if (optind_ != argc - 2)
        return pfi_cli_usage_error("fit", "expected SWEEPS.csv and TELEMETRY.csv");
    pfi_cli_dataset d;
    int ec = pfi_cli_dataset_load("fit", argv[optind_], argv[optind_ + 1], holdout, boost, &d);
    if (ec != PFI_EXIT_OK) return ec;

    pfi_feature_set sets[PFI_TABLE3_SETS + 1];
    pfi_analysis_table3_sets(sets);
    size_t nsets = PFI_TABLE3_SETS;
    if (features) sets[nsets++] = extra;
    pfi_ablation ab[PFI_TABLE3_SETS + 1];
    for (size_t i = 0; i < nsets; i++)
        if (pfi_analysis_ablation(d.obs, d.n, &sets[i], &ab[i]) != PFI_OK) {
            fprintf(stderr, "pfi fit: out of memory\n");
            pfi_cli_dataset_free(&d);
            return PFI_EXIT_DATA;
        }
    const pfi_ablation *chosen = features ? &ab[nsets - 1] : &ab[0];
    if (out && chosen->fit_rc != PFI_OK) {
        fprintf(stderr, "pfi fit: %s: cannot fit %s: %s\n", argv[optind_ + 1], chosen->set.name,
                chosen->fit_msg);
        pfi_cli_dataset_free(&d);
        return PFI_EXIT_DATA;
    }

    /* Tables 12 and 13 on the DRAM copy product over the training groups */
    size_t m = 0, *idx = malloc((d.n ? d.n : 1) * sizeof *idx);
    double *x = malloc((d.n ? d.n : 1) * sizeof *x), *y = malloc((d.n ? d.n : 1) * sizeof *y);
    int have_dcp = idx && x && y;
    for (size_t i = 0; have_dcp && i < d.n; i++) {
        if (d.obs[i].holdout) continue;
        if (!((d.obs[i].f.valid >> PFI_FEAT_DRAM_COPY_PRODUCT) & 1u)) have_dcp = 0;
        idx[m] = i;
        x[m] = d.obs[i].f.v[PFI_FEAT_DRAM_COPY_PRODUCT];
        y[m++] = d.obs[i].pfi;
    }
    pfi_leverage_step lev[6];
    size_t kmax = m > 8 ? 5 : 0;
    int lev_ok = have_dcp && m >= 3 && pfi_model_leverage_drop(x, y, m, kmax, lev, &err) == PFI_OK;
    pfi_subgroup_rho sub[PFI_TABLE13_SUBGROUPS];
    pfi_analysis_subgroups(d.obs, d.n, PFI_FEAT_DRAM_COPY_PRODUCT, sub);

    size_t nh = 0;
    for (size_t i = 0; i < d.n; i++)
        nh += d.obs[i].holdout;
    fit_out F = {&d, ab, nsets, nh, kmax, lev, lev_ok, idx, sub, out};
    if (json)
        ec = print_json(&F);
    else
        print_text(&F);
    if (out && ec == PFI_EXIT_OK) {
        pfi_model_file mf = {.set = chosen->set, .ols = chosen->ols, .boost_mhz = boost};
        if (pfi_model_save(out, &mf, &err) != PFI_OK)
            ec = pfi_cli_fail("fit", &err);
        else if (!json)
            printf("\nmodel (%s) saved to %s\n", chosen->set.name, out);
    }
    free(idx), free(x), free(y);
    pfi_cli_dataset_free(&d);
    return ec;
}
