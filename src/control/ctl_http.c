/* libcurl calls of the controller (src/control/ctl_http.h). */
#include "ctl_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctl_buf_free(ctl_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->too_big = 0;
}

static size_t on_data(char *p, size_t sz, size_t nm, void *ud)
{
    ctl_buf *b = ud;
    size_t n = sz * nm;
    if (b->too_big || b->len + n > CTL_HTTP_MAX_BODY) {
        b->too_big = 1;
        return 0; /* aborts the transfer */
    }
    char *d = realloc(b->data, b->len + n + 1);
    if (!d) return 0;
    memcpy(d + b->len, p, n);
    b->data = d;
    b->len += n;
    d[b->len] = '\0';
    return n;
}

void ctl_http_setup(CURL *h, const char *method, const char *url, const char *bearer,
                    const char *body, const char *content_type, double timeout_s, ctl_buf *out,
                    struct curl_slist **hdrs)
{
    curl_easy_reset(h);
    *hdrs = NULL;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout_s * 1000));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "pfi-control/" PFI_VERSION);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (bearer) {
        /* The header text holds the secret: built on the stack, wiped after. */
        char auth[4200];
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", bearer);
        *hdrs = curl_slist_append(*hdrs, auth);
        memset(auth, 0, sizeof auth);
    }
    if (body) {
        char ct[128];
        snprintf(ct, sizeof ct, "Content-Type: %s",
                 content_type ? content_type : "application/json");
        *hdrs = curl_slist_append(*hdrs, ct);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    *hdrs = curl_slist_append(*hdrs, "Expect:"); /* no 100-continue round trip */
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
}

int ctl_http_do(CURL *h, const char *method, const char *url, const char *bearer, const char *body,
                const char *content_type, double timeout_s, long *status, ctl_buf *out,
                pfi_error *err)
{
    struct curl_slist *hdrs;
    memset(out, 0, sizeof *out);
    ctl_http_setup(h, method, url, bearer, body, content_type, timeout_s, out, &hdrs);
    CURLcode cc = curl_easy_perform(h);
    curl_slist_free_all(hdrs);
    *status = 0;
    if (out->too_big) {
        ctl_buf_free(out);
        return pfi_error_set(err, PFI_EIO, NULL, 0, "%s %s: answer larger than %u bytes", method,
                             url, CTL_HTTP_MAX_BODY);
    }
    if (cc != CURLE_OK) {
        ctl_buf_free(out);
        return pfi_error_set(err, PFI_EIO, NULL, 0, "%s %s: %s", method, url,
                             curl_easy_strerror(cc));
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    if (!out->data) {
        out->data = calloc(1, 1);
        if (!out->data) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    return PFI_OK;
}
