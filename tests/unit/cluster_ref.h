/* The controller's reading of pfid's listings as it was before the one-pass
 * reader (src/control/cluster.c up to commit a985d35): Jansson's DOM. Kept
 * here only as the reference the new reader is compared with
 * (test_cluster_diff, fuzz_cluster): the same texts refused, the same views.
 * ref_cl_same compares two views bit for bit (NaNs included). */
#ifndef PFI_TEST_CLUSTER_REF_H
#define PFI_TEST_CLUSTER_REF_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pfi/cluster.h"

/* A number, or NaN for null/absent; -1 for another type. */
static int ref_num(const json_t *o, const char *key, double *out)
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

static json_t *ref_load_list(const char *text, size_t len, const char *key, pfi_error *err)
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

static int ref_cl_parse_gpus(const char *text, size_t len, pfi_cl_node *node, pfi_error *err)
{
    json_t *a = ref_load_list(text, len, "gpus", err);
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
        if (json_is_object(s))
            bad |= ref_num(s, "power_watts", &g[i].power_w);
        else
            g[i].power_w = NAN;
        if (json_is_object(lim)) {
            bad |= ref_num(lim, "enforced_w", &g[i].enforced_w);
            bad |= ref_num(lim, "default_w", &g[i].default_w);
            bad |= ref_num(lim, "min_w", &g[i].min_w);
            bad |= ref_num(lim, "max_w", &g[i].max_w);
        } else {
            g[i].enforced_w = g[i].default_w = g[i].min_w = g[i].max_w = NAN;
        }
        g[i].cap_w = g[i].cap_expires_at = NAN;
        if (json_is_object(cap)) {
            g[i].capped = 1;
            bad |= ref_num(cap, "watts", &g[i].cap_w);
            bad |= ref_num(cap, "expires_at", &g[i].cap_expires_at);
            g[i].restore_failed = json_is_true(json_object_get(cap, "restore_failed"));
        }
        if (bad && rc == PFI_OK)
            rc =
                pfi_error_set(err, PFI_EINVAL, NULL, 0, "GPU %u: a number is mistyped", g[i].index);
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

static int ref_cl_parse_jobs(const char *text, size_t len, pfi_cl_node *node, pfi_error *err)
{
    json_t *a = ref_load_list(text, len, "jobs", err);
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
            json_string_length(id) > PFI_CL_ID_MAX ||
            strlen(json_string_value(id)) != json_string_length(id)) {
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %zu: no valid id", i);
            break;
        }
        snprintf(j[i].id, sizeof j[i].id, "%s", json_string_value(id));
        if (!json_is_array(gs) || json_array_size(gs) == 0 ||
            json_array_size(gs) > PFI_CL_JOB_GPUS) {
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %s: bad \"gpus\"", j[i].id);
            break;
        }
        for (size_t k = 0; k < json_array_size(gs); k++) {
            const json_t *x = json_array_get(gs, k);
            if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                json_integer_value(x) > 1000000) {
                rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %s: bad GPU index", j[i].id);
                break;
            }
            j[i].gpus[k] = (unsigned)json_integer_value(x);
        }
        j[i].n_gpus = json_array_size(gs);
        if (json_is_string(ph))
            snprintf(j[i].phase, sizeof j[i].phase, "%s", json_string_value(ph));
        int bad = ref_num(o, "power_w", &j[i].power_w) |
                  ref_num(o, "tokens_per_s", &j[i].tokens_per_s) |
                  ref_num(o, "tokens_sd", &j[i].tokens_sd) |
                  ref_num(o, "pfi_estimate", &j[i].pfi_estimate) |
                  ref_num(o, "sla_floor", &j[i].sla_floor) | ref_num(o, "pfi_sd", &j[i].pfi_sd);
        if (!(j[i].tokens_sd >= 0)) j[i].tokens_sd = NAN; /* absent (an older pfid): unknown */
        if (!(j[i].pfi_sd > 0)) j[i].pfi_sd = NAN;
        if (!(j[i].sla_floor > 0 && j[i].sla_floor <= 1)) j[i].sla_floor = NAN; /* none */
        const json_t *ex = json_object_get(o, "exempt");
        if (ex && !json_is_boolean(ex) && !json_is_null(ex)) bad = -1;
        j[i].exempt = json_is_true(ex);
        if (json_is_object(st))
            bad |= ref_num(st, "power_w", &j[i].steady_power_w) |
                   ref_num(st, "tokens_per_s", &j[i].steady_tokens_per_s);
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

static int ref_bits_same(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* 1 when a and b hold the same GPUs and jobs; else 0, with the first
 * difference in why (may be NULL). */
static int ref_cl_same(const pfi_cl_node *a, const pfi_cl_node *b, char *why, size_t len)
{
#define DIFF(...) return (why ? snprintf(why, len, __VA_ARGS__) : 0), 0
    if (a->n_gpus != b->n_gpus) DIFF("%zu GPUs against %zu", a->n_gpus, b->n_gpus);
    if (a->n_jobs != b->n_jobs) DIFF("%zu jobs against %zu", a->n_jobs, b->n_jobs);
    for (size_t i = 0; i < a->n_gpus; i++) {
        const pfi_cl_gpu *x = &a->gpus[i], *y = &b->gpus[i];
        const double dx[] = {x->power_w, x->enforced_w, x->default_w,     x->min_w,
                             x->max_w,   x->cap_w,      x->cap_expires_at};
        const double dy[] = {y->power_w, y->enforced_w, y->default_w,     y->min_w,
                             y->max_w,   y->cap_w,      y->cap_expires_at};
        if (x->index != y->index || x->up != y->up || x->capped != y->capped ||
            x->restore_failed != y->restore_failed)
            DIFF("GPU %zu: index, up, capped or restore_failed", i);
        for (size_t k = 0; k < sizeof dx / sizeof *dx; k++)
            if (!ref_bits_same(dx[k], dy[k]))
                DIFF("GPU %zu: number %zu: %.17g against %.17g", i, k, dx[k], dy[k]);
    }
    for (size_t i = 0; i < a->n_jobs; i++) {
        const pfi_cl_job *x = &a->jobs[i], *y = &b->jobs[i];
        const double dx[] = {x->power_w,
                             x->tokens_per_s,
                             x->tokens_sd,
                             x->steady_power_w,
                             x->steady_tokens_per_s,
                             x->pfi_estimate,
                             x->sla_floor,
                             x->pfi_sd};
        const double dy[] = {y->power_w,
                             y->tokens_per_s,
                             y->tokens_sd,
                             y->steady_power_w,
                             y->steady_tokens_per_s,
                             y->pfi_estimate,
                             y->sla_floor,
                             y->pfi_sd};
        if (strcmp(x->id, y->id) != 0 || strcmp(x->phase, y->phase) != 0 ||
            x->exempt != y->exempt || x->n_gpus != y->n_gpus ||
            memcmp(x->gpus, y->gpus, x->n_gpus * sizeof *x->gpus) != 0)
            DIFF("job %zu: id, phase, exempt or GPUs", i);
        for (size_t k = 0; k < sizeof dx / sizeof *dx; k++)
            if (!ref_bits_same(dx[k], dy[k]))
                DIFF("job %zu: number %zu: %.17g against %.17g", i, k, dx[k], dy[k]);
    }
    return 1;
#undef DIFF
}

#endif
