/* Joins sweeps with telemetry and runs the paper's Sec. 4-5 analyses on the
 * result (see analysis.h). */
#include "pfi/analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/index.h"
#include "pfi/stats.h"

static const char *const cluster_names[PFI_CLUSTER_COUNT] = {"dense-pt", "dense-ft", "moe-pt",
                                                             "moe-ft"};

const char *pfi_cluster_name(int c)
{
    return c >= 0 && c < PFI_CLUSTER_COUNT ? cluster_names[c] : "unknown";
}

int pfi_analysis_join(const pfi_sweeps *s, const pfi_sweeps *held, const pfi_telemetry *t,
                      double boost_mhz, pfi_obs **out, size_t *n, pfi_error *err)
{
    *out = NULL;
    *n = 0;
    if (!s || !t) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "NULL argument");
    if (t->n == 0) return pfi_error_set(err, PFI_ENODATA, NULL, 0, "telemetry has no rows");
    pfi_obs *obs = calloc(t->n, sizeof *obs);
    if (!obs) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int rc = PFI_OK;
    for (size_t i = 0; i < t->n && rc == PFI_OK; i++) {
        const pfi_tm_row *r = &t->rows[i];
        const pfi_group *g = pfi_sweeps_find(s, r->group);
        const pfi_group *h = held ? pfi_sweeps_find(held, r->group) : NULL;
        if (g && h) {
            rc = pfi_error_set(err, PFI_EINVAL, NULL, r->line,
                               "group '%s' is both a training and a held-out group", r->group);
            break;
        }
        if (!g && !h) {
            rc = pfi_error_set(err, PFI_ENOTFOUND, NULL, r->line,
                               "telemetry for group '%s', which is not in the sweeps", r->group);
            break;
        }
        pfi_obs *o = &obs[i];
        o->holdout = h != NULL;
        if (h) g = h;
        o->name = g->name;
        o->arch = g->meta.arch;
        o->task = g->meta.task;
        o->gpus = g->meta.gpus;
        o->tm_line = r->line;
        pfi_index_result res;
        if (pfi_index_group(g, PFI_METHOD_RATIO, NULL, &res) != PFI_OK || !res.has_pfi) {
            rc =
                pfi_error_set(err, PFI_EUNDEFINED, NULL, 0,
                              "group '%s': PFI undefined (no capped run lost throughput)", g->name);
            break;
        }
        o->pfi = res.pfi;
        pfi_features_compute(r, boost_mhz, &o->f);
        rc = pfi_features_set_meta(&o->f, o->arch, o->task, o->gpus, err);
        if (rc != PFI_OK) {
            char msg[sizeof err->msg];
            if (err) {
                snprintf(msg, sizeof msg, "%s", err->msg);
                pfi_error_set(err, rc, NULL, 0, "group '%s': %s", g->name, msg);
            }
            break;
        }
        int moe = strcmp(o->arch, "moe") == 0, ft = strcmp(o->task, "ft") == 0;
        o->cluster = moe ? (ft ? PFI_CLUSTER_MOE_FT : PFI_CLUSTER_MOE_PT)
                         : (ft ? PFI_CLUSTER_DENSE_FT : PFI_CLUSTER_DENSE_PT);
    }
    /* every sweep group needs its telemetry, or it silently drops out */
    for (int w = 0; w < 2; w++) {
        const pfi_sweeps *sw = w ? held : s;
        for (size_t k = 0; sw && rc == PFI_OK && k < pfi_sweeps_count(sw); k++) {
            const pfi_group *g = pfi_sweeps_group(sw, k);
            if (!pfi_telemetry_find(t, g->name))
                rc = pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "%sgroup '%s' has no telemetry row",
                                   w ? "held-out " : "", g->name);
        }
    }
    if (rc != PFI_OK) {
        free(obs);
        return rc;
    }
    *out = obs;
    *n = t->n;
    return PFI_OK;
}

static void set_add(pfi_feature_set *s, int id)
{
    s->ids[s->p++] = id;
}

static void add_meta(pfi_feature_set *s)
{
    set_add(s, PFI_FEAT_ARCH_MOE);
    set_add(s, PFI_FEAT_TASK_FT);
    set_add(s, PFI_FEAT_LOG2_GPUS);
}

static void add_dcgm(pfi_feature_set *s)
{
    for (int f = 0; f < PFI_FEAT_N_DCGM; f++)
        set_add(s, f);
}

void pfi_analysis_table3_sets(pfi_feature_set out[PFI_TABLE3_SETS])
{
    memset(out, 0, PFI_TABLE3_SETS * sizeof *out);
    static const char *const names[PFI_TABLE3_SETS] = {"dram_copy_product",
                                                       "arithmetic_intensity",
                                                       "dram_copy_product+arithmetic_intensity",
                                                       "job_metadata",
                                                       "dram_copy_product+job_metadata",
                                                       "all_dcgm",
                                                       "all_dcgm+job_metadata"};
    for (int i = 0; i < PFI_TABLE3_SETS; i++)
        snprintf(out[i].name, sizeof out[i].name, "%s", names[i]);
    set_add(&out[0], PFI_FEAT_DRAM_COPY_PRODUCT);
    set_add(&out[1], PFI_FEAT_ARITH_INTENSITY);
    set_add(&out[2], PFI_FEAT_DRAM_COPY_PRODUCT);
    set_add(&out[2], PFI_FEAT_ARITH_INTENSITY);
    add_meta(&out[3]);
    set_add(&out[4], PFI_FEAT_DRAM_COPY_PRODUCT);
    add_meta(&out[4]);
    add_dcgm(&out[5]);
    add_dcgm(&out[6]);
    add_meta(&out[6]);
}

int pfi_analysis_parse_set(const char *spec, pfi_feature_set *out, pfi_error *err)
{
    memset(out, 0, sizeof *out);
    if (!spec || !*spec) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "empty feature list");
    char tok[64];
    const char *p = spec;
    while (1) {
        size_t len = strcspn(p, ",+");
        if (len == 0 || len >= sizeof tok)
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "bad feature list '%s'", spec);
        memcpy(tok, p, len);
        tok[len] = 0;
        pfi_feature_set add = {.p = 0};
        int id = pfi_feature_lookup(tok);
        if (strcmp(tok, "job_metadata") == 0)
            add_meta(&add);
        else if (strcmp(tok, "all_dcgm") == 0)
            add_dcgm(&add);
        else if (id >= 0)
            set_add(&add, id);
        else
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "unknown feature '%s'", tok);
        for (size_t k = 0; k < add.p; k++) {
            for (size_t j = 0; j < out->p; j++)
                if (out->ids[j] == add.ids[k])
                    return pfi_error_set(err, PFI_EINVAL, NULL, 0, "feature '%s' listed twice",
                                         pfi_feature_name(add.ids[k]));
            if (out->p >= PFI_MODEL_MAX_P)
                return pfi_error_set(err, PFI_EINVAL, NULL, 0, "more than %d features",
                                     PFI_MODEL_MAX_P);
            set_add(out, add.ids[k]);
        }
        p += len;
        if (!*p) break;
        p++;
    }
    /* the canonical "+"-joined form names the set in reports */
    snprintf(out->name, sizeof out->name, "%s", spec);
    for (char *c = out->name; *c; c++)
        if (*c == ',') *c = '+';
    return PFI_OK;
}

int pfi_analysis_matrix(const pfi_obs *obs, size_t n, const pfi_feature_set *set, int want_holdout,
                        double *X, double *y, size_t *rows, pfi_error *err)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!obs[i].holdout != !want_holdout) continue;
        for (size_t j = 0; j < set->p; j++) {
            int f = set->ids[j];
            if (!((obs[i].f.valid >> f) & 1u))
                return pfi_error_set(
                    err, PFI_EUNDEFINED, NULL, obs[i].tm_line, "group '%s': feature %s is %s",
                    obs[i].name, pfi_feature_name(f),
                    ((obs[i].f.undefined >> f) & 1u) ? "undefined (its denominator activity is 0)"
                                                     : "missing from the telemetry");
            X[m * set->p + j] = obs[i].f.v[f];
        }
        y[m++] = obs[i].pfi;
    }
    *rows = m;
    return PFI_OK;
}

static void outcome(pfi_cv_outcome *o, int rc, const pfi_error *e)
{
    o->rc = rc;
    if (rc != PFI_OK) snprintf(o->msg, sizeof o->msg, "%s", e->msg);
}

int pfi_analysis_ablation(const pfi_obs *obs, size_t n, const pfi_feature_set *set,
                          pfi_ablation *out)
{
    memset(out, 0, sizeof *out);
    out->set = *set;
    size_t p = set->p, cap = n ? n : 1;
    double *X = malloc(cap * p * sizeof *X), *y = malloc(cap * sizeof *y);
    double *Xv = malloc(cap * p * sizeof *Xv), *yv = malloc(cap * sizeof *yv);
    size_t *fold = malloc(cap * sizeof *fold);
    if (!X || !y || !Xv || !yv || !fold) {
        free(X), free(y), free(Xv), free(yv), free(fold);
        return PFI_ENOMEM;
    }
    pfi_error e = {0};
    size_t m = 0, mv = 0;
    int rc = pfi_analysis_matrix(obs, n, set, 0, X, y, &m, &e);
    if (rc == PFI_OK) rc = pfi_analysis_matrix(obs, n, set, 1, Xv, yv, &mv, &e);
    out->n = m;
    /* name a constant feature here; the model layer only knows its column */
    for (size_t j = 0; rc == PFI_OK && m > 0 && j < p; j++) {
        size_t i = 1;
        while (i < m && X[i * p + j] == X[j])
            i++;
        if (i == m)
            rc = pfi_error_set(&e, PFI_EUNDEFINED, NULL, 0,
                               "feature %s is constant over the %zu groups fitted",
                               pfi_feature_name(set->ids[j]), m);
    }
    if (rc == PFI_OK) rc = pfi_model_ols(X, y, m, p, &out->ols, &e);
    out->fit_rc = rc;
    if (rc != PFI_OK) {
        snprintf(out->fit_msg, sizeof out->fit_msg, "%s", e.msg);
        out->loo.rc = out->loco.rc = rc;
        snprintf(out->loo.msg, sizeof out->loo.msg, "%s", e.msg);
        snprintf(out->loco.msg, sizeof out->loco.msg, "%s", e.msg);
    } else {
        outcome(&out->loo, pfi_model_cv(X, y, m, p, NULL, 0, NULL, &out->loo.cv, &e), &e);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!obs[i].holdout) fold[k++] = (size_t)obs[i].cluster;
        outcome(&out->loco,
                pfi_model_cv(X, y, m, p, fold, PFI_CLUSTER_COUNT, NULL, &out->loco.cv, &e), &e);
        /* the model layer numbers folds; name the cluster instead */
        size_t f;
        int off = 0;
        if (out->loco.rc != PFI_OK &&
            sscanf(out->loco.msg, "fold %zu held out: %n", &f, &off) == 1 && off > 0 && f >= 1 &&
            f <= PFI_CLUSTER_COUNT) {
            char rest[400]; /* leaves room for the cluster prefix */
            snprintf(rest, sizeof rest, "%s", out->loco.msg + off);
            snprintf(out->loco.msg, sizeof out->loco.msg, "cluster %s held out: %s",
                     pfi_cluster_name((int)f - 1), rest);
        }
        if (mv > 0) out->has_val = pfi_model_validate(&out->ols, Xv, yv, mv, &out->val) == PFI_OK;
    }
    free(X), free(y), free(Xv), free(yv), free(fold);
    return PFI_OK;
}

int pfi_analysis_corr(const pfi_obs *obs, size_t n, pfi_corr *out)
{
    double *x = malloc((n ? n : 1) * sizeof *x), *y = malloc((n ? n : 1) * sizeof *y);
    double p[PFI_FEAT_N_TELEMETRY], q[PFI_FEAT_N_TELEMETRY];
    if (!x || !y) {
        free(x), free(y);
        return PFI_ENOMEM;
    }
    size_t np = 0;
    for (int f = 0; f < PFI_FEAT_N_TELEMETRY; f++) {
        pfi_corr *c = &out[f];
        memset(c, 0, sizeof *c);
        c->feature = f;
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (!obs[i].holdout && ((obs[i].f.valid >> f) & 1u)) {
                x[m] = obs[i].f.v[f];
                y[m++] = obs[i].pfi;
            }
        c->n = m;
        int rc = pfi_stats_spearman(x, y, m, &c->rho, &c->p);
        c->has = rc == PFI_OK;
        if (!c->has) {
            c->rho = c->p = 0;
            snprintf(c->why, sizeof c->why, "%s",
                     rc == PFI_ENODATA ? "fewer than 3 groups have this feature"
                                       : "the feature or PFI is constant");
        } else {
            p[np++] = c->p;
        }
    }
    if (np > 0) pfi_stats_bh(p, np, q);
    for (int f = 0, k = 0; f < PFI_FEAT_N_TELEMETRY; f++)
        if (out[f].has) out[f].q = q[k++];
    free(x), free(y);
    return PFI_OK;
}

int pfi_analysis_subgroups(const pfi_obs *obs, size_t n, int feature,
                           pfi_subgroup_rho out[PFI_TABLE13_SUBGROUPS])
{
    static const char *const names[PFI_TABLE13_SUBGROUPS] = {"dense", "moe", "all-but-moe-ft",
                                                             "all"};
    double *x = malloc((n ? n : 1) * sizeof *x), *y = malloc((n ? n : 1) * sizeof *y);
    if (!x || !y) {
        free(x), free(y);
        return PFI_ENOMEM;
    }
    for (int s = 0; s < PFI_TABLE13_SUBGROUPS; s++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            const pfi_obs *o = &obs[i];
            int dense = o->cluster == PFI_CLUSTER_DENSE_PT || o->cluster == PFI_CLUSTER_DENSE_FT;
            int in = s == 0   ? dense
                     : s == 1 ? !dense
                     : s == 2 ? o->cluster != PFI_CLUSTER_MOE_FT
                              : 1;
            if (o->holdout || !in || !((o->f.valid >> feature) & 1u)) continue;
            x[m] = o->f.v[feature];
            y[m++] = o->pfi;
        }
        out[s].name = names[s];
        out[s].n = m;
        out[s].has = pfi_stats_spearman(x, y, m, &out[s].rho, &out[s].p) == PFI_OK;
        if (!out[s].has) out[s].rho = out[s].p = 0;
    }
    free(x), free(y);
    return PFI_OK;
}
