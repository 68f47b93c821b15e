/* The throughput endpoint of pfi sweep (see sweep_port.h). */
#include "sweep_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "pfi/agent_api.h"

#define MAX_KEPT 65536

struct sweep_port {
    struct MHD_Daemon *d;
    pthread_mutex_t mu;
    double *v;
    size_t n;
    unsigned port;
};

typedef struct {
    char *body;
    size_t len;
    int too_big;
} req;

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *json)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(json), (void *)json, MHD_RESPMEM_MUST_COPY);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result route(sweep_port *p, struct MHD_Connection *c, const char *url,
                             const char *method, const req *r)
{
    const char *jobs = "/v1/jobs";
    if (strcmp(url, jobs) == 0 && strcmp(method, "POST") == 0)
        return reply(c, MHD_HTTP_CREATED, "{\"registered\":true}");
    if (strncmp(url, "/v1/jobs/", 9) != 0)
        return reply(c, MHD_HTTP_NOT_FOUND, "{\"error\":\"no such path\"}");
    const char *tail = strstr(url + 9, "/throughput");
    if (tail && strcmp(tail, "/throughput") == 0 && strcmp(method, "POST") == 0) {
        double v;
        pfi_error err;
        if (pfi_api_parse_throughput(r->body ? r->body : "", r->len, &v, &err) != PFI_OK)
            return reply(c, MHD_HTTP_BAD_REQUEST, "{\"error\":\"bad throughput body\"}");
        pthread_mutex_lock(&p->mu);
        if (p->n < MAX_KEPT) p->v[p->n++] = v;
        pthread_mutex_unlock(&p->mu);
        return reply(c, MHD_HTTP_OK, "{\"reports\":1}");
    }
    if (!tail && strcmp(method, "DELETE") == 0) return reply(c, MHD_HTTP_OK, "{\"ended\":true}");
    return reply(c, MHD_HTTP_NOT_FOUND, "{\"error\":\"no such path\"}");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    req *r = *con_cls;
    if (!r) {
        if (!(r = calloc(1, sizeof *r))) return MHD_NO;
        *con_cls = r;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (r->too_big || r->len + n > PFI_API_MAX_BODY) {
            r->too_big = 1;
            return MHD_YES;
        }
        char *b = realloc(r->body, r->len + n + 1);
        if (!b) return MHD_NO;
        memcpy(b + r->len, upload, n);
        r->body = b;
        r->len += n;
        r->body[r->len] = '\0';
        return MHD_YES;
    }
    if (r->too_big) return reply(c, MHD_HTTP_CONTENT_TOO_LARGE, "{\"error\":\"body too large\"}");
    return route(cls, c, url, method, r);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    req *r = *con_cls;
    if (r) {
        free(r->body);
        free(r);
        *con_cls = NULL;
    }
}

int sweep_port_start(unsigned port, sweep_port **out, pfi_error *err)
{
    *out = NULL;
    sweep_port *p = calloc(1, sizeof *p);
    if (!p || !(p->v = malloc(MAX_KEPT * sizeof *p->v))) {
        free(p);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* the node's own training loop only */
    p->d =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, (uint16_t)port, NULL, NULL, handler, p,
                         MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED,
                         completed, NULL, MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
    if (!p->d) {
        pthread_mutex_destroy(&p->mu);
        free(p->v);
        free(p);
        return pfi_error_set(err, PFI_EIO, NULL, 0, "cannot listen on 127.0.0.1:%u", port);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(p->d, MHD_DAEMON_INFO_BIND_PORT);
    p->port = info ? info->port : port;
    *out = p;
    return PFI_OK;
}

void sweep_port_stop(sweep_port *p)
{
    if (!p) return;
    MHD_stop_daemon(p->d);
    pthread_mutex_destroy(&p->mu);
    free(p->v);
    free(p);
}

unsigned sweep_port_number(const sweep_port *p)
{
    return p->port;
}

size_t sweep_port_take(sweep_port *p, double *v, size_t max)
{
    pthread_mutex_lock(&p->mu);
    size_t n = p->n < max ? p->n : max;
    memcpy(v, p->v, n * sizeof *v);
    memmove(p->v, p->v + n, (p->n - n) * sizeof *p->v);
    p->n -= n;
    pthread_mutex_unlock(&p->mu);
    return n;
}
