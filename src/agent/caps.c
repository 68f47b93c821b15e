/* Power caps that cannot be forgotten.
 *
 * Order of operations: the cap is recorded in the store BEFORE the device is
 * touched and forgotten only AFTER the prior limit is read back, so a crash
 * at any point leaves a record the next start acts on (restore when expired,
 * re-apply while not). A limit outside the device's constraints is refused,
 * never clamped; a limit the device does not report back after setting is a
 * failure and the previous limit is put back.
 *
 * "The prior limit" is the power-management limit in force before pfid's
 * first cap on the GPU (a site running 700 W parts at 600 W gets 600 W back,
 * not the default), recorded with the cap. Limits are compared as the
 * management limit (current_w): an out-of-band limiter (a BMC) can hold the
 * enforced limit lower, which is reported as externally limited, not as a
 * cap that failed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "pfi/agent_api.h"
#include "pfi/json.h"

/* NVML takes milliwatts; a device may round. Within 1 W counts as set. */
#define READBACK_TOL_W 1.0

/* The limit set through power management; a backend that does not report
 * it leaves 0, and then the enforced limit is all there is. */
double agent_in_force_w(const pfi_gpu_limits *l)
{
    return l->current_w > 0 ? l->current_w : l->enforced_w;
}

int agent_at_w(const pfi_gpu_limits *l, double w)
{
    return fabs(agent_in_force_w(l) - w) <= READBACK_TOL_W;
}

double agent_gpu_prior_w(const agent_gpu *x)
{
    if (x->capped) return x->cap_prior_w;
    if (x->below_prior) return x->st.prior_w;
    if (isfinite(x->node_w)) return x->node_prior_w;
    return x->have_limits ? agent_in_force_w(&x->limits) : NAN;
}

double agent_gpu_target_w(const agent_gpu *x)
{
    double cap = x->capped ? x->cap_w : NAN;
    if (!isfinite(x->node_w)) return cap;
    return isfinite(cap) ? fmin(cap, x->node_w) : x->node_w;
}

int agent_externally_limited(const pfi_gpu_limits *l)
{
    return l->current_w > 0 && l->enforced_w > 0 && l->enforced_w < l->current_w - READBACK_TOL_W;
}

int agent_gpu_externally_limited(const agent_gpu *x)
{
    return x->below_prior || (x->have_limits && agent_externally_limited(&x->limits));
}

/* Sets w (W) on gpu and reads it back: PFI_OK with *lim filled when the
 * device's power-management limit is now w. Caller holds cap_mu. */
int agent_set_verify(agent *a, unsigned gpu, double w, pfi_gpu_limits *lim, pfi_error *err)
{
    int rc = pfi_backend_set_limit(a->be, gpu, w);
    if (rc == PFI_ENOTSUP)
        return pfi_error_set(err, PFI_ENOTSUP, NULL, 0, "the %s backend cannot set power limits",
                             a->o.backend);
    if (rc != PFI_OK)
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0, "GPU %u: setting %.0f W failed: %s", gpu,
                             w, pfi_backend_last_error(a->be));
    if ((rc = pfi_backend_limits(a->be, gpu, lim)) != PFI_OK)
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0,
                             "GPU %u: reading the limit back failed: %s", gpu,
                             pfi_backend_last_error(a->be));
    double got = agent_in_force_w(lim);
    if (!agent_at_w(lim, w))
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0,
                             "GPU %u: the device reports %.1f W after setting %.1f W", gpu, got, w);
    return PFI_OK;
}

static json_t *cap_json(const agent_gpu *x, unsigned gpu, const pfi_gpu_limits *lim)
{
    json_t *o = json_object();
    pfi_json_set(o, "gpu", json_integer(gpu));
    pfi_json_set(o, "capped", json_boolean(x->capped));
    if (x->capped) {
        pfi_json_set(o, "watts", pfi_json_num(x->cap_w));
        pfi_json_set(o, "set_at", pfi_json_num(x->cap_set_at));
        pfi_json_set(o, "expires_at", pfi_json_num(agent_cap_wall(x->cap_expires_m)));
        pfi_json_set(o, "owner", json_string(x->cap_owner));
        pfi_json_set(o, "epoch", json_integer(x->cap_epoch));
    }
    pfi_json_set(o, "prior_w", pfi_json_num(agent_gpu_prior_w(x)));
    pfi_json_set(o, "max_epoch", json_integer(x->st.max_epoch));
    pfi_json_set(o, "limit_w", pfi_json_num(agent_in_force_w(lim)));
    pfi_json_set(o, "enforced_w", pfi_json_num(lim->enforced_w));
    pfi_json_set(o, "externally_limited", json_boolean(agent_externally_limited(lim)));
    pfi_json_set(o, "default_w", pfi_json_num(lim->default_w));
    pfi_json_set(o, "min_w", pfi_json_num(lim->min_w));
    pfi_json_set(o, "max_w", pfi_json_num(lim->max_w));
    return o;
}

/* Copies a cap into the GPU's live state. Caller holds a->mu. */
void agent_cap_note(agent_gpu *x, const agent_cap *c)
{
    x->capped = 1;
    x->cap_w = c->watts;
    x->cap_set_at = c->set_at;
    x->cap_expires_at = c->expires_at;
    x->cap_expires_m = c->expires_m;
    x->cap_prior_w = c->prior_w;
    snprintf(x->cap_owner, sizeof x->cap_owner, "%s", c->owner);
    x->cap_epoch = c->epoch;
    x->cap_owner_unknown = 0;
}

static agent_cap held_cap(const agent_gpu *x)
{
    agent_cap c = {x->cap_w, x->cap_set_at, x->cap_expires_at, x->cap_expires_m, x->cap_prior_w,
                   "",       x->cap_epoch};
    snprintf(c.owner, sizeof c.owner, "%s", x->cap_owner);
    return c;
}

/* The highest epoch seen moves with every accepted call. */
static void raise_epoch(agent_state *st, const agent_caller *by)
{
    if (by->epoch >= st->max_epoch) {
        st->max_epoch = by->epoch;
        snprintf(st->max_epoch_owner, sizeof st->max_epoch_owner, "%s", by->owner);
    }
}

static void keep_state(agent *a, agent_gpu *x, const agent_state *st)
{
    pthread_mutex_lock(&a->mu);
    x->st = *st;
    pthread_mutex_unlock(&a->mu);
}

/* Records cap c on gpu: the state file first, then the store, so that the
 * state file is never behind the store. A store that fails puts the state
 * file back. Caller holds cap_mu. */
int agent_cap_record(agent *a, unsigned gpu, const agent_cap *c, const agent_caller *by,
                     pfi_error *err)
{
    agent_gpu *x = &a->gpus[gpu];
    agent_state ns = x->st;
    ns.capped = 1;
    ns.prior_w = c->prior_w;
    ns.watts = c->watts;
    ns.set_at = c->set_at;
    ns.expires_at = c->expires_at;
    ns.expires_mono = c->expires_m;
    snprintf(ns.boot_id, sizeof ns.boot_id, "%s", agent_boot_id());
    snprintf(ns.owner, sizeof ns.owner, "%s", c->owner);
    ns.epoch = c->epoch;
    if (by) raise_epoch(&ns, by);
    int rc = agent_state_save(a, gpu, &ns, err);
    if (rc != PFI_OK) return rc;
    pfi_store_cap rec = {gpu, c->watts, c->set_at, c->expires_at, c->prior_w};
    if ((rc = pfi_store_cap_put(a->store, &rec, err)) != PFI_OK) {
        agent_state_save(a, gpu, &x->st, NULL);
        return rc;
    }
    keep_state(a, x, &ns);
    return PFI_OK;
}

/* Records that gpu holds no cap (the prior is back): the state file, then
 * the store. Caller holds cap_mu. */
static int record_release(agent *a, unsigned gpu, const agent_caller *by, pfi_error *err)
{
    agent_gpu *x = &a->gpus[gpu];
    agent_state ns = x->st;
    ns.capped = 0;
    if (by) raise_epoch(&ns, by);
    int rc = agent_state_save(a, gpu, &ns, err);
    if (rc != PFI_OK) return rc;
    keep_state(a, x, &ns);
    return pfi_store_cap_delete(a->store, gpu, err);
}

/* Puts the records back as they were before a cap attempt that changed
 * nothing. */
static void undo_record(agent *a, unsigned gpu, int was_capped, const agent_cap *prev,
                        const agent_state *st)
{
    if (was_capped) {
        agent_caller by = {"", prev->epoch};
        agent_cap_record(a, gpu, prev, &by, NULL);
    } else {
        agent_state_save(a, gpu, st, NULL);
        keep_state(a, &a->gpus[gpu], st);
        pfi_store_cap_delete(a->store, gpu, NULL);
    }
}

/* Limits the GPU accepts and the prior the cap would return to; PFI_OK with
 * *lim and *prior, or the refusal. Caller holds cap_mu. */
static int check_cap(agent *a, unsigned gpu, double watts, const agent_caller *by,
                     pfi_gpu_limits *lim, double *prior, agent_holder *holder, pfi_error *err)
{
    int rc = pfi_backend_limits(a->be, gpu, lim);
    if (rc == PFI_ENOTSUP)
        /* A backend without limits cannot set them either (dcgm without the
         * limit fields): the same 501 as a read-only backend. */
        return pfi_error_set(err, PFI_ENOTSUP, NULL, 0, "GPU %u: power limits not available: %s",
                             gpu, pfi_backend_last_error(a->be));
    if (rc != PFI_OK)
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0, "GPU %u: cannot read limits: %s", gpu,
                             pfi_backend_last_error(a->be));
    if (!(agent_in_force_w(lim) > 0))
        /* Without the limit in force there is nothing safe to restore to. */
        return pfi_error_set(err, PFI_ENOTSUP, NULL, 0, "GPU %u reports no power limit in force",
                             gpu);
    if (watts < lim->min_w || watts > lim->max_w)
        return pfi_error_set(err, PFI_ERANGE, NULL, 0,
                             "%.1f W is outside GPU %u's limit constraints [%.0f, %.0f] W", watts,
                             gpu, lim->min_w, lim->max_w);
    if ((rc = agent_cap_fence(a, gpu, by, holder, err)) != PFI_OK) return rc;
    /* The limit to restore is the one in force before pfid first capped the
     * GPU (a second cap must not take the first cap as the prior), and it is
     * the ceiling of every cap: a cap only lowers the site's own limit. */
    agent_gpu *x = &a->gpus[gpu];
    pthread_mutex_lock(&a->mu);
    *prior = x->capped             ? x->cap_prior_w
             : x->below_prior      ? x->st.prior_w
             : isfinite(x->node_w) ? x->node_prior_w
                                   : agent_in_force_w(lim);
    pthread_mutex_unlock(&a->mu);
    if (watts > *prior + READBACK_TOL_W) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "%.1f W is above GPU %u's prior limit %.0f W (the site's own limit; a cap "
                 "only lowers it)",
                 watts, gpu, *prior);
        agent_cap_refused(a, gpu, AGENT_REFUSED_CEILING, by, msg);
        return pfi_error_set(err, PFI_ERANGE, NULL, 0, "%s", msg);
    }
    return PFI_OK;
}

/* After a set that failed: puts back what was there (the previous cap, or
 * the prior limit). A device still at it changed nothing (a set the driver
 * refused): the records go back, and there is nothing to restore. */
static void put_back(agent *a, unsigned gpu, int was_capped, const agent_cap *prev,
                     const agent_state *st, agent_cap *rec)
{
    pfi_gpu_limits tmp;
    pfi_error e2;
    double back = was_capped ? prev->watts : rec->prior_w;
    pthread_mutex_lock(&a->mu);
    if (isfinite(a->gpus[gpu].node_w)) back = fmin(back, a->gpus[gpu].node_w);
    pthread_mutex_unlock(&a->mu);
    if ((pfi_backend_limits(a->be, gpu, &tmp) == PFI_OK && agent_at_w(&tmp, back)) ||
        agent_set_verify(a, gpu, back, &tmp, &e2) == PFI_OK) {
        undo_record(a, gpu, was_capped, prev, st);
        return;
    }
    /* The device is in an unknown state: treat it as capped and due now, so
     * the sampler keeps trying to restore the prior limit (and a restart
     * does, from the record). */
    pfi_log("GPU %u: could not put the limit back after a failed cap (%s); "
            "restoring the prior %.0f W is retried",
            gpu, e2.msg, rec->prior_w);
    rec->expires_m = agent_cap_now();
    rec->expires_at = pfi_clock_wall();
    agent_cap_record(a, gpu, rec, NULL, NULL);
    agent_gpu *x = &a->gpus[gpu];
    pthread_mutex_lock(&a->mu);
    agent_cap_note(x, rec);
    x->restore_failed = 1;
    a->gen++;
    pthread_cond_broadcast(&a->wake);
    pthread_mutex_unlock(&a->mu);
}

int agent_cap_set(agent *a, unsigned gpu, double watts, double expires_s, const agent_caller *by,
                  json_t **resp, agent_holder *holder, pfi_error *err)
{
    static const agent_caller anon = {"", 0};
    if (!by) by = &anon;
    if (gpu >= a->n_gpus)
        return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "GPU %u does not exist (%u GPUs)", gpu,
                             a->n_gpus);
    pthread_mutex_lock(&a->cap_mu);
    pfi_gpu_limits lim;
    double prior;
    int rc = check_cap(a, gpu, watts, by, &lim, &prior, holder, err);
    if (rc != PFI_OK) goto out;
    agent_gpu *x = &a->gpus[gpu];
    pthread_mutex_lock(&a->mu);
    int was_capped = x->capped;
    agent_cap prev = held_cap(x);
    agent_state prev_st = x->st;
    /* Under a node ceiling the device holds the lower of the two. */
    double dev_w = isfinite(x->node_w) ? fmin(watts, x->node_w) : watts;
    pthread_mutex_unlock(&a->mu);
    double now_m = agent_cap_now(), now = pfi_clock_wall();
    agent_cap rec = {watts, now, now + expires_s, now_m + expires_s, prior, "", by->epoch};
    snprintf(rec.owner, sizeof rec.owner, "%s", by->owner);
    if ((rc = agent_cap_record(a, gpu, &rec, by, err)) != PFI_OK) goto out;
    pfi_gpu_limits after;
    rc = agent_set_verify(a, gpu, dev_w, &after, err);
    if (rc == PFI_ENOTSUP) {
        /* The backend cannot set limits: nothing happened (backend.h's
         * contract), so the record goes and no restore is needed. */
        undo_record(a, gpu, was_capped, &prev, &prev_st);
        goto out;
    }
    if (rc != PFI_OK) {
        put_back(a, gpu, was_capped, &prev, &prev_st, &rec);
        goto out;
    }
    pthread_mutex_lock(&a->mu);
    agent_cap_note(x, &rec);
    x->restore_failed = 0;
    x->release_pending = 0; /* the new record replaced the stale one */
    x->below_prior = 0;
    x->limits = after;
    x->have_limits = 1;
    if (strcmp(x->refused_owner, by->owner) == 0) x->refused_logged = 0;
    a->caps_set_total++;
    a->gen++;
    if (resp) *resp = cap_json(x, gpu, &after);
    pthread_cond_broadcast(&a->wake); /* the sampler re-plans its next expiry */
    pthread_mutex_unlock(&a->mu);
    /* A renewal (the same watts again) is silent: a controller renews every
     * period, which logged a line per GPU each time. */
    if (!was_capped || fabs(prev.watts - watts) >= 0.05)
        pfi_log("GPU %u: capped at %.1f W for %.0f s (prior %.0f W)", gpu, watts, expires_s,
                rec.prior_w);
out:
    pthread_mutex_unlock(&a->cap_mu);
    return rc;
}

/* A release the device took but the records did not: the GPU holds no cap,
 * the record is retried (agent_caps_expire) and /healthz says so. */
static int release_failed(agent *a, unsigned gpu, double prior_w, const pfi_error *why,
                          pfi_error *err)
{
    agent_gpu *x = &a->gpus[gpu];
    pthread_mutex_lock(&a->mu);
    int before = x->release_pending;
    x->release_pending = 1;
    snprintf(x->release_error, sizeof x->release_error, "%s", why->msg);
    a->gen++;
    pthread_mutex_unlock(&a->mu);
    if (!before)
        pfi_log("GPU %u: the prior limit %.0f W is back, but the release could not be "
                "recorded: %s; retrying (the stale record must not re-apply the cap)",
                gpu, prior_w, why->msg);
    return pfi_error_set(err, PFI_EIO, NULL, 0,
                         "GPU %u: the prior limit %.0f W is back on the device, but the release "
                         "could not be recorded: %s; pfid retries it",
                         gpu, prior_w, why->msg);
}

/* Tries again to record a release (the sampler, a DELETE, shutdown).
 * Caller holds cap_mu. */
static int retry_release(agent *a, unsigned gpu, const agent_caller *by, pfi_error *err)
{
    agent_gpu *x = &a->gpus[gpu];
    pfi_error e;
    pfi_error_clear(&e);
    if (record_release(a, gpu, by, &e) != PFI_OK)
        return release_failed(a, gpu, x->cap_prior_w, &e, err);
    pthread_mutex_lock(&a->mu);
    x->release_pending = 0;
    a->gen++;
    pthread_mutex_unlock(&a->mu);
    pfi_log("GPU %u: the release of its cap is recorded now", gpu);
    return PFI_OK;
}

int agent_cap_clear_record(agent *a, unsigned gpu, pfi_error *err)
{
    return retry_release(a, gpu, NULL, err);
}

/* Restores the prior limit on gpu and forgets the cap. A device already at
 * it (the driver reverted, or a set failed before changing anything) needs
 * no set. Caller holds cap_mu. */
int agent_cap_restore(agent *a, unsigned gpu, double prior_w, const char *why,
                      const agent_caller *by, pfi_gpu_limits *after, pfi_error *err)
{
    int rc = PFI_OK;
    agent_gpu *x = &a->gpus[gpu];
    /* Under a node ceiling the GPU goes back to its share, not above it. */
    pthread_mutex_lock(&a->mu);
    double w = isfinite(x->node_w) ? fmin(prior_w, x->node_w) : prior_w;
    pthread_mutex_unlock(&a->mu);
    if (pfi_backend_limits(a->be, gpu, after) != PFI_OK || !agent_at_w(after, w))
        rc = agent_set_verify(a, gpu, w, after, err);
    pthread_mutex_lock(&a->mu);
    int failed_before = x->restore_failed;
    if (rc == PFI_OK) {
        x->node_prior_w = prior_w;
        x->capped = 0;
        x->restore_failed = 0;
        x->limits = *after;
        x->have_limits = 1;
        a->caps_restored_total++;
    } else {
        x->restore_failed = 1;
        a->cap_restore_errors_total++;
    }
    /* A restore that was asked for stays asked for: the cap is due now, so
     * the next start restores it rather than re-applying it. */
    double now_m = agent_cap_now();
    int make_due = rc != PFI_OK && x->cap_expires_m > now_m;
    if (make_due) {
        x->cap_expires_m = now_m;
        x->cap_expires_at = pfi_clock_wall();
    }
    agent_cap due = held_cap(x);
    a->gen++;
    pthread_mutex_unlock(&a->mu);
    if (make_due) agent_cap_record(a, gpu, &due, by, NULL);
    if (rc == PFI_OK) {
        if (w < prior_w)
            pfi_log("GPU %u: cap lifted (%s); the node ceiling's share %.0f W holds", gpu, why, w);
        else
            pfi_log("GPU %u: prior limit %.0f W restored (%s)", gpu, prior_w, why);
        pfi_error e;
        pfi_error_clear(&e);
        if (record_release(a, gpu, by, &e) != PFI_OK)
            return release_failed(a, gpu, prior_w, &e, err);
        pthread_mutex_lock(&a->mu);
        x->release_pending = 0;
        pthread_mutex_unlock(&a->mu);
    } else if (!failed_before) {
        /* Retried every second: say it once, /metrics shows it meanwhile. */
        pfi_log("GPU %u: restoring the prior limit %.0f W (%s) failed: %s; retrying", gpu, prior_w,
                why, err->msg);
    }
    return rc;
}

int agent_cap_clear(agent *a, unsigned gpu, const char *why, const agent_caller *by, json_t **resp,
                    agent_holder *holder, pfi_error *err)
{
    static const agent_caller anon = {"", 0};
    if (gpu >= a->n_gpus)
        return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "GPU %u does not exist (%u GPUs)", gpu,
                             a->n_gpus);
    pthread_mutex_lock(&a->cap_mu);
    /* pfid's own release (by NULL: a job's pod is gone) is not fenced. */
    int rc = by ? agent_cap_fence(a, gpu, by, holder, err) : PFI_OK;
    if (!by) by = &anon;
    pthread_mutex_lock(&a->mu);
    int capped = a->gpus[gpu].capped, pending = a->gpus[gpu].release_pending;
    double def = a->gpus[gpu].cap_prior_w;
    pthread_mutex_unlock(&a->mu);
    pfi_gpu_limits after;
    if (rc != PFI_OK) {
        /* refused: nothing changes */
    } else if (capped) {
        rc = agent_cap_restore(a, gpu, def, why, by, &after, err);
    } else if (pending) {
        rc = retry_release(a, gpu, by, err);
    }
    if (rc == PFI_OK && !capped) {
        if (by->epoch > a->gpus[gpu].st.max_epoch) {
            agent_state ns = a->gpus[gpu].st;
            raise_epoch(&ns, by);
            if (agent_state_save(a, gpu, &ns, NULL) == PFI_OK) keep_state(a, &a->gpus[gpu], &ns);
        }
        if (pfi_backend_limits(a->be, gpu, &after) != PFI_OK)
            rc = pfi_error_set(err, PFI_EBACKEND, NULL, 0, "GPU %u: cannot read limits: %s", gpu,
                               pfi_backend_last_error(a->be));
    }
    if (rc == PFI_OK && resp) {
        pthread_mutex_lock(&a->mu);
        *resp = cap_json(&a->gpus[gpu], gpu, &after);
        pthread_mutex_unlock(&a->mu);
    }
    pthread_mutex_unlock(&a->cap_mu);
    return rc;
}

double agent_caps_expire(agent *a)
{
    double next = INFINITY;
    pthread_mutex_lock(&a->cap_mu);
    for (unsigned g = 0; g < a->n_gpus; g++) {
        pthread_mutex_lock(&a->mu);
        int capped = a->gpus[g].capped, pending = a->gpus[g].release_pending;
        double exp = a->gpus[g].cap_expires_m, def = a->gpus[g].cap_prior_w;
        pthread_mutex_unlock(&a->mu);
        pfi_error err;
        if (!capped && pending && retry_release(a, g, NULL, &err) != PFI_OK)
            next = fmin(next, agent_cap_now() + 1.0);
        if (!capped) continue;
        if (exp <= agent_cap_now()) {
            pfi_gpu_limits after;
            if (agent_cap_restore(a, g, def, "cap expired", NULL, &after, &err) != PFI_OK)
                next = fmin(next, agent_cap_now() + 1.0); /* retry in a second */
        } else {
            next = fmin(next, exp);
        }
    }
    pthread_mutex_unlock(&a->cap_mu);
    return next;
}

void agent_caps_reconcile(agent *a)
{
    pthread_mutex_lock(&a->cap_mu);
    for (unsigned g = 0; g < a->n_gpus; g++) {
        agent_gpu *x = &a->gpus[g];
        pthread_mutex_lock(&a->mu);
        /* The tick's read first: a fresh one only when it shows a change. An
         * expired or failing cap is the expiry loop's (agent_caps_expire). */
        double cap_w = agent_gpu_target_w(x); /* the cap, or the node share under it */
        int check = x->capped && !x->restore_failed && x->have_limits &&
                    x->cap_expires_m > agent_cap_now() && !agent_at_w(&x->limits, cap_w);
        int was_drifting = x->drifting;
        if (!check && x->capped && x->have_limits && agent_at_w(&x->limits, cap_w)) x->drifting = 0;
        pthread_mutex_unlock(&a->mu);
        if (!check) continue;
        pfi_gpu_limits now;
        if (pfi_backend_limits(a->be, g, &now) != PFI_OK || agent_at_w(&now, cap_w)) continue;
        pfi_gpu_limits after;
        pfi_error err;
        int rc = agent_set_verify(a, g, cap_w, &after, &err);
        pthread_mutex_lock(&a->mu);
        if (!was_drifting) a->cap_drift_total++;
        x->drifting = rc != PFI_OK;
        x->limits = rc == PFI_OK ? after : now;
        x->have_limits = 1;
        a->gen++;
        pthread_mutex_unlock(&a->mu);
        /* Once per episode: the first time the change is seen, and when a
         * re-apply that kept failing finally holds. */
        if (!was_drifting && rc == PFI_OK)
            pfi_log("GPU %u: the limit reads %.0f W, not the cap of %.0f W pfid holds (a "
                    "driver reload, another tool?); cap re-applied",
                    g, agent_in_force_w(&now), cap_w);
        else if (!was_drifting)
            pfi_log("GPU %u: the limit reads %.0f W, not the cap of %.0f W pfid holds; "
                    "re-applying failed: %s (retried every sample)",
                    g, agent_in_force_w(&now), cap_w, err.msg);
        else if (rc == PFI_OK)
            pfi_log("GPU %u: cap of %.0f W re-applied", g, cap_w);
    }
    pthread_mutex_unlock(&a->cap_mu);
}

void agent_caps_check_persistence(agent *a)
{
    char off[256] = "";
    size_t n = 0;
    for (unsigned g = 0; g < a->n_gpus; g++) {
        int on;
        a->gpus[g].persistence = -1;
        if (pfi_backend_persistence(a->be, g, &on) != PFI_OK) continue;
        a->gpus[g].persistence = on;
        if (!on && n + 12 < sizeof off)
            n += (size_t)snprintf(off + n, sizeof off - n, "%s%u", n ? "," : "", g);
    }
    if (n)
        pfi_log("warning: persistence mode is off on GPU %s: an idle GPU's driver may unload "
                "and a cap's power limit is then lost (pfid re-applies it at the next "
                "sample); enable it (nvidia-persistenced, or nvidia-smi -pm 1)",
                off);
}
