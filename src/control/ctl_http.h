/* The controller's HTTP client calls on libcurl (private to src/control/).
 * One request at a time on an easy handle the caller keeps (connections are
 * reused); bodies are bounded. Secrets travel in headers or bodies, never in
 * URLs, so curl's error messages (which name the URL) are safe to log. */
#ifndef PFI_CTL_HTTP_H
#define PFI_CTL_HTTP_H

#include <stddef.h>

#include <curl/curl.h>

#include "pfi/error.h"

#define CTL_HTTP_MAX_BODY (16u << 20) /* 16 MiB: an answer larger is an error */

typedef struct ctl_buf {
    char *data; /* NUL-terminated, malloc'd */
    size_t len;
    int too_big;
} ctl_buf;

void ctl_buf_free(ctl_buf *b);

/* Sets up h for one request: method, url, optional bearer token, optional
 * body (with its content type), timeout; the answer goes into out. The
 * header list to free afterwards is returned in *hdrs. */
void ctl_http_setup(CURL *h, const char *method, const char *url, const char *bearer,
                    const char *body, const char *content_type, double timeout_s, ctl_buf *out,
                    struct curl_slist **hdrs);

/* Performs one request (set up as above) and gives the HTTP status.
 * PFI_EIO with curl's message on a transport failure or an oversized answer. */
int ctl_http_do(CURL *h, const char *method, const char *url, const char *bearer, const char *body,
                const char *content_type, double timeout_s, long *status, ctl_buf *out,
                pfi_error *err);

#endif
