/* pfid's GPU and job listings (include/control/pfi/cluster.h). */
#include "pfi/cluster.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* A number, or NaN for null/absent; -1 for another type. */
static int num(const json_t *o, const char *key, double *out)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        *out = NAN;
        return 0;
    }
    if (!json_is_number(v)) return -1;
    *out = json_number_value(v);
    return isfinite(*out) ? 0 : -1;
}

static json_t *load_list(const char *text, size_t len, const char *key, pfi_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root) {
        pfi_error_set(err, PFI_EPARSE, NULL, 0, "bad JSON at line %d column %d: %s", je.line,
                      je.column, je.text);
        return NULL;
    }
    json_t *a = json_object_get(root, key);
    if (!json_is_array(a)) {
        json_decref(root);
        pfi_error_set(err, PFI_EINVAL, NULL, 0, "expected {\"%s\":[...]}", key);
        return NULL;
    }
    json_incref(a);
    json_decref(root);
    return a;
}

int pfi_cl_parse_gpus(const char *text, size_t len, pfi_cl_node *node, pfi_error *err)
{
    json_t *a = load_list(text, len, "gpus", err);
    if (!a) return err ? err->code : PFI_EPARSE;
    size_t n = json_array_size(a);
    if (n > PFI_CL_MAX_GPUS) {
        json_decref(a);
        return pfi_error_set(err, PFI_ERANGE, NULL, 0, "more than %d GPUs", PFI_CL_MAX_GPUS);
    }
    pfi_cl_gpu *g = calloc(n ? n : 1, sizeof *g);
    if (!g) {
        json_decref(a);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    int rc = PFI_OK;
    for (size_t i = 0; i < n && rc == PFI_OK; i++) {
        const json_t *o = json_array_get(a, i), *ix = json_object_get(o, "gpu");
        const json_t *lim = json_object_get(o, "limits"), *cap = json_object_get(o, "cap");
        const json_t *s = json_object_get(o, "sample");
        if (!json_is_integer(ix) || json_integer_value(ix) < 0 ||
            json_integer_value(ix) > 1000000) {
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "GPU %zu: no valid \"gpu\" index", i);
            break;
        }
        g[i].index = (unsigned)json_integer_value(ix);
        for (size_t k = 0; k < i; k++)
            if (g[k].index == g[i].index)
                rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "GPU %u listed twice", g[i].index);
        g[i].up = json_is_true(json_object_get(o, "up"));
        int bad = 0;
        if (json_is_object(s)) bad |= num(s, "power_watts", &g[i].power_w);
        else g[i].power_w = NAN;
        if (json_is_object(lim)) {
            bad |= num(lim, "enforced_w", &g[i].enforced_w);
            bad |= num(lim, "default_w", &g[i].default_w);
            bad |= num(lim, "min_w", &g[i].min_w);
            bad |= num(lim, "max_w", &g[i].max_w);
        } else {
            g[i].enforced_w = g[i].default_w = g[i].min_w = g[i].max_w = NAN;
        }
        g[i].cap_w = g[i].cap_expires_at = NAN;
        if (json_is_object(cap)) {
            g[i].capped = 1;
            bad |= num(cap, "watts", &g[i].cap_w);
            bad |= num(cap, "expires_at", &g[i].cap_expires_at);
            g[i].restore_failed = json_is_true(json_object_get(cap, "restore_failed"));
        }
        if (bad && rc == PFI_OK)
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "GPU %u: a number is mistyped", g[i].index);
    }
    json_decref(a);
    if (rc != PFI_OK) {
        free(g);
        return rc;
    }
    free(node->gpus);
    node->gpus = g;
    node->n_gpus = n;
    return PFI_OK;
}

int pfi_cl_parse_jobs(const char *text, size_t len, pfi_cl_node *node, pfi_error *err)
{
    json_t *a = load_list(text, len, "jobs", err);
    if (!a) return err ? err->code : PFI_EPARSE;
    size_t n = json_array_size(a);
    if (n > PFI_CL_MAX_JOBS) {
        json_decref(a);
        return pfi_error_set(err, PFI_ERANGE, NULL, 0, "more than %d jobs", PFI_CL_MAX_JOBS);
    }
    pfi_cl_job *j = calloc(n ? n : 1, sizeof *j);
    if (!j) {
        json_decref(a);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    int rc = PFI_OK;
    for (size_t i = 0; i < n && rc == PFI_OK; i++) {
        const json_t *o = json_array_get(a, i), *id = json_object_get(o, "id");
        const json_t *gs = json_object_get(o, "gpus"), *ph = json_object_get(o, "phase");
        const json_t *st = json_object_get(o, "steady");
        if (!json_is_string(id) || json_string_length(id) == 0 ||
            json_string_length(id) > PFI_CL_ID_MAX || strlen(json_string_value(id)) != json_string_length(id)) {
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %zu: no valid id", i);
            break;
        }
        snprintf(j[i].id, sizeof j[i].id, "%s", json_string_value(id));
        if (!json_is_array(gs) || json_array_size(gs) == 0 || json_array_size(gs) > PFI_CL_JOB_GPUS) {
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %s: bad \"gpus\"", j[i].id);
            break;
        }
        for (size_t k = 0; k < json_array_size(gs); k++) {
            const json_t *x = json_array_get(gs, k);
            if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > 1000000) {
                rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %s: bad GPU index", j[i].id);
                break;
            }
            j[i].gpus[k] = (unsigned)json_integer_value(x);
        }
        j[i].n_gpus = json_array_size(gs);
        if (json_is_string(ph)) snprintf(j[i].phase, sizeof j[i].phase, "%s", json_string_value(ph));
        int bad = num(o, "power_w", &j[i].power_w) | num(o, "tokens_per_s", &j[i].tokens_per_s) |
                  num(o, "tokens_sd", &j[i].tokens_sd) |
                  num(o, "pfi_estimate", &j[i].pfi_estimate) | num(o, "sla_floor", &j[i].sla_floor);
        if (!(j[i].tokens_sd >= 0)) j[i].tokens_sd = NAN; /* absent (an older pfid): unknown */
        if (!(j[i].sla_floor > 0 && j[i].sla_floor <= 1)) j[i].sla_floor = NAN; /* none */
        const json_t *ex = json_object_get(o, "exempt");
        if (ex && !json_is_boolean(ex) && !json_is_null(ex)) bad = -1;
        j[i].exempt = json_is_true(ex);
        if (json_is_object(st))
            bad |= num(st, "power_w", &j[i].steady_power_w) |
                   num(st, "tokens_per_s", &j[i].steady_tokens_per_s);
        else
            j[i].steady_power_w = j[i].steady_tokens_per_s = NAN;
        if (bad && rc == PFI_OK)
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %s: a number is mistyped", j[i].id);
    }
    json_decref(a);
    if (rc != PFI_OK) {
        free(j);
        return rc;
    }
    free(node->jobs);
    node->jobs = j;
    node->n_jobs = n;
    return PFI_OK;
}

void pfi_cl_node_clear(pfi_cl_node *node)
{
    if (!node) return;
    free(node->gpus);
    free(node->jobs);
    memset(node, 0, sizeof *node);
}

const pfi_cl_gpu *pfi_cl_node_gpu(const pfi_cl_node *node, unsigned idx)
{
    for (size_t i = 0; i < node->n_gpus; i++)
        if (node->gpus[i].index == idx) return &node->gpus[i];
    return NULL;
}

int pfi_cl_parse_curve(const char *text, size_t len, pfi_cl_point **pts, size_t *n, pfi_error *err)
{
    *pts = NULL;
    *n = 0;
    json_t *a = load_list(text, len, "points", err);
    if (!a) return err ? err->code : PFI_EPARSE;
    size_t m = json_array_size(a);
    if (m > PFI_CL_MAX_POINTS) {
        json_decref(a);
        return pfi_error_set(err, PFI_ERANGE, NULL, 0, "more than %d curve points", PFI_CL_MAX_POINTS);
    }
    pfi_cl_point *p = calloc(m ? m : 1, sizeof *p);
    if (!p) {
        json_decref(a);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    int rc = PFI_OK;
    for (size_t i = 0; i < m && rc == PFI_OK; i++) {
        const json_t *o = json_array_get(a, i);
        int bad = !json_is_object(o) || num(o, "cap_w", &p[i].cap_w) ||
                  num(o, "power_w", &p[i].power_w) || num(o, "tokens_per_s", &p[i].tput) ||
                  num(o, "tokens_sd", &p[i].tput_sd) || num(o, "n", &p[i].n);
        if (!bad && isnan(p[i].tput_sd)) p[i].tput_sd = 0;
        if (!bad && isnan(p[i].n)) p[i].n = 1;
        if (bad || !(p[i].cap_w > 0) || !(p[i].power_w > 0) || !(p[i].tput >= 0) ||
            !(p[i].tput_sd >= 0) || !(p[i].n >= 1))
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "curve point %zu: a value is missing or out of range",
                               i + 1);
    }
    json_decref(a);
    if (rc != PFI_OK) {
        free(p);
        return rc;
    }
    *pts = p;
    *n = m;
    return PFI_OK;
}
