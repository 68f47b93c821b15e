/* A small client of etcd's v3 JSON gateway (etcd 3.4: POST /v3/...), for
 * the controller's leader election and shared state (issue 33): leases
 * (grant, keep-alive, revoke), ranges, a create-if-absent and a guarded
 * multi-put. Keys and values are base64 in the gateway's JSON and plain
 * here; int64 fields arrive as strings (proto3's JSON mapping) or numbers.
 *
 * Several endpoints: a call goes to the last one that answered and moves on
 * to the next when one does not (no answer, or 5xx), so a cluster that loses
 * a member keeps serving. Every call is bounded by the timeout given at
 * create, per endpoint tried. One thread at a time per handle.
 *
 * The parsers are separate (pure) so that a fuzzer reaches them.
 *
 * Ownership: the handle copies the URLs; destroy is NULL-safe; a range's
 * keys and values belong to it (pfi_etcd_range_free). */
#ifndef PFI_ETCD_H
#define PFI_ETCD_H

#include <stddef.h>

#include "pfi/error.h"

typedef struct pfi_etcd pfi_etcd;

typedef struct pfi_etcd_kv {
    char *key, *value; /* decoded, NUL-terminated */
    size_t value_len;
    long long create_rev, mod_rev, lease;
} pfi_etcd_kv;

typedef struct pfi_etcd_range {
    long long revision; /* the store's revision when answered */
    pfi_etcd_kv *kvs;
    size_t n;
} pfi_etcd_range;

typedef struct pfi_etcd_put {
    const char *key, *value;
} pfi_etcd_put;

/* urls: "http://h:p[,http://h:p...]" (at most 16). */
int pfi_etcd_create(const char *urls, double timeout_s, pfi_etcd **out, pfi_error *err);
void pfi_etcd_destroy(pfi_etcd *e);
/* The endpoint the next call goes to first. */
const char *pfi_etcd_endpoint(const pfi_etcd *e);

/* A lease of ttl_s seconds: its id and the TTL etcd granted (at least its
 * minimum, which may be more than asked). */
int pfi_etcd_grant(pfi_etcd *e, long long ttl_s, long long *id, long long *granted, pfi_error *err);
/* Renews a lease: *ttl its TTL from now, 0 when the lease is gone. */
int pfi_etcd_keepalive(pfi_etcd *e, long long id, long long *ttl, pfi_error *err);
int pfi_etcd_revoke(pfi_etcd *e, long long id, pfi_error *err);
/* The key (prefix: every key under it) modified at min_mod_rev or later (0:
 * any); out is zeroed first. */
int pfi_etcd_get(pfi_etcd *e, const char *key, int prefix, long long min_mod_rev,
                 pfi_etcd_range *out, pfi_error *err);
/* Creates key = value on lease only if the key does not exist. *created
 * tells; *revision is the new key's revision (its create_revision) when
 * created; otherwise *holder (zeroed first) holds the key as it is. */
int pfi_etcd_create_key(pfi_etcd *e, const char *key, const char *value, long long lease,
                        int *created, long long *revision, pfi_etcd_range *holder, pfi_error *err);
/* Puts puts[0..n) in one transaction only if guard's create_revision is
 * guard_rev (a deposed leader's writes fail): *ok tells whether it was
 * applied. One store revision however many keys. */
int pfi_etcd_put_if(pfi_etcd *e, const char *guard, long long guard_rev, const pfi_etcd_put *puts,
                    size_t n, int *ok, pfi_error *err);

void pfi_etcd_range_free(pfi_etcd_range *r);

/* The gateway's answers. Each refuses with PFI_EPARSE (a sentence in err)
 * anything not shaped as etcd answers: malformed JSON, a field of the wrong
 * type, bad base64; an error object ({"error"|"message","code"}) is PFI_EIO
 * with etcd's message. */
/* A range (POST /v3/kv/range). */
int pfi_etcd_parse_range(const char *body, size_t len, pfi_etcd_range *out, pfi_error *err);
/* A lease grant, or a keep-alive ({"result":{...}}): ID and TTL (0 absent). */
int pfi_etcd_parse_lease(const char *body, size_t len, long long *id, long long *ttl,
                         pfi_error *err);
/* A transaction: *ok its "succeeded", *revision the header's; holder (may
 * be NULL) gets the first response_range's keys, if any. */
int pfi_etcd_parse_txn(const char *body, size_t len, int *ok, long long *revision,
                       pfi_etcd_range *holder, pfi_error *err);

#endif
