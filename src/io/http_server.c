/* The HTTP conventions shared by pfid and the controller
 * (include/io/pfi/http_server.h). */
#include "pfi/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

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

/* Whether path matches pattern; the "{}" segments go to r->arg. */
static int path_match(const char *pat, const char *path, pfi_http_req *r)
{
    size_t k = 0;
    while (*pat) {
        if (pat[0] == '{' && pat[1] == '}') {
            size_t n = strcspn(path, "/");
            if (n == 0 || n > PFI_HTTP_ARG_MAX || k >= PFI_HTTP_MAX_ARGS) return 0;
            if (r) {
                memcpy(r->argbuf[k], path, n);
                r->argbuf[k][n] = '\0';
                r->arg[k] = r->argbuf[k];
            }
            k++;
            path += n;
            pat += 2;
        } else if (*pat++ != *path++) {
            return 0;
        }
    }
    return *path == '\0';
}

static int method_is(const char *route, const char *method)
{
    if (strcmp(route, method) == 0) return 1;
    return strcmp(route, MHD_HTTP_METHOD_GET) == 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

static enum MHD_Result route(const pfi_http_service *s, struct MHD_Connection *c, const char *url,
                             const char *method, const pfi_http_body *b)
{
    pfi_http_req r;
    memset(&r, 0, sizeof r);
    r.conn = c;
    r.url = url;
    r.method = method;
    r.body = b->body ? b->body : "";
    r.len = b->len;
    char allow[128] = "";
    for (size_t i = 0; i < s->n_routes; i++) {
        const pfi_http_route *rt = &s->routes[i];
        if (!path_match(rt->path, url, NULL)) continue;
        if (method_is(rt->method, method)) {
            path_match(rt->path, url, &r);
            return rt->fn(s->ctx, &r);
        }
        size_t n = strlen(allow);
        snprintf(allow + n, sizeof allow - n, "%s%s%s", n ? ", " : "", rt->method,
                 strcmp(rt->method, MHD_HTTP_METHOD_GET) == 0 ? ", HEAD" : "");
    }
    if (allow[0]) return pfi_http_not_allowed(c, allow);
    return pfi_http_send_error(c, MHD_HTTP_NOT_FOUND, "no such path");
}

static int is_write(const char *method)
{
    return strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0;
}

/* libmicrohttpd's access handler for a pfi_http_service (cls). */
static enum MHD_Result dispatch(void *cls, struct MHD_Connection *c, const char *url,
                                const char *method, const char *version, const char *upload,
                                size_t *upload_size, void **con_cls)
{
    (void)version;
    const pfi_http_service *s = cls;
    pfi_http_body *b = *con_cls;
    if (!b) {
        /* First call: headers only. Refuse what needs no body to refuse:
         * first a path that would route differently decoded (%2f, %00). */
        const char *bad = pfi_http_path_refused(url);
        if (!bad && s->screen) bad = s->screen(s->ctx, c);
        if (bad) return pfi_http_send_error(c, MHD_HTTP_BAD_REQUEST, bad);
        if (is_write(method)) {
            if (!pfi_http_authorized(c, s->token))
                return pfi_http_send_error(c, MHD_HTTP_UNAUTHORIZED,
                                           "missing or wrong bearer token");
            const char *msg = NULL;
            unsigned st = s->admit ? s->admit(s->ctx, c, url, &msg) : 0;
            if (st) return pfi_http_send_error(c, st, msg ? msg : "refused");
            if (pfi_http_declared_too_large(c, s->max_body))
                return pfi_http_send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "body too large");
        }
        b = calloc(1, sizeof *b);
        if (!b) return MHD_NO;
        *con_cls = b;
        return MHD_YES;
    }
    if (*upload_size > 0)
        return pfi_http_body_add(b, upload, upload_size, s->max_body) == 0 ? MHD_YES : MHD_NO;
    if (b->too_big) return pfi_http_send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "body too large");
    return route(s, c, url, method, b);
}

struct MHD_Daemon *pfi_http_start(const pfi_http_service *svc, int fd, const pfi_http_limits *lim,
                                  pfi_error *err)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (fd < 0 || getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
        pfi_error_set(err, PFI_EIO, NULL, 0, "no listening socket");
        return NULL;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    struct MHD_OptionItem opt[16];
    size_t n = 0;
#define OPT(o, v, p) opt[n++] = (struct MHD_OptionItem){(o), (intptr_t)(v), (p)}
    OPT(MHD_OPTION_LISTEN_SOCKET, fd, NULL);
    OPT(MHD_OPTION_THREAD_POOL_SIZE, lim->threads ? lim->threads : 2, NULL);
    OPT(MHD_OPTION_CONNECTION_TIMEOUT, lim->timeout_s ? lim->timeout_s : 30, NULL);
    OPT(MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL);
    OPT(MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)pfi_http_completed, NULL);
    /* The path reaches the routes as sent, so that an escape cannot name
     * another route; pfi_http_path_refused turns escapes away. */
    OPT(MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)pfi_http_unescape_none, NULL);
    if (lim->max_conns) OPT(MHD_OPTION_CONNECTION_LIMIT, lim->max_conns, NULL);
    if (lim->conns_per_ip) OPT(MHD_OPTION_PER_IP_CONNECTION_LIMIT, lim->conns_per_ip, NULL);
    if (lim->log) OPT(MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)lim->log, lim->log_cls);
    if (lim->notify) OPT(MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)lim->notify, lim->notify_cls);
    OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
    struct MHD_Daemon *d = MHD_start_daemon(flags, 0, lim->accept, lim->accept_cls, dispatch,
                                            (void *)svc, MHD_OPTION_ARRAY, opt, MHD_OPTION_END);
    if (!d) pfi_error_set(err, PFI_EIO, NULL, 0, "cannot serve HTTP");
    return d;
}

void pfi_http_stop(struct MHD_Daemon *d)
{
    if (d) MHD_stop_daemon(d);
}

int pfi_http_bind(const char *listen_addr, int *fd_out, pfi_error *err)
{
    struct sockaddr_storage ss;
    socklen_t sl = 0;
    int rc = pfi_http_parse_listen(listen_addr, &ss, &sl, err);
    if (rc != PFI_OK) return rc;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return pfi_error_set(err, PFI_EIO, NULL, 0, "--listen %s: socket: %s", listen_addr,
                             strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 1024) != 0) {
        int e = errno;
        close(fd);
        return pfi_error_set(err, PFI_EIO, NULL, 0, "cannot listen on %s: %s", listen_addr,
                             strerror(e));
    }
    *fd_out = fd;
    return PFI_OK;
}

int pfi_http_fd_url(int fd, char *buf, size_t len, int *loopback)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) return PFI_EIO;
    unsigned port;
    int lo;
    if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
        port = ntohs(s6->sin6_port);
        lo = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
    } else {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
        port = ntohs(s4->sin_port);
        lo = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
    }
    pfi_http_url(&ss, port, buf, len);
    if (loopback) *loopback = lo;
    return PFI_OK;
}
