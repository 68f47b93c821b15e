/* The controller's HTTP API on libmicrohttpd, with pfid's conventions
 * (src/agent/http.c): the bearer token is checked on a write's first
 * callback, before its body is read; bodies are bounded; errors are
 * {"error": "..."} with 400/401/404/405/413.
 *
 *   GET    /healthz, /metrics, /v1/status, /v1/flexibility, /v1/targets
 *   POST   /v1/targets          (token) a target; 201 with it
 *   DELETE /v1/targets/ID       (token) an API target; 200 with it
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ctl_internal.h"
#include "pfi/json.h"
#include "pfi/target_io.h"

typedef struct req {
    char *body;
    size_t len;
    int too_big;
} req;

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned status, const char *type,
                                 char *text, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned status, json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(v);
    if (!s) return MHD_NO;
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (!t) {
        free(s);
        return MHD_NO;
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    return send_text(conn, status, "application/json", t, n + 1);
}

static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned status, const char *msg)
{
    json_t *o = json_object();
    pfi_json_set(o, "error", json_string(msg));
    return send_json(conn, status, o);
}

static int authorized(const ctl *c, struct MHD_Connection *conn)
{
    const char *h =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncmp(h, "Bearer ", 7) != 0) return 0;
    h += 7;
    size_t n = strlen(h), m = strlen(c->o.token);
    unsigned char diff = (unsigned char)(n != m);
    for (size_t i = 0; i < m; i++) diff |= (unsigned char)(c->o.token[i] ^ (i < n ? h[i] : 0));
    return diff == 0;
}

static enum MHD_Result snapshot(ctl *c, struct MHD_Connection *conn, json_t *const *which)
{
    pthread_mutex_lock(&c->mu);
    json_t *v = *which ? json_deep_copy(*which) : NULL;
    pthread_mutex_unlock(&c->mu);
    if (!v) return send_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no period has run yet");
    return send_json(conn, MHD_HTTP_OK, v);
}

static enum MHD_Result metrics(ctl *c, struct MHD_Connection *conn)
{
    pthread_mutex_lock(&c->mu);
    char *t = c->metrics ? malloc(c->metrics_len + 1) : NULL;
    size_t n = c->metrics_len;
    if (t) memcpy(t, c->metrics, n + 1);
    pthread_mutex_unlock(&c->mu);
    if (!t) {
        t = strdup("# no period has run yet\n");
        n = t ? strlen(t) : 0;
    }
    if (!t) return MHD_NO;
    return send_text(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", t, n);
}

static enum MHD_Result list_targets(ctl *c, struct MHD_Connection *conn)
{
    json_t *a = json_array();
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n_targets; i++) json_array_append_new(a, pfi_target_to_json(&c->targets[i]));
    pthread_mutex_unlock(&c->mu);
    json_t *o = json_object();
    pfi_json_set(o, "targets", a);
    return send_json(conn, MHD_HTTP_OK, o);
}

static void wake(ctl *c)
{
    c->woken = 1;
    pthread_cond_signal(&c->wake);
}

static enum MHD_Result post_target(ctl *c, struct MHD_Connection *conn, const req *r)
{
    pfi_target t;
    int has_id;
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_target_parse_json(r->body ? r->body : "", r->len, &t, &has_id, &err) != PFI_OK)
        return send_error(conn, MHD_HTTP_BAD_REQUEST, err.msg);
    pthread_mutex_lock(&c->mu);
    if (!has_id) snprintf(t.id, sizeof t.id, "api-%.0f-%llu", ctl_now(), ++c->target_seq);
    int rc = pfi_target_validate(&t, &err);
    if (rc == PFI_OK) rc = pfi_ctl_store_put_target(c->store, &t, &err);
    if (rc == PFI_OK) rc = ctl_targets_add(c, &t, &err);
    if (rc == PFI_OK) wake(c);
    pthread_mutex_unlock(&c->mu);
    if (rc != PFI_OK)
        return send_error(conn, rc == PFI_EINVAL ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_INTERNAL_SERVER_ERROR,
                          err.msg);
    ctl_log("target %s: %s %.0f W from %.0f for %.0f s", t.id,
            t.kind == PFI_TARGET_SITE ? "site" : "GPU", t.limit_w, t.start, t.end - t.start);
    return send_json(conn, MHD_HTTP_CREATED, pfi_target_to_json(&t));
}

static enum MHD_Result delete_target(ctl *c, struct MHD_Connection *conn, const char *id)
{
    if (!pfi_target_id_valid(id)) return send_error(conn, MHD_HTTP_NOT_FOUND, "no such target");
    pthread_mutex_lock(&c->mu);
    json_t *v = NULL;
    for (size_t i = 0; i < c->n_targets; i++)
        if (c->targets[i].source == PFI_TARGET_API && strcmp(c->targets[i].id, id) == 0)
            v = pfi_target_to_json(&c->targets[i]);
    int rc = v ? pfi_ctl_store_del_target(c->store, PFI_TARGET_API, id, NULL) : PFI_ENOTFOUND;
    if (v && rc != PFI_ENOTFOUND) {
        ctl_targets_del(c, PFI_TARGET_API, id);
        wake(c);
    }
    pthread_mutex_unlock(&c->mu);
    if (!v) return send_error(conn, MHD_HTTP_NOT_FOUND, "no such target (only API targets can be deleted)");
    ctl_log("target %s deleted", id);
    return send_json(conn, MHD_HTTP_OK, v);
}

static enum MHD_Result not_allowed(struct MHD_Connection *conn, const char *allow)
{
    char *s = strdup("{\"error\":\"method not allowed\"}\n");
    if (!s) return MHD_NO;
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(s), s, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(s);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_METHOD_NOT_ALLOWED, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result route(ctl *c, struct MHD_Connection *conn, const char *url,
                             const char *method, const req *r)
{
    int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (strcmp(url, "/healthz") == 0) {
        if (!get) return not_allowed(conn, "GET, HEAD");
        char *ok = strdup("ok\n");
        return ok ? send_text(conn, MHD_HTTP_OK, "text/plain", ok, 3) : MHD_NO;
    }
    if (strcmp(url, "/metrics") == 0) return get ? metrics(c, conn) : not_allowed(conn, "GET, HEAD");
    if (strcmp(url, "/v1/status") == 0)
        return get ? snapshot(c, conn, &c->status) : not_allowed(conn, "GET, HEAD");
    if (strcmp(url, "/v1/flexibility") == 0)
        return get ? snapshot(c, conn, &c->flex) : not_allowed(conn, "GET, HEAD");
    if (strcmp(url, "/v1/targets") == 0) {
        if (get) return list_targets(c, conn);
        if (strcmp(method, "POST") == 0) return post_target(c, conn, r);
        return not_allowed(conn, "GET, HEAD, POST");
    }
    if (strncmp(url, "/v1/targets/", 12) == 0) {
        if (strcmp(method, "DELETE") == 0) return delete_target(c, conn, url + 12);
        return not_allowed(conn, "DELETE");
    }
    return send_error(conn, MHD_HTTP_NOT_FOUND, "no such path");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    ctl *c = cls;
    req *r = *con_cls;
    if (!r) {
        if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
            if (!authorized(c, conn))
                return send_error(conn, MHD_HTTP_UNAUTHORIZED, "missing or wrong bearer token");
            const char *cl =
                MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
            if (cl && strtoull(cl, NULL, 10) > PFI_TARGET_MAX_BODY)
                return send_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "body too large");
        }
        r = calloc(1, sizeof *r);
        if (!r) return MHD_NO;
        *con_cls = r;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (r->too_big || r->len + n > PFI_TARGET_MAX_BODY) {
            r->too_big = 1;
            return MHD_YES;
        }
        char *b = realloc(r->body, r->len + n + 1);
        if (!b) return MHD_NO;
        r->body = b;
        memcpy(r->body + r->len, upload, n);
        r->len += n;
        r->body[r->len] = '\0';
        return MHD_YES;
    }
    if (r->too_big) return send_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "body too large");
    return route(c, conn, url, method, r);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    req *r = *con_cls;
    if (r) {
        free(r->body);
        free(r);
        *con_cls = NULL;
    }
}

int ctl_server_start(ctl *c, pfi_error *err)
{
    char host[256];
    const char *s = c->o.listen, *port;
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
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
    if (!host[0] || !*port || getaddrinfo(host, port, &hints, &res) != 0 || !res) goto bad;
    struct sockaddr_storage ss;
    memcpy(&ss, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    c->httpd = MHD_start_daemon(flags, 0, NULL, NULL, handler, c, MHD_OPTION_SOCK_ADDR,
                                (struct sockaddr *)&ss, MHD_OPTION_THREAD_POOL_SIZE,
                                (unsigned)(c->o.http_threads > 0 ? c->o.http_threads : 2),
                                MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
                                MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
    if (!c->httpd)
        return pfi_error_set(err, PFI_EIO, NULL, 0, "cannot listen on %s (in use?)", s);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(c->httpd, MHD_DAEMON_INFO_BIND_PORT);
    char addr[INET6_ADDRSTRLEN] = "?";
    if (ss.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr, sizeof addr);
    else
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr, sizeof addr);
    ctl_log("listening on http://%s%s%s:%u", ss.ss_family == AF_INET6 ? "[" : "", addr,
            ss.ss_family == AF_INET6 ? "]" : "", di ? (unsigned)di->port : 0);
    return PFI_OK;
bad:
    return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                         "--listen must be ADDR:PORT or [IPV6]:PORT, not '%s'", s);
}

void ctl_server_stop(ctl *c)
{
    if (c->httpd) MHD_stop_daemon(c->httpd);
    c->httpd = NULL;
}
