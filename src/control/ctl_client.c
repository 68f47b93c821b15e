/* pfi_ctl_call (include/control/pfi/ctl_client.h). */
#include "pfi/ctl_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_http.h"

int pfi_ctl_call(const char *base, const char *method, const char *path, const char *token,
                 const char *body, double timeout_s, long *status, char **answer, pfi_error *err)
{
    *answer = NULL;
    CURL *h = curl_easy_init();
    if (!h) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    char url[2048];
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/')
        n--;
    snprintf(url, sizeof url, "%.*s%s", (int)n, base, path);
    ctl_buf b;
    int rc =
        ctl_http_do(h, method, url, token, body, "application/json", timeout_s, status, &b, err);
    curl_easy_cleanup(h);
    if (rc == PFI_OK) *answer = b.data;
    return rc;
}
