/* pfi_ctl_call (include/control/pfi/ctl_client.h). */
#include "pfi/ctl_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/http_client.h"

int pfi_ctl_call(const char *base, const char *method, const char *path, const char *token,
                 const char *body, double timeout_s, long *status, char **answer, pfi_error *err)
{
    *answer = NULL;
    CURL *h = pfi_http_handle();
    if (!h) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "cannot start libcurl");
    char url[2048];
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/')
        n--;
    snprintf(url, sizeof url, "%.*s%s", (int)n, base, path);
    pfi_http_buf b = {0};
    pfi_http_req r = {.method = method,
                      .url = url,
                      .bearer = token,
                      .body = body,
                      .timeout_s = timeout_s,
                      .user_agent = "pfi-control/" PFI_VERSION};
    int rc = pfi_http_do(h, &r, status, &b, err);
    curl_easy_cleanup(h);
    if (rc == PFI_OK)
        *answer = b.data;
    else
        pfi_http_buf_free(&b);
    return rc;
}
