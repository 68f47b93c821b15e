/* http_guard.c: a reserve of connections for trusted clients, a
 * rate-limited server log, request framing checks (see there). The
 * callbacks are libmicrohttpd's, with the guard as their closure. Private to
 * src/agent (http.c). */
#ifndef PFI_AGENT_HTTP_GUARD_H
#define PFI_AGENT_HTTP_GUARD_H

#include <stdarg.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "agent.h"

http_guard *agent_guard_create(unsigned max_conns);
void agent_guard_destroy(http_guard *g); /* NULL-safe */
enum MHD_Result agent_guard_accept(void *cls, const struct sockaddr *addr, socklen_t len);
void agent_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe);
/* The client of c made an authorized call: it may use the reserve. */
void agent_guard_trust(http_guard *g, struct MHD_Connection *c);
void agent_guard_log(void *cls, const char *fmt, va_list ap);
/* Why the request's framing is refused (a smuggled length), or NULL. */
const char *agent_guard_framing(struct MHD_Connection *c);

#endif
