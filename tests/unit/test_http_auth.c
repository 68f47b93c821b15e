/* pfi_http_authorized over a real libmicrohttpd daemon: only the exact
 * "Bearer <token>" passes; a prefix or an extension of the token does not
 * (the length check is what refuses "Bearer <token><suffix>"). */
#include "test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pfi/http_server.h"

static const char *TOKEN = "s3cret-token-0123456789";

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)cls, (void)url, (void)method, (void)version, (void)upload, (void)upload_size,
        (void)con_cls;
    int ok = pfi_http_authorized(c, TOKEN);
    return pfi_http_send_error(c, ok ? 200 : 401, ok ? "ok" : "unauthorized");
}

/* The status code of GET / with the given Authorization header (NULL: none). */
static int status_with(unsigned port, const char *auth)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[512];
    int n =
        snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: x\r\n%s%s%sConnection: close\r\n\r\n",
                 auth ? "Authorization: " : "", auth ? auth : "", auth ? "\r\n" : "");
    assert_int_equal(write(fd, req, (size_t)n), n);
    char resp[256] = {0};
    size_t got = 0;
    ssize_t r;
    while (got + 1 < sizeof resp && (r = read(fd, resp + got, sizeof resp - 1 - got)) > 0)
        got += (size_t)r;
    close(fd);
    int code = 0;
    assert_int_equal(sscanf(resp, "HTTP/1.1 %d", &code), 1);
    return code;
}

static void bearer_exact_only(void **state)
{
    (void)state;
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, handler,
                                            NULL, MHD_OPTION_END);
    assert_non_null(d);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    assert_non_null(info);
    unsigned port = info->port;
    char h[128];
    snprintf(h, sizeof h, "Bearer %s", TOKEN);
    assert_int_equal(status_with(port, h), 200);
    snprintf(h, sizeof h, "Bearer %sX", TOKEN); /* the token with a suffix */
    assert_int_equal(status_with(port, h), 401);
    snprintf(h, sizeof h, "Bearer %s0123", TOKEN);
    assert_int_equal(status_with(port, h), 401);
    snprintf(h, sizeof h, "Bearer %.*s", (int)strlen(TOKEN) - 1, TOKEN); /* a prefix */
    assert_int_equal(status_with(port, h), 401);
    assert_int_equal(status_with(port, "Bearer "), 401);
    assert_int_equal(status_with(port, "Bearer wrong-token-0123456789"), 401);
    snprintf(h, sizeof h, "Basic %s", TOKEN);
    assert_int_equal(status_with(port, h), 401);
    assert_int_equal(status_with(port, NULL), 401);
    MHD_stop_daemon(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bearer_exact_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
