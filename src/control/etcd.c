/* etcd's v3 JSON gateway over the project's libcurl client
 * (include/control/pfi/etcd.h). Requests are built with Jansson, keys and
 * values base64; answers go to etcd_parse.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pfi/base64.h"
#include "pfi/etcd.h"
#include "pfi/http_client.h"

#define MAX_ENDPOINTS 16
#define MAX_ANSWER (64u << 20) /* a range of the whole prefix, at most */

struct pfi_etcd {
    char *url[MAX_ENDPOINTS];
    size_t n, cur; /* cur: the endpoint tried first */
    double timeout_s;
    CURL *h;
    pfi_http_buf buf;
};

int pfi_etcd_create(const char *urls, double timeout_s, pfi_etcd **out, pfi_error *err)
{
    *out = NULL;
    pfi_etcd *e = calloc(1, sizeof *e);
    char *list = strdup(urls ? urls : "");
    if (!e || !list) {
        free(e);
        free(list);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    e->timeout_s = timeout_s > 0 ? timeout_s : 1;
    e->buf.max = MAX_ANSWER;
    int rc = PFI_OK;
    char *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t && rc == PFI_OK; t = strtok_r(NULL, ",", &save)) {
        size_t len = strlen(t);
        while (len && t[len - 1] == '/')
            t[--len] = '\0';
        if (strncmp(t, "http://", 7) != 0 && strncmp(t, "https://", 8) != 0)
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0,
                               "--etcd: '%.200s' is not an http:// or https:// URL", t);
        else if (e->n == MAX_ENDPOINTS)
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "--etcd: at most %d endpoints",
                               MAX_ENDPOINTS);
        else if (!(e->url[e->n++] = strdup(t)))
            rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    free(list);
    if (rc == PFI_OK && e->n == 0)
        rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "--etcd: no endpoint given");
    if (rc == PFI_OK && !(e->h = pfi_http_handle()))
        rc = pfi_error_set(err, PFI_EIO, NULL, 0, "libcurl cannot start");
    if (rc != PFI_OK) {
        pfi_etcd_destroy(e);
        return rc;
    }
    *out = e;
    return PFI_OK;
}

void pfi_etcd_destroy(pfi_etcd *e)
{
    if (!e) return;
    for (size_t i = 0; i < e->n; i++)
        free(e->url[i]);
    if (e->h) curl_easy_cleanup(e->h);
    pfi_http_buf_free(&e->buf);
    free(e);
}

const char *pfi_etcd_endpoint(const pfi_etcd *e)
{
    return e->url[e->cur];
}

/* POSTs body (stolen) to path on the endpoints in turn until one answers
 * (any status below 500); the answer is in e->buf. */
static int call(pfi_etcd *e, const char *path, json_t *body, pfi_error *err)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!text) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int rc = PFI_EIO;
    for (size_t k = 0; k < e->n; k++) {
        size_t i = (e->cur + k) % e->n;
        char url[600];
        snprintf(url, sizeof url, "%s%s", e->url[i], path);
        pfi_http_req r = {.method = "POST", .url = url, .body = text, .timeout_s = e->timeout_s};
        long status = 0;
        rc = pfi_http_do(e->h, &r, &status, &e->buf, err);
        /* 5xx: this member cannot serve (no leader, stopping): the next */
        if (rc == PFI_OK && status >= 500)
            rc = pfi_error_set(err, PFI_EIO, NULL, 0, "etcd %s: HTTP %ld: %.160s", url, status,
                               e->buf.data);
        if (rc == PFI_OK) {
            e->cur = i;
            break;
        }
    }
    free(text);
    return rc;
}

static json_t *b64(const char *s)
{
    char *x = pfi_base64_encode((const unsigned char *)s, strlen(s));
    json_t *v = x ? json_string(x) : NULL;
    free(x);
    return v;
}

static json_t *i64(long long v)
{
    char s[32];
    snprintf(s, sizeof s, "%lld", v);
    return json_string(s);
}

int pfi_etcd_grant(pfi_etcd *e, long long ttl_s, long long *id, long long *granted, pfi_error *err)
{
    int rc = call(e, "/v3/lease/grant", json_pack("{s:o}", "TTL", i64(ttl_s)), err);
    if (rc == PFI_OK) rc = pfi_etcd_parse_lease(e->buf.data, e->buf.len, id, granted, err);
    if (rc == PFI_OK && (!*id || *granted <= 0))
        rc = pfi_error_set(err, PFI_EIO, NULL, 0, "etcd: a lease grant without an ID or TTL");
    return rc;
}

int pfi_etcd_keepalive(pfi_etcd *e, long long id, long long *ttl, pfi_error *err)
{
    long long got;
    int rc = call(e, "/v3/lease/keepalive", json_pack("{s:o}", "ID", i64(id)), err);
    if (rc == PFI_OK) rc = pfi_etcd_parse_lease(e->buf.data, e->buf.len, &got, ttl, err);
    return rc;
}

int pfi_etcd_revoke(pfi_etcd *e, long long id, pfi_error *err)
{
    int rc = call(e, "/v3/lease/revoke", json_pack("{s:o}", "ID", i64(id)), err);
    long long a, b;
    /* "lease not found" is an error here too: nothing to revoke */
    return rc == PFI_OK ? pfi_etcd_parse_lease(e->buf.data, e->buf.len, &a, &b, err) : rc;
}

/* The end of a prefix range: the key with its last byte incremented. */
static json_t *range_end(const char *key)
{
    size_t n = strlen(key);
    char *end = strdup(key);
    if (!end) return NULL;
    while (n && (unsigned char)end[n - 1] == 0xff)
        end[--n] = '\0';
    json_t *v;
    if (n) {
        end[n - 1] = (char)((unsigned char)end[n - 1] + 1);
        v = b64(end);
    } else {
        v = json_string("AA=="); /* "\0": every key */
    }
    free(end);
    return v;
}

int pfi_etcd_get(pfi_etcd *e, const char *key, int prefix, long long min_mod_rev,
                 pfi_etcd_range *out, pfi_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *q = json_pack("{s:o}", "key", b64(key));
    if (q && prefix) json_object_set_new(q, "range_end", range_end(key));
    if (q && min_mod_rev > 0) json_object_set_new(q, "min_mod_revision", i64(min_mod_rev));
    int rc = call(e, "/v3/kv/range", q, err);
    return rc == PFI_OK ? pfi_etcd_parse_range(e->buf.data, e->buf.len, out, err) : rc;
}

static json_t *put_op(const char *key, const char *value, long long lease)
{
    json_t *p = json_pack("{s:o,s:o}", "key", b64(key), "value", b64(value));
    if (p && lease) json_object_set_new(p, "lease", i64(lease));
    return json_pack("{s:o}", "request_put", p);
}

int pfi_etcd_create_key(pfi_etcd *e, const char *key, const char *value, long long lease,
                        int *created, long long *revision, pfi_etcd_range *holder, pfi_error *err)
{
    json_t *q = json_pack("{s:[{s:o,s:s,s:s,s:s}],s:[o],s:[{s:{s:o}}]}", "compare", "key", b64(key),
                          "target", "CREATE", "result", "EQUAL", "create_revision", "0", "success",
                          put_op(key, value, lease), "failure", "request_range", "key", b64(key));
    int rc = call(e, "/v3/kv/txn", q, err);
    if (rc == PFI_OK)
        rc = pfi_etcd_parse_txn(e->buf.data, e->buf.len, created, revision, holder, err);
    return rc;
}

int pfi_etcd_put_if(pfi_etcd *e, const char *guard, long long guard_rev, const pfi_etcd_put *puts,
                    size_t n, int *ok, pfi_error *err)
{
    json_t *ops = json_array();
    for (size_t i = 0; ops && i < n; i++)
        json_array_append_new(ops, put_op(puts[i].key, puts[i].value, 0));
    json_t *q =
        json_pack("{s:[{s:o,s:s,s:s,s:o}],s:o}", "compare", "key", b64(guard), "target", "CREATE",
                  "result", "EQUAL", "create_revision", i64(guard_rev), "success", ops);
    long long rev;
    int rc = call(e, "/v3/kv/txn", q, err);
    if (rc == PFI_OK) rc = pfi_etcd_parse_txn(e->buf.data, e->buf.len, ok, &rev, NULL, err);
    return rc;
}
