/* What keeps the API up when clients misbehave (the HTTP server's limits
 * themselves are libmicrohttpd options, set in http.c):
 *
 *  - a reserve of connection slots for the clients that matter: once the
 *    open connections reach RESERVE_FRAC of --http-max-conns, a new
 *    connection is accepted only from an address that made an authorized
 *    call in the last TRUST_S seconds (the controller, an operator's
 *    script), so a flood of slow connections from elsewhere cannot take
 *    away the state-changing calls (DELETE /v1/gpus/N/limit above all);
 *  - libmicrohttpd's own log lines rate-limited: one line per message kind
 *    per LOG_WINDOW_S, then how many more there were;
 *  - requests that smuggle a length refused: two Content-Length headers,
 *    or Content-Length with Transfer-Encoding.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <strings.h>

#include "http_guard.h"

#define RESERVE_FRAC 0.75
#define TRUST_S 600.0
#define N_TRUSTED 16
#define LOG_WINDOW_S 10.0
#define N_LOG_KINDS 32

typedef struct {
    unsigned char addr[16]; /* IPv4 mapped into the IPv6 space */
    double at;              /* monotonic s of the last authorized call, 0 free */
} trusted;

typedef struct {
    const char *fmt; /* libmicrohttpd passes its format strings: one per kind */
    double since;
    unsigned long suppressed;
} log_kind;

struct http_guard {
    pthread_mutex_t mu;
    unsigned open;    /* connections open now */
    unsigned reserve; /* from this many on, only trusted addresses */
    unsigned long refused;
    trusted t[N_TRUSTED];
    log_kind logs[N_LOG_KINDS];
};

static int addr_key(const struct sockaddr *sa, unsigned char out[16])
{
    memset(out, 0, 16);
    if (sa->sa_family == AF_INET) {
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return 0;
    }
    if (sa->sa_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        return 0;
    }
    return -1;
}

http_guard *agent_guard_create(unsigned max_conns)
{
    http_guard *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    pthread_mutex_init(&g->mu, NULL);
    g->reserve = (unsigned)(max_conns * RESERVE_FRAC);
    if (g->reserve < 1) g->reserve = 1;
    return g;
}

void agent_guard_destroy(http_guard *g)
{
    if (!g) return;
    pthread_mutex_destroy(&g->mu);
    free(g);
}

static int is_trusted(const http_guard *g, const unsigned char k[16], double now)
{
    for (int i = 0; i < N_TRUSTED; i++)
        if (g->t[i].at > 0 && now - g->t[i].at < TRUST_S && memcmp(g->t[i].addr, k, 16) == 0)
            return 1;
    return 0;
}

enum MHD_Result agent_guard_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
    http_guard *g = cls;
    (void)len;
    unsigned char k[16];
    int known = addr_key(addr, k) == 0;
    pthread_mutex_lock(&g->mu);
    int ok = g->open < g->reserve || (known && is_trusted(g, k, pfi_clock_mono()));
    if (!ok) g->refused++;
    unsigned long refused = g->refused;
    pthread_mutex_unlock(&g->mu);
    if (!ok && (refused & (refused - 1)) == 0) /* 1, 2, 4, 8, ...: a flood says little more */
        pfi_log("http: %lu connection(s) refused so far: the open connections reached the "
                "reserve kept for clients that made an authorized call",
                refused);
    return ok ? MHD_YES : MHD_NO;
}

void agent_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
    http_guard *g = cls;
    (void)c;
    (void)socket_context;
    pthread_mutex_lock(&g->mu);
    if (toe == MHD_CONNECTION_NOTIFY_STARTED)
        g->open++;
    else if (g->open > 0)
        g->open--;
    pthread_mutex_unlock(&g->mu);
}

void agent_guard_trust(http_guard *g, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    unsigned char k[16];
    if (!ci || !ci->client_addr || addr_key(ci->client_addr, k) != 0) return;
    double now = pfi_clock_mono();
    pthread_mutex_lock(&g->mu);
    int slot = 0;
    for (int i = 0; i < N_TRUSTED; i++) {
        if (memcmp(g->t[i].addr, k, 16) == 0 && g->t[i].at > 0) {
            slot = i;
            break;
        }
        if (g->t[i].at < g->t[slot].at) slot = i; /* the oldest (or a free one) */
    }
    memcpy(g->t[slot].addr, k, 16);
    g->t[slot].at = now;
    pthread_mutex_unlock(&g->mu);
}

void agent_guard_log(void *cls, const char *fmt, va_list ap)
{
    http_guard *g = cls;
    double now = pfi_clock_mono();
    unsigned long more = 0;
    int print = 1;
    pthread_mutex_lock(&g->mu);
    log_kind *k = NULL;
    for (int i = 0; i < N_LOG_KINDS && !k; i++)
        if (g->logs[i].fmt == fmt || !g->logs[i].fmt) k = &g->logs[i];
    if (k && k->fmt == fmt && now - k->since < LOG_WINDOW_S) {
        k->suppressed++;
        print = 0;
    } else if (k) {
        more = k->fmt == fmt ? k->suppressed : 0;
        k->fmt = fmt;
        k->since = now;
        k->suppressed = 0;
    }
    pthread_mutex_unlock(&g->mu);
    if (!print) return;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    if (more)
        pfi_log("http: %s (%lu more like it were not logged in the %.0f s before)", line, more,
                LOG_WINDOW_S);
    else
        pfi_log("http: %s", line);
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    unsigned *n = cls;
    (void)kind;
    (void)value;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) n[0]++;
    if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) n[1]++;
    return MHD_YES;
}

const char *agent_guard_framing(struct MHD_Connection *c)
{
    unsigned n[2] = {0, 0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, n);
    if (n[0] > 1) return "more than one Content-Length header";
    if (n[0] && n[1]) return "both Content-Length and Transfer-Encoding";
    return NULL;
}
