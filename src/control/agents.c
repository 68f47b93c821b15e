/* Parallel calls to the pfid agents (include/control/pfi/agents.h). */
#include "pfi/agents.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pfi/http_client.h"
#include "ctl_index.h"
#include "pfi/fileio.h"

struct pfi_agents {
    pfi_agent_info *ag;
    size_t n, cap;
    ctl_index by_url;
    char *token;
    char owner[96]; /* "Pfi-Owner: ID", "" none */
    char epoch[48]; /* "Pfi-Epoch: N" */
    double timeout_s;
    CURLM *m;
};

/* One request in flight. */
typedef struct xfer {
    CURL *h;
    struct curl_slist *hdrs;
    pfi_http_buf buf;
    char body[96];
    char method[8];
    char url[600];
    CURLcode cc; /* the transfer's result */
} xfer;

int pfi_agents_create(const char *const *urls, size_t n, const char *token, double timeout_s,
                      pfi_agents **out, pfi_error *err)
{
    *out = NULL;
    pfi_agents *a = calloc(1, sizeof *a);
    if (!a) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    a->ag = calloc(n ? n : 1, sizeof *a->ag);
    a->token = strdup(token ? token : "");
    a->m = curl_multi_init();
    a->timeout_s = timeout_s > 0 ? timeout_s : 2;
    if (!a->ag || !a->token || !a->m) {
        pfi_agents_destroy(a);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    curl_multi_setopt(a->m, CURLMOPT_MAX_HOST_CONNECTIONS, 8L);
    curl_multi_setopt(a->m, CURLMOPT_MAXCONNECTS, (long)(n * 2 + 8));
    a->n = 0;
    a->cap = n ? n : 1;
    for (size_t i = 0; i < n; i++) {
        size_t ix;
        int rc = pfi_agents_add(a, urls[i], &ix, err);
        if (rc != PFI_OK) {
            pfi_agents_destroy(a);
            return rc;
        }
    }
    *out = a;
    return PFI_OK;
}

void pfi_agents_destroy(pfi_agents *a)
{
    if (!a) return;
    for (size_t i = 0; a->ag && i < a->n; i++)
        pfi_cl_node_clear(&a->ag[i].node);
    free(a->ag);
    ctl_index_free(&a->by_url);
    if (a->token) {
        memset(a->token, 0, strlen(a->token));
        free(a->token);
    }
    if (a->m) curl_multi_cleanup(a->m);
    free(a);
}

size_t pfi_agents_count(const pfi_agents *a)
{
    return a->n;
}

pfi_agent_info *pfi_agents_get(pfi_agents *a, size_t i)
{
    return i < a->n ? &a->ag[i] : NULL;
}

typedef struct url_key {
    const pfi_agents *a;
    const char *url;
    size_t len;
} url_key;

static int url_eq(size_t pos, const void *x)
{
    const url_key *k = x;
    return strncmp(k->a->ag[pos].url, k->url, k->len) == 0 && k->a->ag[pos].url[k->len] == '\0';
}

static uint64_t hash_n(const char *s, size_t n)
{
    char buf[sizeof((pfi_agent_info *)0)->url];
    memcpy(buf, s, n);
    buf[n] = '\0';
    return ctl_hash_str(buf);
}

size_t pfi_agents_find(const pfi_agents *a, const char *url)
{
    size_t len = strlen(url);
    while (len > 0 && url[len - 1] == '/')
        len--;
    if (len == 0 || len >= sizeof a->ag[0].url) return SIZE_MAX;
    url_key k = {a, url, len};
    return ctl_index_get(&a->by_url, hash_n(url, len), url_eq, &k);
}

int pfi_agents_add(pfi_agents *a, const char *url, size_t *index, pfi_error *err)
{
    size_t len = strlen(url);
    while (len > 0 && url[len - 1] == '/')
        len--;
    if (len == 0 || len >= sizeof a->ag[0].url ||
        (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "agent %zu: '%.200s' is not an http(s):// URL", a->n + 1, url);
    uint64_t h = hash_n(url, len);
    size_t pos = pfi_agents_find(a, url);
    if (pos != SIZE_MAX) {
        *index = pos;
        return PFI_OK;
    }
    if (a->n == a->cap) {
        pfi_agent_info *g = realloc(a->ag, 2 * a->cap * sizeof *g);
        if (!g) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        a->ag = g;
        a->cap *= 2;
    }
    if (ctl_index_put(&a->by_url, h, a->n) != 0)
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    pfi_agent_info *g = &a->ag[a->n];
    memset(g, 0, sizeof *g);
    memcpy(g->url, url, len);
    g->url[len] = '\0';
    snprintf(g->error, sizeof g->error, "not polled yet");
    *index = a->n++;
    return PFI_OK;
}

int pfi_agents_set_owner(pfi_agents *a, const char *owner, long long epoch, pfi_error *err)
{
    a->owner[0] = a->epoch[0] = '\0';
    if (!owner || !*owner) return PFI_OK;
    if (strlen(owner) > 64 || strpbrk(owner, "\r\n"))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "owner id: at most 64 characters, one line");
    snprintf(a->owner, sizeof a->owner, "Pfi-Owner: %s", owner);
    snprintf(a->epoch, sizeof a->epoch, "Pfi-Epoch: %lld", epoch);
    return PFI_OK;
}

/* Runs x[0..n) to completion on the multi handle. */
static void run_all(pfi_agents *a, xfer *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        x[i].h = pfi_http_handle();
        if (!x[i].h) continue;
        pfi_http_req r = {.method = x[i].method,
                          .url = x[i].url,
                          .bearer = strcmp(x[i].method, "GET") ? a->token : NULL,
                          .body = x[i].body[0] ? x[i].body : NULL,
                          .timeout_s = a->timeout_s,
                          .user_agent = "pfi-control/" PFI_VERSION};
        pfi_http_setup(x[i].h, &r, &x[i].buf, &x[i].hdrs);
        if (strcmp(x[i].method, "GET") != 0 && a->owner[0]) {
            /* a cap call: who sends it (pfid checks it against its holder) */
            x[i].hdrs = curl_slist_append(x[i].hdrs, a->owner);
            x[i].hdrs = curl_slist_append(x[i].hdrs, a->epoch);
            curl_easy_setopt(x[i].h, CURLOPT_HTTPHEADER, x[i].hdrs);
        }
        curl_easy_setopt(x[i].h, CURLOPT_PRIVATE, &x[i]);
        curl_multi_add_handle(a->m, x[i].h);
    }
    int running = 1;
    while (running) {
        if (curl_multi_perform(a->m, &running) != CURLM_OK) break;
        if (running) curl_multi_poll(a->m, NULL, 0, 100, NULL);
    }
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(a->m, &left)))
        if (msg->msg == CURLMSG_DONE) {
            xfer *xx = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&xx);
            if (xx) xx->cc = msg->data.result;
        }
}

static long status_of(xfer *x, char *why, size_t len)
{
    long st = 0;
    if (!x->h) {
        snprintf(why, len, "out of memory");
        return 0;
    }
    pfi_http_req r = {.method = x->method, .url = x->url};
    pfi_error e = {0};
    if (pfi_http_finish(x->h, x->cc, &r, &x->buf, &st, &e) != PFI_OK) {
        snprintf(why, len, "%s", e.msg);
        return 0;
    }
    if (st == 0) snprintf(why, len, "%s %.200s: no answer", x->method, x->url);
    return st;
}

static void finish(pfi_agents *a, xfer *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (x[i].h) {
            curl_multi_remove_handle(a->m, x[i].h);
            curl_easy_cleanup(x[i].h);
        }
        curl_slist_free_all(x[i].hdrs);
        pfi_http_buf_free(&x[i].buf);
    }
    free(x);
}

size_t pfi_agents_poll(pfi_agents *a, double now)
{
    xfer *x = calloc(2 * a->n + 1, sizeof *x);
    if (!x) return 0;
    for (size_t i = 0; i < a->n; i++) {
        snprintf(x[2 * i].method, sizeof x->method, "GET");
        snprintf(x[2 * i].url, sizeof x->url, "%s/v1/gpus", a->ag[i].url);
        snprintf(x[2 * i + 1].method, sizeof x->method, "GET");
        snprintf(x[2 * i + 1].url, sizeof x->url, "%s/v1/jobs", a->ag[i].url);
    }
    run_all(a, x, 2 * a->n);
    size_t up = 0;
    for (size_t i = 0; i < a->n; i++) {
        pfi_agent_info *g = &a->ag[i];
        char why[256] = "";
        long s1 = status_of(&x[2 * i], why, sizeof why);
        long s2 = why[0] ? 0 : status_of(&x[2 * i + 1], why, sizeof why);
        pfi_error err;
        pfi_error_clear(&err);
        if (!why[0] && (s1 != 200 || s2 != 200))
            snprintf(why, sizeof why, "HTTP %ld / %ld from %.200s", s1, s2, g->url);
        pfi_cl_node fresh = {0};
        if (!why[0] &&
            (pfi_cl_parse_gpus(x[2 * i].buf.data, x[2 * i].buf.len, &fresh, &err) != PFI_OK ||
             pfi_cl_parse_jobs(x[2 * i + 1].buf.data, x[2 * i + 1].buf.len, &fresh, &err) !=
                 PFI_OK))
            snprintf(why, sizeof why, "%.100s: %.150s", g->url, err.msg);
        if (why[0]) {
            pfi_cl_node_clear(&fresh);
            g->up = 0;
            snprintf(g->error, sizeof g->error, "%s", why);
            continue;
        }
        pfi_cl_node_clear(&g->node);
        g->node = fresh;
        g->up = g->ever_up = 1;
        g->error[0] = '\0';
        g->last_ok = now;
        up++;
    }
    finish(a, x, 2 * a->n);
    return up;
}

size_t pfi_agents_push(pfi_agents *a, pfi_cap_cmd *cmds, size_t n)
{
    xfer *x = calloc(n + 1, sizeof *x);
    if (!x) return 0;
    for (size_t i = 0; i < n; i++) {
        const pfi_cap_cmd *c = &cmds[i];
        const char *base = c->agent < a->n ? a->ag[c->agent].url : "";
        if (c->gpu == PFI_CAP_NODE)
            snprintf(x[i].url, sizeof x->url, "%s/v1/node/limit", base);
        else
            snprintf(x[i].url, sizeof x->url, "%s/v1/gpus/%u/limit", base, c->gpu);
        if (c->watts > 0) {
            snprintf(x[i].method, sizeof x->method, "PUT");
            snprintf(x[i].body, sizeof x->body, "{\"watts\":%.0f,\"expires_s\":%.0f}", c->watts,
                     c->expires_s);
        } else {
            snprintf(x[i].method, sizeof x->method, "DELETE");
        }
    }
    run_all(a, x, n);
    size_t ok = 0;
    for (size_t i = 0; i < n; i++) {
        pfi_cap_cmd *c = &cmds[i];
        c->error[0] = c->owner[0] = '\0';
        c->epoch = 0;
        c->enforced_w = NAN;
        c->status = status_of(&x[i], c->error, sizeof c->error);
        if (c->status == 200) {
            json_t *o = json_loadb(x[i].buf.data, x[i].buf.len, 0, NULL);
            const json_t *e = json_object_get(o, "enforced_w");
            if (json_is_number(e)) c->enforced_w = json_number_value(e);
            json_decref(o);
            ok++;
        } else if (c->status) {
            json_t *o = json_loadb(x[i].buf.data, x[i].buf.len, 0, NULL);
            const json_t *e = json_object_get(o, "error");
            snprintf(c->error, sizeof c->error, "HTTP %ld: %.120s", c->status,
                     json_is_string(e) ? json_string_value(e) : "");
            const json_t *ow = json_object_get(o, "owner"), *ep = json_object_get(o, "epoch");
            if (c->status == 409 && json_is_string(ow) && json_string_length(ow) > 0) {
                snprintf(c->owner, sizeof c->owner, "%s", json_string_value(ow));
                c->epoch = json_is_integer(ep) ? (long long)json_integer_value(ep) : 0;
            }
            json_decref(o);
        }
        if (c->owner[0] || c->gpu == PFI_CAP_NODE) {
            /* another controller's GPU, or a node ceiling (an older pfid
             * has none): the agent still takes caps */
        } else if (c->agent < a->n && (c->status == 409 || c->status == 501))
            a->ag[c->agent].cannot_cap = 1;
        else if (c->agent < a->n && c->status == 200)
            a->ag[c->agent].cannot_cap = 0;
    }
    finish(a, x, n);
    return ok;
}

void pfi_agents_get_many(pfi_agents *a, const size_t *agent, const char *const *path, size_t n,
                         long *status, char **body, size_t *len)
{
    for (size_t i = 0; i < n; i++) {
        status[i] = 0;
        body[i] = NULL;
        len[i] = 0;
    }
    xfer *x = calloc(n + 1, sizeof *x);
    if (!x) return;
    for (size_t i = 0; i < n; i++) {
        snprintf(x[i].method, sizeof x->method, "GET");
        snprintf(x[i].url, sizeof x->url, "%s%s", agent[i] < a->n ? a->ag[agent[i]].url : "",
                 path[i]);
    }
    run_all(a, x, n);
    for (size_t i = 0; i < n; i++) {
        char why[256] = "";
        status[i] = status_of(&x[i], why, sizeof why);
        if (status[i] && x[i].buf.data && (body[i] = malloc(x[i].buf.len + 1))) {
            memcpy(body[i], x[i].buf.data, x[i].buf.len);
            body[i][x[i].buf.len] = '\0';
            len[i] = x[i].buf.len;
        }
    }
    finish(a, x, n);
}

static int push_url(char ***urls, size_t *n, const char *s, size_t len, pfi_error *err)
{
    char **u = realloc(*urls, (*n + 1) * sizeof *u);
    if (!u) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    *urls = u;
    u[*n] = strndup(s, len);
    if (!u[*n]) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    (*n)++;
    return PFI_OK;
}

int pfi_agents_split(const char *list, char ***urls, size_t *n, pfi_error *err)
{
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 0) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "--agents: an empty URL");
        int rc = push_url(urls, n, p, len, err);
        if (rc != PFI_OK) return rc;
        p += len + (e != NULL);
    }
    return PFI_OK;
}

int pfi_agents_read_file(const char *path, char ***urls, size_t *n, pfi_error *err)
{
    char *buf;
    size_t len;
    int rc = pfi_file_read_all(path, &buf, &len, err);
    if (rc != PFI_OK) return rc;
    long line = 0;
    for (char *p = buf; *p && rc == PFI_OK;) {
        char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        line++;
        while (l > 0 && (p[l - 1] == '\r' || p[l - 1] == ' ' || p[l - 1] == '\t'))
            l--;
        while (l > 0 && (*p == ' ' || *p == '\t'))
            p++, l--;
        if (l > 0 && *p != '#') {
            if (strncmp(p, "http://", 7) != 0 && strncmp(p, "https://", 8) != 0)
                rc = pfi_error_set(err, PFI_EINVAL, path, line, "not an http(s):// URL");
            else
                rc = push_url(urls, n, p, l, err);
        }
        if (!e) break;
        p = e + 1;
    }
    free(buf);
    return rc;
}

void pfi_agents_free_urls(char **urls, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(urls[i]);
    free(urls);
}
