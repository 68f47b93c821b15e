/* The node ceiling (issue 28; include/io/pfi/agent_api.h's PUT
 * /v1/node/limit): the sum of the GPUs' power held under a limit by pfid
 * itself, between two controller periods and while the controller or the
 * network is gone.
 *
 * Enforcement, after every sample: when the summed power passes ENFORCE_AT
 * of the ceiling, each GPU gets an even share of it (pfi_even_shares: the
 * ceiling split by GPU, each share within the GPU's constraints and never
 * above its cap or prior limit, what a GPU below the level cannot use going
 * to the others), and the device holds the lower of share and cap. The
 * shares come off when the power the GPUs would draw without them (those
 * at their share counted at their cap or prior) fits under RELEASE_AT of
 * the ceiling, so a job held at its share is not let go to climb over
 * again. The ceiling follows the rules of a cap: fenced by owner and epoch
 * (cap_fence.c), expiring on the cap clock, recorded before it acts in
 * --state-dir's node-limit.json (kept across a restart, dropped after a
 * reboot, as caps are), and each GPU's share in its state file before the
 * device is touched, so a crash leaves a record the next start undoes.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "pfi/even_share.h"
#include "pfi/json.h"

#define ENFORCE_AT 0.95 /* of the ceiling: shares go on above it */
#define RELEASE_AT 0.90 /* of the ceiling: and come off when the demand fits under it */
#define SHARE_TOL_W 0.5 /* a share that moves less is not set again */

static int node_path(const agent *a, char *buf, size_t len)
{
    if (!a->o.state_dir) return -1;
    int n = snprintf(buf, len, "%s/node-limit.json", a->o.state_dir);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Writes the node's record atomically (agent_record_save); PFI_OK
 * doing nothing without --state-dir. Caller holds cap_mu. */
static int node_save(agent *a, const agent_node *n, pfi_error *err)
{
    char path[4096];
    if (node_path(a, path, sizeof path) != 0) return PFI_OK;
    json_t *o = json_object();
    pfi_json_set(o, "max_epoch", json_integer(n->max_epoch));
    pfi_json_set(o, "max_epoch_owner", json_string(n->max_epoch_owner));
    if (n->set) {
        json_t *l = json_object();
        pfi_json_set(l, "watts", pfi_json_num(n->watts));
        pfi_json_set(l, "owner", json_string(n->owner));
        pfi_json_set(l, "epoch", json_integer(n->epoch));
        pfi_json_set(l, "set_at", pfi_json_num(n->set_at));
        pfi_json_set(l, "expires_at", pfi_json_num(n->expires_at));
        pfi_json_set(l, "boot_id", json_string(agent_boot_id()));
        pfi_json_set(l, "expires_mono", pfi_json_num(n->expires_m));
        pfi_json_set(o, "limit", l);
    } else {
        pfi_json_set(o, "limit", json_null());
    }
    int rc = agent_record_save(a, path, o, "the node limit's record", err);
    json_decref(o);
    return rc;
}

void agent_node_open(agent *a)
{
    agent_node *n = &a->node;
    n->power_w = NAN;
    if (a->o.node_name)
        snprintf(n->name, sizeof n->name, "%s", a->o.node_name);
    else if (gethostname(n->name, sizeof n->name - 1) != 0)
        snprintf(n->name, sizeof n->name, "unknown");
    char path[4096];
    if (node_path(a, path, sizeof path) != 0) return;
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        if (access(path, F_OK) == 0)
            pfi_log("%s:%d: unreadable node limit record (%s); ignored", path, je.line, je.text);
        return;
    }
    double me = agent_record_num(root, "max_epoch");
    n->max_epoch = isfinite(me) && me >= 0 ? (long long)me : 0;
    agent_record_str(root, "max_epoch_owner", n->max_epoch_owner, sizeof n->max_epoch_owner);
    json_t *l = json_object_get(root, "limit");
    if (json_is_object(l)) {
        char boot[40];
        agent_record_str(l, "boot_id", boot, sizeof boot);
        double w = agent_record_num(l, "watts"), exp_m = agent_record_num(l, "expires_mono");
        double left = exp_m - agent_cap_now();
        if (strcmp(boot, agent_boot_id()) != 0) {
            pfi_log("the node limit of %.0f W was recorded before a reboot; dropped", w);
        } else if (!(w > 0) || !(left > 0) || left > 7 * 86400.0) {
            pfi_log("the recorded node limit (%.0f W) has expired or is unusable; dropped", w);
        } else {
            n->set = 1;
            n->watts = w;
            n->expires_m = exp_m;
            n->set_at = agent_record_num(l, "set_at");
            n->expires_at = pfi_clock_wall() + left;
            agent_record_str(l, "owner", n->owner, sizeof n->owner);
            double e = agent_record_num(l, "epoch");
            n->epoch = isfinite(e) && e >= 0 ? (long long)e : 0;
            /* held before the first sample: a restart must not let the
             * GPUs climb over it for a tick */
            n->enforcing = 1;
            pfi_log("node limit of %.0f W recovered, expires in %.0f s", w, left);
        }
    }
    json_decref(root);
    if (!n->set && json_is_object(l)) node_save(a, n, NULL);
}

json_t *agent_node_json(agent *a)
{
    const agent_node *n = &a->node;
    json_t *o = json_object();
    pfi_json_set(o, "node", json_string(n->name));
    if (!n->set) {
        pfi_json_set(o, "limit", json_null());
        return o;
    }
    json_t *l = json_object();
    pfi_json_set(l, "watts", pfi_json_num(n->watts));
    pfi_json_set(l, "expires_in_s", pfi_json_num(fmax(0, n->expires_m - agent_cap_now())));
    pfi_json_set(l, "owner", json_string(n->owner));
    pfi_json_set(l, "epoch", json_integer(n->epoch));
    pfi_json_set(l, "enforcing", json_boolean(n->enforcing));
    pfi_json_set(l, "power_w", pfi_json_num(n->power_w));
    pfi_json_set(o, "limit", l);
    return o;
}

/* Whether by may change the node limit (caller holds cap_mu). */
static int fence(agent *a, const agent_caller *by, agent_holder *holder, pfi_error *err)
{
    agent_fence f;
    pthread_mutex_lock(&a->mu);
    const agent_node *n = &a->node;
    f.live = n->set && n->expires_m > agent_cap_now();
    snprintf(f.holder, sizeof f.holder, "%s", n->owner);
    f.holder_epoch = n->epoch;
    f.max_epoch = n->max_epoch;
    snprintf(f.max_owner, sizeof f.max_owner, "%s", n->max_epoch_owner);
    pthread_mutex_unlock(&a->mu);
    char msg[512];
    agent_holder h = {0};
    agent_refusal why;
    int rc = agent_fence_decide(&f, "the node", "limit", by, &h, &why, msg, sizeof msg);
    if (rc == PFI_OK) return PFI_OK;
    pthread_mutex_lock(&a->mu);
    a->cap_refused_total[why]++;
    a->gen++;
    pthread_mutex_unlock(&a->mu);
    pfi_log("%s", msg);
    if (holder) *holder = h;
    return pfi_error_set(err, PFI_ESTATE, NULL, 0, "%s", msg);
}

static void raise_epoch(agent_node *n, const agent_caller *by)
{
    if (by->epoch >= n->max_epoch) {
        n->max_epoch = by->epoch;
        snprintf(n->max_epoch_owner, sizeof n->max_epoch_owner, "%s", by->owner);
    }
}

/* Records nn, then makes it the live state (caller holds cap_mu). */
static int node_commit(agent *a, const agent_node *nn, pfi_error *err)
{
    int rc = node_save(a, nn, err);
    if (rc != PFI_OK) return rc;
    pthread_mutex_lock(&a->mu);
    a->node = *nn;
    a->gen++;
    pthread_cond_broadcast(&a->wake); /* the sampler re-plans its next expiry */
    pthread_mutex_unlock(&a->mu);
    return PFI_OK;
}

static void enforce(agent *a);

int agent_node_set(agent *a, double watts, double expires_s, const agent_caller *by, json_t **resp,
                   agent_holder *holder, pfi_error *err)
{
    static const agent_caller anon = {"", 0};
    if (!by) by = &anon;
    /* A ceiling pfid could not hold is refused, as a cap is (501). */
    if (strcmp(a->o.backend, "dcgm") == 0)
        return pfi_error_set(err, PFI_ENOTSUP, NULL, 0,
                             "the dcgm backend cannot set power limits: no node limit");
    pthread_mutex_lock(&a->cap_mu);
    int rc = fence(a, by, holder, err);
    if (rc == PFI_OK) {
        pthread_mutex_lock(&a->mu);
        agent_node nn = a->node;
        pthread_mutex_unlock(&a->mu);
        int renewal = nn.set && fabs(nn.watts - watts) < 0.05;
        nn.set = 1;
        nn.watts = watts;
        nn.set_at = pfi_clock_wall();
        nn.expires_at = nn.set_at + expires_s;
        nn.expires_m = agent_cap_now() + expires_s;
        snprintf(nn.owner, sizeof nn.owner, "%s", by->owner);
        nn.epoch = by->epoch;
        raise_epoch(&nn, by);
        rc = node_commit(a, &nn, err);
        if (rc == PFI_OK && !renewal)
            pfi_log("node limit %.1f W for %.0f s (owner %s, epoch %lld)", watts, expires_s,
                    *by->owner ? by->owner : "(anonymous)", by->epoch);
    }
    if (rc == PFI_OK) enforce(a); /* at once, on the last sample */
    pthread_mutex_unlock(&a->cap_mu);
    if (rc == PFI_OK && resp) {
        pthread_mutex_lock(&a->mu);
        *resp = agent_node_json(a);
        pthread_mutex_unlock(&a->mu);
    }
    return rc;
}

int agent_node_clear(agent *a, const agent_caller *by, json_t **resp, agent_holder *holder,
                     pfi_error *err)
{
    static const agent_caller anon = {"", 0};
    if (!by) by = &anon;
    pthread_mutex_lock(&a->cap_mu);
    int rc = fence(a, by, holder, err);
    if (rc == PFI_OK) {
        pthread_mutex_lock(&a->mu);
        agent_node nn = a->node;
        pthread_mutex_unlock(&a->mu);
        int was = nn.set;
        nn.set = 0;
        raise_epoch(&nn, by);
        rc = node_commit(a, &nn, err);
        if (rc == PFI_OK && was) pfi_log("node limit lifted (DELETE request)");
    }
    if (rc == PFI_OK) enforce(a);
    pthread_mutex_unlock(&a->cap_mu);
    if (rc == PFI_OK && resp) {
        pthread_mutex_lock(&a->mu);
        *resp = agent_node_json(a);
        pthread_mutex_unlock(&a->mu);
    }
    return rc;
}

/* One GPU as enforcement sees it (copied under mu). */
typedef struct {
    int read;       /* its power was read at the last sample */
    double power_w; /* then */
    double ub, lo;  /* a share's bounds: its cap or prior, and min_w */
    double share;   /* on it now, NaN none */
    double target;  /* the limit the device should hold with it, NaN: the prior */
    int at_target;  /* the device reads target */
} gpu_view;

/* Puts share w (NaN: none) on gpu: the record first, then the device at the
 * lower of share and cap (or prior). Caller holds cap_mu. */
static void apply_share(agent *a, unsigned gpu, double w)
{
    agent_gpu *x = &a->gpus[gpu];
    pthread_mutex_lock(&a->mu);
    int capped = x->capped;
    double prior = agent_gpu_prior_w(x);
    double base = capped ? x->cap_w : prior;
    double had = x->node_w;
    agent_state ns = x->st;
    pthread_mutex_unlock(&a->mu);
    if (!(prior > 0)) return; /* no limit in force known: nothing safe to return to */
    double dev = isfinite(w) ? fmin(base, w) : base;
    /* A share on an uncapped GPU lowers it below its prior: record the prior
     * and the share before the device moves (a crash then finds both). */
    if (isfinite(w)) {
        if (!capped) ns.prior_w = prior;
        ns.node_w = w;
        if (agent_state_save(a, gpu, &ns, NULL) == PFI_OK) {
            pthread_mutex_lock(&a->mu);
            x->st = ns;
            pthread_mutex_unlock(&a->mu);
        }
    }
    pfi_gpu_limits after;
    pfi_error e;
    int rc = agent_set_verify(a, gpu, dev, &after, &e);
    pthread_mutex_lock(&a->mu);
    int failed_before = x->node_failed;
    if (rc == PFI_OK) {
        if (!isfinite(had) && !capped) x->node_prior_w = prior;
        x->node_w = w;
        x->limits = after;
        x->have_limits = 1;
        x->node_failed = 0;
    } else {
        x->node_failed = 1;
        if (isfinite(w) && !isfinite(had)) {
            /* not on the device: the GPU holds no share */
            x->node_prior_w = prior;
            x->node_w = NAN;
        }
    }
    a->gen++;
    pthread_mutex_unlock(&a->mu);
    if (rc != PFI_OK) {
        if (!failed_before)
            pfi_log("GPU %u: setting the node ceiling's %.0f W failed: %s (retried every sample)",
                    gpu, dev, e.msg);
        return;
    }
    if (!isfinite(w)) {
        ns.node_w = NAN;
        if (agent_state_save(a, gpu, &ns, NULL) == PFI_OK) {
            pthread_mutex_lock(&a->mu);
            x->st = ns;
            pthread_mutex_unlock(&a->mu);
        }
    }
}

/* The shares the ceiling calls for now, set where they moved or where the
 * device lost them. Caller holds cap_mu. */
static void enforce(agent *a)
{
    unsigned n = a->n_gpus;
    gpu_view *v = calloc(n ? n : 1, sizeof *v);
    double *share = calloc(n ? n : 1, sizeof *share);
    if (!v || !share) {
        free(v);
        free(share);
        return;
    }
    pthread_mutex_lock(&a->mu);
    agent_node *nd = &a->node;
    if (nd->set && nd->expires_m <= agent_cap_now()) {
        pfi_log("node limit of %.0f W expired", nd->watts);
        agent_node nn = *nd;
        nn.set = 0;
        pthread_mutex_unlock(&a->mu);
        node_commit(a, &nn, NULL);
        pthread_mutex_lock(&a->mu);
    }
    int set = nd->set, was = nd->enforcing;
    double watts = nd->watts, power = 0, demand = 0;
    unsigned n_read = 0;
    for (unsigned g = 0; g < n; g++) {
        agent_gpu *x = &a->gpus[g];
        v[g].read = x->sample_ok && pfi_gpu_sample_has(&x->last, PFI_GF_POWER);
        v[g].power_w = v[g].read ? x->last.v[PFI_GF_POWER] : NAN;
        double prior = agent_gpu_prior_w(x);
        v[g].ub = x->capped ? fmin(x->cap_w, prior) : prior;
        v[g].lo = x->have_limits ? x->limits.min_w : 0;
        if (x->have_limits && x->limits.max_w > 0) v[g].ub = fmin(v[g].ub, x->limits.max_w);
        v[g].share = x->node_w;
        v[g].target = agent_gpu_target_w(x);
        v[g].at_target =
            !isfinite(v[g].target) || (x->have_limits && agent_at_w(&x->limits, v[g].target));
        if (v[g].read) {
            power += v[g].power_w;
            n_read++;
            /* held at its share: it would draw up to its cap or prior */
            int held = isfinite(x->node_w) && x->node_w < v[g].ub - SHARE_TOL_W &&
                       v[g].power_w >= 0.95 * x->node_w;
            demand += held ? v[g].ub : v[g].power_w;
        }
    }
    nd->power_w = n_read ? power : NAN;
    int on = 0;
    if (set && n_read) {
        double ub_sum = 0;
        for (unsigned g = 0; g < n; g++)
            ub_sum += isfinite(v[g].ub) ? v[g].ub : 0;
        /* GPUs that cannot reach the ceiling together need no share */
        if (ub_sum > watts) on = was ? demand > RELEASE_AT * watts : power > ENFORCE_AT * watts;
    } else if (set) {
        on = was; /* nothing read: as it was (a recovered limit starts held) */
    }
    if (on != was) {
        nd->enforcing = on;
        a->gen++;
    }
    pthread_mutex_unlock(&a->mu);
    if (on != was) {
        if (on)
            pfi_log("node power %.0f W against the node limit of %.0f W: capping the GPUs evenly",
                    power, watts);
        else
            pfi_log("node power fits under the node limit%s: the GPUs' shares are lifted",
                    set ? "" : " (none now)");
    }
    if (on) {
        double *lo = malloc((n ? n : 1) * sizeof *lo), *hi = malloc((n ? n : 1) * sizeof *hi);
        for (unsigned g = 0; lo && hi && g < n; g++) {
            lo[g] = fmin(v[g].lo, v[g].ub);
            hi[g] = v[g].ub;
        }
        if (!lo || !hi || pfi_even_shares(lo, hi, n, watts, share) != PFI_OK) on = 0;
        free(lo);
        free(hi);
    }
    for (unsigned g = 0; g < n; g++) {
        double w = on && isfinite(v[g].ub) ? share[g] : NAN;
        int moved = isfinite(w) != isfinite(v[g].share) ||
                    (isfinite(w) && fabs(w - v[g].share) > SHARE_TOL_W);
        if (moved || (isfinite(w) && !v[g].at_target)) apply_share(a, g, w);
    }
    free(v);
    free(share);
}

double agent_node_expiry(agent *a)
{
    pthread_mutex_lock(&a->mu);
    double t = a->node.set && !a->o.read_only ? a->node.expires_m : INFINITY;
    pthread_mutex_unlock(&a->mu);
    return t;
}

void agent_node_tick(agent *a)
{
    if (a->o.read_only) return;
    pthread_mutex_lock(&a->cap_mu);
    enforce(a);
    pthread_mutex_unlock(&a->cap_mu);
}

void agent_node_release_all(agent *a)
{
    if (!a->be || a->o.read_only) return;
    pthread_mutex_lock(&a->cap_mu);
    for (unsigned g = 0; g < a->n_gpus; g++) {
        pthread_mutex_lock(&a->mu);
        int has = isfinite(a->gpus[g].node_w);
        pthread_mutex_unlock(&a->mu);
        if (has) apply_share(a, g, NAN);
    }
    pthread_mutex_lock(&a->mu);
    a->node.enforcing = 0;
    pthread_mutex_unlock(&a->mu);
    pthread_mutex_unlock(&a->cap_mu);
}
