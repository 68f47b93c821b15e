/* What pfid's and the controller's HTTP APIs share on libmicrohttpd: their
 * conventions in one place. JSON replies end in a newline and keep 15
 * significant digits (Unix times to 10 us, no binary noise); errors are
 * {"error": "..."}; the bearer token is compared in constant time; request
 * bodies are bounded and read into a pfi_http_body kept in MHD's per-request
 * pointer (pfi_http_completed frees it); --listen is ADDR:PORT or
 * [IPV6]:PORT.
 *
 * Every send function takes ownership of what it is given (text, JSON) and
 * returns MHD_NO when it cannot queue the reply (MHD then drops the
 * connection).
 */
#ifndef PFI_HTTP_SERVER_H
#define PFI_HTTP_SERVER_H

#include <stddef.h>
#include <sys/socket.h>

#include <jansson.h>
#include <microhttpd.h>

#include "pfi/error.h"

/* text (malloc'd, stolen) as the body. */
enum MHD_Result pfi_http_send_text(struct MHD_Connection *c, unsigned status, const char *type,
                                   char *text, size_t len);
/* v (stolen) as a JSON body. */
enum MHD_Result pfi_http_send_json(struct MHD_Connection *c, unsigned status, json_t *v);
/* {"error": msg} */
enum MHD_Result pfi_http_send_error(struct MHD_Connection *c, unsigned status, const char *msg);
/* 405 with the Allow header. */
enum MHD_Result pfi_http_not_allowed(struct MHD_Connection *c, const char *allow);

/* Whether the Authorization header is "Bearer <token>" (constant time in
 * the token's length). */
int pfi_http_authorized(struct MHD_Connection *c, const char *token);
/* Whether the request declares a Content-Length above max. */
int pfi_http_declared_too_large(struct MHD_Connection *c, size_t max);

/* The request path as the client sent it. libmicrohttpd decodes %XX before
 * the handler sees the URL, so "PUT /v1/gpus/0%2flimit" was routed as
 * /v1/gpus/0/limit and "%00" cut a path short. Both servers pass
 * pfi_http_unescape_none as MHD_OPTION_UNESCAPE_CALLBACK (the URL and the
 * query arguments, which neither API reads, stay as sent) and refuse, with
 * 400, a path that pfi_http_path_refused names: any percent-escape (no id
 * or path of either API needs one: ids are A-Z a-z 0-9 . _ : @ + -), a
 * control character or a byte beyond ASCII. Returns why, or NULL. */
size_t pfi_http_unescape_none(void *cls, struct MHD_Connection *c, char *s);
const char *pfi_http_path_refused(const char *url);

typedef struct pfi_http_body {
    char *body; /* NUL-terminated; NULL while empty */
    size_t len, cap;
    int too_big; /* more than max arrived: the rest is read and dropped */
} pfi_http_body;

/* Adds one upload chunk (and consumes it: *upload_size = 0). -1 on no
 * memory, else 0 (also when the body went over max: too_big). */
int pfi_http_body_add(pfi_http_body *b, const char *upload, size_t *upload_size, size_t max);
/* MHD_OPTION_NOTIFY_COMPLETED callback for a pfi_http_body in *con_cls. */
void pfi_http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                        enum MHD_RequestTerminationCode toe);

/* One HTTP service: a table of routes and the checks every request passes.
 *
 * A route's method "GET" also answers HEAD; its path matches exactly, except
 * that each "{}" matches one non-empty segment (no '/'), given to the handler
 * in arg[]. A path that some route matches with another method gets 405 with
 * the Allow header built from the table; no route, 404 "no such path".
 * Every write (not GET or HEAD) needs the bearer token, checked on the
 * request's first callback before any body is read; a declared or actual
 * body over max_body gets 413. */
#define PFI_HTTP_MAX_ARGS 2
#define PFI_HTTP_ARG_MAX 256

typedef struct pfi_http_req {
    struct MHD_Connection *conn;
    const char *url, *method;
    const char *body; /* NUL-terminated, "" when none */
    size_t len;
    const char *arg[PFI_HTTP_MAX_ARGS]; /* the "{}" segments, in order */
    char argbuf[PFI_HTTP_MAX_ARGS][PFI_HTTP_ARG_MAX + 1];
} pfi_http_req;

typedef enum MHD_Result (*pfi_http_handler)(void *ctx, const pfi_http_req *r);

typedef struct pfi_http_route {
    const char *method;
    const char *path;
    pfi_http_handler fn;
} pfi_http_route;

typedef struct pfi_http_service {
    const pfi_http_route *routes;
    size_t n_routes;
    void *ctx;         /* the handlers' and hooks' first argument */
    const char *token; /* what a write's bearer must be (NULL: every write refused) */
    size_t max_body;
    /* Optional, on every request's first callback before the token check:
     * NULL or why it is refused (400). */
    const char *(*screen)(void *ctx, struct MHD_Connection *c);
    /* Optional, on a write's first callback once its token passed: 0, or a
     * status to refuse it with (*msg the reason). */
    unsigned (*admit)(void *ctx, struct MHD_Connection *c, const char *url, const char **msg);
} pfi_http_service;

/* Bounds a client cannot push past (0: libmicrohttpd's default, or none
 * for conns_per_ip), and libmicrohttpd callbacks a service may add. */
typedef struct pfi_http_limits {
    unsigned threads;      /* thread pool size; 0: 2 */
    unsigned max_conns;    /* connections in all */
    unsigned conns_per_ip; /* connections per client address */
    unsigned timeout_s;    /* an idle connection is closed after this; 0: 30 */
    MHD_AcceptPolicyCallback accept;
    void *accept_cls;
    MHD_LogCallback log;
    void *log_cls;
    MHD_NotifyConnectionCallback notify;
    void *notify_cls;
} pfi_http_limits;

/* Serves svc (kept by the caller until pfi_http_stop) on the bound,
 * listening fd (the daemon's once started; the caller's on failure): a
 * pool of internal epoll threads, malformed requests refused
 * (STRICT_FOR_CLIENT 1). NULL with err set on failure. */
struct MHD_Daemon *pfi_http_start(const pfi_http_service *svc, int fd, const pfi_http_limits *lim,
                                  pfi_error *err);
void pfi_http_stop(struct MHD_Daemon *d); /* NULL-safe */

/* A socket bound to --listen (ADDR:PORT or [IPV6]:PORT) and listening:
 * close-on-exec, non-blocking, IPv6 only for an IPv6 address. */
int pfi_http_bind(const char *listen, int *fd, pfi_error *err);
/* "http://A:P" of a bound socket, and whether it is a loopback address. */
int pfi_http_fd_url(int fd, char *buf, size_t len, int *loopback);

/* "A:P" or "[V6]:P" into an address to bind. */
int pfi_http_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *sl,
                          pfi_error *err);
/* "http://A:P" (or "http://[V6]:P") of a bound address. */
void pfi_http_url(const struct sockaddr_storage *ss, unsigned port, char *buf, size_t len);

#endif
