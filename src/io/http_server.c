/* The HTTP conventions shared by pfid and the controller
 * (include/io/pfi/http_server.h). */
#include "pfi/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/json.h"

enum MHD_Result pfi_http_send_text(struct MHD_Connection *c, unsigned status, const char *type,
                                   char *text, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static char *dump_line(json_t *v, size_t *len)
{
    char *s =
        v ? json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(v);
    if (!s) return NULL;
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (!t) {
        free(s);
        return NULL;
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    *len = n + 1;
    return t;
}

enum MHD_Result pfi_http_send_json(struct MHD_Connection *c, unsigned status, json_t *v)
{
    size_t n;
    char *t = dump_line(v, &n);
    return t ? pfi_http_send_text(c, status, "application/json", t, n) : MHD_NO;
}

static json_t *error_json(const char *msg)
{
    json_t *o = json_object();
    pfi_json_set(o, "error", json_string(msg));
    return o;
}

enum MHD_Result pfi_http_send_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
    return pfi_http_send_json(c, status, error_json(msg));
}

enum MHD_Result pfi_http_not_allowed(struct MHD_Connection *c, const char *allow)
{
    size_t n;
    char *t = dump_line(error_json("method not allowed"), &n);
    if (!t) return MHD_NO;
    struct MHD_Response *r = MHD_create_response_from_buffer(n, t, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(t);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
    MHD_destroy_response(r);
    return ret;
}

int pfi_http_authorized(struct MHD_Connection *c, const char *token)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || !token || strncmp(h, "Bearer ", 7) != 0) return 0;
    h += 7;
    size_t n = strlen(h), m = strlen(token);
    unsigned char diff = (unsigned char)(n != m);
    for (size_t i = 0; i < m; i++)
        diff |= (unsigned char)(token[i] ^ (i < n ? h[i] : 0));
    return diff == 0;
}

int pfi_http_declared_too_large(struct MHD_Connection *c, size_t max)
{
    const char *cl =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    return cl && strtoull(cl, NULL, 10) > max;
}

size_t pfi_http_unescape_none(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s);
}

const char *pfi_http_path_refused(const char *url)
{
    for (const unsigned char *p = (const unsigned char *)url; *p && *p != '?'; p++) {
        if (*p == '%') return "percent-escapes are not accepted in the path";
        if (*p < 0x21 || *p > 0x7e) return "the path has a byte that is not printable ASCII";
    }
    return NULL;
}

int pfi_http_body_add(pfi_http_body *b, const char *upload, size_t *upload_size, size_t max)
{
    size_t n = *upload_size;
    *upload_size = 0;
    if (b->too_big || b->len + n > max) {
        b->too_big = 1; /* keep reading (chunked bodies have no length) but drop it */
        return 0;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        if (cap > max + 1) cap = max + 1;
        char *d = realloc(b->body, cap);
        if (!d) return -1;
        b->body = d;
        b->cap = cap;
    }
    memcpy(b->body + b->len, upload, n);
    b->len += n;
    b->body[b->len] = '\0';
    return 0;
}

void pfi_http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                        enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    pfi_http_body *b = *con_cls;
    if (b) {
        free(b->body);
        free(b);
        *con_cls = NULL;
    }
}

int pfi_http_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *sl, pfi_error *err)
{
    char host[256];
    const char *port;
    if (s[0] == '[') {
        const char *e = strchr(s, ']');
        if (!e || e[1] != ':' || (size_t)(e - s - 1) >= sizeof host) goto bad;
        memcpy(host, s + 1, (size_t)(e - s - 1));
        host[e - s - 1] = '\0';
        port = e + 2;
    } else {
        const char *colon = strrchr(s, ':');
        if (!colon || (size_t)(colon - s) >= sizeof host || strchr(s, ':') != colon) goto bad;
        memcpy(host, s, (size_t)(colon - s));
        host[colon - s] = '\0';
        port = colon + 1;
    }
    char *end;
    long p = strtol(port, &end, 10);
    if (!*port || *end || p < 0 || p > 65535 || !host[0]) goto bad;
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
    int gr = getaddrinfo(host, port, &hints, &res);
    if (gr != 0 || !res)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "--listen %s: %s", s, gai_strerror(gr));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *sl = res->ai_addrlen;
    freeaddrinfo(res);
    return PFI_OK;
bad:
    return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                         "--listen must be ADDR:PORT or [IPV6]:PORT, not '%s'", s);
}

void pfi_http_url(const struct sockaddr_storage *ss, unsigned port, char *buf, size_t len)
{
    char addr[INET6_ADDRSTRLEN] = "?";
    int v6 = ss->ss_family == AF_INET6;
    if (v6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, addr, sizeof addr);
    else
        inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, addr, sizeof addr);
    snprintf(buf, len, "http://%s%s%s:%u", v6 ? "[" : "", addr, v6 ? "]" : "", port);
}
