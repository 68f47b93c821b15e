/* Active/standby controllers on etcd (issue 33), private to src/control/.
 *
 * Election (ctl_ha.c): a thread campaigns for /pfi/SITE/leader on a lease
 * (a transaction that creates the key only where it is absent) and, once
 * leader, keeps the lease alive every tick. The key's create_revision is
 * the leader's epoch: every cap carries it, and pfid refuses a lower one.
 * A leader acts only while the lease it last confirmed (measured on the
 * monotonic clock from the moment it asked) outlasts the push about to be
 * made; once it cannot say so, it steps down by itself.
 *
 * Shared state (ctl_ha_state.c): the leader writes what the next leader
 * needs under /pfi/SITE/ (targets, caps held, budget and trim, each job's
 * uncapped figures and learned points), only the keys that changed, in one
 * transaction a period guarded by its leader key's create_revision (a
 * deposed leader's writes fail). Followers apply what changed every period
 * and run the period without pushing (plan state warm); a new leader reads
 * everything before its first push.
 */
#ifndef PFI_CTL_HA_H
#define PFI_CTL_HA_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "pfi/error.h"
#include "pfi/target.h"

typedef struct ctl ctl;
typedef struct ctl_ha ctl_ha;

/* Starts the election thread when c->o.etcd is set (c->ha stays NULL
 * otherwise: a single controller, as before). */
int ctl_ha_start(ctl *c, pfi_error *err);
/* Stops it; a leader revokes its lease so a follower takes over at once. */
void ctl_ha_stop(ctl *c);

/* Before each period: a new epoch loads the shared state and fences the
 * agents with it; a follower applies what changed. Sets c->passive. */
void ctl_ha_before_period(ctl *c);
/* After each period: the leader writes what changed. */
void ctl_ha_after_period(ctl *c);
/* Whether the loop may push caps now (always without HA): leader, and its
 * lease outlasts now + the push's bound. */
int ctl_ha_may_push(ctl *c);
/* A follower refuses API writes: 1 and why (naming the leader). */
int ctl_ha_refuses_writes(ctl *c, char *why, size_t len);

/* GET /v1/status "ha" (new reference) and the metrics; nothing without HA
 * (h NULL). Any thread: /v1/status gives the role as of the request. */
json_t *ctl_ha_json(ctl_ha *h);
void ctl_ha_metrics(ctl_ha *h, FILE *f);

/* --- the shared state's values (ctl_ha_state.c), parsed strictly --- */
typedef struct ctl_ha_cap {
    char agent[512];
    unsigned gpu;
    double watts, expires_at;
} ctl_ha_cap;

typedef struct ctl_ha_point {
    double cap_w, power_w, tput, var; /* var NaN: unknown */
} ctl_ha_point;

typedef struct ctl_ha_job {
    double pmax_w, tmax; /* NaN unknown */
    char job_class[65];
    ctl_ha_point *pts; /* malloc'd */
    size_t n;
} ctl_ha_job;

/* {"targets":[pfi_target_to_json...]}: *ts malloc'd, each validated. */
int ctl_ha_parse_targets(const char *s, size_t len, pfi_target **ts, size_t *n, pfi_error *err);
/* {"caps":[{"agent","gpu","watts","expires_at"}]}: *caps malloc'd. */
int ctl_ha_parse_caps(const char *s, size_t len, ctl_ha_cap **caps, size_t *n, pfi_error *err);
/* {"budget_w": W|null, "trim_w": W}. */
int ctl_ha_parse_state(const char *s, size_t len, double *budget_w, double *trim_w, pfi_error *err);
/* {"pmax_w","tmax","class","points":[[cap_w, power_w, tput, var|null]...]}. */
int ctl_ha_parse_job(const char *s, size_t len, ctl_ha_job *out, pfi_error *err);

#endif

/* --- the loop's side of the shared state (ctl_ha_state.c) --- */
#include <stdint.h>

#include "ctl_index.h"
#include "pfi/etcd.h"

/* What is in etcd as far as this controller knows: each key's value hash
 * (what it last read or wrote), so that only changed keys are written. */
typedef struct ctl_ha_seen {
    char **key;
    uint64_t *hash;
    size_t n, cap;
    ctl_index ix;
} ctl_ha_seen;
void ctl_ha_seen_free(ctl_ha_seen *s);

/* Applies every key under prefix modified at min_rev or later to c (the
 * targets, caps, budget and trim, jobs); *rev the revision read at. */
int ctl_ha_state_load(ctl *c, pfi_etcd *kv, const char *prefix, long long min_rev,
                      ctl_ha_seen *seen, long long *rev, pfi_error *err);
/* Writes the keys whose value changed, in one transaction (or a few, of at
 * most 100 puts: etcd's --max-txn-ops is 128) guarded by guard's
 * create_revision == epoch. *puts counts the keys written, *txns the
 * transactions; *deposed is set when the guard failed. */
int ctl_ha_state_save(ctl *c, pfi_etcd *kv, const char *prefix, const char *guard, long long epoch,
                      ctl_ha_seen *seen, size_t *puts, size_t *txns, int *deposed, pfi_error *err);
