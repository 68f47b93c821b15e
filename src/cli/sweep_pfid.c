/* A sweep's GPUs through pfid's HTTP API (see sweep_pfid.h). */
#include "sweep_pfid.h"

#include "pfi/gpu_field.h"
#include "pfi/http_client.h"
#include "pfi/token_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

struct sweep_pfid {
    CURL *curl;
    char url[512];
    char token[512];
    json_t *gpus;  /* the last GET /v1/gpus "gpus" array */
    double got_at; /* monotonic s */
};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One request; *resp (may be NULL) gets the parsed JSON body. */
static int call(sweep_pfid *p, const char *method, const char *path, const char *send,
                json_t **resp, pfi_error *err)
{
    char url[1024];
    snprintf(url, sizeof url, "%s%s", p->url, path);
    pfi_http_buf b = {0};
    pfi_http_req r = {.method = method,
                      .url = url,
                      .bearer = p->token,
                      .body = send,
                      .timeout_s = 10,
                      .user_agent = "pfi-sweep/" PFI_VERSION};
    long code = 0;
    int rc = pfi_http_do(p->curl, &r, &code, &b, err);
    json_t *j = rc == PFI_OK && b.len ? json_loads(b.data, 0, NULL) : NULL;
    if (rc != PFI_OK) {
        /* the wrapper's message names method and URL */
    } else if (code < 200 || code >= 300) {
        const char *why = json_string_value(json_object_get(j, "error"));
        rc = pfi_error_set(err, code == 400 ? PFI_ERANGE : PFI_EBACKEND, url, 0,
                           "pfid answered %ld: %s", code, why ? why : "no reason given");
    } else if (resp && !j) {
        rc = pfi_error_set(err, PFI_EPARSE, url, 0, "pfid's answer is not JSON");
    }
    if (rc == PFI_OK && resp)
        *resp = j;
    else
        json_decref(j);
    pfi_http_buf_free(&b);
    return rc;
}

static int refresh(sweep_pfid *p, double max_age_s, pfi_error *err)
{
    if (p->gpus && mono_s() - p->got_at < max_age_s) return PFI_OK;
    json_t *j;
    int rc = call(p, "GET", "/v1/gpus", NULL, &j, err);
    if (rc != PFI_OK) return rc;
    json_t *g = json_object_get(j, "gpus");
    if (!json_is_array(g)) {
        json_decref(j);
        return pfi_error_set(err, PFI_EPARSE, p->url, 0, "GET /v1/gpus has no gpus array");
    }
    json_decref(p->gpus);
    p->gpus = json_incref(g);
    json_decref(j);
    p->got_at = mono_s();
    return PFI_OK;
}

int sweep_pfid_open(const char *url, const char *token_file, sweep_pfid **out, pfi_error *err)
{
    *out = NULL;
    if (!token_file)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "--via-pfid needs --token-file");
    char tok[512];
    int trc = pfi_token_file_read(token_file, 16, 0, tok, sizeof tok, err);
    if (trc != PFI_OK) return trc;
    sweep_pfid *p = calloc(1, sizeof *p);
    if (!p || !(p->curl = pfi_http_handle())) {
        memset(tok, 0, sizeof tok);
        free(p);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "cannot start libcurl");
    }
    snprintf(p->url, sizeof p->url, "%s", url);
    size_t L = strlen(p->url);
    while (L > 0 && p->url[L - 1] == '/')
        p->url[--L] = '\0';
    snprintf(p->token, sizeof p->token, "%s", tok);
    memset(tok, 0, sizeof tok);
    int rc = refresh(p, 0, err);
    if (rc != PFI_OK) {
        sweep_pfid_close(p);
        return rc;
    }
    *out = p;
    return PFI_OK;
}

void sweep_pfid_close(sweep_pfid *p)
{
    if (!p) return;
    if (p->curl) curl_easy_cleanup(p->curl);
    json_decref(p->gpus);
    free(p);
}

int sweep_pfid_count(sweep_pfid *p, unsigned *n, pfi_error *err)
{
    int rc = refresh(p, 1e9, err);
    if (rc == PFI_OK) *n = (unsigned)json_array_size(p->gpus);
    return rc;
}

static json_t *gpu_obj(sweep_pfid *p, unsigned gpu)
{
    for (size_t i = 0; i < json_array_size(p->gpus); i++) {
        json_t *o = json_array_get(p->gpus, i);
        if (json_integer_value(json_object_get(o, "gpu")) == (json_int_t)gpu) return o;
    }
    return NULL;
}

static double num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

int sweep_pfid_limits(sweep_pfid *p, unsigned gpu, pfi_gpu_limits *out, pfi_error *err)
{
    int rc = refresh(p, 0.2, err);
    if (rc != PFI_OK) return rc;
    json_t *l = json_object_get(gpu_obj(p, gpu), "limits");
    if (!json_is_object(l))
        return pfi_error_set(err, PFI_ENOTFOUND, p->url, 0, "pfid reports no limits for GPU %u",
                             gpu);
    double cur = num(l, "current_w");
    *out = (pfi_gpu_limits){.min_w = num(l, "min_w"),
                            .max_w = num(l, "max_w"),
                            .default_w = num(l, "default_w"),
                            .enforced_w = num(l, "enforced_w"),
                            .current_w = isfinite(cur) ? cur : 0};
    return PFI_OK;
}

int sweep_pfid_sample(sweep_pfid *p, unsigned gpu, pfi_gpu_sample *out)
{
    /* pfid samples on its own schedule: a fresh GET each call shows its
     * latest, and the sweep's interval decides how often that is asked */
    if (refresh(p, 0.05, NULL) != PFI_OK) return PFI_EBACKEND;
    json_t *o = gpu_obj(p, gpu), *s = json_object_get(o, "sample");
    if (!json_is_true(json_object_get(o, "up")) || !json_is_object(s)) return PFI_EBACKEND;
    /* the JSON keys and their SI units are the GPU field table's */
    memset(out, 0, sizeof *out);
    for (int f = 0; f < PFI_GF_COUNT; f++) {
        double v = num(s, pfi_gpu_fields[f].name);
        if (isfinite(v)) pfi_gpu_sample_set(out, (pfi_gpu_field)f, v);
    }
    return out->valid ? PFI_OK : PFI_EBACKEND;
}

int sweep_pfid_set(sweep_pfid *p, unsigned gpu, double w, double expires_s, pfi_error *err)
{
    char path[64], send[128];
    snprintf(path, sizeof path, "/v1/gpus/%u/limit", gpu);
    snprintf(send, sizeof send, "{\"watts\":%.3f,\"expires_s\":%.0f}", w,
             fmax(1, fmin(604800, ceil(expires_s))));
    p->got_at = -1e9; /* the next read must see the new limit */
    return call(p, "PUT", path, send, NULL, err);
}

int sweep_pfid_restore(sweep_pfid *p, unsigned gpu, pfi_error *err)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/gpus/%u/limit", gpu);
    p->got_at = -1e9;
    return call(p, "DELETE", path, NULL, NULL, err);
}
