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
static double in_force_w(const pfi_gpu_limits *l)
{
    return l->current_w > 0 ? l->current_w : l->enforced_w;
}

static int at_w(const pfi_gpu_limits *l, double w)
{
    return fabs(in_force_w(l) - w) <= READBACK_TOL_W;
}

double agent_gpu_prior_w(const agent_gpu *x)
{
    if (x->capped) return x->cap_prior_w;
    return x->have_limits ? in_force_w(&x->limits) : NAN;
}

int agent_externally_limited(const pfi_gpu_limits *l)
{
    return l->current_w > 0 && l->enforced_w > 0 && l->enforced_w < l->current_w - READBACK_TOL_W;
}

/* Sets w (W) on gpu and reads it back: PFI_OK with *lim filled when the
 * device's power-management limit is now w. Caller holds cap_mu. */
static int set_and_verify(agent *a, unsigned gpu, double w, pfi_gpu_limits *lim, pfi_error *err)
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
    double got = in_force_w(lim);
    if (!at_w(lim, w))
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
        pfi_json_set(o, "expires_at", pfi_json_num(x->cap_expires_at));
    }
    if (x->capped) pfi_json_set(o, "prior_w", pfi_json_num(x->cap_prior_w));
    pfi_json_set(o, "limit_w", pfi_json_num(in_force_w(lim)));
    pfi_json_set(o, "enforced_w", pfi_json_num(lim->enforced_w));
    pfi_json_set(o, "externally_limited", json_boolean(agent_externally_limited(lim)));
    pfi_json_set(o, "default_w", pfi_json_num(lim->default_w));
    pfi_json_set(o, "min_w", pfi_json_num(lim->min_w));
    pfi_json_set(o, "max_w", pfi_json_num(lim->max_w));
    return o;
}

/* Copies a cap record into the GPU's live state. Caller holds a->mu. */
static void note_cap(agent_gpu *x, const pfi_store_cap *rec)
{
    x->capped = 1;
    x->cap_w = rec->watts;
    x->cap_set_at = rec->set_at;
    x->cap_expires_at = rec->expires_at;
    x->cap_prior_w = rec->prior_w;
}

/* Puts the store back as it was before a cap attempt that changed nothing. */
static void undo_record(agent *a, unsigned gpu, int was_capped, const pfi_store_cap *prev)
{
    if (was_capped)
        pfi_store_cap_put(a->store, prev, NULL);
    else
        pfi_store_cap_delete(a->store, gpu, NULL);
}

int agent_cap_set(agent *a, unsigned gpu, double watts, double expires_s, json_t **resp,
                  pfi_error *err)
{
    if (gpu >= a->n_gpus)
        return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "GPU %u does not exist (%u GPUs)", gpu,
                             a->n_gpus);
    pthread_mutex_lock(&a->cap_mu);
    pfi_gpu_limits lim;
    int rc = pfi_backend_limits(a->be, gpu, &lim);
    if (rc == PFI_ENOTSUP) {
        /* A backend without limits cannot set them either (dcgm without the
         * limit fields): the same 501 as a read-only backend. */
        rc = pfi_error_set(err, PFI_ENOTSUP, NULL, 0, "GPU %u: power limits not available: %s", gpu,
                           pfi_backend_last_error(a->be));
        goto out;
    }
    if (rc != PFI_OK) {
        rc = pfi_error_set(err, PFI_EBACKEND, NULL, 0, "GPU %u: cannot read limits: %s", gpu,
                           pfi_backend_last_error(a->be));
        goto out;
    }
    if (!(in_force_w(&lim) > 0)) {
        /* Without the limit in force there is nothing safe to restore to. */
        rc =
            pfi_error_set(err, PFI_ENOTSUP, NULL, 0, "GPU %u reports no power limit in force", gpu);
        goto out;
    }
    if (watts < lim.min_w || watts > lim.max_w) {
        rc = pfi_error_set(err, PFI_ERANGE, NULL, 0,
                           "%.1f W is outside GPU %u's limit constraints [%.0f, %.0f] W", watts,
                           gpu, lim.min_w, lim.max_w);
        goto out;
    }
    pthread_mutex_lock(&a->mu);
    agent_gpu *x = &a->gpus[gpu];
    int was_capped = x->capped;
    pfi_store_cap prev = {gpu, x->cap_w, x->cap_set_at, x->cap_expires_at, x->cap_prior_w};
    pthread_mutex_unlock(&a->mu);
    /* The limit to restore is the one in force before pfid first capped the
     * GPU (a second cap must not take the first cap as the prior). */
    double now = agent_cap_now();
    pfi_store_cap rec = {gpu, watts, now, now + expires_s,
                         was_capped ? prev.prior_w : in_force_w(&lim)};
    if ((rc = pfi_store_cap_put(a->store, &rec, err)) != PFI_OK) goto out;
    pfi_gpu_limits after;
    rc = set_and_verify(a, gpu, watts, &after, err);
    if (rc == PFI_ENOTSUP) {
        /* The backend cannot set limits: nothing happened (backend.h's
         * contract), so the record goes and no restore is needed. */
        undo_record(a, gpu, was_capped, &prev);
        goto out;
    }
    if (rc != PFI_OK) {
        /* Put back what was there: the previous cap, or the prior limit. A
         * device still at it changed nothing (a set the driver refused):
         * the record goes, and there is nothing to restore. */
        pfi_gpu_limits tmp;
        pfi_error e2;
        double back = was_capped ? prev.watts : rec.prior_w;
        if ((pfi_backend_limits(a->be, gpu, &tmp) == PFI_OK && at_w(&tmp, back)) ||
            set_and_verify(a, gpu, back, &tmp, &e2) == PFI_OK) {
            undo_record(a, gpu, was_capped, &prev);
        } else {
            /* The device is in an unknown state: treat it as capped and due
             * now, so the sampler keeps trying to restore the prior limit
             * (and a restart does, from the record). */
            pfi_log("GPU %u: could not put the limit back after a failed cap (%s); "
                    "restoring the prior %.0f W is retried",
                    gpu, e2.msg, rec.prior_w);
            rec.expires_at = agent_cap_now();
            pfi_store_cap_put(a->store, &rec, NULL);
            pthread_mutex_lock(&a->mu);
            note_cap(x, &rec);
            x->restore_failed = 1;
            a->gen++;
            pthread_cond_broadcast(&a->wake);
            pthread_mutex_unlock(&a->mu);
        }
        goto out;
    }
    pthread_mutex_lock(&a->mu);
    note_cap(x, &rec);
    x->restore_failed = 0;
    x->limits = after;
    x->have_limits = 1;
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

/* Restores the prior limit on gpu and forgets the cap. A device already at
 * it (the driver reverted, or a set failed before changing anything) needs
 * no set. Caller holds cap_mu. */
static int restore_locked(agent *a, unsigned gpu, double prior_w, const char *why,
                          pfi_gpu_limits *after, pfi_error *err)
{
    int rc = PFI_OK;
    if (pfi_backend_limits(a->be, gpu, after) != PFI_OK || !at_w(after, prior_w))
        rc = set_and_verify(a, gpu, prior_w, after, err);
    pthread_mutex_lock(&a->mu);
    agent_gpu *x = &a->gpus[gpu];
    int failed_before = x->restore_failed;
    if (rc == PFI_OK) {
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
    int make_due = rc != PFI_OK && x->cap_expires_at > agent_cap_now();
    pfi_store_cap due = {gpu, x->cap_w, x->cap_set_at, agent_cap_now(), x->cap_prior_w};
    if (make_due) x->cap_expires_at = due.expires_at;
    a->gen++;
    pthread_mutex_unlock(&a->mu);
    if (make_due) pfi_store_cap_put(a->store, &due, NULL);
    if (rc == PFI_OK) {
        pfi_store_cap_delete(a->store, gpu, NULL);
        pfi_log("GPU %u: prior limit %.0f W restored (%s)", gpu, prior_w, why);
    } else if (!failed_before) {
        /* Retried every second: say it once, /metrics shows it meanwhile. */
        pfi_log("GPU %u: restoring the prior limit %.0f W (%s) failed: %s; retrying", gpu, prior_w,
                why, err->msg);
    }
    return rc;
}

int agent_cap_clear(agent *a, unsigned gpu, const char *why, json_t **resp, pfi_error *err)
{
    if (gpu >= a->n_gpus)
        return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "GPU %u does not exist (%u GPUs)", gpu,
                             a->n_gpus);
    pthread_mutex_lock(&a->cap_mu);
    pthread_mutex_lock(&a->mu);
    int capped = a->gpus[gpu].capped;
    double def = a->gpus[gpu].cap_prior_w;
    pthread_mutex_unlock(&a->mu);
    pfi_gpu_limits after;
    int rc = PFI_OK;
    if (capped) {
        rc = restore_locked(a, gpu, def, why, &after, err);
    } else if (pfi_backend_limits(a->be, gpu, &after) != PFI_OK) {
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
        int capped = a->gpus[g].capped;
        double exp = a->gpus[g].cap_expires_at, def = a->gpus[g].cap_prior_w;
        pthread_mutex_unlock(&a->mu);
        if (!capped) continue;
        if (exp <= agent_cap_now()) {
            pfi_gpu_limits after;
            pfi_error err;
            if (restore_locked(a, g, def, "cap expired", &after, &err) != PFI_OK)
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
        int check = x->capped && !x->restore_failed && x->have_limits &&
                    x->cap_expires_at > agent_cap_now() && !at_w(&x->limits, x->cap_w);
        int was_drifting = x->drifting;
        double cap_w = x->cap_w;
        if (!check && x->capped && x->have_limits && at_w(&x->limits, x->cap_w)) x->drifting = 0;
        pthread_mutex_unlock(&a->mu);
        if (!check) continue;
        pfi_gpu_limits now;
        if (pfi_backend_limits(a->be, g, &now) != PFI_OK || at_w(&now, cap_w)) continue;
        pfi_gpu_limits after;
        pfi_error err;
        int rc = set_and_verify(a, g, cap_w, &after, &err);
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
                    g, in_force_w(&now), cap_w);
        else if (!was_drifting)
            pfi_log("GPU %u: the limit reads %.0f W, not the cap of %.0f W pfid holds; "
                    "re-applying failed: %s (retried every sample)",
                    g, in_force_w(&now), cap_w, err.msg);
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

/* A record is trusted only as far as it is usable (store.h reads unusable
 * values as NaN): a cap without watts or expiry is restored now, a prior
 * limit that is missing becomes the device's default, and an expiry beyond
 * the API's one-week maximum (from when it was set, or now if that is
 * later than now) is clamped and written back. */
static void sanitize_record(agent *a, pfi_store_cap *c, double now)
{
    const agent_gpu *x = &a->gpus[c->gpu];
    if (!(c->prior_w > 0)) {
        double def = x->have_limits ? x->limits.default_w : NAN;
        pfi_log("GPU %u: the recorded prior limit is unusable; the device default %.0f W is "
                "restored instead",
                c->gpu, def);
        c->prior_w = def;
    }
    if (!(c->watts > 0) || isnan(c->expires_at)) {
        pfi_log("GPU %u: the cap record is unusable (watts or expiry); restoring", c->gpu);
        c->expires_at = now;
        if (!(c->watts > 0)) c->watts = c->prior_w;
    }
    double from = isnan(c->set_at) || c->set_at > now ? now : c->set_at;
    if (c->expires_at > from + PFI_API_MAX_EXPIRES_S) {
        pfi_log("GPU %u: the recorded cap expires in %.3g s, beyond the %.0f s maximum; "
                "clamped",
                c->gpu, c->expires_at - now, PFI_API_MAX_EXPIRES_S);
        c->expires_at = from + PFI_API_MAX_EXPIRES_S;
        if (isnan(c->set_at)) c->set_at = now;
        pfi_store_cap_put(a->store, c, NULL);
    }
}

int agent_caps_recover(agent *a, pfi_error *err)
{
    pfi_store_cap *caps;
    size_t n;
    int rc = pfi_store_caps(a->store, &caps, &n, err);
    if (rc != PFI_OK) return rc;
    pthread_mutex_lock(&a->cap_mu);
    double now = agent_cap_now();
    for (size_t i = 0; i < n; i++) {
        pfi_store_cap *c = &caps[i];
        if (c->gpu >= a->n_gpus) {
            pfi_log("recorded cap on GPU %u: no such GPU now; record dropped", c->gpu);
            pfi_store_cap_delete(a->store, c->gpu, NULL);
            continue;
        }
        if (a->o.read_only) {
            pfi_log("GPU %u: a cap of %.0f W recorded by an earlier run is left as it is "
                    "(--read-only); restart without --read-only to restore it",
                    c->gpu, c->watts);
            continue;
        }
        agent_gpu *x = &a->gpus[c->gpu];
        sanitize_record(a, c, now);
        pthread_mutex_lock(&a->mu);
        note_cap(x, c);
        pthread_mutex_unlock(&a->mu);
        pfi_gpu_limits after;
        pfi_error e;
        if (c->expires_at <= now) {
            restore_locked(a, c->gpu, c->prior_w, "expired while pfid was down", &after, &e);
        } else if (set_and_verify(a, c->gpu, c->watts, &after, &e) == PFI_OK) {
            pfi_log("GPU %u: cap %.1f W re-applied after restart, expires in %.0f s", c->gpu,
                    c->watts, c->expires_at - now);
            pthread_mutex_lock(&a->mu);
            x->limits = after;
            x->have_limits = 1;
            pthread_mutex_unlock(&a->mu);
        } else {
            /* A cap that cannot be enforced must not linger: go to the prior. */
            pfi_log("GPU %u: cannot re-apply the recorded cap (%s); restoring the prior limit",
                    c->gpu, e.msg);
            restore_locked(a, c->gpu, c->prior_w, "re-apply failed", &after, &e);
        }
    }
    pthread_mutex_unlock(&a->cap_mu);
    free(caps);
    return PFI_OK;
}

unsigned agent_caps_restore_all(agent *a)
{
    if (!a->store || !a->be || a->o.read_only) return 0;
    unsigned failed = 0;
    pthread_mutex_lock(&a->cap_mu);
    for (unsigned g = 0; g < a->n_gpus; g++) {
        pthread_mutex_lock(&a->mu);
        int capped = a->gpus[g].capped;
        double def = a->gpus[g].cap_prior_w, w = a->gpus[g].cap_w;
        pthread_mutex_unlock(&a->mu);
        if (!capped) continue;
        pfi_gpu_limits after;
        pfi_error err;
        if (restore_locked(a, g, def, "shutdown", &after, &err) != PFI_OK) {
            /* Said every time, whatever was logged before: this is the last
             * word of this pfid on the GPU. */
            pfi_log("GPU %u: restoring %.0f W at shutdown failed: %s; the cap of %.0f W "
                    "may still be on the device, its record stays in the store for the "
                    "next start",
                    g, def, err.msg, w);
            failed++;
        }
    }
    pthread_mutex_unlock(&a->cap_mu);
    return failed;
}
