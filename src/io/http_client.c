/* The one libcurl client (pfi/http_client.h). */
#include "pfi/http_client.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

CURL *pfi_http_handle(void)
{
    pthread_once(&global_once, global_init);
    return global_rc == CURLE_OK ? curl_easy_init() : NULL;
}

void pfi_http_buf_free(pfi_http_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->too_big = 0;
}

static size_t on_data(char *p, size_t sz, size_t nm, void *ud)
{
    pfi_http_buf *b = ud;
    size_t n = sz * nm, max = b->max ? b->max : PFI_HTTP_MAX_BODY;
    if (b->too_big || b->len + n > max) {
        b->too_big = 1;
        return 0; /* aborts the transfer */
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) return 0;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

void pfi_http_setup(CURL *h, const pfi_http_req *r, pfi_http_buf *out, struct curl_slist **hdrs)
{
    curl_easy_reset(h);
    *hdrs = NULL;
    out->len = 0;
    out->too_big = 0;
    out->curl_err[0] = '\0';
    if (out->data) out->data[0] = '\0';
    long ms = (long)(r->timeout_s * 1000);
    curl_easy_setopt(h, CURLOPT_URL, r->url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* safe in threaded daemons */
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, out->curl_err);
    curl_easy_setopt(h, CURLOPT_USERAGENT, r->user_agent ? r->user_agent : "pfi/" PFI_VERSION);
    if (r->file_and_redirects) {
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https,file");
        curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(h, CURLOPT_MAXREDIRS, 3L);
    } else {
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    }
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method ? r->method : "GET");
    if (r->bearer) {
        /* The header text holds the secret: built on the stack, wiped after. */
        char auth[4200];
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", r->bearer);
        *hdrs = curl_slist_append(*hdrs, auth);
        memset(auth, 0, sizeof auth);
    }
    if (r->body) {
        char ct[128];
        snprintf(ct, sizeof ct, "Content-Type: %s",
                 r->content_type ? r->content_type : "application/json");
        *hdrs = curl_slist_append(*hdrs, ct);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(r->body));
    }
    *hdrs = curl_slist_append(*hdrs, "Expect:"); /* no 100-continue round trip */
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
}

int pfi_http_finish(CURL *h, CURLcode cc, const pfi_http_req *r, pfi_http_buf *out, long *status,
                    pfi_error *err)
{
    const char *method = r->method ? r->method : "GET";
    size_t max = out->max ? out->max : PFI_HTTP_MAX_BODY;
    *status = 0;
    if (out->too_big)
        return pfi_error_set(err, PFI_EIO, NULL, 0, "%s %s: answer larger than %zu bytes", method,
                             r->url, max);
    if (cc != CURLE_OK)
        return pfi_error_set(err, PFI_EIO, NULL, 0, "%s %s: %s", method, r->url,
                             out->curl_err[0] ? out->curl_err : curl_easy_strerror(cc));
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    if (!out->data) {
        out->data = calloc(1, 1);
        if (!out->data) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        out->cap = 1;
    }
    return PFI_OK;
}

int pfi_http_do(CURL *h, const pfi_http_req *r, long *status, pfi_http_buf *out, pfi_error *err)
{
    struct curl_slist *hdrs;
    pfi_http_setup(h, r, out, &hdrs);
    CURLcode cc = curl_easy_perform(h);
    curl_slist_free_all(hdrs);
    return pfi_http_finish(h, cc, r, out, status, err);
}
