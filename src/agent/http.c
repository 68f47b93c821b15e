/* pfid's HTTP API: its routes on the shared skeleton (include/io/pfi/http_server.h,
 * a pool of internal epoll threads).
 *
 * Every state-changing call (POST, PUT, DELETE) needs the bearer token; it is
 * checked on the request's first callback, before any body is read. Bodies
 * are bounded (PFI_API_MAX_BODY) and parsed by include/io/pfi/agent_api.h.
 * Status codes: 400 bad body or a limit outside the device's constraints,
 * 401 no or wrong token, 404 no such job/GPU/path, 405 wrong method, 409 a
 * conflict (busy GPU, running id) or a limit call in --read-only mode, 413 a
 * body too large, 500 a cap or release the store or the state file could
 * not record, 501 a backend that cannot set limits, 502 the device failed
 * or did not enforce the limit. A limit call's 409 for another owner or an
 * old epoch (cap_fence.c) names the holder: {"error", "owner", "epoch"}.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

#include "agent.h"
#include "http_guard.h"
#include "pfi/agent_api.h"
#include "pfi/http_server.h"
#include "pfi/json.h"

static unsigned status_of(int rc)
{
    switch (rc) {
    case PFI_EINVAL:
    case PFI_EPARSE:
    case PFI_ERANGE:
        return MHD_HTTP_BAD_REQUEST;
    case PFI_ENOTFOUND:
        return MHD_HTTP_NOT_FOUND;
    case PFI_ESTATE:
        return MHD_HTTP_CONFLICT;
    case PFI_ENOTSUP:
        return MHD_HTTP_NOT_IMPLEMENTED;
    case PFI_EBACKEND:
        return MHD_HTTP_BAD_GATEWAY;
    default:
        return MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
}

static enum MHD_Result send_pfi_error(struct MHD_Connection *c, int rc, const pfi_error *err)
{
    return pfi_http_send_error(c, status_of(rc), err->msg[0] ? err->msg : pfi_strerror(rc));
}

static enum MHD_Result metrics(agent *a, struct MHD_Connection *c)
{
    /* One rendering per state change, shared by every scrape until the next
     * one: MHD responses are reference counted and may be queued many times. */
    pthread_mutex_lock(&a->mu);
    if (!a->metrics_resp || a->metrics_gen != a->gen) {
        size_t len;
        char *text = agent_render_metrics(a, &len);
        struct MHD_Response *r =
            text ? MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE) : NULL;
        if (!r) {
            free(text);
            pthread_mutex_unlock(&a->mu);
            return pfi_http_send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
        }
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                "text/plain; version=0.0.4; charset=utf-8");
        if (a->metrics_resp) MHD_destroy_response(a->metrics_resp);
        a->metrics_resp = r;
        a->metrics_gen = a->gen;
    }
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, a->metrics_resp);
    pthread_mutex_unlock(&a->mu);
    return ret;
}

/* 200 "ok" or 503 with every reason that holds: a cap that cannot be
 * restored, a store that cannot be written, a GPU that cannot be read. A
 * probe (readiness, a controller) must not send work to a node whose caps
 * are not under control. */
static enum MHD_Result healthz(agent *a, struct MHD_Connection *c)
{
    json_t *reasons = json_array();
    char buf[768];
    pthread_mutex_lock(&a->mu);
    for (unsigned g = 0; g < a->n_gpus; g++) {
        const agent_gpu *x = &a->gpus[g];
        if (x->capped && x->restore_failed) {
            snprintf(buf, sizeof buf,
                     "restore failed: GPU %u cannot be put back to %.0f W (cap %.0f W); retrying",
                     g, x->cap_prior_w, x->cap_w);
            json_array_append_new(reasons, json_string(buf));
        }
        if (x->release_pending) {
            snprintf(buf, sizeof buf,
                     "stale cap record: GPU %u's cap was released but the release is not "
                     "recorded (%s); retrying",
                     g, x->release_error);
            json_array_append_new(reasons, json_string(buf));
        }
        if (x->below_prior) {
            snprintf(buf, sizeof buf,
                     "externally limited: GPU %u was found below its prior limit %.0f W with no "
                     "cap record and cannot be put back",
                     g, x->st.prior_w);
            json_array_append_new(reasons, json_string(buf));
        }
        if (x->capped && x->drifting) {
            snprintf(buf, sizeof buf,
                     "cap not held: GPU %u's limit moved off the cap of %.0f W and cannot be "
                     "re-applied; retrying",
                     g, x->cap_w);
            json_array_append_new(reasons, json_string(buf));
        }
    }
    if (a->store_failing) {
        snprintf(buf, sizeof buf, "store failing: %s", a->store_error);
        json_array_append_new(reasons, json_string(buf));
    }
    for (unsigned g = 0; g < a->n_gpus; g++)
        if (!a->gpus[g].sample_ok) {
            snprintf(buf, sizeof buf,
                     "backend down: GPU %u could not be read at the last sample: %s", g,
                     a->gpus[g].read_error);
            json_array_append_new(reasons, json_string(buf));
        }
    pthread_mutex_unlock(&a->mu);
    if (json_array_size(reasons) == 0) {
        json_decref(reasons);
        char *ok = strdup("ok\n");
        return ok ? pfi_http_send_text(c, MHD_HTTP_OK, "text/plain", ok, 3) : MHD_NO;
    }
    json_t *o = json_object();
    pfi_json_set(o, "status", json_string("failing"));
    pfi_json_set(o, "reasons", reasons);
    return pfi_http_send_json(c, MHD_HTTP_SERVICE_UNAVAILABLE, o);
}

static enum MHD_Result get_locked(agent *a, struct MHD_Connection *c, json_t *(*fn)(agent *))
{
    pthread_mutex_lock(&a->mu);
    json_t *v = fn(a);
    pthread_mutex_unlock(&a->mu);
    return pfi_http_send_json(c, MHD_HTTP_OK, v);
}

static enum MHD_Result job_reply(agent *a, struct MHD_Connection *c, const char *id,
                                 unsigned status)
{
    pthread_mutex_lock(&a->mu);
    int i = agent_job_find(a, id);
    json_t *v = i >= 0 ? agent_job_json(a, a->jobs[i]) : NULL;
    pthread_mutex_unlock(&a->mu);
    if (!v) return pfi_http_send_error(c, MHD_HTTP_NOT_FOUND, "no such job");
    return pfi_http_send_json(c, status, v);
}

static enum MHD_Result job_curve(agent *a, struct MHD_Connection *c, const char *id)
{
    json_t *v = NULL;
    pfi_error err;
    pfi_error_clear(&err);
    int rc = agent_curve_get(a, id, &v, &err);
    return rc == PFI_OK ? pfi_http_send_json(c, MHD_HTTP_OK, v) : send_pfi_error(c, rc, &err);
}

static enum MHD_Result post_job(agent *a, struct MHD_Connection *c, const pfi_http_req *r)
{
    pfi_store_job j;
    pfi_error err;
    pfi_error_clear(&err);
    int rc = pfi_api_parse_job(r->body, r->len, &j, &err);
    if (rc != PFI_OK) return pfi_http_send_error(c, MHD_HTTP_BAD_REQUEST, err.msg);
    j.registered_at = pfi_clock_wall();
    rc = agent_job_register(a, &j, 1, &err);
    if (rc == PFI_ENOTFOUND) return pfi_http_send_error(c, MHD_HTTP_BAD_REQUEST, err.msg);
    if (rc != PFI_OK) return send_pfi_error(c, rc, &err);
    pfi_log("job %s registered on %zu GPU(s)", j.id, j.n_gpus);
    return job_reply(a, c, j.id, MHD_HTTP_CREATED);
}

static enum MHD_Result post_throughput(agent *a, struct MHD_Connection *c, const char *id,
                                       const pfi_http_req *r)
{
    double tps;
    pfi_error err;
    pfi_error_clear(&err);
    int rc = pfi_api_parse_throughput(r->body, r->len, &tps, &err);
    if (rc != PFI_OK) return pfi_http_send_error(c, MHD_HTTP_BAD_REQUEST, err.msg);
    unsigned long long n = 0;
    rc = agent_job_report(a, id, tps, &n, &err);
    if (rc != PFI_OK) return send_pfi_error(c, rc, &err);
    json_t *o = json_object();
    pfi_json_set(o, "job", json_string(id));
    pfi_json_set(o, "reports", json_integer((json_int_t)n));
    return pfi_http_send_json(c, MHD_HTTP_OK, o);
}

static enum MHD_Result delete_job(agent *a, struct MHD_Connection *c, const char *id)
{
    json_t *summary = NULL;
    pfi_error err;
    pfi_error_clear(&err);
    int rc = agent_job_end(a, id, &summary, &err);
    if (rc != PFI_OK) return send_pfi_error(c, rc, &err);
    pfi_log("job %s ended", id);
    return pfi_http_send_json(c, MHD_HTTP_OK, summary);
}

/* The caller of a limit call: Pfi-Owner and Pfi-Epoch (absent: "" and 0). */
static int limit_caller(struct MHD_Connection *c, agent_caller *by, pfi_error *err)
{
    return agent_caller_parse(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Pfi-Owner"),
                              MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Pfi-Epoch"), by,
                              err);
}

/* A refused limit call: 409 naming the holder ({"error", "owner", "epoch"}). */
static enum MHD_Result send_limit_error(struct MHD_Connection *c, int rc, const pfi_error *err,
                                        const agent_holder *h)
{
    if (rc != PFI_ESTATE || !h->set) return send_pfi_error(c, rc, err);
    json_t *o = json_object();
    pfi_json_set(o, "error", json_string(err->msg));
    pfi_json_set(o, "owner", json_string(h->owner));
    pfi_json_set(o, "epoch", json_integer(h->epoch));
    return pfi_http_send_json(c, MHD_HTTP_CONFLICT, o);
}

static enum MHD_Result put_limit(agent *a, struct MHD_Connection *c, unsigned gpu,
                                 const pfi_http_req *r)
{
    double w, e;
    pfi_error err;
    pfi_error_clear(&err);
    agent_caller by;
    if (limit_caller(c, &by, &err) != PFI_OK)
        return pfi_http_send_error(c, MHD_HTTP_BAD_REQUEST, err.msg);
    int rc = pfi_api_parse_limit(r->body, r->len, &w, &e, &err);
    if (rc != PFI_OK) return pfi_http_send_error(c, MHD_HTTP_BAD_REQUEST, err.msg);
    json_t *resp = NULL;
    agent_holder h = {0};
    rc = agent_cap_set(a, gpu, w, e, &by, &resp, &h, &err);
    if (rc != PFI_OK) return send_limit_error(c, rc, &err, &h);
    return pfi_http_send_json(c, MHD_HTTP_OK, resp);
}

static enum MHD_Result delete_limit(agent *a, struct MHD_Connection *c, unsigned gpu)
{
    json_t *resp = NULL;
    pfi_error err;
    pfi_error_clear(&err);
    agent_caller by;
    if (limit_caller(c, &by, &err) != PFI_OK)
        return pfi_http_send_error(c, MHD_HTTP_BAD_REQUEST, err.msg);
    agent_holder h = {0};
    int rc = agent_cap_clear(a, gpu, "DELETE request", &by, &resp, &h, &err);
    if (rc != PFI_OK) return send_limit_error(c, rc, &err, &h);
    return pfi_http_send_json(c, MHD_HTTP_OK, resp);
}

/* A GPU's index as a path segment: digits without leading zeros (one name per
 * GPU); -1 when it is not that. */
static long gpu_index(const char *p)
{
    if (*p < '0' || *p > '9') return -1;
    char *end;
    errno = 0;
    long n = strtol(p, &end, 10);
    if (errno || n < 0 || n > 1000000 || *end) return -1;
    if (p[0] == '0' && end != p + 1) return -1;
    return n;
}

static int is_limit_call(const char *url)
{
    return strncmp(url, "/v1/gpus/", 9) == 0 || strcmp(url, "/v1/node/limit") == 0;
}

static enum MHD_Result r_metrics(void *a, const pfi_http_req *r)
{
    return metrics(a, r->conn);
}

static enum MHD_Result r_healthz(void *a, const pfi_http_req *r)
{
    return healthz(a, r->conn);
}

static enum MHD_Result r_gpus(void *a, const pfi_http_req *r)
{
    return get_locked(a, r->conn, agent_gpus_json);
}

static enum MHD_Result r_jobs(void *a, const pfi_http_req *r)
{
    return get_locked(a, r->conn, agent_jobs_json);
}

static enum MHD_Result r_post_job(void *a, const pfi_http_req *r)
{
    return post_job(a, r->conn, r);
}

/* The job routes' id: NULL (and a 404 sent) when it cannot name a job. */
static int bad_job(const pfi_http_req *r, enum MHD_Result *ret)
{
    if (pfi_api_job_id_valid(r->arg[0])) return 0;
    *ret = pfi_http_send_error(r->conn, MHD_HTTP_NOT_FOUND, "no such job");
    return 1;
}

static enum MHD_Result r_job(void *a, const pfi_http_req *r)
{
    enum MHD_Result ret;
    return bad_job(r, &ret) ? ret : job_reply(a, r->conn, r->arg[0], MHD_HTTP_OK);
}

static enum MHD_Result r_delete_job(void *a, const pfi_http_req *r)
{
    enum MHD_Result ret;
    return bad_job(r, &ret) ? ret : delete_job(a, r->conn, r->arg[0]);
}

static enum MHD_Result r_throughput(void *a, const pfi_http_req *r)
{
    enum MHD_Result ret;
    return bad_job(r, &ret) ? ret : post_throughput(a, r->conn, r->arg[0], r);
}

static enum MHD_Result r_curve(void *a, const pfi_http_req *r)
{
    enum MHD_Result ret;
    return bad_job(r, &ret) ? ret : job_curve(a, r->conn, r->arg[0]);
}

static enum MHD_Result r_put_limit(void *a, const pfi_http_req *r)
{
    long g = gpu_index(r->arg[0]);
    if (g < 0) return pfi_http_send_error(r->conn, MHD_HTTP_NOT_FOUND, "no such path");
    return put_limit(a, r->conn, (unsigned)g, r);
}

static enum MHD_Result r_delete_limit(void *a, const pfi_http_req *r)
{
    long g = gpu_index(r->arg[0]);
    if (g < 0) return pfi_http_send_error(r->conn, MHD_HTTP_NOT_FOUND, "no such path");
    return delete_limit(a, r->conn, (unsigned)g);
}

static enum MHD_Result r_node(void *a, const pfi_http_req *r)
{
    return get_locked(a, r->conn, agent_node_json);
}

/* PUT and DELETE /v1/node/limit: fenced by the same headers as a cap. */
static enum MHD_Result r_put_node(void *a, const pfi_http_req *r)
{
    double w, e;
    pfi_error err;
    pfi_error_clear(&err);
    agent_caller by;
    if (limit_caller(r->conn, &by, &err) != PFI_OK)
        return pfi_http_send_error(r->conn, MHD_HTTP_BAD_REQUEST, err.msg);
    int rc = pfi_api_parse_limit(r->body, r->len, &w, &e, &err);
    if (rc != PFI_OK) return pfi_http_send_error(r->conn, MHD_HTTP_BAD_REQUEST, err.msg);
    json_t *resp = NULL;
    agent_holder h = {0};
    rc = agent_node_set(a, w, e, &by, &resp, &h, &err);
    if (rc != PFI_OK) return send_limit_error(r->conn, rc, &err, &h);
    return pfi_http_send_json(r->conn, MHD_HTTP_OK, resp);
}

static enum MHD_Result r_delete_node(void *a, const pfi_http_req *r)
{
    pfi_error err;
    pfi_error_clear(&err);
    agent_caller by;
    if (limit_caller(r->conn, &by, &err) != PFI_OK)
        return pfi_http_send_error(r->conn, MHD_HTTP_BAD_REQUEST, err.msg);
    json_t *resp = NULL;
    agent_holder h = {0};
    int rc = agent_node_clear(a, &by, &resp, &h, &err);
    if (rc != PFI_OK) return send_limit_error(r->conn, rc, &err, &h);
    return pfi_http_send_json(r->conn, MHD_HTTP_OK, resp);
}

static const pfi_http_route routes[] = {
    {"GET", "/metrics", r_metrics},
    {"GET", "/healthz", r_healthz},
    {"GET", "/v1/gpus", r_gpus},
    {"GET", "/v1/jobs", r_jobs},
    {"POST", "/v1/jobs", r_post_job},
    {"GET", "/v1/jobs/{}", r_job},
    {"DELETE", "/v1/jobs/{}", r_delete_job},
    {"POST", "/v1/jobs/{}/throughput", r_throughput},
    {"GET", "/v1/jobs/{}/curve", r_curve},
    {"PUT", "/v1/gpus/{}/limit", r_put_limit},
    {"DELETE", "/v1/gpus/{}/limit", r_delete_limit},
    {"GET", "/v1/node", r_node},
    {"PUT", "/v1/node/limit", r_put_node},
    {"DELETE", "/v1/node/limit", r_delete_node},
};

static const char *screen(void *a, struct MHD_Connection *c)
{
    (void)a;
    return agent_guard_framing(c);
}

static unsigned admit(void *ctx, struct MHD_Connection *c, const char *url, const char **msg)
{
    agent *a = ctx;
    agent_guard_trust(a->guard, c);
    if (a->o.read_only && is_limit_call(url)) {
        *msg = "pfid runs --read-only: power limits are not changed";
        return MHD_HTTP_CONFLICT;
    }
    return 0;
}

int agent_http_bind(agent *a, pfi_error *err)
{
    return pfi_http_bind(a->o.listen, &a->listen_fd, err);
}

int agent_http_start(agent *a, pfi_error *err)
{
    char url[80];
    int loopback = 1;
    if (a->listen_fd < 0 || pfi_http_fd_url(a->listen_fd, url, sizeof url, &loopback) != PFI_OK)
        return pfi_error_set(err, PFI_EIO, NULL, 0, "no listening socket for %s", a->o.listen);
    if (!a->guard && !(a->guard = agent_guard_create(a->o.http_max_conns)))
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    a->http = (pfi_http_service){
        routes, sizeof routes / sizeof *routes, a, a->token, PFI_API_MAX_BODY, screen, admit};
    /* Bounds a client cannot push past: connections in all and per address
     * (a few thousand slow connections from one host took the API away),
     * idle time of a connection, a reserve for authorized clients (the
     * accept policy). */
    pfi_http_limits lim = {.threads = (unsigned)a->o.http_threads,
                           .max_conns = a->o.http_max_conns,
                           .conns_per_ip = a->o.http_conns_per_ip,
                           .timeout_s = a->o.http_timeout_s,
                           .accept = agent_guard_accept,
                           .accept_cls = a->guard,
                           .log = agent_guard_log,
                           .log_cls = a->guard,
                           .notify = agent_guard_notify,
                           .notify_cls = a->guard};
    a->httpd = pfi_http_start(&a->http, a->listen_fd, &lim, err);
    if (!a->httpd)
        return pfi_error_set(err, PFI_EIO, NULL, 0, "cannot serve HTTP on %s", a->o.listen);
    a->listen_fd = -1; /* MHD owns it now and closes it when it stops */
    if (!loopback)
        pfi_log("warning: listening beyond loopback without TLS: the bearer token "
                "crosses the network in clear text; restrict access (firewall, "
                "NetworkPolicy) or put a TLS proxy in front");
    pfi_log("listening on %s%s", url, a->o.read_only ? " (read-only)" : "");
    return PFI_OK;
}

void agent_http_stop(agent *a)
{
    if (a->listen_fd >= 0) close(a->listen_fd); /* bound but never served */
    a->listen_fd = -1;
    pfi_http_stop(a->httpd);
    a->httpd = NULL;
    if (a->metrics_resp) MHD_destroy_response(a->metrics_resp);
    a->metrics_resp = NULL;
    agent_guard_destroy(a->guard);
    a->guard = NULL;
}
