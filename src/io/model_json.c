/* PFI predictor files (see model_json.h). */
#include "pfi/model_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pfi/fileio.h"
#include "pfi/json.h"

#define FORMAT "pfi-model"
#define VERSION 1

json_t *pfi_model_to_json(const pfi_model_file *m)
{
    json_t *o = json_object(), *feats = json_array(), *coef = json_array();
    if (!o || !feats || !coef) {
        json_decref(o), json_decref(feats), json_decref(coef);
        return NULL;
    }
    pfi_json_set(o, "format", json_string(FORMAT));
    pfi_json_set(o, "version", json_integer(VERSION));
    pfi_json_set(o, "kind", json_string("ols"));
    for (size_t j = 0; j < m->set.p; j++) {
        json_array_append_new(feats, json_string(pfi_feature_name(m->set.ids[j])));
        json_array_append_new(coef, pfi_json_num(m->ols.coef[j + 1]));
    }
    pfi_json_set(o, "features", feats);
    pfi_json_set(o, "intercept", pfi_json_num(m->ols.coef[0]));
    pfi_json_set(o, "coefficients", coef);
    pfi_json_set(o, "boost_mhz", pfi_json_num(m->boost_mhz));
    pfi_json_set(o, "n_train", json_integer((json_int_t)m->ols.n));
    pfi_json_set(o, "r2_in", pfi_json_num(m->ols.r2));
    pfi_json_set(o, "rmse_in", pfi_json_num(m->ols.rmse));
    return o;
}

static int num(const json_t *j, const char *key, int required, double *out, pfi_error *err)
{
    const json_t *v = json_object_get(j, key);
    if (!v) {
        if (required) return pfi_error_set(err, PFI_EPARSE, NULL, 0, "missing \"%s\"", key);
        return PFI_OK;
    }
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "\"%s\" is not a finite number", key);
    *out = json_number_value(v);
    return PFI_OK;
}

int pfi_model_from_json(const json_t *j, pfi_model_file *m, pfi_error *err)
{
    memset(m, 0, sizeof *m);
    if (!json_is_object(j)) return pfi_error_set(err, PFI_EPARSE, NULL, 0, "not a JSON object");
    const char *fmt = json_string_value(json_object_get(j, "format"));
    if (!fmt || strcmp(fmt, FORMAT) != 0)
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "\"format\" is not \"%s\"", FORMAT);
    const json_t *ver = json_object_get(j, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != VERSION)
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "unsupported \"version\" (want %d)",
                             VERSION);
    const char *kind = json_string_value(json_object_get(j, "kind"));
    if (!kind || strcmp(kind, "ols") != 0)
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "\"kind\" is not \"ols\"");
    const json_t *feats = json_object_get(j, "features"),
                 *coef = json_object_get(j, "coefficients");
    if (!json_is_array(feats) || json_array_size(feats) == 0 ||
        json_array_size(feats) > PFI_MODEL_MAX_P)
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "\"features\" must list 1 to %d names",
                             PFI_MODEL_MAX_P);
    if (!json_is_array(coef) || json_array_size(coef) != json_array_size(feats))
        return pfi_error_set(err, PFI_EPARSE, NULL, 0,
                             "\"coefficients\" must have one number per feature");
    size_t p = json_array_size(feats);
    for (size_t k = 0; k < p; k++) {
        const char *name = json_string_value(json_array_get(feats, k));
        int id = name ? pfi_feature_lookup(name) : -1;
        if (id < 0)
            return pfi_error_set(err, PFI_EPARSE, NULL, 0, "unknown feature \"%s\"",
                                 name ? name : "(not a string)");
        for (size_t i = 0; i < k; i++)
            if (m->set.ids[i] == id)
                return pfi_error_set(err, PFI_EPARSE, NULL, 0, "feature \"%s\" listed twice", name);
        m->set.ids[k] = id;
        const json_t *c = json_array_get(coef, k);
        if (!json_is_number(c) || !isfinite(json_number_value(c)))
            return pfi_error_set(err, PFI_EPARSE, NULL, 0, "coefficient %zu is not a finite number",
                                 k + 1);
        m->ols.coef[k + 1] = json_number_value(c);
        size_t used = strlen(m->set.name);
        snprintf(m->set.name + used, sizeof m->set.name - used, "%s%s", k ? "+" : "", name);
    }
    m->set.p = m->ols.p = p;
    int rc = num(j, "intercept", 1, &m->ols.coef[0], err);
    m->boost_mhz = 1980.0;
    if (rc == PFI_OK) rc = num(j, "boost_mhz", 0, &m->boost_mhz, err);
    if (rc == PFI_OK && !(m->boost_mhz > 0))
        rc = pfi_error_set(err, PFI_EPARSE, NULL, 0, "\"boost_mhz\" must be > 0");
    if (rc == PFI_OK) rc = num(j, "r2_in", 0, &m->ols.r2, err);
    if (rc == PFI_OK) rc = num(j, "rmse_in", 0, &m->ols.rmse, err);
    const json_t *nt = json_object_get(j, "n_train");
    if (rc == PFI_OK && json_is_integer(nt) && json_integer_value(nt) > 0)
        m->ols.n = (size_t)json_integer_value(nt);
    return rc;
}

static int write_json(FILE *f, void *ctx)
{
    /* 17 significant digits: a saved model predicts exactly what the fitted one did */
    if (json_dumpf((const json_t *)ctx, f,
                   JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) != 0)
        return PFI_EIO;
    return fputc('\n', f) == EOF ? PFI_EIO : PFI_OK;
}

int pfi_model_save(const char *path, const pfi_model_file *m, pfi_error *err)
{
    json_t *j = pfi_model_to_json(m);
    if (!j) return pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    int rc = pfi_file_write_atomic(path, write_json, j, err);
    json_decref(j);
    return rc;
}

int pfi_model_load(const char *path, pfi_model_file *m, pfi_error *err)
{
    json_error_t je;
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        return pfi_error_set(err, je.line > 0 ? PFI_EPARSE : PFI_EIO, path,
                             je.line > 0 ? je.line : 0, "%s", je.text);
    int rc = pfi_model_from_json(j, m, err);
    json_decref(j);
    if (rc != PFI_OK && err) snprintf(err->file, sizeof err->file, "%s", path);
    return rc;
}
