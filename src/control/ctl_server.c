/* The controller's HTTP API on libmicrohttpd, with pfid's conventions
 * (src/agent/http.c; the shared part is include/io/pfi/http_server.h): the bearer token is checked
 * on a write's first callback, before its body is read; bodies are bounded; errors are
 * {"error": "..."} with 400/401/404/405/413.
 *
 *   GET    /healthz, /metrics, /v1/status, /v1/flexibility, /v1/targets
 *   POST   /v1/targets          (token) a target; 201 with it
 *   DELETE /v1/targets/ID       (token) an API target; 200 with it
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_internal.h"
#include "pfi/http_server.h"
#include "pfi/json.h"
#include "pfi/target_io.h"

static enum MHD_Result snapshot(ctl *c, struct MHD_Connection *conn, json_t *const *which)
{
    pthread_mutex_lock(&c->mu);
    json_t *v = *which ? json_deep_copy(*which) : NULL;
    pthread_mutex_unlock(&c->mu);
    if (!v) return pfi_http_send_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no period has run yet");
    return pfi_http_send_json(conn, MHD_HTTP_OK, v);
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
    return pfi_http_send_text(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", t, n);
}

static enum MHD_Result list_targets(ctl *c, struct MHD_Connection *conn)
{
    json_t *a = json_array();
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n_targets; i++)
        json_array_append_new(a, pfi_target_to_json(&c->targets[i]));
    pthread_mutex_unlock(&c->mu);
    json_t *o = json_object();
    pfi_json_set(o, "targets", a);
    return pfi_http_send_json(conn, MHD_HTTP_OK, o);
}

static void wake(ctl *c)
{
    c->woken = 1;
    pthread_cond_signal(&c->wake);
}

static enum MHD_Result post_target(ctl *c, struct MHD_Connection *conn, const pfi_http_body *r)
{
    pfi_target t;
    int has_id;
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_target_parse_json(r->body ? r->body : "", r->len, &t, &has_id, &err) != PFI_OK)
        return pfi_http_send_error(conn, MHD_HTTP_BAD_REQUEST, err.msg);
    pthread_mutex_lock(&c->mu);
    if (!has_id) snprintf(t.id, sizeof t.id, "api-%.0f-%llu", pfi_clock_wall(), ++c->target_seq);
    int rc = pfi_target_validate(&t, &err);
    if (rc == PFI_OK) rc = pfi_ctl_store_put_target(c->store, &t, &err);
    if (rc == PFI_OK) rc = ctl_targets_add(c, &t, &err);
    if (rc == PFI_OK) wake(c);
    pthread_mutex_unlock(&c->mu);
    if (rc != PFI_OK)
        return pfi_http_send_error(
            conn, rc == PFI_EINVAL ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_INTERNAL_SERVER_ERROR,
            err.msg);
    pfi_log("target %s: %s %.0f W from %.0f for %.0f s", t.id,
            t.kind == PFI_TARGET_SITE ? "site" : "GPU", t.limit_w, t.start, t.end - t.start);
    return pfi_http_send_json(conn, MHD_HTTP_CREATED, pfi_target_to_json(&t));
}

static enum MHD_Result delete_target(ctl *c, struct MHD_Connection *conn, const char *id)
{
    if (!pfi_target_id_valid(id))
        return pfi_http_send_error(conn, MHD_HTTP_NOT_FOUND, "no such target");
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
    if (!v)
        return pfi_http_send_error(conn, MHD_HTTP_NOT_FOUND,
                                   "no such target (only API targets can be deleted)");
    pfi_log("target %s deleted", id);
    return pfi_http_send_json(conn, MHD_HTTP_OK, v);
}

static enum MHD_Result route(ctl *c, struct MHD_Connection *conn, const char *url,
                             const char *method, const pfi_http_body *r)
{
    int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (strcmp(url, "/healthz") == 0) {
        if (!get) return pfi_http_not_allowed(conn, "GET, HEAD");
        char *ok = strdup("ok\n");
        return ok ? pfi_http_send_text(conn, MHD_HTTP_OK, "text/plain", ok, 3) : MHD_NO;
    }
    if (strcmp(url, "/metrics") == 0)
        return get ? metrics(c, conn) : pfi_http_not_allowed(conn, "GET, HEAD");
    if (strcmp(url, "/v1/status") == 0)
        return get ? snapshot(c, conn, &c->status) : pfi_http_not_allowed(conn, "GET, HEAD");
    if (strcmp(url, "/v1/flexibility") == 0)
        return get ? snapshot(c, conn, &c->flex) : pfi_http_not_allowed(conn, "GET, HEAD");
    if (strcmp(url, "/v1/targets") == 0) {
        if (get) return list_targets(c, conn);
        if (strcmp(method, "POST") == 0) return post_target(c, conn, r);
        return pfi_http_not_allowed(conn, "GET, HEAD, POST");
    }
    if (strncmp(url, "/v1/targets/", 12) == 0) {
        if (strcmp(method, "DELETE") == 0) return delete_target(c, conn, url + 12);
        return pfi_http_not_allowed(conn, "DELETE");
    }
    return pfi_http_send_error(conn, MHD_HTTP_NOT_FOUND, "no such path");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    ctl *c = cls;
    pfi_http_body *r = *con_cls;
    if (!r) {
        const char *bad = pfi_http_path_refused(url);
        if (bad) return pfi_http_send_error(conn, MHD_HTTP_BAD_REQUEST, bad);
        if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
            if (!pfi_http_authorized(conn, c->o.token))
                return pfi_http_send_error(conn, MHD_HTTP_UNAUTHORIZED,
                                           "missing or wrong bearer token");
            if (pfi_http_declared_too_large(conn, PFI_TARGET_MAX_BODY))
                return pfi_http_send_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "body too large");
        }
        r = calloc(1, sizeof *r);
        if (!r) return MHD_NO;
        *con_cls = r;
        return MHD_YES;
    }
    if (*upload_size > 0)
        return pfi_http_body_add(r, upload, upload_size, PFI_TARGET_MAX_BODY) == 0 ? MHD_YES
                                                                                   : MHD_NO;
    if (r->too_big) return pfi_http_send_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "body too large");
    return route(c, conn, url, method, r);
}

int ctl_server_start(ctl *c, pfi_error *err)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    int rc = pfi_http_parse_listen(c->o.listen, &ss, &sl, err);
    if (rc != PFI_OK) return rc;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    c->httpd = MHD_start_daemon(
        flags, 0, NULL, NULL, handler, c, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)(c->o.http_threads > 0 ? c->o.http_threads : 2),
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_NOTIFY_COMPLETED,
        pfi_http_completed, NULL, MHD_OPTION_UNESCAPE_CALLBACK, pfi_http_unescape_none, NULL,
        MHD_OPTION_END);
    if (!c->httpd)
        return pfi_error_set(err, PFI_EIO, NULL, 0, "cannot listen on %s (in use?)", c->o.listen);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(c->httpd, MHD_DAEMON_INFO_BIND_PORT);
    char url[80];
    pfi_http_url(&ss, di ? (unsigned)di->port : 0, url, sizeof url);
    pfi_log("listening on %s", url);
    return PFI_OK;
}

void ctl_server_stop(ctl *c)
{
    if (c->httpd) MHD_stop_daemon(c->httpd);
    c->httpd = NULL;
}
