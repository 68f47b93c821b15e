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

/* "A:P" or "[V6]:P" into an address to bind. */
int pfi_http_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *sl,
                          pfi_error *err);
/* "http://A:P" (or "http://[V6]:P") of a bound address. */
void pfi_http_url(const struct sockaddr_storage *ss, unsigned port, char *buf, size_t len);

#endif
