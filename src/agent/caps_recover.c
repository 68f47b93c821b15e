/* Caps left by an earlier pfid, at start (agent_caps_recover), and every
 * cap at shutdown (agent_caps_restore_all).
 *
 * Two records may describe a GPU's cap: its state file (cap_state.c, written
 * first) and the store's caps row. The state file, when there is one, is
 * the one that counts: a store that lost its -wal, was emptied or moved
 * aside must not make pfid forget a crashed instance's cap, and a store row
 * whose release the state file recorded (the store was full) must not
 * re-apply a released cap. Without a state file (no --state-dir, or the
 * first start with one) the store's row is used, its expiry read on the
 * wall clock.
 *
 * What decides an expiry across a restart is the boot clock and the boot id
 * (/proc/sys/kernel/random/boot_id): in the same boot the recorded expiry
 * holds whatever the wall clock did; after a reboot a recovered cap is
 * restored (the device lost it anyway, and its controller renews).
 *
 * A GPU found below its recorded prior with no cap record is what a lost
 * record leaves behind: pfid puts the prior back (logged), or when it
 * cannot, reports the GPU as externally limited; the lower limit never
 * becomes the next cap's prior.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "pfi/agent_api.h"

/* A record is trusted only as far as it is usable (store.h reads unusable
 * values as NaN): a cap without watts or expiry is restored now, a prior
 * limit that is missing becomes the device's default, and an expiry beyond
 * the API's one-week maximum (from when it was set, or now if that is
 * later than now) is clamped and written back. *remaining is in seconds. */
static int sanitize(agent *a, unsigned gpu, agent_cap *c, double *remaining, double now)
{
    const agent_gpu *x = &a->gpus[gpu];
    int changed = 0;
    if (!(c->prior_w > 0)) {
        double def = x->have_limits ? x->limits.default_w : NAN;
        pfi_log("GPU %u: the recorded prior limit is unusable; the device default %.0f W is "
                "restored instead",
                gpu, def);
        c->prior_w = def;
        changed = 1;
    }
    if (!(c->watts > 0) || isnan(*remaining)) {
        pfi_log("GPU %u: the cap record is unusable (watts or expiry); restoring", gpu);
        *remaining = 0;
        if (!(c->watts > 0)) c->watts = c->prior_w;
        changed = 1;
    }
    double elapsed = isnan(c->set_at) || c->set_at > now ? 0 : now - c->set_at;
    if (*remaining > PFI_API_MAX_EXPIRES_S - elapsed) {
        pfi_log("GPU %u: the recorded cap expires in %.3g s, beyond the %.0f s maximum; "
                "clamped",
                gpu, *remaining, PFI_API_MAX_EXPIRES_S);
        *remaining = PFI_API_MAX_EXPIRES_S - elapsed;
        if (isnan(c->set_at)) c->set_at = now;
        changed = 1;
    }
    return changed;
}

/* The cap to act on for gpu: from its state file, else from the store's row
 * (NULL when none); 0 when there is none. */
static int pick_record(agent *a, unsigned gpu, const pfi_store_cap *row, agent_cap *c,
                       double *remaining)
{
    agent_gpu *x = &a->gpus[gpu];
    const agent_state *st = &x->st;
    double now = pfi_clock_wall();
    memset(c, 0, sizeof *c);
    if (st->present) {
        if (!st->capped) {
            if (row) {
                pfi_log("GPU %u: the store's cap record (%.0f W) is stale: its release is in the "
                        "state file; dropped, not re-applied",
                        gpu, row->watts);
                pfi_error e;
                if (pfi_store_cap_delete(a->store, gpu, &e) != PFI_OK) {
                    x->release_pending = 1;
                    snprintf(x->release_error, sizeof x->release_error, "%s", e.msg);
                }
            }
            return 0;
        }
        *c = (agent_cap){st->watts, st->set_at, st->expires_at, NAN, st->prior_w, "", st->epoch};
        snprintf(c->owner, sizeof c->owner, "%s", st->owner);
        if (strcmp(st->boot_id, agent_boot_id()) != 0) {
            pfi_log("GPU %u: the cap of %.0f W was recorded before a reboot; restoring the "
                    "prior limit",
                    gpu, st->watts);
            *remaining = 0;
        } else {
            *remaining = st->expires_mono - agent_cap_now();
            if (isnan(*remaining)) *remaining = NAN;
        }
        if (!row)
            pfi_log("GPU %u: the store has no record of the cap of %.0f W (lost or replaced?); "
                    "recovered from the state file",
                    gpu, st->watts);
        return 1;
    }
    if (!row) return 0;
    *c = (agent_cap){row->watts, row->set_at, row->expires_at, NAN, row->prior_w, "", 0};
    *remaining = row->expires_at - now;
    return 1;
}

/* No cap record: a GPU below its recorded prior gets the prior back (a node
 * share left by a crash, share_w, is expected there and not a lost record). */
static void check_prior(agent *a, unsigned gpu, double share_w)
{
    agent_gpu *x = &a->gpus[gpu];
    double prior = x->st.prior_w;
    pfi_gpu_limits lim;
    if (!(prior > 0) || pfi_backend_limits(a->be, gpu, &lim) != PFI_OK) return;
    double w = agent_in_force_w(&lim);
    if (!(w < prior - 1.0)) return;
    pfi_gpu_limits after;
    pfi_error e;
    if (agent_set_verify(a, gpu, prior, &after, &e) == PFI_OK) {
        if (isfinite(share_w))
            pfi_log("GPU %u: the node ceiling's share of %.0f W was left on it by the last run; "
                    "prior limit %.0f W restored (a live ceiling holds again from the first "
                    "sample)",
                    gpu, share_w, prior);
        else
            pfi_log("GPU %u: found at %.0f W, below its recorded prior limit %.0f W, with no "
                    "cap record (a crashed pfid's cap whose record was lost?); prior limit "
                    "restored",
                    gpu, w, prior);
        pthread_mutex_lock(&a->mu);
        x->limits = after;
        x->have_limits = 1;
        pthread_mutex_unlock(&a->mu);
        return;
    }
    pfi_log("GPU %u: found at %.0f W, below its recorded prior limit %.0f W, with no cap "
            "record, and the prior cannot be restored (%s); reported as externally limited, "
            "%.0f W stays its prior",
            gpu, w, prior, e.msg, prior);
    pthread_mutex_lock(&a->mu);
    x->below_prior = 1;
    a->gen++;
    pthread_mutex_unlock(&a->mu);
}

static void recover_one(agent *a, unsigned gpu, const pfi_store_cap *row)
{
    agent_gpu *x = &a->gpus[gpu];
    agent_cap c;
    double remaining = NAN, now = pfi_clock_wall(), now_m = agent_cap_now();
    if (!pick_record(a, gpu, row, &c, &remaining)) {
        check_prior(a, gpu, x->st.node_w);
        return;
    }
    /* a cap known only from the store's row: its owner was not kept there */
    int owner_unknown = !(x->st.present && x->st.capped);
    int changed = sanitize(a, gpu, &c, &remaining, now);
    if (remaining < 0) remaining = 0;
    c.expires_m = now_m + remaining;
    c.expires_at = now + remaining;
    /* Written back when it changed or came from one record only, so both
     * say the same from here on. */
    if (changed || !x->st.present || !x->st.capped || !row) {
        agent_caller by = {"", c.epoch};
        snprintf(by.owner, sizeof by.owner, "%s", c.owner);
        agent_cap_record(a, gpu, &c, &by, NULL);
    }
    pthread_mutex_lock(&a->mu);
    agent_cap_note(x, &c);
    x->cap_owner_unknown = owner_unknown;
    pthread_mutex_unlock(&a->mu);
    pfi_gpu_limits after;
    pfi_error e;
    if (remaining <= 0) {
        agent_cap_restore(a, gpu, c.prior_w, "expired while pfid was down", NULL, &after, &e);
    } else if (agent_set_verify(a, gpu, c.watts, &after, &e) == PFI_OK) {
        pfi_log("GPU %u: cap %.1f W re-applied after restart, expires in %.0f s", gpu, c.watts,
                remaining);
        pthread_mutex_lock(&a->mu);
        x->limits = after;
        x->have_limits = 1;
        pthread_mutex_unlock(&a->mu);
    } else {
        /* A cap that cannot be enforced must not linger: go to the prior. */
        pfi_log("GPU %u: cannot re-apply the recorded cap (%s); restoring the prior limit", gpu,
                e.msg);
        agent_cap_restore(a, gpu, c.prior_w, "re-apply failed", NULL, &after, &e);
    }
}

int agent_caps_recover(agent *a, pfi_error *err)
{
    pfi_store_cap *caps;
    size_t n;
    int rc = pfi_store_caps(a->store, &caps, &n, err);
    if (rc != PFI_OK) return rc;
    pthread_mutex_lock(&a->cap_mu);
    const pfi_store_cap **row = calloc(a->n_gpus ? a->n_gpus : 1, sizeof *row);
    if (!row) {
        pthread_mutex_unlock(&a->cap_mu);
        free(caps);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        if (caps[i].gpu >= a->n_gpus) {
            pfi_log("recorded cap on GPU %u: no such GPU now; record dropped", caps[i].gpu);
            if (!a->o.read_only) pfi_store_cap_delete(a->store, caps[i].gpu, NULL);
            continue;
        }
        row[caps[i].gpu] = &caps[i];
    }
    for (unsigned g = 0; g < a->n_gpus; g++) {
        if (a->o.read_only) {
            if (row[g])
                pfi_log("GPU %u: a cap of %.0f W recorded by an earlier run is left as it is "
                        "(--read-only); restart without --read-only to restore it",
                        g, row[g]->watts);
            continue;
        }
        recover_one(a, g, row[g]);
        /* A node share the last run left is undone by now (the cap, or the
         * prior, is back): its record goes. */
        if (isfinite(a->gpus[g].st.node_w)) {
            agent_state ns = a->gpus[g].st;
            ns.node_w = NAN;
            if (agent_state_save(a, g, &ns, NULL) == PFI_OK) a->gpus[g].st = ns;
        }
    }
    pthread_mutex_unlock(&a->cap_mu);
    free(row);
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
        int capped = a->gpus[g].capped, pending = a->gpus[g].release_pending;
        double def = a->gpus[g].cap_prior_w, w = a->gpus[g].cap_w;
        pthread_mutex_unlock(&a->mu);
        if (!capped && !pending) continue;
        pfi_gpu_limits after;
        pfi_error err;
        pfi_error_clear(&err);
        int rc = capped ? agent_cap_restore(a, g, def, "shutdown", NULL, &after, &err)
                        : agent_cap_clear_record(a, g, &err);
        if (rc == PFI_OK) continue;
        pthread_mutex_lock(&a->mu);
        int back = !a->gpus[g].capped;
        pthread_mutex_unlock(&a->mu);
        /* Said every time, whatever was logged before: this is the last
         * word of this pfid on the GPU. */
        if (back)
            pfi_log("GPU %u: at shutdown the prior %.0f W is back but the release of the cap "
                    "of %.0f W is not recorded: %s",
                    g, def, w, err.msg);
        else
            pfi_log("GPU %u: restoring %.0f W at shutdown failed: %s; the cap of %.0f W "
                    "may still be on the device, its record stays in the store for the "
                    "next start",
                    g, def, err.msg, w);
        failed++;
    }
    pthread_mutex_unlock(&a->cap_mu);
    return failed;
}
