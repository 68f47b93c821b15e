/* Prometheus' instant query API (include/control/pfi/prom_query.h). */
#include "pfi/prom_query.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/http_client.h"
#include "pfi/prom_vector.h"

int pfi_prom_query_parse(const char *text, size_t len, double *value, pfi_error *err)
{
    pfi_prom_vec v = {0};
    int rc = pfi_prom_vec_parse(text, len, NULL, 0, &v, err);
    if (rc != PFI_OK) return rc;
    if (v.n != 1)
        rc = pfi_error_set(err, PFI_EINVAL, NULL, 0,
                           "the query gives %zu series, not one (aggregate it: sum(...))", v.n);
    else if (!isfinite(v.values[0]))
        rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "the value %g is not a finite number",
                           v.values[0]);
    else
        *value = v.values[0];
    pfi_prom_vec_free(&v);
    return rc;
}

int pfi_prom_query(const char *base, const char *query, double timeout_s, double *value,
                   pfi_error *err)
{
    CURL *h = pfi_http_handle();
    if (!h) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "cannot start libcurl");
    char *q = curl_easy_escape(h, query, 0);
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/')
        n--;
    char url[4096];
    snprintf(url, sizeof url, "%.*s/api/v1/query?query=%s", (int)n, base, q ? q : "");
    curl_free(q);
    long status;
    pfi_http_buf b = {0};
    pfi_http_req r = {.url = url, .timeout_s = timeout_s, .user_agent = "pfi-control/" PFI_VERSION};
    int rc = pfi_http_do(h, &r, &status, &b, err);
    curl_easy_cleanup(h);
    if (rc == PFI_OK) rc = pfi_prom_query_parse(b.data, b.len, value, err);
    pfi_http_buf_free(&b);
    return rc;
}
