/* Parsers of etcd's v3 JSON gateway answers (include/control/pfi/etcd.h).
 * proto3's JSON mapping: int64 as a string, fields at their default value
 * (0, false, empty) left out, bytes in base64. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pfi/base64.h"
#include "pfi/etcd.h"
#include "pfi/json.h"

#define MAX_KVS 100000 /* a range larger than this is not ours */

/* An int64 field: absent is 0; a string of digits or an integer. */
static int int64_of(const json_t *o, const char *name, long long *v, pfi_error *err)
{
    const json_t *x = json_object_get(o, name);
    *v = 0;
    if (!x) return PFI_OK;
    if (json_is_integer(x)) {
        *v = (long long)json_integer_value(x);
        return PFI_OK;
    }
    const char *s = json_string_value(x);
    if (s && *s) {
        char *end;
        errno = 0;
        long long n = strtoll(s, &end, 10);
        if (!errno && !*end && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))) {
            *v = n;
            return PFI_OK;
        }
    }
    return pfi_error_set(err, PFI_EPARSE, NULL, 0, "etcd: \"%s\" is not an int64", name);
}

/* A bytes field: absent is "". */
static int bytes_of(const json_t *o, const char *name, char **out, size_t *n, pfi_error *err)
{
    const json_t *x = json_object_get(o, name);
    size_t len = 0;
    *out = NULL;
    if (x && !json_is_string(x))
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "etcd: \"%s\" is not a string", name);
    const char *s = x ? json_string_value(x) : "";
    *out = (char *)pfi_base64_decode(s, x ? json_string_length(x) : 0, &len);
    if (!*out) return pfi_error_set(err, PFI_EPARSE, NULL, 0, "etcd: \"%s\" is not base64", name);
    if (n) *n = len;
    return PFI_OK;
}

static int load(const char *body, size_t len, json_t **out, pfi_error *err)
{
    json_t *r;
    *out = NULL;
    int rc = pfi_json_load_object(body, len, "etcd", &r, err);
    if (rc != PFI_OK) return rc;
    /* grpc-gateway's error: {"error", "message", "code"} */
    const json_t *m = json_object_get(r, "message");
    if (!json_is_string(m)) m = json_object_get(r, "error");
    if (json_is_string(m) && json_object_get(r, "code")) {
        rc = pfi_error_set(err, PFI_EIO, NULL, 0, "etcd: %.200s", json_string_value(m));
        json_decref(r);
        return rc;
    }
    *out = r;
    return PFI_OK;
}

static int header_rev(const json_t *o, long long *rev, pfi_error *err)
{
    const json_t *h = json_object_get(o, "header");
    if (h && !json_is_object(h))
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "etcd: \"header\" is not an object");
    return h ? int64_of(h, "revision", rev, err) : (*rev = 0, PFI_OK);
}

void pfi_etcd_range_free(pfi_etcd_range *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->kvs[i].key);
        free(r->kvs[i].value);
    }
    free(r->kvs);
    memset(r, 0, sizeof *r);
}

/* A RangeResponse object into out (zeroed by the caller). */
static int range_of(const json_t *o, pfi_etcd_range *out, pfi_error *err)
{
    int rc = header_rev(o, &out->revision, err);
    if (rc != PFI_OK) return rc;
    const json_t *kvs = json_object_get(o, "kvs");
    if (!kvs) return PFI_OK;
    if (!json_is_array(kvs) || json_array_size(kvs) > MAX_KVS)
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "etcd: \"kvs\" is not an array");
    size_t n = json_array_size(kvs);
    if (!(out->kvs = calloc(n + 1, sizeof *out->kvs)))
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *kv = json_array_get(kvs, i);
        pfi_etcd_kv *k = &out->kvs[i];
        out->n = i + 1; /* freed whole on failure */
        if (!json_is_object(kv))
            return pfi_error_set(err, PFI_EPARSE, NULL, 0, "etcd: kvs[%zu] is not an object", i);
        if ((rc = bytes_of(kv, "key", &k->key, NULL, err)) != PFI_OK ||
            (rc = bytes_of(kv, "value", &k->value, &k->value_len, err)) != PFI_OK ||
            (rc = int64_of(kv, "create_revision", &k->create_rev, err)) != PFI_OK ||
            (rc = int64_of(kv, "mod_revision", &k->mod_rev, err)) != PFI_OK ||
            (rc = int64_of(kv, "lease", &k->lease, err)) != PFI_OK)
            return rc;
    }
    return PFI_OK;
}

int pfi_etcd_parse_range(const char *body, size_t len, pfi_etcd_range *out, pfi_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *r;
    int lrc = load(body, len, &r, err);
    if (lrc != PFI_OK) return lrc;
    int rc = range_of(r, out, err);
    json_decref(r);
    if (rc != PFI_OK) pfi_etcd_range_free(out);
    return rc;
}

int pfi_etcd_parse_lease(const char *body, size_t len, long long *id, long long *ttl,
                         pfi_error *err)
{
    *id = *ttl = 0;
    json_t *r;
    int lrc = load(body, len, &r, err);
    if (lrc != PFI_OK) return lrc;
    const json_t *o = json_object_get(r, "result"); /* keep-alive's stream item */
    if (!o) o = r;
    int rc = PFI_OK;
    if (!json_is_object(o))
        rc = pfi_error_set(err, PFI_EPARSE, NULL, 0, "etcd: \"result\" is not an object");
    if (rc == PFI_OK) rc = int64_of(o, "ID", id, err);
    if (rc == PFI_OK) rc = int64_of(o, "TTL", ttl, err);
    if (rc == PFI_OK && *ttl < 0) *ttl = 0; /* -1: the lease is gone */
    json_decref(r);
    return rc;
}

int pfi_etcd_parse_txn(const char *body, size_t len, int *ok, long long *revision,
                       pfi_etcd_range *holder, pfi_error *err)
{
    *ok = 0;
    *revision = 0;
    if (holder) memset(holder, 0, sizeof *holder);
    json_t *r;
    int lrc = load(body, len, &r, err);
    if (lrc != PFI_OK) return lrc;
    int rc = header_rev(r, revision, err);
    const json_t *s = json_object_get(r, "succeeded");
    if (rc == PFI_OK && s && !json_is_boolean(s))
        rc = pfi_error_set(err, PFI_EPARSE, NULL, 0, "etcd: \"succeeded\" is not a boolean");
    *ok = json_is_true(s);
    const json_t *resp = json_object_get(r, "responses");
    if (rc == PFI_OK && resp && !json_is_array(resp))
        rc = pfi_error_set(err, PFI_EPARSE, NULL, 0, "etcd: \"responses\" is not an array");
    for (size_t i = 0; rc == PFI_OK && holder && i < json_array_size(resp); i++) {
        const json_t *x = json_array_get(resp, i);
        const json_t *rr = json_is_object(x) ? json_object_get(x, "response_range") : NULL;
        if (!rr) continue;
        if (!json_is_object(rr))
            rc = pfi_error_set(err, PFI_EPARSE, NULL, 0, "etcd: a response_range is not an object");
        else
            rc = range_of(rr, holder, err);
        break;
    }
    if (rc != PFI_OK && holder) pfi_etcd_range_free(holder);
    json_decref(r);
    return rc;
}
