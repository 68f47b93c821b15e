/* Prometheus' instant query API (include/control/pfi/prom_query.h). */
#include "pfi/prom_query.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl_http.h"

static int value_of(const json_t *pair, double *v, pfi_error *err)
{
    /* [ <unix time>, "<value as a string>" ] */
    const json_t *s = json_array_get(pair, 1);
    if (!json_is_array(pair) || json_array_size(pair) != 2 || !json_is_string(s))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "a sample is not [time, \"value\"]");
    char *end;
    *v = strtod(json_string_value(s), &end);
    if (*end || !isfinite(*v))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "the value '%.40s' is not a finite number",
                             json_string_value(s));
    return PFI_OK;
}

int pfi_prom_query_parse(const char *text, size_t len, double *value, pfi_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root)
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "the answer is not JSON (line %d: %s)",
                             je.line, je.text);
    int rc;
    const json_t *st = json_object_get(root, "status"), *d = json_object_get(root, "data");
    const json_t *ty = json_object_get(d, "resultType"), *res = json_object_get(d, "result");
    if (!json_is_string(st) || strcmp(json_string_value(st), "success") != 0) {
        const json_t *e = json_object_get(root, "error");
        rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "the query failed: %.200s",
                           json_is_string(e) ? json_string_value(e) : "no status");
    } else if (json_is_string(ty) && strcmp(json_string_value(ty), "scalar") == 0) {
        rc = value_of(res, value, err);
    } else if (json_is_string(ty) && strcmp(json_string_value(ty), "vector") == 0 &&
               json_is_array(res)) {
        size_t n = json_array_size(res);
        rc = n == 1 ? value_of(json_object_get(json_array_get(res, 0), "value"), value, err)
                    : pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                    "the query gives %zu series, not one (aggregate it: sum(...))", n);
    } else {
        rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "the query gives neither a scalar nor a vector");
    }
    json_decref(root);
    return rc;
}

int pfi_prom_query(const char *base, const char *query, double timeout_s, double *value,
                   pfi_error *err)
{
    CURL *h = curl_easy_init();
    if (!h) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    char *q = curl_easy_escape(h, query, 0);
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/') n--;
    char url[4096];
    snprintf(url, sizeof url, "%.*s/api/v1/query?query=%s", (int)n, base, q ? q : "");
    curl_free(q);
    long status;
    ctl_buf b;
    int rc = ctl_http_do(h, "GET", url, NULL, NULL, NULL, timeout_s, &status, &b, err);
    curl_easy_cleanup(h);
    if (rc != PFI_OK) return rc;
    rc = pfi_prom_query_parse(b.data, b.len, value, err);
    ctl_buf_free(&b);
    return rc;
}
