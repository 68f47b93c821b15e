/* The one HTTP client on libcurl: pfi sweep --via-pfid, the dcgm backend's
 * scrapes, and the controller's calls to agents, Prometheus and a VTN all
 * set timeouts, auth and errors here. One request at a time on an easy
 * handle the caller keeps (connections are reused), or set up here and run
 * in the caller's multi handle. Answers are bounded. Secrets travel in
 * headers or bodies, never in URLs, so the error messages (which name the
 * URL) are safe to log.
 *
 * Ownership: the caller owns the handle (pfi_http_handle, curl_easy_cleanup),
 * the request's strings, and the answer buffer (pfi_http_buf_free). */
#ifndef PFI_HTTP_CLIENT_H
#define PFI_HTTP_CLIENT_H

#include <stddef.h>

#include <curl/curl.h>

#include "pfi/error.h"

#define PFI_HTTP_MAX_BODY (16u << 20) /* 16 MiB: an answer larger is an error */

/* An answer's body. Zero it before the first use; a later request on it
 * reuses its memory. */
typedef struct pfi_http_buf {
    char *data; /* NUL-terminated, malloc'd; "" after an empty answer */
    size_t len, cap;
    size_t max;  /* the largest answer accepted; 0: PFI_HTTP_MAX_BODY */
    int too_big; /* the answer went over max (the transfer was aborted) */
    char curl_err[CURL_ERROR_SIZE];
} pfi_http_buf;

void pfi_http_buf_free(pfi_http_buf *b);

typedef struct pfi_http_req {
    const char *method;       /* NULL: GET */
    const char *url;          /* http(s)://... */
    const char *bearer;       /* the token for "Authorization: Bearer", or NULL */
    const char *body;         /* NUL-terminated, or NULL */
    const char *content_type; /* of the body; NULL: application/json */
    double timeout_s;         /* the whole request, and the connect within it */
    const char *user_agent;   /* NULL: "pfi/VERSION" */
    int file_and_redirects;   /* also file:// URLs, and up to 3 redirects (dcgm --url) */
} pfi_http_req;

/* A new easy handle, libcurl initialised once per process first (thread
 * safe); NULL when libcurl cannot start. */
CURL *pfi_http_handle(void);

/* Sets h up for r, the answer going into out (its length reset). The header
 * list to free after the transfer is returned in *hdrs. */
void pfi_http_setup(CURL *h, const pfi_http_req *r, pfi_http_buf *out, struct curl_slist **hdrs);

/* After a transfer set up as above ended with cc: the HTTP status (0 for
 * file://) in *status, PFI_EIO naming method and URL on a transport failure
 * or an oversized answer (out's memory is kept for the next request). */
int pfi_http_finish(CURL *h, CURLcode cc, const pfi_http_req *r, pfi_http_buf *out, long *status,
                    pfi_error *err);

/* Setup, one blocking transfer and finish. */
int pfi_http_do(CURL *h, const pfi_http_req *r, long *status, pfi_http_buf *out, pfi_error *err);

#endif
