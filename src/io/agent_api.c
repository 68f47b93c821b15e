/* Strict parsers of pfid's JSON request bodies (see include/io/pfi/agent_api.h). */
#include "pfi/agent_api.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "pfi/json.h"

int pfi_api_job_id_valid(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > PFI_STORE_JOB_ID_MAX) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              strchr("._:@+-", c)))
            return 0;
    }
    return 1;
}

/* Parses body as a JSON object; rejects keys not in `allowed` (NULL-ended). */
static int load_object(const char *body, size_t len, const char *const *allowed, json_t **out,
                       pfi_error *err)
{
    return pfi_json_load_strict(body, len, PFI_API_MAX_BODY, allowed, out, err);
}

/* A required (or optional, when *have may say it was absent) finite number. */
static int get_number(json_t *root, const char *key, int required, double *out, int *have,
                      pfi_error *err)
{
    json_t *v = json_object_get(root, key);
    if (have) *have = v != NULL;
    if (!v) {
        if (!required) return PFI_OK;
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "missing \"%s\"", key);
    }
    if (!json_is_number(v))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"%s\" must be a number", key);
    *out = json_number_value(v);
    if (!isfinite(*out))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"%s\" must be finite", key);
    return PFI_OK;
}

/* An optional string key whose value must be one of two words. */
static int get_choice(json_t *root, const char *key, const char *a, const char *b, char *out,
                      size_t len, pfi_error *err)
{
    out[0] = '\0';
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v)) return PFI_OK;
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    if (!s || strlen(s) != json_string_length(v) || (strcmp(s, a) != 0 && strcmp(s, b) != 0))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"%s\" must be \"%s\" or \"%s\"", key, a,
                             b);
    snprintf(out, len, "%s", s);
    return PFI_OK;
}

int pfi_api_parse_job(const char *body, size_t len, pfi_store_job *out, pfi_error *err)
{
    static const char *const keys[] = {"id",        "gpus",   "arch",  "task",
                                       "sla_floor", "exempt", "class", NULL};
    memset(out, 0, sizeof *out);
    json_t *root;
    int rc = load_object(body, len, keys, &root, err);
    if (rc != PFI_OK) return rc;
    json_t *id = json_object_get(root, "id");
    json_t *gpus = json_object_get(root, "gpus");
    if (!id || !json_is_string(id)) {
        rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"id\" must be a string");
        goto done;
    }
    /* strlen == json length rejects an embedded NUL ("a\u0000b"). */
    if (strlen(json_string_value(id)) != json_string_length(id) ||
        !pfi_api_job_id_valid(json_string_value(id))) {
        rc = pfi_error_set(err, PFI_EINVAL, NULL, 0,
                           "\"id\" must be 1-%d characters of A-Z a-z 0-9 . _ : @ + -",
                           PFI_STORE_JOB_ID_MAX);
        goto done;
    }
    snprintf(out->id, sizeof out->id, "%s", json_string_value(id));
    size_t n = json_is_array(gpus) ? json_array_size(gpus) : 0;
    if (n == 0 || n > PFI_STORE_MAX_JOB_GPUS) {
        rc = pfi_error_set(err, PFI_EINVAL, NULL, 0,
                           "\"gpus\" must be an array of 1-%d GPU indices", PFI_STORE_MAX_JOB_GPUS);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *g = json_array_get(gpus, i);
        json_int_t v = json_is_integer(g) ? json_integer_value(g) : -1;
        if (v < 0 || v > 1023) {
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0,
                               "\"gpus\"[%zu] must be an integer GPU index 0-1023", i);
            goto done;
        }
        for (size_t k = 0; k < i; k++)
            if (out->gpus[k] == (unsigned)v) {
                rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "GPU %u listed twice", (unsigned)v);
                goto done;
            }
        out->gpus[i] = (unsigned)v;
    }
    out->n_gpus = n;
    if ((rc = get_choice(root, "arch", "dense", "moe", out->arch, sizeof out->arch, err)) != PFI_OK)
        goto done;
    if ((rc = get_choice(root, "task", "pt", "ft", out->task, sizeof out->task, err)) != PFI_OK)
        goto done;
    /* The SLA floor: a fraction of the uncapped throughput; null or absent
     * is none (0), and 0 itself is refused as meaningless. */
    json_t *sla = json_object_get(root, "sla_floor");
    if (sla && !json_is_null(sla)) {
        int have;
        if ((rc = get_number(root, "sla_floor", 0, &out->sla_floor, &have, err)) != PFI_OK)
            goto done;
        if (!(out->sla_floor > 0 && out->sla_floor <= 1)) {
            out->sla_floor = 0;
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"sla_floor\" must be in (0, 1]");
            goto done;
        }
    }
    json_t *ex = json_object_get(root, "exempt");
    if (ex && !json_is_boolean(ex)) {
        rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"exempt\" must be true or false");
        goto done;
    }
    out->exempt = ex && json_is_true(ex);
    json_t *cl = json_object_get(root, "class");
    if (cl && !json_is_null(cl)) {
        const char *c = json_is_string(cl) ? json_string_value(cl) : NULL;
        if (!c || strlen(c) != json_string_length(cl) || strlen(c) > PFI_STORE_CLASS_MAX ||
            !pfi_api_job_id_valid(c)) {
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0,
                               "\"class\" must be 1-%d characters of A-Z a-z 0-9 . _ : @ + -",
                               PFI_STORE_CLASS_MAX);
            goto done;
        }
        snprintf(out->job_class, sizeof out->job_class, "%s", c);
    }
done:
    json_decref(root);
    return rc;
}

int pfi_api_parse_throughput(const char *body, size_t len, double *tokens_per_s, pfi_error *err)
{
    static const char *const keys[] = {"tokens_per_s", NULL};
    json_t *root;
    int rc = load_object(body, len, keys, &root, err);
    if (rc != PFI_OK) return rc;
    double v = 0;
    rc = get_number(root, "tokens_per_s", 1, &v, NULL, err);
    if (rc == PFI_OK && v < 0)
        rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"tokens_per_s\" must be >= 0");
    if (rc == PFI_OK) *tokens_per_s = v;
    json_decref(root);
    return rc;
}

int pfi_api_parse_limit(const char *body, size_t len, double *watts, double *expires_s,
                        pfi_error *err)
{
    static const char *const keys[] = {"watts", "expires_s", NULL};
    json_t *root;
    int rc = load_object(body, len, keys, &root, err);
    if (rc != PFI_OK) return rc;
    double w = 0, e = 0;
    if ((rc = get_number(root, "watts", 1, &w, NULL, err)) != PFI_OK) goto done;
    if ((rc = get_number(root, "expires_s", 1, &e, NULL, err)) != PFI_OK) goto done;
    if (!(w > 0)) {
        rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"watts\" must be > 0");
        goto done;
    }
    if (!(e > 0 && e <= PFI_API_MAX_EXPIRES_S)) {
        rc = pfi_error_set(err, PFI_EINVAL, NULL, 0,
                           "\"expires_s\" must be > 0 and at most %.0f (a week)",
                           PFI_API_MAX_EXPIRES_S);
        goto done;
    }
    *watts = w;
    *expires_s = e;
done:
    json_decref(root);
    return rc;
}
