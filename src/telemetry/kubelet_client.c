/* The kubelet's PodResources API and a PodList, fetched with libcurl.
 *
 * gRPC is HTTP/2: a POST of /SERVICE/METHOD with content-type
 * application/grpc and "te: trailers", the body one length-prefixed message,
 * the reply one such message and a grpc-status in the trailers (or in the
 * headers, for an error without a body). The kubelet's socket speaks
 * cleartext HTTP/2 from the first byte, which libcurl does with
 * CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE over CURLOPT_UNIX_SOCKET_PATH (Debian's
 * libcurl is built with nghttp2). */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pfi/kubelet.h"

#define FETCH_MAX (64u << 20) /* a PodList larger than this is refused */

typedef struct {
    char *buf;
    size_t len, cap, max;
    int overflow;
    int grpc_status; /* -1 until a grpc-status header or trailer */
    char grpc_message[256];
} reply;

static size_t on_body(char *p, size_t sz, size_t nm, void *ctx)
{
    reply *r = ctx;
    size_t n = sz * nm;
    if (r->len + n + 1 > r->max) {
        r->overflow = 1;
        return 0;
    }
    if (r->len + n + 1 > r->cap) {
        size_t c = r->cap ? r->cap : 16384;
        while (c < r->len + n + 1)
            c *= 2;
        char *q = realloc(r->buf, c);
        if (!q) return 0;
        r->buf = q;
        r->cap = c;
    }
    memcpy(r->buf + r->len, p, n);
    r->len += n;
    r->buf[r->len] = '\0';
    return n;
}

/* Headers and trailers both come here: the trailers after the body. */
static size_t on_header(char *p, size_t sz, size_t nm, void *ctx)
{
    reply *r = ctx;
    size_t n = sz * nm;
    char line[300];
    size_t l = n < sizeof line - 1 ? n : sizeof line - 1;
    memcpy(line, p, l);
    line[l] = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    if (strncasecmp(line, "grpc-status:", 12) == 0)
        r->grpc_status = atoi(line + 12);
    else if (strncasecmp(line, "grpc-message:", 13) == 0)
        snprintf(r->grpc_message, sizeof r->grpc_message, "%s", line + 13 + strspn(line + 13, " "));
    return n;
}

/* curl_global_init counts its calls: the dcgm backend's and this one's
 * each happen once. */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_global(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}
static void curl_init_once(void)
{
    pthread_once(&curl_once, curl_global);
}

int pfi_kubelet_list(const char *socket_path, long timeout_ms, pfi_k8s_gpu **out, size_t *n,
                     pfi_error *err)
{
    *out = NULL;
    *n = 0;
    curl_init_once();
    CURL *c = curl_easy_init();
    if (!c) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "curl_easy_init failed");
    reply r = {.max = PFI_K8S_GRPC_MAX + 6, .grpc_status = -1};
    char cerr[CURL_ERROR_SIZE] = "";
    static const char req[5] = {0, 0, 0, 0, 0}; /* an empty ListPodResourcesRequest */
    struct curl_slist *h = NULL;
    h = curl_slist_append(h, "content-type: application/grpc");
    h = curl_slist_append(h, "te: trailers");
    h = curl_slist_append(h, "user-agent: pfid");
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, socket_path);
    curl_easy_setopt(c, CURLOPT_URL, "http://localhost/v1.PodResourcesLister/List");
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, req);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)sizeof req);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    CURLcode cc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    int rc = PFI_OK;
    if (cc != CURLE_OK)
        rc = pfi_error_set(err, PFI_EIO, socket_path, 0, "PodResources List: %s",
                           r.overflow ? "reply over 16 MiB"
                           : cerr[0]  ? cerr
                                      : curl_easy_strerror(cc));
    else if (status != 200)
        rc =
            pfi_error_set(err, PFI_EBACKEND, socket_path, 0, "PodResources List: HTTP %ld", status);
    else if (r.grpc_status != 0)
        rc = pfi_error_set(err, PFI_EBACKEND, socket_path, 0,
                           "PodResources List: gRPC status %d%s%.200s", r.grpc_status,
                           r.grpc_message[0] ? ": " : "", r.grpc_message);
    const uint8_t *msg;
    size_t ml;
    if (rc == PFI_OK)
        rc = pfi_k8s_grpc_unframe((const uint8_t *)(r.buf ? r.buf : ""), r.len, &msg, &ml, err);
    if (rc == PFI_OK) rc = pfi_k8s_podresources_decode(msg, ml, out, n, err);
    free(r.buf);
    return rc;
}

/* The token's first line; "" when unreadable (the request then fails with
 * the server's 401, which says more than a local error would). */
static void read_token(const char *path, char *tok, size_t len)
{
    tok[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f) return;
    if (!fgets(tok, (int)len, f)) tok[0] = '\0';
    fclose(f);
    tok[strcspn(tok, "\r\n")] = '\0';
}

int pfi_k8s_fetch(const char *url, const char *token_file, const char *ca_file, long timeout_ms,
                  char **body, size_t *len, pfi_error *err)
{
    *body = NULL;
    *len = 0;
    curl_init_once();
    CURL *c = curl_easy_init();
    if (!c) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "curl_easy_init failed");
    reply r = {.max = FETCH_MAX, .grpc_status = -1};
    char cerr[CURL_ERROR_SIZE] = "";
    struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
    /* ServiceAccount tokens are JWTs of about 1 KB; 8 KB is ample. */
    char tok[8192], auth[8300];
    if (token_file) {
        read_token(token_file, tok, sizeof tok);
        if (tok[0]) {
            snprintf(auth, sizeof auth, "Authorization: Bearer %s", tok);
            h = curl_slist_append(h, auth);
        }
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https,file");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (ca_file) curl_easy_setopt(c, CURLOPT_CAINFO, ca_file);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    CURLcode cc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    int rc = PFI_OK;
    if (cc != CURLE_OK)
        rc = pfi_error_set(err, PFI_EIO, NULL, 0, "GET %s: %s", url,
                           r.overflow ? "reply over 64 MiB"
                           : cerr[0]  ? cerr
                                      : curl_easy_strerror(cc));
    else if (status != 200 && strncmp(url, "file:", 5) != 0)
        rc = pfi_error_set(err, PFI_EBACKEND, NULL, 0, "GET %s: HTTP %ld%s", url, status,
                           status == 401 || status == 403
                               ? " (the ServiceAccount needs get and list on pods)"
                               : "");
    if (rc != PFI_OK) {
        free(r.buf);
        return rc;
    }
    *body = r.buf ? r.buf : calloc(1, 1);
    *len = r.len;
    return *body ? PFI_OK : pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
}
