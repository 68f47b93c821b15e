/* Active/standby on etcd: the election thread and the loop's hooks
 * (src/control/ctl_ha.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_ha.h"
#include "ctl_internal.h"
#include "pfi/json.h"

struct ctl_ha {
    pfi_etcd *elect; /* the thread's client */
    pfi_etcd *kv;    /* the loop's */
    char prefix[600], leader_key[640], value[256];
    char self[72];                /* our id (the owner our caps carry) */
    double ttl_s, tick_s, push_s; /* push_s: what one period's pushes may take */
    pthread_t th;
    int started;

    /* under mu: the thread writes, the loop and the server read */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int quit;
    int leader;           /* we hold the key on a live lease */
    long long epoch;      /* our key's create_revision while leader */
    long long lease;      /* our lease while leader */
    double deadline;      /* monotonic s: our lease's end as last confirmed */
    char leader_id[72];   /* the leader's id as read, "" none */
    long long leader_rev; /* its epoch */
    unsigned long long campaigns, stepdowns;
    char last_error[256];

    long long acting; /* the epoch the loop acts under, 0 follower (the loop writes it) */
    unsigned long long txns, puts, period_puts; /* the shared state's writes (the loop's) */

    /* the loop's own */
    long long applied; /* a follower's last revision applied */
    ctl_ha_seen seen;
};

static double mono(void)
{
    return pfi_clock_mono();
}

static void note_error(ctl_ha *h, const pfi_error *e)
{
    pthread_mutex_lock(&h->mu);
    snprintf(h->last_error, sizeof h->last_error, "%.250s", e->msg);
    pthread_mutex_unlock(&h->mu);
}

/* Under h->mu. */
static void step_down(ctl_ha *h, const char *why)
{
    if (!h->leader) return;
    h->leader = 0;
    h->stepdowns++;
    h->leader_id[0] = '\0';
    /* the lease left by our own clock: > 0 says we stopped before it ended */
    pfi_log("HA: stepping down from epoch %lld, %.2f s before its lease ends: %s", h->epoch,
            h->deadline - mono(), why);
}

/* The leader's turn: renew, or give up once the lease may have ended. */
static void renew(ctl_ha *h)
{
    double t = mono();
    long long ttl = 0;
    pfi_error e;
    pfi_error_clear(&e);
    int rc = pfi_etcd_keepalive(h->elect, h->lease, &ttl, &e);
    if (rc != PFI_OK) note_error(h, &e);
    pthread_mutex_lock(&h->mu);
    if (rc == PFI_OK && ttl > 0)
        h->deadline = t + (double)ttl; /* from the asking: etcd restarted it later */
    else if (rc == PFI_OK) {
        step_down(h, "the lease is gone (expired or revoked)");
        h->lease = 0;
    }
    if (h->leader && mono() + h->push_s >= h->deadline)
        step_down(h, "the lease could not be renewed in time");
    pthread_mutex_unlock(&h->mu);
}

/* The key is still ours on the lease we stepped down from (etcd was out of
 * reach for a while, its lease was never lost: nobody else can have led):
 * the lead again, at the same epoch, if the lease renews. */
static int reclaim(ctl_ha *h, long long epoch)
{
    double t = mono();
    long long ttl = 0;
    if (pfi_etcd_keepalive(h->elect, h->lease, &ttl, NULL) != PFI_OK || ttl <= 0) return 0;
    pthread_mutex_lock(&h->mu);
    h->leader = 1;
    h->epoch = h->leader_rev = epoch;
    h->deadline = t + (double)ttl;
    snprintf(h->leader_id, sizeof h->leader_id, "%s", h->self);
    pthread_mutex_unlock(&h->mu);
    pfi_log("HA: the lead again at epoch %lld (its lease outlived the outage)", epoch);
    return 1;
}

/* A follower's turn: who leads; where nobody does, campaign. */
static void campaign(ctl_ha *h, ctl *c)
{
    pfi_error e;
    pfi_error_clear(&e);
    pfi_etcd_range r;
    if (pfi_etcd_get(h->elect, h->leader_key, 0, 0, &r, &e) != PFI_OK) {
        note_error(h, &e);
        return;
    }
    if (r.n && h->lease && r.kvs[0].lease == h->lease && reclaim(h, r.kvs[0].create_rev)) {
        pfi_etcd_range_free(&r);
        return;
    }
    if (r.n) {
        json_t *v = json_loads(r.kvs[0].value, 0, NULL);
        pthread_mutex_lock(&h->mu);
        snprintf(h->leader_id, sizeof h->leader_id, "%s",
                 json_is_string(json_object_get(v, "id"))
                     ? json_string_value(json_object_get(v, "id"))
                     : "?");
        h->leader_rev = r.kvs[0].create_rev;
        pthread_mutex_unlock(&h->mu);
        json_decref(v);
        pfi_etcd_range_free(&r);
        return;
    }
    pfi_etcd_range_free(&r);
    long long lease, granted, rev;
    int created = 0;
    double t = mono();
    pthread_mutex_lock(&h->mu);
    h->campaigns++;
    pthread_mutex_unlock(&h->mu);
    if (pfi_etcd_grant(h->elect, (long long)ceil(h->ttl_s), &lease, &granted, &e) != PFI_OK) {
        note_error(h, &e);
        return;
    }
    if (pfi_etcd_create_key(h->elect, h->leader_key, h->value, lease, &created, &rev, &r, &e) !=
        PFI_OK) {
        note_error(h, &e);
        pfi_etcd_revoke(h->elect, lease, NULL);
        return;
    }
    pfi_etcd_range_free(&r);
    if (!created) { /* another was quicker: it shows at the next tick */
        pfi_etcd_revoke(h->elect, lease, NULL);
        return;
    }
    pthread_mutex_lock(&h->mu);
    h->leader = 1;
    h->epoch = h->leader_rev = rev;
    h->lease = lease;
    h->deadline = t + (double)granted;
    snprintf(h->leader_id, sizeof h->leader_id, "%s", h->self);
    pthread_mutex_unlock(&h->mu);
    pfi_log("HA: leader of %s at epoch %lld (lease %llds)", h->prefix, rev, granted);
    /* the loop's next period at once */
    pthread_mutex_lock(&c->mu);
    c->woken = 1;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->mu);
}

static void *run(void *arg)
{
    ctl *c = arg;
    ctl_ha *h = c->ha;
    pthread_mutex_lock(&h->mu);
    while (!h->quit) {
        int leader = h->leader;
        pthread_mutex_unlock(&h->mu);
        if (leader)
            renew(h);
        else
            campaign(h, c);
        pthread_mutex_lock(&h->mu);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts); /* the cv's clock: a wall step cannot stall renewals */
        /* a follower looks twice as often: a read, and takeover is sooner */
        double w = h->leader ? h->tick_s : h->tick_s / 2;
        long long ns = (long long)ts.tv_nsec + (long long)(w * 1e9);
        ts.tv_sec += (time_t)(ns / 1000000000LL);
        ts.tv_nsec = (long)(ns % 1000000000LL);
        if (!h->quit) pthread_cond_timedwait(&h->cv, &h->mu, &ts);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

int ctl_ha_start(ctl *c, pfi_error *err)
{
    const pfi_ctl_opts *o = &c->o;
    if (!o->etcd) return PFI_OK;
    ctl_ha *h = calloc(1, sizeof *h);
    if (!h) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    pthread_mutex_init(&h->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->cv, &ca);
    pthread_condattr_destroy(&ca);
    c->ha = h;
    h->ttl_s = o->ha_ttl_s > 0 ? o->ha_ttl_s : fmax(3 * o->period_s, 2);
    /* pushes: the lowering round and the raising one, each bounded by the
     * agents' timeout; a lease that cannot outlast them is no lease */
    h->push_s = 2 * (o->agent_timeout_s > 0 ? o->agent_timeout_s : 2) + 0.1;
    h->tick_s = fmin(h->ttl_s / 5, o->period_s);
    if (h->ttl_s < h->push_s + 2 * h->tick_s)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "the lease (--ha-ttl-s, default 3 periods) of %.3g s is too "
                             "short: a leader renews every %.3g s and must outlast its pushes "
                             "(2 x --agent-timeout-s = %.3g s); give at least %.3g",
                             h->ttl_s, h->tick_s, h->push_s - 0.1, h->push_s + 2 * h->tick_s);
    snprintf(h->prefix, sizeof h->prefix, "/pfi/%s/", o->ha_name);
    snprintf(h->leader_key, sizeof h->leader_key, "%sleader", h->prefix);
    snprintf(h->self, sizeof h->self, "%s", c->owner);
    json_t *v = json_pack("{s:s}", "id", c->owner);
    char *vs = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    snprintf(h->value, sizeof h->value, "%s", vs ? vs : "{}");
    free(vs);
    /* each call bounded well inside a tick, per endpoint */
    double t = fmin(1.0, h->tick_s);
    int rc = pfi_etcd_create(o->etcd, t, &h->elect, err);
    if (rc == PFI_OK) rc = pfi_etcd_create(o->etcd, fmax(t, 1.0), &h->kv, err);
    if (rc != PFI_OK) return rc;
    c->passive = 1;
    if (pthread_create(&h->th, NULL, run, c) != 0)
        return pfi_error_set(err, PFI_EIO, NULL, 0, "cannot start the HA thread");
    h->started = 1;
    pfi_log("HA: %s on etcd %s, lease %.3g s, renewed every %.3g s", h->prefix, o->etcd, h->ttl_s,
            h->tick_s);
    return PFI_OK;
}

void ctl_ha_stop(ctl *c)
{
    ctl_ha *h = c->ha;
    if (!h) return;
    if (h->started) {
        pthread_mutex_lock(&h->mu);
        h->quit = 1;
        pthread_cond_signal(&h->cv);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->th, NULL);
        /* the key goes with the lease: a follower takes over at its next tick */
        if (h->leader && pfi_etcd_revoke(h->elect, h->lease, NULL) == PFI_OK)
            pfi_log("HA: gave up the lead (epoch %lld)", h->epoch);
    }
    pfi_etcd_destroy(h->elect);
    pfi_etcd_destroy(h->kv);
    ctl_ha_seen_free(&h->seen);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    free(h);
    c->ha = NULL;
}

void ctl_ha_before_period(ctl *c)
{
    ctl_ha *h = c->ha;
    if (!h) return;
    pthread_mutex_lock(&h->mu);
    long long epoch = h->leader ? h->epoch : 0;
    pthread_mutex_unlock(&h->mu);
    pfi_error e;
    pfi_error_clear(&e);
    if (!epoch && h->acting) {
        pfi_log("HA: a follower now (was leader at epoch %lld)", h->acting);
        pthread_mutex_lock(&h->mu);
        h->acting = 0;
        pthread_mutex_unlock(&h->mu);
        h->applied = 0; /* read everything again */
        c->caps.n_conf = 0;
    }
    if (epoch && epoch != h->acting) {
        /* a new lead: everything the last leader left, before any push */
        long long rev;
        if (ctl_ha_state_load(c, h->kv, h->prefix, 0, &h->seen, &rev, &e) != PFI_OK) {
            note_error(h, &e);
            pfi_log("HA: leader at epoch %lld but the shared state cannot be read (%s): not "
                    "acting yet",
                    epoch, e.msg);
            c->passive = 1;
            return;
        }
        pfi_agents_set_owner(c->agents, c->owner, epoch, NULL);
        pthread_mutex_lock(&h->mu);
        h->acting = epoch;
        pthread_mutex_unlock(&h->mu);
        h->applied = rev;
        pfi_log("HA: acting at epoch %lld: %zu target(s), %zu cap(s) held, %zu learned point(s) "
                "taken over",
                epoch, c->n_targets, c->caps.n, c->jobs.n_obs);
    } else if (!epoch) {
        long long rev;
        if (ctl_ha_state_load(c, h->kv, h->prefix, h->applied + 1, &h->seen, &rev, &e) == PFI_OK)
            h->applied = rev;
        else
            note_error(h, &e);
    }
    c->passive = h->acting == 0;
}

void ctl_ha_after_period(ctl *c)
{
    ctl_ha *h = c->ha;
    if (!h || !h->acting) return;
    size_t puts, txns;
    int deposed;
    pfi_error e;
    pfi_error_clear(&e);
    int rc = ctl_ha_state_save(c, h->kv, h->prefix, h->leader_key, h->acting, &h->seen, &puts,
                               &txns, &deposed, &e);
    pthread_mutex_lock(&h->mu);
    h->txns += txns;
    h->puts += puts;
    h->period_puts = puts;
    pthread_mutex_unlock(&h->mu);
    if (rc != PFI_OK) note_error(h, &e);
    if (deposed) {
        pthread_mutex_lock(&h->mu);
        if (h->epoch == h->acting) step_down(h, "the shared state's write was refused (deposed)");
        pthread_mutex_unlock(&h->mu);
    }
}

int ctl_ha_may_push(ctl *c)
{
    ctl_ha *h = c->ha;
    if (!h) return 1;
    pthread_mutex_lock(&h->mu);
    int ok = h->leader && h->epoch == h->acting && mono() + h->push_s < h->deadline;
    pthread_mutex_unlock(&h->mu);
    return ok;
}

int ctl_ha_refuses_writes(ctl *c, char *why, size_t len)
{
    ctl_ha *h = c->ha;
    if (!h) return 0;
    /* a leader takes writes once it acts: before, the shared state it is
     * about to read would replace what it took */
    pthread_mutex_lock(&h->mu);
    int leader = h->leader && h->acting == h->epoch;
    if (!leader)
        snprintf(why, len,
                 "this controller is a follower; the leader is %s (epoch %lld): send targets "
                 "there",
                 h->leader_id[0] ? h->leader_id : "(none yet)", h->leader_rev);
    pthread_mutex_unlock(&h->mu);
    return !leader;
}

json_t *ctl_ha_json(ctl_ha *h)
{
    if (!h) return NULL;
    pthread_mutex_lock(&h->mu);
    double left = h->leader ? h->deadline - mono() : NAN;
    json_t *o =
        json_pack("{s:s,s:I,s:o,s:s,s:o,s:f,s:I,s:I,s:I,s:s}", "role",
                  h->leader && h->acting == h->epoch ? "leader" : "follower", "epoch",
                  (json_int_t)(h->leader ? h->epoch : h->leader_rev), "leader",
                  h->leader_id[0] ? json_string(h->leader_id) : json_null(), "name", h->prefix,
                  "lease_left_s", pfi_json_num(left), "ttl_s", h->ttl_s, "campaigns",
                  (json_int_t)h->campaigns, "stepdowns", (json_int_t)h->stepdowns, "etcd_puts",
                  (json_int_t)h->puts, "last_error", h->last_error);
    pfi_json_set(o, "etcd_txns", json_integer((json_int_t)h->txns));
    pfi_json_set(o, "etcd_puts_last_period", json_integer((json_int_t)h->period_puts));
    pthread_mutex_unlock(&h->mu);
    return o;
}

void ctl_ha_metrics(ctl_ha *h, FILE *f)
{
    if (!h) return;
    pthread_mutex_lock(&h->mu);
    int leader = h->leader && h->acting == h->epoch;
    long long epoch = h->leader ? h->epoch : h->leader_rev;
    unsigned long long st = h->stepdowns, txns = h->txns, puts = h->puts;
    pthread_mutex_unlock(&h->mu);
    fprintf(f,
            "# HELP pfi_control_ha_leader 1 while this controller leads (acts), 0 a follower.\n"
            "# TYPE pfi_control_ha_leader gauge\npfi_control_ha_leader %d\n"
            "# HELP pfi_control_ha_epoch The leader's epoch (its key's etcd create_revision).\n"
            "# TYPE pfi_control_ha_epoch gauge\npfi_control_ha_epoch %lld\n"
            "# HELP pfi_control_ha_stepdowns_total Times this controller stopped leading.\n"
            "# TYPE pfi_control_ha_stepdowns_total counter\npfi_control_ha_stepdowns_total %llu\n"
            "# HELP pfi_control_ha_etcd_txns_total Shared-state transactions written.\n"
            "# TYPE pfi_control_ha_etcd_txns_total counter\npfi_control_ha_etcd_txns_total %llu\n"
            "# HELP pfi_control_ha_etcd_puts_total Shared-state keys written.\n"
            "# TYPE pfi_control_ha_etcd_puts_total counter\npfi_control_ha_etcd_puts_total %llu\n",
            leader, epoch, st, txns, puts);
}
