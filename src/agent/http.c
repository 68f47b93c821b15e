/* pfid's HTTP API on libmicrohttpd (a pool of internal epoll threads).
 *
 * Every state-changing call (POST, PUT, DELETE) needs the bearer token; it is
 * checked on the request's first callback, before any body is read. Bodies
 * are bounded (PFI_API_MAX_BODY) and parsed by include/pfi/agent_api.h.
 * Status codes: 400 bad body or a limit outside the device's constraints,
 * 401 no or wrong token, 404 no such job/GPU/path, 405 wrong method, 409 a
 * conflict (busy GPU, running id) or a limit call in --read-only mode, 413 a
 * body too large, 501 a backend that cannot set limits, 502 the device
 * failed or did not enforce the limit.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

static int authorized(const agent *a, struct MHD_Connection *c)
{
    return pfi_http_authorized(c, a->token);
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

static enum MHD_Result post_job(agent *a, struct MHD_Connection *c, const pfi_http_body *r)
{
    pfi_store_job j;
    pfi_error err;
    pfi_error_clear(&err);
    int rc = pfi_api_parse_job(r->body ? r->body : "", r->len, &j, &err);
    if (rc != PFI_OK) return pfi_http_send_error(c, MHD_HTTP_BAD_REQUEST, err.msg);
    j.registered_at = pfi_clock_wall();
    rc = agent_job_register(a, &j, 1, &err);
    if (rc == PFI_ENOTFOUND) return pfi_http_send_error(c, MHD_HTTP_BAD_REQUEST, err.msg);
    if (rc != PFI_OK) return send_pfi_error(c, rc, &err);
    pfi_log("job %s registered on %zu GPU(s)", j.id, j.n_gpus);
    return job_reply(a, c, j.id, MHD_HTTP_CREATED);
}

static enum MHD_Result post_throughput(agent *a, struct MHD_Connection *c, const char *id,
                                       const pfi_http_body *r)
{
    double tps;
    pfi_error err;
    pfi_error_clear(&err);
    int rc = pfi_api_parse_throughput(r->body ? r->body : "", r->len, &tps, &err);
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

static enum MHD_Result put_limit(agent *a, struct MHD_Connection *c, unsigned gpu,
                                 const pfi_http_body *r)
{
    double w, e;
    pfi_error err;
    pfi_error_clear(&err);
    int rc = pfi_api_parse_limit(r->body ? r->body : "", r->len, &w, &e, &err);
    if (rc != PFI_OK) return pfi_http_send_error(c, MHD_HTTP_BAD_REQUEST, err.msg);
    json_t *resp = NULL;
    rc = agent_cap_set(a, gpu, w, e, &resp, &err);
    if (rc != PFI_OK) return send_pfi_error(c, rc, &err);
    return pfi_http_send_json(c, MHD_HTTP_OK, resp);
}

static enum MHD_Result delete_limit(agent *a, struct MHD_Connection *c, unsigned gpu)
{
    json_t *resp = NULL;
    pfi_error err;
    pfi_error_clear(&err);
    int rc = agent_cap_clear(a, gpu, "DELETE request", &resp, &err);
    if (rc != PFI_OK) return send_pfi_error(c, rc, &err);
    return pfi_http_send_json(c, MHD_HTTP_OK, resp);
}

/* "/v1/gpus/N/limit" -> N; -1 when the path is not that shape. */
static long gpu_limit_path(const char *url)
{
    const char *p = url + strlen("/v1/gpus/");
    if (*p < '0' || *p > '9') return -1;
    char *end;
    errno = 0;
    long n = strtol(p, &end, 10);
    if (errno || n < 0 || n > 1000000 || strcmp(end, "/limit") != 0) return -1;
    if (p[0] == '0' && end != p + 1) return -1; /* no leading zeros: one name per GPU */
    return n;
}

/* Whether a request will change state: the token is needed before the body. */
static int is_write(const char *method)
{
    return strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0;
}

static int is_limit_call(const char *url)
{
    return strncmp(url, "/v1/gpus/", 9) == 0;
}

static enum MHD_Result route(agent *a, struct MHD_Connection *c, const char *url,
                             const char *method, const pfi_http_body *r)
{
    int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    int post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    int put = strcmp(method, MHD_HTTP_METHOD_PUT) == 0;
    int del = strcmp(method, MHD_HTTP_METHOD_DELETE) == 0;

    if (strcmp(url, "/metrics") == 0)
        return get ? metrics(a, c) : pfi_http_not_allowed(c, "GET, HEAD");
    if (strcmp(url, "/healthz") == 0)
        return get ? healthz(a, c) : pfi_http_not_allowed(c, "GET, HEAD");
    if (strcmp(url, "/v1/gpus") == 0)
        return get ? get_locked(a, c, agent_gpus_json) : pfi_http_not_allowed(c, "GET, HEAD");
    if (strcmp(url, "/v1/jobs") == 0) {
        if (get) return get_locked(a, c, agent_jobs_json);
        if (post) return post_job(a, c, r);
        return pfi_http_not_allowed(c, "GET, HEAD, POST");
    }
    if (strncmp(url, "/v1/jobs/", 9) == 0) {
        char id[PFI_STORE_JOB_ID_MAX + 16];
        const char *p = url + 9;
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n >= sizeof id) return pfi_http_send_error(c, MHD_HTTP_NOT_FOUND, "no such job");
        memcpy(id, p, n);
        id[n] = '\0';
        if (!pfi_api_job_id_valid(id))
            return pfi_http_send_error(c, MHD_HTTP_NOT_FOUND, "no such job");
        if (!slash) {
            if (get) return job_reply(a, c, id, MHD_HTTP_OK);
            if (del) return delete_job(a, c, id);
            return pfi_http_not_allowed(c, "GET, HEAD, DELETE");
        }
        if (strcmp(slash, "/throughput") == 0)
            return post ? post_throughput(a, c, id, r) : pfi_http_not_allowed(c, "POST");
        if (strcmp(slash, "/curve") == 0)
            return get ? job_curve(a, c, id) : pfi_http_not_allowed(c, "GET, HEAD");
        return pfi_http_send_error(c, MHD_HTTP_NOT_FOUND, "no such path");
    }
    if (is_limit_call(url)) {
        long g = gpu_limit_path(url);
        if (g < 0) return pfi_http_send_error(c, MHD_HTTP_NOT_FOUND, "no such path");
        if (put) return put_limit(a, c, (unsigned)g, r);
        if (del) return delete_limit(a, c, (unsigned)g);
        return pfi_http_not_allowed(c, "PUT, DELETE");
    }
    return pfi_http_send_error(c, MHD_HTTP_NOT_FOUND, "no such path");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    agent *a = cls;
    pfi_http_body *r = *con_cls;
    if (!r) {
        /* First call: headers only. Refuse what needs no body to refuse. */
        const char *bad = pfi_http_path_refused(url);
        if (!bad) bad = agent_guard_framing(c);
        if (bad) return pfi_http_send_error(c, MHD_HTTP_BAD_REQUEST, bad);
        if (is_write(method)) {
            if (!authorized(a, c))
                return pfi_http_send_error(c, MHD_HTTP_UNAUTHORIZED,
                                           "missing or wrong bearer token");
            agent_guard_trust(a->guard, c);
            if (a->o.read_only && is_limit_call(url))
                return pfi_http_send_error(c, MHD_HTTP_CONFLICT,
                                           "pfid runs --read-only: power limits are not changed");
            if (pfi_http_declared_too_large(c, PFI_API_MAX_BODY))
                return pfi_http_send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "body too large");
        }
        r = calloc(1, sizeof *r);
        if (!r) return MHD_NO;
        *con_cls = r;
        return MHD_YES;
    }
    if (*upload_size > 0)
        return pfi_http_body_add(r, upload, upload_size, PFI_API_MAX_BODY) == 0 ? MHD_YES : MHD_NO;
    if (r->too_big) return pfi_http_send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "body too large");
    return route(a, c, url, method, r);
}

int agent_http_bind(agent *a, pfi_error *err)
{
    struct sockaddr_storage ss;
    socklen_t sl = 0;
    int rc = pfi_http_parse_listen(a->o.listen, &ss, &sl, err);
    if (rc != PFI_OK) return rc;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return pfi_error_set(err, PFI_EIO, NULL, 0, "--listen %s: socket: %s", a->o.listen,
                             strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 1024) != 0) {
        int e = errno;
        close(fd);
        return pfi_error_set(err, PFI_EIO, NULL, 0, "cannot listen on %s: %s", a->o.listen,
                             strerror(e));
    }
    a->listen_fd = fd;
    return PFI_OK;
}

int agent_http_start(agent *a, pfi_error *err)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (a->listen_fd < 0 || getsockname(a->listen_fd, (struct sockaddr *)&ss, &sl) != 0)
        return pfi_error_set(err, PFI_EIO, NULL, 0, "no listening socket for %s", a->o.listen);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    if (!a->guard && !(a->guard = agent_guard_create(a->o.http_max_conns)))
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    /* Bounds a client cannot push past: connections in all and per address
     * (a few thousand slow connections from one host took the API away),
     * idle time of a connection, a reserve for authorized clients (the
     * accept policy), and STRICT_FOR_CLIENT 1 (malformed requests refused,
     * not guessed at). */
    a->httpd = MHD_start_daemon(
        flags, 0, agent_guard_accept, a->guard, handler, a, MHD_OPTION_EXTERNAL_LOGGER,
        agent_guard_log, a->guard, MHD_OPTION_LISTEN_SOCKET, a->listen_fd,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)a->o.http_threads, MHD_OPTION_CONNECTION_LIMIT,
        a->o.http_max_conns, MHD_OPTION_PER_IP_CONNECTION_LIMIT, a->o.http_conns_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, a->o.http_timeout_s, MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
        MHD_OPTION_NOTIFY_CONNECTION, agent_guard_notify, a->guard, MHD_OPTION_NOTIFY_COMPLETED,
        pfi_http_completed, NULL, MHD_OPTION_UNESCAPE_CALLBACK, pfi_http_unescape_none, NULL,
        MHD_OPTION_END);
    if (!a->httpd)
        return pfi_error_set(err, PFI_EIO, NULL, 0, "cannot serve HTTP on %s", a->o.listen);
    a->listen_fd = -1; /* MHD owns it now and closes it when it stops */
    char addr[INET6_ADDRSTRLEN] = "?";
    unsigned port;
    if (ss.ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr, sizeof addr);
        port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    } else {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr, sizeof addr);
        port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
    int loopback = ss.ss_family == AF_INET6
                       ? IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr)
                       : (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
    if (!loopback)
        pfi_log("warning: listening beyond loopback without TLS: the bearer token "
                "crosses the network in clear text; restrict access (firewall, "
                "NetworkPolicy) or put a TLS proxy in front");
    pfi_log("listening on http://%s%s%s:%u%s", ss.ss_family == AF_INET6 ? "[" : "", addr,
            ss.ss_family == AF_INET6 ? "]" : "", port, a->o.read_only ? " (read-only)" : "");
    return PFI_OK;
}

void agent_http_stop(agent *a)
{
    if (a->listen_fd >= 0) close(a->listen_fd); /* bound but never served */
    a->listen_fd = -1;
    if (a->httpd) MHD_stop_daemon(a->httpd);
    a->httpd = NULL;
    if (a->metrics_resp) MHD_destroy_response(a->metrics_resp);
    a->metrics_resp = NULL;
    agent_guard_destroy(a->guard);
    a->guard = NULL;
}
