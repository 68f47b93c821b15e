/* pfi sweep's state file (see sweep_state.h). */
#include "sweep_state.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "pfi/fileio.h"
#include "pfi/json.h"

#define STATE_NAME "sweep-state.json"

static json_t *result_json(const sweep_result *r)
{
    json_t *o = json_object(), *ph = json_object(), *tm = json_object();
    pfi_json_set(o, "cap_w", pfi_json_num(r->cap_w));
    pfi_json_set(o, "ok", json_boolean(r->ok));
    if (!r->ok) {
        pfi_json_set(o, "error", json_string(r->why));
        json_decref(ph);
        json_decref(tm);
        return o;
    }
    pfi_json_set(o, "gpus", json_integer(r->gpus));
    for (int k = 0; k < PFI_PHASE_COUNT; k++)
        pfi_json_set(ph, pfi_trace_phase_name(k), pfi_json_num(r->start[k]));
    pfi_json_set(o, "phases", ph);
    pfi_json_set(o, "samples", json_integer((json_int_t)r->samples));
    pfi_json_set(o, "training_samples", json_integer((json_int_t)r->training_samples));
    pfi_json_set(o, "power_w", pfi_json_num(r->power_w));
    pfi_json_set(o, "power_sem_w", pfi_json_num(r->power_sem_w));
    pfi_json_set(o, "throughput_tok_s", pfi_json_num(r->tput));
    pfi_json_set(o, "throughput_sem_tok_s", pfi_json_num(r->tput_sem));
    for (int f = 0; f < PFI_TM_NFIELDS; f++)
        if (r->telemetry.valid >> f & 1u)
            pfi_json_set(tm, pfi_tm_field_name(f), pfi_json_num(r->telemetry.v[f]));
    pfi_json_set(o, "telemetry", tm);
    return o;
}

static double num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int result_from(json_t *o, sweep_result *r)
{
    *r = (sweep_result){.cap_w = num(o, "cap_w")};
    if (!json_is_object(o) || !isfinite(r->cap_w)) return -1;
    r->ok = json_is_true(json_object_get(o, "ok"));
    if (!r->ok) {
        const char *why = json_string_value(json_object_get(o, "error"));
        snprintf(r->why, sizeof r->why, "%s", why ? why : "failed");
        return 0;
    }
    r->gpus = (int)num(o, "gpus");
    json_t *ph = json_object_get(o, "phases"), *tm = json_object_get(o, "telemetry");
    for (int k = 0; k < PFI_PHASE_COUNT; k++)
        r->start[k] = num(ph, pfi_trace_phase_name(k));
    r->samples = (size_t)fmax(0, num(o, "samples"));
    r->training_samples = (size_t)fmax(0, num(o, "training_samples"));
    r->power_w = num(o, "power_w");
    r->power_sem_w = num(o, "power_sem_w");
    r->tput = num(o, "throughput_tok_s");
    r->tput_sem = num(o, "throughput_sem_tok_s");
    for (int f = 0; f < PFI_TM_NFIELDS; f++) {
        r->telemetry.v[f] = num(tm, pfi_tm_field_name(f));
        if (isfinite(r->telemetry.v[f])) r->telemetry.valid |= 1u << f;
    }
    return r->gpus >= 1 && isfinite(r->power_w) ? 0 : -1;
}

int sweep_state_load(const char *dir, sweep_state *s, pfi_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/" STATE_NAME, dir);
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "r");
    if (!f) return pfi_error_set(err, PFI_ENOTFOUND, path, 0, "no state file");
    json_error_t je;
    json_t *root = json_loadf(f, 0, &je);
    fclose(f);
    if (!root) return pfi_error_set(err, PFI_EPARSE, path, je.line, "%s", je.text);
    int rc = PFI_OK;
    json_t *gpus = json_object_get(root, "gpus"), *prior = json_object_get(root, "prior_w"),
           *res = json_object_get(root, "results");
    const char *be = json_string_value(json_object_get(root, "backend"));
    const char *opts = json_string_value(json_object_get(root, "backend_opts"));
    const char *via = json_string_value(json_object_get(root, "via_pfid"));
    if (json_integer_value(json_object_get(root, "version")) != 1 || !be || !opts || !via ||
        !json_is_array(gpus) || !json_is_array(prior) || !json_is_array(res) ||
        json_array_size(gpus) != json_array_size(prior) || json_array_size(gpus) > SWEEP_MAX_GPUS ||
        json_array_size(res) > SWEEP_MAX_CAPS) {
        rc = pfi_error_set(err, PFI_EPARSE, path, 0, "not a pfi sweep state file");
        goto done;
    }
    s->active = json_is_true(json_object_get(root, "active"));
    snprintf(s->backend, sizeof s->backend, "%s", be);
    snprintf(s->backend_opts, sizeof s->backend_opts, "%s", opts);
    snprintf(s->via_pfid, sizeof s->via_pfid, "%s", via);
    s->n_gpus = json_array_size(gpus);
    for (size_t i = 0; i < s->n_gpus; i++) {
        json_int_t g = json_integer_value(json_array_get(gpus, i));
        s->gpus[i] = (unsigned)g;
        s->prior_w[i] = json_number_value(json_array_get(prior, i));
        if (g < 0 || !(s->prior_w[i] > 0)) {
            rc = pfi_error_set(err, PFI_EPARSE, path, 0, "bad GPU or prior limit at %zu", i);
            goto done;
        }
    }
    for (size_t i = 0; i < json_array_size(res); i++)
        if (result_from(json_array_get(res, i), &s->res[s->n_res++]) != 0) {
            rc = pfi_error_set(err, PFI_EPARSE, path, 0, "bad result %zu", i);
            goto done;
        }
done:
    json_decref(root);
    return rc;
}

static int write_state(FILE *f, void *ctx)
{
    const sweep_state *s = ctx;
    json_t *root = json_object(), *gpus = json_array(), *prior = json_array(), *res = json_array();
    pfi_json_set(root, "version", json_integer(1));
    pfi_json_set(root, "active", json_boolean(s->active));
    pfi_json_set(root, "backend", json_string(s->backend));
    pfi_json_set(root, "backend_opts", json_string(s->backend_opts));
    pfi_json_set(root, "via_pfid", json_string(s->via_pfid));
    for (size_t i = 0; i < s->n_gpus; i++) {
        json_array_append_new(gpus, json_integer(s->gpus[i]));
        json_array_append_new(prior, json_real(s->prior_w[i]));
    }
    pfi_json_set(root, "gpus", gpus);
    pfi_json_set(root, "prior_w", prior);
    for (size_t i = 0; i < s->n_res; i++)
        json_array_append_new(res, result_json(&s->res[i]));
    pfi_json_set(root, "results", res);
    int rc = pfi_json_print(f, root) == 0 ? PFI_OK : PFI_EIO;
    json_decref(root);
    return rc;
}

int sweep_state_save(const char *dir, const sweep_state *s, pfi_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/" STATE_NAME, dir);
    return pfi_file_write_atomic(path, write_state, (void *)s, err);
}

sweep_result *sweep_state_find(sweep_state *s, double cap_w)
{
    for (size_t i = 0; i < s->n_res; i++)
        if (fabs(s->res[i].cap_w - cap_w) < 0.5) return &s->res[i];
    return NULL;
}

int sweep_state_put(sweep_state *s, const sweep_result *r)
{
    sweep_result *old = sweep_state_find(s, r->cap_w);
    if (old) {
        *old = *r;
        return PFI_OK;
    }
    if (s->n_res == SWEEP_MAX_CAPS) return PFI_ERANGE;
    s->res[s->n_res++] = *r;
    return PFI_OK;
}
