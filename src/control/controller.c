/* pfi control's service: start-up (store, targets, VEN, agents, server),
 * the period loop, shut-down (include/control/pfi/controller.h). */
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_ha.h"
#include "ctl_internal.h"
#include "ctl_spread.h"
#include "pfi/lockfile.h"
#include "pfi/target_io.h"

/* One controller per store: two on one store flap each other's caps every
 * period. The lock is DB.lock (SQLite's own file cannot hold a PID), and
 * the kernel drops it however the holder dies. */
static int lock_store(ctl *c, const char *db, pfi_error *err)
{
    char path[4200];
    if ((size_t)snprintf(path, sizeof path, "%s.lock", db) >= sizeof path)
        return pfi_error_set(err, PFI_EINVAL, db, 0, "the store's path is too long");
    long pid = 0;
    int rc = pfi_lockfile_take(path, PFI_LOCKFILE_PRIVATE, &c->lock_fd, &pid, err);
    if (rc == PFI_ESTATE && pid > 0)
        return pfi_error_set(err, PFI_ESTATE, db, 0,
                             "the store is in use by another pfi control (pid %ld); one "
                             "controller per store",
                             pid);
    if (rc == PFI_ESTATE)
        return pfi_error_set(
            err, PFI_ESTATE, db, 0,
            "the store is in use by another pfi control; one controller per store");
    return rc;
}

static int owner_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > PFI_CTL_OWNER_MAX) return 0;
    for (; *s; s++)
        if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') || ('0' <= *s && *s <= '9') ||
              strchr("._:@-", *s)))
            return 0;
    return 1;
}

/* The id every cap call carries (Pfi-Owner): --owner, else the store's,
 * else a new one, kept in the store so a restart is the same owner. */
static int take_owner(ctl *c, const char *given, pfi_error *err)
{
    if (given) {
        if (!owner_ok(given))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "--owner: 1-%d characters of A-Z a-z 0-9 . _ : @ -, not '%.80s'",
                                 PFI_CTL_OWNER_MAX, given);
        snprintf(c->owner, sizeof c->owner, "%s", given);
        return pfi_ctl_store_put_meta(c->store, "owner", c->owner, err);
    }
    if (pfi_ctl_store_get_meta(c->store, "owner", c->owner, sizeof c->owner, NULL) == PFI_OK &&
        owner_ok(c->owner))
        return PFI_OK;
    unsigned char r[8] = {0};
    FILE *f = fopen("/dev/urandom", "rb");
    size_t got = f ? fread(r, 1, sizeof r, f) : 0;
    if (f) fclose(f);
    if (got != sizeof r)
        return pfi_error_set(err, PFI_EIO, "/dev/urandom", 0, "cannot make an owner id");
    int n = snprintf(c->owner, sizeof c->owner, "ctl-");
    for (size_t i = 0; i < sizeof r; i++)
        n += snprintf(c->owner + n, sizeof c->owner - (size_t)n, "%02x", r[i]);
    return pfi_ctl_store_put_meta(c->store, "owner", c->owner, err);
}

/* Resumes from the store: targets (API and the last OpenADR list), caps
 * held, learned points and uncapped figures, budget and trim. */
static int resume(ctl *c, pfi_error *err)
{
    pfi_target *ts;
    size_t n;
    int rc = pfi_ctl_store_load_targets(c->store, &ts, &n, err);
    if (rc != PFI_OK) return rc;
    for (size_t i = 0; i < n; i++) {
        if (ctl_topo_domain_of(&c->topo, ts[i].domain) == PFI_TOPO_NONE)
            pfi_log("target %s: domain %s is not in the topology: it limits nothing", ts[i].id,
                    ts[i].domain);
        if (ts[i].source != PFI_TARGET_SCHEDULE) ctl_targets_add(c, &ts[i], NULL);
    }
    free(ts);
    pfi_ctl_cap_rec *caps;
    if ((rc = pfi_ctl_store_load_caps(c->store, &caps, &n, err)) != PFI_OK) return rc;
    for (size_t i = 0; i < n; i++) {
        /* Read from Prometheus, the agents are those its answers name: one
         * holding a cap rejoins under its URL (its caps are renewed, not lost). */
        size_t a = pfi_agents_find(c->agents, caps[i].agent);
        if (a == SIZE_MAX && c->o.cluster_from_prometheus)
            pfi_agents_add(c->agents, caps[i].agent, &a, NULL);
        if (a == SIZE_MAX) continue; /* an agent no longer listed */
        if (ctl_held_add(&c->caps, a, caps[i].gpu, caps[i].watts, caps[i].expires_at) != PFI_OK) {
            free(caps);
            return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory resuming the caps");
        }
    }
    free(caps);
    pfi_ctl_obs_rec *ob;
    if ((rc = pfi_ctl_store_load_obs(c->store, &ob, &n, err)) != PFI_OK) return rc;
    ctl_jobs *J = &c->jobs;
    if (!(J->obs = calloc(n + 1, sizeof *J->obs))) {
        free(ob);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory resuming learned points");
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(J->obs[i].job, sizeof J->obs[i].job, "%s", ob[i].job);
        J->obs[i].var = ob[i].tput_var; /* NaN unknown: given to learn as 0 */
        J->obs[i].o =
            (pfi_plan_obs){ob[i].cap_w, ob[i].power_w, ob[i].tput, ctl_spread_sd(J->obs[i].var)};
        ctl_index_put(&J->obs_ix, ctl_obs_key(ob[i].job, ob[i].cap_w), i);
    }
    J->n_obs = J->cap_obs = n;
    free(ob);
    pfi_ctl_job_rec *jr;
    if ((rc = pfi_ctl_store_load_jobs(c->store, &jr, &n, err)) != PFI_OK) return rc;
    if (!(J->known = calloc(n + 1, sizeof *J->known))) {
        free(jr);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory resuming the jobs");
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(J->known[i].job, sizeof J->known[i].job, "%s", jr[i].job);
        snprintf(J->known[i].job_class, sizeof J->known[i].job_class, "%s", jr[i].job_class);
        J->known[i].pmax_w = jr[i].pmax_w;
        J->known[i].tmax = jr[i].tmax;
        ctl_index_put(&J->known_ix, ctl_hash_str(jr[i].job), i);
    }
    J->n_known = J->cap_known = n;
    free(jr);
    double v;
    if (pfi_ctl_store_get_state(c->store, "budget_w", &v, NULL) == PFI_OK) c->budget_w = v;
    if (pfi_ctl_store_get_state(c->store, "trim_w", &v, NULL) == PFI_OK && isfinite(v))
        c->trim.w = v;
    if (c->caps.n)
        pfi_log("resumed: %zu cap(s) held, %zu target(s), %zu learned point(s)", c->caps.n,
                c->n_targets, J->n_obs);
    return PFI_OK;
}

/* The power tree and the agents: with leaves of agents, the file's URLs
 * join --agents (every one of which must be in a leaf). The root's
 * other_load_w and other_load_query are the site's non-GPU load where
 * --other-load-w and --site-meter are not given. */
static int topology(ctl *c, pfi_error *err)
{
    const pfi_ctl_opts *o = &c->o;
    char **extra = NULL;
    size_t n_extra = 0;
    int rc = ctl_topo_init(&c->topo, o->topology, (const char *const *)o->agents, o->n_agents,
                           &extra, &n_extra, err);
    char **all = NULL;
    size_t n = o->n_agents + n_extra;
    if (rc == PFI_OK && !(all = calloc(n + 1, sizeof *all)))
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (size_t i = 0; rc == PFI_OK && i < n; i++)
        all[i] = i < o->n_agents ? o->agents[i] : extra[i - o->n_agents];
    if (rc == PFI_OK)
        rc = pfi_agents_create((const char *const *)all, n, o->agent_token, o->agent_timeout_s,
                               &c->agents, err);
    if (rc == PFI_OK) rc = ctl_topo_agents(&c->topo, (const char *const *)all, n, err);
    if (rc == PFI_OK && n_extra)
        pfi_log("topology %s: %zu agent(s) from its leaves", o->topology, n_extra);
    free(all);
    pfi_agents_free_urls(extra, n_extra);
    if (rc != PFI_OK || !c->topo.t) return rc;
    const pfi_topo_domain *root = pfi_topo_domain_at(c->topo.t, 0);
    if (c->o.other_load_w == 0 && root->other_load_w > 0)
        c->o.other_load_w = c->other_w = root->other_load_w;
    if (!c->o.site_meter && root->other_load_query) {
        if (!c->o.prometheus_url)
            return pfi_error_set(err, PFI_EINVAL, o->topology, 0,
                                 "%s's other_load_query needs --prometheus URL", root->name);
        c->o.site_meter = root->other_load_query;
    }
    for (size_t d = 1; d < c->topo.n; d++)
        if (pfi_topo_domain_at(c->topo.t, d)->other_load_query && !c->o.prometheus_url)
            return pfi_error_set(err, PFI_EINVAL, o->topology, 0,
                                 "%s's other_load_query needs --prometheus URL",
                                 pfi_topo_domain_at(c->topo.t, d)->name);
    pfi_log("topology %s: %zu domain(s) under %s", o->topology, c->topo.n, root->name);
    return PFI_OK;
}

static void teardown(ctl *c)
{
    ctl_server_stop(c);
    ctl_ha_stop(c);
    pfi_ven_destroy(c->ven);
    pfi_agents_destroy(c->agents);
    pfi_plan_destroy(c->plan);
    pfi_ctl_store_close(c->store);
    pfi_lockfile_release(c->lock_fd);
    ctl_jobs_free(&c->jobs);
    ctl_caps_free(&c->caps);
    ctl_topo_free(&c->topo);
    free(c->targets);
    pfi_oadr_events_free(c->events, c->n_events);
    free(c->accs);
    json_decref(c->status);
    json_decref(c->flex);
    free(c->metrics);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->wake);
}

int pfi_ctl_run(const pfi_ctl_opts *o, volatile sig_atomic_t *stop, pfi_error *err)
{
    ctl c;
    pfi_log_init("pfi control");
    memset(&c, 0, sizeof c);
    c.o = *o;
    c.stop = stop;
    c.lock_fd = -1;
    c.budget_w = c.prev_budget_w = c.last_t = c.period_s = NAN;
    c.prev_up = SIZE_MAX;
    c.other_w = o->other_load_w;
    c.other_src = "constant";
    pthread_mutex_init(&c.mu, NULL);
    /* the period's wait on the monotonic clock: a wall clock stepped back
     * mid-wait would hold it the step's length */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c.wake, &ca);
    pthread_condattr_destroy(&ca);
    int rc = lock_store(&c, o->db, err);
    if (rc == PFI_OK) rc = pfi_ctl_store_open(o->db, &c.store, err);
    if (rc == PFI_OK) rc = take_owner(&c, o->owner, err);
    if (rc == PFI_OK) rc = pfi_plan_create(&c.plan);
    if (rc == PFI_OK && o->confidence > 0) pfi_plan_set_confidence(c.plan, o->confidence);
    if (rc == PFI_OK && o->policy == PFI_PLAN_LEARN)
        rc = pfi_plan_use_learn(c.plan, o->learn_rounds, 2, err); /* caps go up a period late */
    if (rc == PFI_OK) rc = topology(&c, err);
    if (rc == PFI_OK) rc = pfi_agents_set_owner(c.agents, c.owner, 0, err);
    if (rc == PFI_OK) rc = resume(&c, err);
    if (rc == PFI_OK && o->schedule) {
        pfi_target *ts;
        size_t n;
        rc = pfi_schedule_read(o->schedule, &ts, &n, err);
        for (size_t i = 0; rc == PFI_OK && i < n; i++)
            if (ctl_topo_domain_of(&c.topo, ts[i].domain) == PFI_TOPO_NONE)
                rc = pfi_error_set(err, PFI_EINVAL, o->schedule, 0,
                                   "target %s: no domain %s in the topology", ts[i].id,
                                   ts[i].domain);
        if (rc != PFI_OK) free(ts);
        if (rc == PFI_OK) {
            ctl_targets_replace(&c, PFI_TARGET_SCHEDULE, ts, n);
            pfi_ctl_store_replace_source(c.store, PFI_TARGET_SCHEDULE, ts, n, NULL);
            pfi_log("schedule %s: %zu target(s)", o->schedule, n);
            free(ts);
        }
    }
    if (rc == PFI_OK && o->vtn_url) {
        pfi_ven_opts vo = {.url = o->vtn_url,
                           .program = o->vtn_program,
                           .client_id = o->vtn_client_id,
                           .client_secret = o->vtn_client_secret,
                           .timeout_s = 10};
        rc = pfi_ven_create(&vo, &c.ven, err);
        if (rc == PFI_OK) pfi_ven_get_health(c.ven, &c.vtn_health);
    }
    if (rc == PFI_OK) rc = ctl_ha_start(&c, err);
    if (rc == PFI_OK) rc = ctl_server_start(&c, err);
    if (rc != PFI_OK) {
        teardown(&c);
        return rc;
    }
    if (o->cluster_from_prometheus)
        pfi_log("the cluster from Prometheus %s, policy %s, period %.3g s", o->prometheus_url,
                pfi_plan_policy_name(o->policy), o->period_s);
    else
        pfi_log("%zu agent(s), policy %s, period %.3g s", o->n_agents,
                pfi_plan_policy_name(o->policy), o->period_s);
    if (!c.ha) pfi_log("owner %s, epoch 0", c.owner);
    while (!*stop) {
        double t0 = pfi_clock_wall();
        ctl_ha_before_period(&c);
        ctl_period(&c);
        ctl_ha_after_period(&c);
        /* Sleep to the next period, or until a target changes. */
        double next = t0 + o->period_s;
        pthread_mutex_lock(&c.mu);
        while (!*stop && !c.woken) {
            double now = pfi_clock_wall();
            if (now >= next) break;
            double w = fmin(next - now, 0.2); /* a signal sets *stop: look every 0.2 s */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            long long ns = (long long)ts.tv_nsec + (long long)(w * 1e9);
            ts.tv_sec += (time_t)(ns / 1000000000LL);
            ts.tv_nsec = (long)(ns % 1000000000LL);
            pthread_cond_timedwait(&c.wake, &c.mu, &ts);
        }
        c.woken = 0;
        pthread_mutex_unlock(&c.mu);
    }
    pfi_log("stopping; caps stay until they expire (at most the target's end plus %.0f s)",
            o->cap_margin_s);
    teardown(&c);
    return PFI_OK;
}
