/* The controller's HTTP API: its routes on the skeleton it shares with pfid
 * (include/io/pfi/http_server.h): the bearer token is checked on a write's
 * first callback, before its body is read; bodies are bounded; errors are
 * {"error": "..."} with 400/401/404/405/413.
 *
 *   GET    /healthz, /metrics, /v1/status, /v1/flexibility, /v1/targets
 *   POST   /v1/targets          (token) a target; 201 with it; 409 when a live (scheduled
 *                                or active) target has its id; 400 when it has ended
 *   PUT    /v1/targets/ID       (token) the same, replacing a live target of that id (200)
 *   DELETE /v1/targets/ID       (token) an API target; 200 with it
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_ha.h"
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
    double now = pfi_clock_wall();
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n_targets; i++) {
        json_t *t = pfi_target_to_json(&c->targets[i]);
        pfi_json_set(t, "state", json_string(pfi_target_state(&c->targets[i], now)));
        json_array_append_new(a, t);
    }
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

static const pfi_target *api_target(const ctl *c, const char *id)
{
    for (size_t i = 0; i < c->n_targets; i++)
        if (c->targets[i].source == PFI_TARGET_API && strcmp(c->targets[i].id, id) == 0)
            return &c->targets[i];
    return NULL;
}

/* Stores and installs t (under c->mu): PFI_ESTATE when an API target of the
 * same id is still live (scheduled or active) and replace is not asked for,
 * so that a re-post of a reused id cannot silently swap a running event.
 * *replaced tells whether one of that id was there. */
static int install(ctl *c, pfi_target *t, int replace, int *replaced, pfi_error *err)
{
    double now = pfi_clock_wall();
    int rc = pfi_target_validate(t, err);
    if (rc != PFI_OK) return rc;
    if (!(t->end > now))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "target %s ended %.0f s ago (start + duration_s is in the past): "
                             "refused",
                             t->id, now - t->end);
    if (ctl_topo_domain_of(&c->topo, t->domain) == PFI_TOPO_NONE)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"domain\": no domain %s in the topology%s",
                             t->domain,
                             c->topo.t ? "" : " (the controller runs without --topology)");
    const pfi_target *old = api_target(c, t->id);
    *replaced = old != NULL;
    if (old && old->end > now && !replace)
        return pfi_error_set(err, PFI_ESTATE, NULL, 0,
                             "target %s is %s (%s %.0f W until %.0f, %.0f s left): PUT "
                             "/v1/targets/%s to replace it, or give another id",
                             t->id, pfi_target_state(old, now),
                             old->kind == PFI_TARGET_SITE ? "site" : "GPU", old->limit_w, old->end,
                             old->end - now, t->id);
    if ((rc = pfi_ctl_store_put_target(c->store, t, err)) != PFI_OK) return rc;
    if ((rc = ctl_targets_add(c, t, err)) != PFI_OK) return rc;
    wake(c);
    return PFI_OK;
}

static unsigned status_of(int rc)
{
    return rc == PFI_EINVAL   ? MHD_HTTP_BAD_REQUEST
           : rc == PFI_ESTATE ? MHD_HTTP_CONFLICT
                              : MHD_HTTP_INTERNAL_SERVER_ERROR;
}

/* POST /v1/targets (path_id NULL) or PUT /v1/targets/ID (replaces a live
 * target of that id). */
static enum MHD_Result put_target(ctl *c, struct MHD_Connection *conn, const pfi_http_req *r,
                                  const char *path_id)
{
    pfi_target t;
    int has_id, replaced = 0;
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_target_parse_json(r->body, r->len, &t, &has_id, &err) != PFI_OK)
        return pfi_http_send_error(conn, MHD_HTTP_BAD_REQUEST, err.msg);
    if (path_id) {
        if (!pfi_target_id_valid(path_id))
            return pfi_http_send_error(
                conn, MHD_HTTP_BAD_REQUEST,
                "a target id is 1-128 characters of A-Z a-z 0-9 . _ : @ + -");
        if (has_id && strcmp(t.id, path_id) != 0)
            return pfi_http_send_error(conn, MHD_HTTP_BAD_REQUEST,
                                       "the body's \"id\" is not the path's");
        snprintf(t.id, sizeof t.id, "%s", path_id);
        has_id = 1;
    }
    char why[256];
    if (ctl_ha_refuses_writes(c, why, sizeof why))
        return pfi_http_send_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, why);
    pthread_mutex_lock(&c->mu);
    if (!has_id) snprintf(t.id, sizeof t.id, "api-%.0f-%llu", pfi_clock_wall(), ++c->target_seq);
    int rc = install(c, &t, path_id != NULL, &replaced, &err);
    pthread_mutex_unlock(&c->mu);
    if (rc != PFI_OK) return pfi_http_send_error(conn, status_of(rc), err.msg);
    pfi_log("target %s%s: %s %.0f W from %.0f for %.0f s", t.id, replaced ? " replaced" : "",
            t.kind == PFI_TARGET_SITE ? "site" : "GPU", t.limit_w, t.start, t.end - t.start);
    return pfi_http_send_json(conn, replaced && path_id ? MHD_HTTP_OK : MHD_HTTP_CREATED,
                              pfi_target_to_json(&t));
}

static enum MHD_Result delete_target(ctl *c, struct MHD_Connection *conn, const char *id)
{
    if (!pfi_target_id_valid(id))
        return pfi_http_send_error(conn, MHD_HTTP_NOT_FOUND, "no such target");
    char why[256];
    if (ctl_ha_refuses_writes(c, why, sizeof why))
        return pfi_http_send_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, why);
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

/* 200 "ok", or 503 with the reason: a VTN that refuses the credentials or
 * has failed --vtn-max-failures polls in a row (the grid's requests no
 * longer arrive). */
static enum MHD_Result r_healthz(void *c, const pfi_http_req *r)
{
    char why[512];
    if (ctl_vtn_unhealthy(c, why, sizeof why)) {
        json_t *o = json_object(), *reasons = json_array();
        json_array_append_new(reasons, json_string(why));
        pfi_json_set(o, "status", json_string("failing"));
        pfi_json_set(o, "reasons", reasons);
        return pfi_http_send_json(r->conn, MHD_HTTP_SERVICE_UNAVAILABLE, o);
    }
    char *ok = strdup("ok\n");
    return ok ? pfi_http_send_text(r->conn, MHD_HTTP_OK, "text/plain", ok, 3) : MHD_NO;
}

static enum MHD_Result r_metrics(void *c, const pfi_http_req *r)
{
    return metrics(c, r->conn);
}

/* The period's snapshot, and the VTN's health as of now. */
static enum MHD_Result r_status(void *cv, const pfi_http_req *r)
{
    ctl *c = cv;
    pthread_mutex_lock(&c->mu);
    json_t *v = c->status ? json_deep_copy(c->status) : NULL;
    pthread_mutex_unlock(&c->mu);
    if (!v)
        return pfi_http_send_error(r->conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no period has run yet");
    json_t *vtn = ctl_vtn_json(c);
    if (vtn) pfi_json_set(v, "vtn", vtn);
    json_t *ha = ctl_ha_json(c->ha); /* the role as of now, not as of the period */
    if (ha) pfi_json_set(v, "ha", ha);
    return pfi_http_send_json(r->conn, MHD_HTTP_OK, v);
}

static enum MHD_Result r_flex(void *c, const pfi_http_req *r)
{
    return snapshot(c, r->conn, &((ctl *)c)->flex);
}

static enum MHD_Result r_targets(void *c, const pfi_http_req *r)
{
    return list_targets(c, r->conn);
}

static enum MHD_Result r_post_target(void *c, const pfi_http_req *r)
{
    return put_target(c, r->conn, r, NULL);
}

static enum MHD_Result r_put_target(void *c, const pfi_http_req *r)
{
    return put_target(c, r->conn, r, r->arg[0]);
}

static enum MHD_Result r_delete_target(void *c, const pfi_http_req *r)
{
    return delete_target(c, r->conn, r->arg[0]);
}

static const pfi_http_route routes[] = {
    {"GET", "/healthz", r_healthz},          {"GET", "/metrics", r_metrics},
    {"GET", "/v1/status", r_status},         {"GET", "/v1/flexibility", r_flex},
    {"GET", "/v1/targets", r_targets},       {"POST", "/v1/targets", r_post_target},
    {"PUT", "/v1/targets/{}", r_put_target}, {"DELETE", "/v1/targets/{}", r_delete_target},
};

int ctl_server_start(ctl *c, pfi_error *err)
{
    int fd = -1;
    int rc = pfi_http_bind(c->o.listen, &fd, err);
    if (rc != PFI_OK) return rc;
    char url[80];
    pfi_http_fd_url(fd, url, sizeof url, NULL);
    c->http = (pfi_http_service){
        routes, sizeof routes / sizeof *routes, c, c->o.token, PFI_TARGET_MAX_BODY, NULL, NULL};
    pfi_http_limits lim = {.threads = (unsigned)(c->o.http_threads > 0 ? c->o.http_threads : 2),
                           .timeout_s = 30};
    c->httpd = pfi_http_start(&c->http, fd, &lim, err);
    if (!c->httpd) {
        close(fd);
        return pfi_error_set(err, PFI_EIO, NULL, 0, "cannot serve HTTP on %s", c->o.listen);
    }
    pfi_log("listening on %s", url);
    return PFI_OK;
}

void ctl_server_stop(ctl *c)
{
    pfi_http_stop(c->httpd);
    c->httpd = NULL;
}
