/* The HA shared state (src/control/ctl_ha.h): the values under /pfi/SITE/,
 * parsed strictly, applied to the loop's state, and written back by the
 * leader only where they changed.
 *
 *   targets     {"targets":[target...]}   the API's and OpenADR's (a schedule
 *                                          file is each controller's own)
 *   caps/URL    {"caps":[{"agent","gpu","watts","expires_at"}]}  an agent's, by
 *               its URL (one key per agent: a period writes only the agents
 *               whose caps changed, and 100,000 GPUs fit etcd's 1.5 MiB a
 *               request)
 *   state       {"budget_w","trim_w"}
 *   jobs/ID     {"pmax_w","tmax","class","points":[[cap_w,power_w,tput,var]...]}
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_ha.h"
#include "ctl_internal.h"
#include "pfi/json.h"
#include "pfi/target_io.h"

#define MAX_PUTS_PER_TXN 100 /* etcd's --max-txn-ops defaults to 128 */

static json_t *load(const char *s, size_t len, const char *what, pfi_error *err)
{
    char lead[64];
    snprintf(lead, sizeof lead, "etcd key %s", what);
    json_t *r;
    return pfi_json_load_object(s, len, lead, &r, err) == PFI_OK ? r : NULL;
}

/* A number, or NaN for null. */
static int num_or_null(const json_t *x, double *v)
{
    if (json_is_null(x)) {
        *v = NAN;
        return 1;
    }
    if (!json_is_number(x)) return 0;
    *v = json_number_value(x);
    return 1;
}

/* {"KEY": [...]} (targets, caps): the object in *r (the caller's to
 * release) and its array in *a, or NULL having said why. */
static json_t *load_list(const char *s, size_t len, const char *key, json_t **a, pfi_error *err)
{
    json_t *r = load(s, len, key, err);
    if (!r) return NULL;
    json_error_t je;
    if (json_unpack_ex(r, &je, JSON_STRICT, "{s:o}", key, a) || !json_is_array(*a)) {
        json_decref(r);
        pfi_error_set(err, PFI_EPARSE, NULL, 0, "etcd key %s: {\"%s\": [...]} expected", key, key);
        return NULL;
    }
    return r;
}

int ctl_ha_parse_targets(const char *s, size_t len, pfi_target **ts, size_t *n, pfi_error *err)
{
    *ts = NULL;
    *n = 0;
    json_t *a = NULL, *r = load_list(s, len, "targets", &a, err);
    if (!r) return PFI_EPARSE;
    json_error_t je;
    size_t na = json_array_size(a);
    pfi_target *v = calloc(na + 1, sizeof *v);
    int rc = v ? PFI_OK : pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (size_t i = 0; rc == PFI_OK && i < json_array_size(a); i++) {
        const char *id, *src, *kind;
        json_t *end, *prio, *dur, *dom = NULL;
        pfi_target *t = &v[i];
        if (json_unpack_ex(json_array_get(a, i), &je, JSON_STRICT,
                           "{s:s,s:s,s:s,s:F,s:F,s:o,s:o,s:F,s:o,s:b,s?o}", "id", &id, "source",
                           &src, "kind", &kind, "limit_w", &t->limit_w, "start", &t->start, "end",
                           &end, "duration_s", &dur, "ramp_w_per_s", &t->ramp_w_per_s, "priority",
                           &prio, "default", &t->is_default, "domain", &dom)) {
            rc = pfi_error_set(err, PFI_EPARSE, NULL, 0, "etcd key targets: targets[%zu]: %s", i,
                               je.text);
            break;
        }
        (void)dur; /* end - start (null open-ended), for people */
        snprintf(t->id, sizeof t->id, "%s", id);
        t->source = strcmp(src, "api") == 0 ? PFI_TARGET_API : PFI_TARGET_OPENADR;
        t->kind = strcmp(kind, "site") == 0 ? PFI_TARGET_SITE : PFI_TARGET_GPU;
        t->end = json_is_null(end) ? INFINITY : json_number_value(end);
        t->priority = json_is_null(prio) ? PFI_TARGET_NO_PRIORITY : (long)json_integer_value(prio);
        /* the power tree's domain ("" or null: the site) */
        const char *d = json_string_value(dom);
        snprintf(t->domain, sizeof t->domain, "%s", d ? d : "");
        if ((strcmp(src, "api") && strcmp(src, "openadr")) ||
            (strcmp(kind, "site") && strcmp(kind, "gpu")) || strlen(id) > PFI_TARGET_ID_MAX ||
            !(json_is_null(end) || json_is_number(end)) ||
            !(json_is_null(prio) || json_is_integer(prio)) ||
            !(!dom || json_is_null(dom) || (d && strlen(d) <= PFI_TARGET_DOMAIN_MAX)))
            rc = pfi_error_set(err, PFI_EPARSE, NULL, 0,
                               "etcd key targets: targets[%zu]: a bad source, kind, id, end, "
                               "priority or domain",
                               i);
        else if (pfi_target_validate(t, err) != PFI_OK)
            rc = PFI_EPARSE;
    }
    json_decref(r);
    if (rc != PFI_OK) {
        free(v);
        return rc;
    }
    *ts = v;
    *n = na;
    return PFI_OK;
}

int ctl_ha_parse_caps(const char *s, size_t len, ctl_ha_cap **caps, size_t *n, pfi_error *err)
{
    *caps = NULL;
    *n = 0;
    json_t *a = NULL, *r = load_list(s, len, "caps", &a, err);
    if (!r) return PFI_EPARSE;
    json_error_t je;
    size_t na = json_array_size(a);
    ctl_ha_cap *v = calloc(na + 1, sizeof *v);
    int rc = v ? PFI_OK : pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (size_t i = 0; rc == PFI_OK && i < json_array_size(a); i++) {
        const char *agent;
        json_int_t gpu;
        if (json_unpack_ex(json_array_get(a, i), &je, JSON_STRICT, "{s:s,s:I,s:F,s:F}", "agent",
                           &agent, "gpu", &gpu, "watts", &v[i].watts, "expires_at",
                           &v[i].expires_at))
            rc =
                pfi_error_set(err, PFI_EPARSE, NULL, 0, "etcd key caps: caps[%zu]: %s", i, je.text);
        else if (gpu < 0 || gpu > 65535 || !(v[i].watts > 0 && v[i].watts < 1e6) ||
                 !isfinite(v[i].expires_at) || strlen(agent) >= sizeof v[i].agent)
            rc = pfi_error_set(err, PFI_EPARSE, NULL, 0,
                               "etcd key caps: caps[%zu]: a GPU, watts or expiry out of range", i);
        else {
            snprintf(v[i].agent, sizeof v[i].agent, "%s", agent);
            v[i].gpu = (unsigned)gpu;
        }
    }
    json_decref(r);
    if (rc != PFI_OK) {
        free(v);
        return rc;
    }
    *caps = v;
    *n = na;
    return PFI_OK;
}

int ctl_ha_parse_state(const char *s, size_t len, double *budget_w, double *trim_w, pfi_error *err)
{
    json_t *r = load(s, len, "state", err), *b;
    if (!r) return PFI_EPARSE;
    json_error_t je;
    int rc = PFI_OK;
    if (json_unpack_ex(r, &je, JSON_STRICT, "{s:o,s:F}", "budget_w", &b, "trim_w", trim_w) ||
        !num_or_null(b, budget_w) || !isfinite(*trim_w))
        rc = pfi_error_set(err, PFI_EPARSE, NULL, 0,
                           "etcd key state: {\"budget_w\": W or null, \"trim_w\": W} expected");
    json_decref(r);
    return rc;
}

int ctl_ha_parse_job(const char *s, size_t len, ctl_ha_job *out, pfi_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *r = load(s, len, "jobs/ID", err), *pm, *tm, *pts;
    if (!r) return PFI_EPARSE;
    json_error_t je;
    const char *cls;
    int rc = PFI_OK;
    if (json_unpack_ex(r, &je, JSON_STRICT, "{s:o,s:o,s:s,s:o}", "pmax_w", &pm, "tmax", &tm,
                       "class", &cls, "points", &pts) ||
        !num_or_null(pm, &out->pmax_w) || !num_or_null(tm, &out->tmax) || !json_is_array(pts) ||
        strlen(cls) >= sizeof out->job_class)
        rc = pfi_error_set(err, PFI_EPARSE, NULL, 0,
                           "etcd key jobs/ID: {\"pmax_w\", \"tmax\", \"class\", \"points\"} "
                           "expected");
    if (rc == PFI_OK) {
        snprintf(out->job_class, sizeof out->job_class, "%s", cls);
        out->pts = calloc(json_array_size(pts) + 1, sizeof *out->pts);
        if (!out->pts) rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    for (size_t i = 0; rc == PFI_OK && i < json_array_size(pts); i++) {
        ctl_ha_point *p = &out->pts[i];
        json_t *var;
        if (json_unpack_ex(json_array_get(pts, i), &je, JSON_STRICT, "[FFFo]", &p->cap_w,
                           &p->power_w, &p->tput, &var) ||
            !num_or_null(var, &p->var) || !(p->cap_w > 0) || !isfinite(p->power_w) ||
            !isfinite(p->tput))
            rc = pfi_error_set(err, PFI_EPARSE, NULL, 0,
                               "etcd key jobs/ID: points[%zu]: [cap_w, power_w, tput, var] "
                               "expected",
                               i);
        out->n = i + 1;
    }
    json_decref(r);
    if (rc != PFI_OK) {
        free(out->pts);
        memset(out, 0, sizeof *out);
    }
    return rc;
}

/* --- what this controller knows is in etcd --- */

typedef struct seen_ctx {
    const ctl_ha_seen *s;
    const char *key;
} seen_ctx;

static int seen_eq(size_t pos, const void *x)
{
    const seen_ctx *k = x;
    return strcmp(k->s->key[pos], k->key) == 0;
}

static uint64_t *seen_slot(ctl_ha_seen *s, const char *key)
{
    seen_ctx k = {s, key};
    size_t pos = ctl_index_get(&s->ix, ctl_hash_str(key), seen_eq, &k);
    if (pos != SIZE_MAX) return &s->hash[pos];
    size_t cap = s->cap;
    char **kk = ctl_grow(s->key, &cap, s->n + 1, sizeof *kk);
    if (!kk) return NULL;
    s->key = kk;
    cap = s->cap;
    uint64_t *hh = ctl_grow(s->hash, &cap, s->n + 1, sizeof *hh);
    if (!hh) return NULL;
    s->hash = hh;
    s->cap = cap;
    if (!(s->key[s->n] = strdup(key))) return NULL;
    s->hash[s->n] = 0;
    ctl_index_put(&s->ix, ctl_hash_str(key), s->n);
    return &s->hash[s->n++];
}

void ctl_ha_seen_free(ctl_ha_seen *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->key[i]);
    free(s->key);
    free(s->hash);
    ctl_index_free(&s->ix);
    memset(s, 0, sizeof *s);
}

/* --- etcd to the loop --- */

static void apply_targets(ctl *c, const pfi_target *ts, size_t n)
{
    pfi_target *api = calloc(n + 1, sizeof *api), *adr = calloc(n + 1, sizeof *adr);
    size_t na = 0, no = 0;
    if (!api || !adr) goto out;
    for (size_t i = 0; i < n; i++) {
        if (ts[i].source == PFI_TARGET_API)
            api[na++] = ts[i];
        else
            adr[no++] = ts[i];
    }
    pthread_mutex_lock(&c->mu);
    ctl_targets_replace(c, PFI_TARGET_API, api, na);
    ctl_targets_replace(c, PFI_TARGET_OPENADR, adr, no);
    pthread_mutex_unlock(&c->mu);
    /* the store too: this controller's own restart without etcd finds them */
    pfi_ctl_store_replace_source(c->store, PFI_TARGET_API, api, na, NULL);
    pfi_ctl_store_replace_source(c->store, PFI_TARGET_OPENADR, adr, no, NULL);
out:
    free(api);
    free(adr);
}

/* An agent's held caps become etcd's: the caps another leader pushed are
 * ours to renew (never released by a takeover). */
static void apply_caps(ctl *c, const char *url, const ctl_ha_cap *v, size_t n)
{
    ctl_caps *K = &c->caps;
    size_t ag = pfi_agents_find(c->agents, url), k = 0;
    for (size_t i = 0; i < K->n; i++)
        if (K->v[i].agent != ag) K->v[k++] = K->v[i];
    K->n = k;
    ctl_index_clear(&K->ix);
    for (size_t i = 0; i < K->n; i++)
        ctl_index_put(&K->ix, ctl_held_key(K->v[i].agent, K->v[i].gpu), i);
    for (size_t i = 0; i < n; i++) {
        size_t a = pfi_agents_find(c->agents, v[i].agent);
        if (a == SIZE_MAX && c->o.cluster_from_prometheus)
            pfi_agents_add(c->agents, v[i].agent, &a, NULL);
        if (a == SIZE_MAX || ctl_held_find(K, a, v[i].gpu)) continue;
        if (ctl_held_add(K, a, v[i].gpu, v[i].watts, v[i].expires_at) != PFI_OK) {
            pfi_log("out of memory taking the shared caps");
            return;
        }
    }
}

static int apply_one(ctl *c, const pfi_etcd_kv *kv, const char *name, pfi_error *err)
{
    int rc = PFI_OK;
    if (strcmp(name, "targets") == 0) {
        pfi_target *ts;
        size_t n;
        if ((rc = ctl_ha_parse_targets(kv->value, kv->value_len, &ts, &n, err)) == PFI_OK) {
            apply_targets(c, ts, n);
            free(ts);
        }
    } else if (strncmp(name, "caps/", 5) == 0 && name[5]) {
        ctl_ha_cap *v;
        size_t n;
        if ((rc = ctl_ha_parse_caps(kv->value, kv->value_len, &v, &n, err)) == PFI_OK) {
            apply_caps(c, name + 5, v, n);
            free(v);
        }
    } else if (strcmp(name, "state") == 0) {
        double b, t;
        if ((rc = ctl_ha_parse_state(kv->value, kv->value_len, &b, &t, err)) == PFI_OK) {
            c->budget_w = b;
            c->trim.w = t;
        }
    } else if (strncmp(name, "jobs/", 5) == 0 && name[5]) {
        ctl_ha_job j;
        if ((rc = ctl_ha_parse_job(kv->value, kv->value_len, &j, err)) == PFI_OK) {
            ctl_known_set(&c->jobs, name + 5, j.pmax_w, j.tmax, j.job_class);
            for (size_t i = 0; i < j.n; i++)
                ctl_obs_set(&c->jobs, name + 5, j.pts[i].cap_w, j.pts[i].power_w, j.pts[i].tput,
                            j.pts[i].var);
            free(j.pts);
        }
    }
    return rc; /* "leader", and keys of a later version, are not state */
}

int ctl_ha_state_load(ctl *c, pfi_etcd *kv, const char *prefix, long long min_rev,
                      ctl_ha_seen *seen, long long *rev, pfi_error *err)
{
    pfi_etcd_range r;
    int rc = pfi_etcd_get(kv, prefix, 1, min_rev, &r, err);
    if (rc != PFI_OK) return rc;
    size_t plen = strlen(prefix), bad = 0;
    if (min_rev <= 1) {
        /* everything: the held table is etcd's alone, and no GPU is in
         * conflict until an agent says so */
        c->caps.n = c->caps.n_conf = 0;
        ctl_index_clear(&c->caps.ix);
    }
    for (size_t i = 0; i < r.n; i++) {
        const pfi_etcd_kv *k = &r.kvs[i];
        if (strncmp(k->key, prefix, plen) != 0) continue;
        pfi_error e;
        pfi_error_clear(&e);
        /* A bad value is said and skipped: the rest of the state still counts. */
        if (apply_one(c, k, k->key + plen, &e) != PFI_OK) {
            if (bad++ < 3) pfi_log("%s", e.msg);
            continue;
        }
        uint64_t *h = seen_slot(seen, k->key);
        if (h) *h = ctl_hash_str(k->value);
    }
    *rev = r.revision;
    pfi_etcd_range_free(&r);
    return PFI_OK;
}

/* --- the loop to etcd --- */

static json_t *targets_json(ctl *c)
{
    json_t *a = json_array();
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n_targets; i++)
        if (c->targets[i].source != PFI_TARGET_SCHEDULE)
            json_array_append_new(a, pfi_target_to_json(&c->targets[i]));
    pthread_mutex_unlock(&c->mu);
    return json_pack("{s:o}", "targets", a);
}

/* The caps held, by agent URL: {URL: {"caps": [...]}}. */
static json_t *caps_json(ctl *c)
{
    json_t *m = json_object();
    for (size_t i = 0; i < c->caps.n; i++) {
        const ctl_held *h = &c->caps.v[i];
        const char *url = pfi_agents_get(c->agents, h->agent)->url;
        json_t *o = json_object_get(m, url);
        if (!o) {
            o = json_pack("{s:[]}", "caps");
            json_object_set_new(m, url, o);
        }
        json_array_append_new(json_object_get(o, "caps"),
                              json_pack("{s:s,s:i,s:f,s:f}", "agent", url, "gpu", (int)h->gpu,
                                        "watts", h->watts, "expires_at",
                                        isfinite(h->expires_at) ? h->expires_at : 0.0));
    }
    return m;
}

/* Every job's value, keyed by id: its figures and its points. */
static json_t *jobs_json(ctl *c)
{
    const ctl_jobs *J = &c->jobs;
    json_t *m = json_object();
    for (size_t i = 0; i < J->n_known; i++)
        json_object_set_new(
            m, J->known[i].job,
            json_pack("{s:o,s:o,s:s,s:[]}", "pmax_w", pfi_json_num(J->known[i].pmax_w), "tmax",
                      pfi_json_num(J->known[i].tmax), "class", J->known[i].job_class, "points"));
    for (size_t i = 0; i < J->n_obs; i++) {
        const ctl_obs *o = &J->obs[i];
        json_t *j = json_object_get(m, o->job);
        if (!j) {
            j = json_pack("{s:n,s:n,s:s,s:[]}", "pmax_w", "tmax", "class", "", "points");
            json_object_set_new(m, o->job, j);
        }
        json_array_append_new(
            json_object_get(j, "points"),
            json_pack("[f,f,f,o]", o->o.cap_w, o->o.power_w, o->o.tput, pfi_json_num(o->var)));
    }
    return m;
}

typedef struct pending {
    char *key, *value;
    uint64_t hash;
} pending;

/* Queues key = v (stolen) when its value is not what etcd has. */
static int queue(ctl_ha_seen *seen, const char *key, json_t *v, pending **q, size_t *n, size_t *cap)
{
    char *text = v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(v);
    if (!text) return PFI_ENOMEM;
    uint64_t h = ctl_hash_str(text);
    uint64_t *s = seen_slot(seen, key);
    if (s && *s == h) {
        free(text);
        return PFI_OK;
    }
    pending *arr = ctl_grow(*q, cap, *n + 1, sizeof *arr);
    char *k = strdup(key);
    if (!arr || !k) {
        free(text);
        free(k);
        return PFI_ENOMEM;
    }
    *q = arr;
    arr[(*n)++] = (pending){k, text, h};
    return PFI_OK;
}

int ctl_ha_state_save(ctl *c, pfi_etcd *kv, const char *prefix, const char *guard, long long epoch,
                      ctl_ha_seen *seen, size_t *puts, size_t *txns, int *deposed, pfi_error *err)
{
    *puts = *txns = 0;
    *deposed = 0;
    pending *q = NULL;
    size_t n = 0, cap = 0;
    char key[1024];
    int rc = PFI_OK;
    snprintf(key, sizeof key, "%stargets", prefix);
    rc = queue(seen, key, targets_json(c), &q, &n, &cap);
    json_t *held = rc == PFI_OK ? caps_json(c) : NULL;
    const char *url;
    json_t *hv;
    json_object_foreach(held, url, hv)
    {
        snprintf(key, sizeof key, "%scaps/%s", prefix, url);
        if (rc == PFI_OK) rc = queue(seen, key, json_incref(hv), &q, &n, &cap);
    }
    /* an agent whose caps were all released: its key emptied */
    size_t plen = strlen(prefix), n_seen = seen->n;
    for (size_t i = 0; rc == PFI_OK && i < n_seen; i++) {
        const char *k = seen->key[i];
        if (strncmp(k, prefix, plen) || strncmp(k + plen, "caps/", 5) ||
            json_object_get(held, k + plen + 5))
            continue;
        snprintf(key, sizeof key, "%s", k);
        rc = queue(seen, key, json_pack("{s:[]}", "caps"), &q, &n, &cap);
    }
    json_decref(held);
    snprintf(key, sizeof key, "%sstate", prefix);
    if (rc == PFI_OK)
        rc = queue(seen, key,
                   json_pack("{s:o,s:f}", "budget_w", pfi_json_num(c->budget_w), "trim_w",
                             isfinite(c->trim.w) ? c->trim.w : 0.0),
                   &q, &n, &cap);
    json_t *jobs = rc == PFI_OK ? jobs_json(c) : NULL;
    const char *id;
    json_t *v;
    json_object_foreach(jobs, id, v)
    {
        snprintf(key, sizeof key, "%sjobs/%s", prefix, id);
        if (rc == PFI_OK) rc = queue(seen, key, json_incref(v), &q, &n, &cap);
    }
    json_decref(jobs);
    if (rc != PFI_OK) rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (size_t i = 0; rc == PFI_OK && i < n; i += MAX_PUTS_PER_TXN) {
        size_t m = n - i < MAX_PUTS_PER_TXN ? n - i : MAX_PUTS_PER_TXN;
        pfi_etcd_put *p = calloc(m, sizeof *p);
        if (!p) {
            rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
            break;
        }
        for (size_t k = 0; k < m; k++)
            p[k] = (pfi_etcd_put){q[i + k].key, q[i + k].value};
        int ok = 0;
        rc = pfi_etcd_put_if(kv, guard, epoch, p, m, &ok, err);
        free(p);
        if (rc != PFI_OK) break;
        (*txns)++;
        if (!ok) {
            *deposed = 1;
            break;
        }
        *puts += m;
        /* written: etcd has these now */
        for (size_t k = 0; k < m; k++) {
            uint64_t *s = seen_slot(seen, q[i + k].key);
            if (s) *s = q[i + k].hash;
        }
    }
    for (size_t i = 0; i < n; i++) {
        free(q[i].key);
        free(q[i].value);
    }
    free(q);
    return rc;
}
