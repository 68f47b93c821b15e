/* pfid's GPU and job listings (include/control/pfi/cluster.h). */
#include "pfi/cluster.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pfi/json_scan.h"

/* A number, or NaN for null/absent; -1 for another type. */
static int num(const json_t *o, const char *key, double *out)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        *out = NAN;
        return 0;
    }
    if (!json_is_number(v)) return -1;
    *out = json_number_value(v);
    return isfinite(*out) ? 0 : -1;
}

static json_t *load_list(const char *text, size_t len, const char *key, pfi_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root) {
        pfi_error_set(err, PFI_EPARSE, NULL, 0, "bad JSON at line %d column %d: %s", je.line,
                      je.column, je.text);
        return NULL;
    }
    json_t *a = json_object_get(root, key);
    if (!json_is_array(a)) {
        json_decref(root);
        pfi_error_set(err, PFI_EINVAL, NULL, 0, "expected {\"%s\":[...]}", key);
        return NULL;
    }
    json_incref(a);
    json_decref(root);
    return a;
}

/* The listings are read in one pass (pfi/json_scan.h) rather than through
 * a DOM: at 12,500 nodes a period parsed 100,000 GPU objects, and Jansson's
 * values cost ~6.5 us each. The view is what the DOM reading gave: for a
 * key given twice the last counts (as in Jansson's objects), a container's
 * fields are reset where its key is met again, and the text is read to its
 * end before a semantic error is reported, so a syntax error anywhere still
 * comes first, then a body of the wrong shape, then too many entries, then
 * the first bad entry. */

/* A number, or NaN for null; anything else sets *bad (and NaN). */
static int read_num(pfi_jscan *J, double *out, int *bad)
{
    int k = pfi_jscan_peek(J);
    *out = NAN;
    *bad = 0;
    if (k == PFI_JS_NULL) return pfi_jscan_literal(J, NULL);
    if (k != PFI_JS_NUMBER) {
        *bad = 1;
        return pfi_jscan_skip(J);
    }
    if (pfi_jscan_number(J, out, NULL, NULL) != PFI_OK) return J->rc;
    if (!isfinite(*out)) *bad = 1, *out = NAN;
    return PFI_OK;
}

/* Reads a number into field f (bit f of *bad when mistyped). */
static int field(pfi_jscan *J, double *out, unsigned *bad, unsigned f)
{
    int b;
    if (read_num(J, out, &b) != PFI_OK) return J->rc;
    *bad = b ? *bad | 1u << f : *bad & ~(1u << f);
    return PFI_OK;
}

/* true is 1, anything else 0 (json_is_true). */
static int read_true(pfi_jscan *J, int *out)
{
    int k = pfi_jscan_peek(J);
    *out = k == PFI_JS_TRUE;
    return pfi_jscan_skip(J);
}

/* An index: an integer in [0, 1e6]; *ok 0 for anything else. */
static int read_index(pfi_jscan *J, unsigned *out, int *ok)
{
    *ok = 0;
    if (pfi_jscan_peek(J) != PFI_JS_NUMBER) return pfi_jscan_skip(J);
    int is_int;
    long long v;
    if (pfi_jscan_number(J, NULL, &is_int, &v) != PFI_OK) return J->rc;
    if (is_int && v >= 0 && v <= 1000000) *out = (unsigned)v, *ok = 1;
    return PFI_OK;
}

#define KEY_CAP 24 /* longer keys are none of ours */
/* key (kn bytes) is the literal s: a length and a fixed-size compare (strcmp
 * took 6% of the reading) */
#define KEY_IS(key, kn, s) ((kn) == sizeof(s) - 1 && memcmp((key), (s), sizeof(s) - 1) == 0)

/* A member of a nested object: a number (bit `bit` of *bad when mistyped)
 * or, num NULL, a flag set by true. */
typedef struct sub {
    const char *key;
    size_t len; /* strlen(key) */
    double *num;
    unsigned bit;
    int *flag;
} sub;
#define SUB(k, num, bit, flag)                                                                     \
    {                                                                                              \
        k, sizeof(k) - 1, num, bit, flag                                                           \
    }

/* An object's members read into the fields named, the others skipped; a
 * value that is not an object is skipped (its fields stay as they are). */
static int read_sub(pfi_jscan *J, const sub *f, size_t n, unsigned *bad)
{
    if (pfi_jscan_peek(J) != PFI_JS_OBJECT) return pfi_jscan_skip(J);
    int first = 1;
    char k[KEY_CAP];
    size_t kn;
    pfi_jscan_object(J);
    while (pfi_jscan_object_next(J, &first, k, sizeof k, &kn)) {
        size_t i = 0;
        while (i < n && (f[i].len != kn || memcmp(k, f[i].key, kn) != 0))
            i++;
        if (i == n)
            pfi_jscan_skip(J);
        else if (f[i].num)
            field(J, f[i].num, bad, f[i].bit);
        else
            read_true(J, f[i].flag);
    }
    return J->rc;
}

/* One list body: {..., KEY: [ENTRY, ...], ...}. entry() reads entry i
 * (storing it only when i < max) and may record a semantic error in sem. */
typedef struct list {
    const char *key;
    size_t max, n, cap, size; /* entries kept at most, seen, allocated; one's bytes */
    void *items;
    pfi_error sem;
    int (*entry)(pfi_jscan *J, struct list *L, size_t i);
} list;

static void *list_slot(list *L, size_t i)
{
    return (char *)L->items + i * L->size;
}

static int read_list(list *L, const char *text, size_t len, pfi_error *err)
{
    pfi_jscan J;
    pfi_jscan_init(&J, text, len, err);
    int have = 0, first = 1;
    char key[KEY_CAP];
    size_t kn;
    pfi_error_clear(&L->sem);
    int top = pfi_jscan_top(&J);
    if (top == PFI_JS_ARRAY)
        pfi_jscan_skip(&J);
    else if (top == PFI_JS_OBJECT && pfi_jscan_object(&J) == PFI_OK)
        while (pfi_jscan_object_next(&J, &first, key, sizeof key, &kn)) {
            if (kn != strlen(L->key) || strcmp(key, L->key) != 0) {
                pfi_jscan_skip(&J);
                continue;
            }
            /* the last one counts */
            L->n = 0;
            pfi_error_clear(&L->sem);
            have = pfi_jscan_peek(&J) == PFI_JS_ARRAY;
            if (!have) {
                pfi_jscan_skip(&J);
                continue;
            }
            int f = 1;
            pfi_jscan_array(&J);
            for (; pfi_jscan_array_next(&J, &f); L->n++) {
                if (L->n < L->max && L->n == L->cap) {
                    size_t c = L->cap ? 2 * L->cap : 16;
                    void *t = realloc(L->items, c * L->size);
                    if (!t) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
                    L->items = t;
                    L->cap = c;
                }
                if (L->n < L->max) memset(list_slot(L, L->n), 0, L->size);
                if (L->entry(&J, L, L->n) != PFI_OK) break;
            }
        }
    if (pfi_jscan_finish(&J) != PFI_OK) return J.rc;
    if (!have) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "expected {\"%s\":[...]}", L->key);
    if (L->n > L->max)
        return pfi_error_set(err, PFI_ERANGE, NULL, 0, "more than %zu %s", L->max,
                             strcmp(L->key, "gpus") == 0 ? "GPUs" : "jobs");
    if (L->sem.code != PFI_OK) {
        if (err) *err = L->sem;
        return L->sem.code;
    }
    return PFI_OK;
}

/* The fields whose type is checked, in the order the first bad one is named. */
enum { G_POWER, G_ENFORCED, G_DEFAULT, G_MIN, G_MAX, G_CAP_W, G_CAP_EXPIRES, G_PRIOR, G_CAP_PRIOR };
static const char *const G_NAMES[] = {"sample.power_watts", "limits.enforced_w", "limits.default_w",
                                      "limits.min_w",       "limits.max_w",      "cap.watts",
                                      "cap.expires_at",     "limits.prior_w",    "cap.prior_w"};

static int first_bit(unsigned x)
{
    int b = 0;
    while (!(x & 1u << b))
        b++;
    return b;
}

static int gpu_entry(pfi_jscan *J, list *L, size_t i)
{
    pfi_cl_gpu tmp, *g = i < L->max ? list_slot(L, i) : &tmp;
    memset(g, 0, sizeof *g);
    g->power_w = g->enforced_w = g->default_w = g->min_w = g->max_w = g->cap_w = g->cap_expires_at =
        g->prior_w = g->cap_prior_w = NAN;
    int ix_ok = 0, first = 1;
    unsigned bad = 0;
    char key[KEY_CAP];
    size_t kn;
    int obj = pfi_jscan_peek(J) == PFI_JS_OBJECT; /* else no index: refused below */
    if (obj ? pfi_jscan_object(J) : pfi_jscan_skip(J)) return J->rc;
    if (obj) {
        while (pfi_jscan_object_next(J, &first, key, sizeof key, &kn)) {
            int is_obj = pfi_jscan_peek(J) == PFI_JS_OBJECT;
            if (KEY_IS(key, kn, "gpu")) {
                read_index(J, &g->index, &ix_ok);
            } else if (KEY_IS(key, kn, "up")) {
                read_true(J, &g->up);
            } else if (KEY_IS(key, kn, "sample")) {
                g->power_w = NAN;
                bad &= ~(1u << G_POWER);
                const sub f[] = {SUB("power_watts", &g->power_w, G_POWER, NULL)};
                read_sub(J, f, 1, &bad);
            } else if (KEY_IS(key, kn, "limits")) {
                g->enforced_w = g->default_w = g->min_w = g->max_w = g->prior_w = NAN;
                bad &= ~(1u << G_ENFORCED | 1u << G_DEFAULT | 1u << G_MIN | 1u << G_MAX |
                         1u << G_PRIOR);
                const sub f[] = {SUB("enforced_w", &g->enforced_w, G_ENFORCED, NULL),
                                 SUB("default_w", &g->default_w, G_DEFAULT, NULL),
                                 SUB("min_w", &g->min_w, G_MIN, NULL),
                                 SUB("max_w", &g->max_w, G_MAX, NULL),
                                 SUB("prior_w", &g->prior_w, G_PRIOR, NULL)};
                read_sub(J, f, 5, &bad);
            } else if (KEY_IS(key, kn, "cap")) {
                g->capped = is_obj;
                g->cap_w = g->cap_expires_at = g->cap_prior_w = NAN;
                g->restore_failed = 0;
                bad &= ~(1u << G_CAP_W | 1u << G_CAP_EXPIRES | 1u << G_CAP_PRIOR);
                const sub f[] = {SUB("watts", &g->cap_w, G_CAP_W, NULL),
                                 SUB("expires_at", &g->cap_expires_at, G_CAP_EXPIRES, NULL),
                                 SUB("restore_failed", NULL, 0, &g->restore_failed),
                                 SUB("prior_w", &g->cap_prior_w, G_CAP_PRIOR, NULL)};
                read_sub(J, f, 4, &bad);
            } else {
                pfi_jscan_skip(J);
            }
        }
    }
    if (J->rc != PFI_OK || L->sem.code != PFI_OK || i >= L->max) return J->rc;
    if (!ix_ok)
        return pfi_error_set(&L->sem, PFI_EINVAL, NULL, 0, "GPU %zu: no valid \"gpu\" index", i),
               J->rc;
    const pfi_cl_gpu *all = L->items;
    for (size_t k = 0; k < i; k++)
        if (all[k].index == g->index)
            return pfi_error_set(&L->sem, PFI_EINVAL, NULL, 0, "GPU %u listed twice", g->index),
                   J->rc;
    if (bad)
        pfi_error_set(&L->sem, PFI_EINVAL, NULL, 0, "GPU %u: \"%s\" is not a number", g->index,
                      G_NAMES[first_bit(bad)]);
    return J->rc;
}

int pfi_cl_parse_gpus(const char *text, size_t len, pfi_cl_node *node, pfi_error *err)
{
    list L = {
        .key = "gpus", .max = PFI_CL_MAX_GPUS, .size = sizeof(pfi_cl_gpu), .entry = gpu_entry};
    int rc = read_list(&L, text, len, err);
    if (rc != PFI_OK) {
        free(L.items);
        return rc;
    }
    free(node->gpus);
    node->gpus = L.items ? L.items : calloc(1, sizeof(pfi_cl_gpu));
    node->n_gpus = L.n;
    return node->gpus ? PFI_OK : pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
}

enum { J_POWER, J_TPS, J_SD, J_PFI, J_SLA, J_EXEMPT, J_STEADY_POWER, J_STEADY_TPS, J_PFI_SD };
static const char *const J_NAMES[] = {"power_w",        "tokens_per_s",        "tokens_sd",
                                      "pfi_estimate",   "sla_floor",           "exempt",
                                      "steady.power_w", "steady.tokens_per_s", "pfi_sd"};

static int job_entry(pfi_jscan *J, list *L, size_t i)
{
    pfi_cl_job tmp, *j = i < L->max ? list_slot(L, i) : &tmp;
    memset(j, 0, sizeof *j);
    j->power_w = j->tokens_per_s = j->tokens_sd = j->pfi_estimate = j->sla_floor = NAN;
    j->pfi_sd = NAN;
    j->steady_power_w = j->steady_tokens_per_s = NAN;
    int id_ok = 0, gpus_ok = 0, ix_bad = 0, first = 1;
    size_t n_gpus = 0;
    unsigned bad = 0;
    char key[KEY_CAP];
    size_t kn;
    int obj = pfi_jscan_peek(J) == PFI_JS_OBJECT; /* else no id: refused below */
    if (obj ? pfi_jscan_object(J) : pfi_jscan_skip(J)) return J->rc;
    if (obj) {
        while (pfi_jscan_object_next(J, &first, key, sizeof key, &kn)) {
            int kind = pfi_jscan_peek(J), f = 1;
            size_t k2n;
            if (KEY_IS(key, kn, "id")) {
                memset(j->id, 0, sizeof j->id);
                id_ok = 0;
                if (kind != PFI_JS_STRING) {
                    pfi_jscan_skip(J);
                } else if (pfi_jscan_string(J, j->id, sizeof j->id, &k2n) == PFI_OK) {
                    id_ok = k2n > 0 && k2n <= PFI_CL_ID_MAX;
                }
            } else if (KEY_IS(key, kn, "gpus")) {
                memset(j->gpus, 0, sizeof j->gpus);
                gpus_ok = kind == PFI_JS_ARRAY;
                n_gpus = 0;
                ix_bad = 0;
                if (!gpus_ok)
                    pfi_jscan_skip(J);
                else if (pfi_jscan_array(J) == PFI_OK)
                    for (; pfi_jscan_array_next(J, &f); n_gpus++) {
                        unsigned x = 0;
                        int ok;
                        if (read_index(J, &x, &ok) != PFI_OK) break;
                        if (!ok) ix_bad = 1;
                        if (n_gpus < PFI_CL_JOB_GPUS) j->gpus[n_gpus] = x;
                    }
            } else if (KEY_IS(key, kn, "phase")) {
                memset(j->phase, 0, sizeof j->phase);
                if (kind == PFI_JS_STRING)
                    pfi_jscan_string(J, j->phase, sizeof j->phase, NULL);
                else
                    pfi_jscan_skip(J);
            } else if (KEY_IS(key, kn, "power_w")) {
                field(J, &j->power_w, &bad, J_POWER);
            } else if (KEY_IS(key, kn, "tokens_per_s")) {
                field(J, &j->tokens_per_s, &bad, J_TPS);
            } else if (KEY_IS(key, kn, "tokens_sd")) {
                field(J, &j->tokens_sd, &bad, J_SD);
            } else if (KEY_IS(key, kn, "pfi_estimate")) {
                field(J, &j->pfi_estimate, &bad, J_PFI);
            } else if (KEY_IS(key, kn, "pfi_sd")) {
                field(J, &j->pfi_sd, &bad, J_PFI_SD);
            } else if (KEY_IS(key, kn, "class")) {
                /* a string within the limit, else none (an older or odd pfid) */
                memset(j->job_class, 0, sizeof j->job_class);
                if (kind == PFI_JS_STRING &&
                    pfi_jscan_string(J, j->job_class, sizeof j->job_class, &k2n) == PFI_OK &&
                    k2n > PFI_CL_CLASS_MAX)
                    memset(j->job_class, 0, sizeof j->job_class);
                else if (kind != PFI_JS_STRING)
                    pfi_jscan_skip(J);
            } else if (KEY_IS(key, kn, "sla_floor")) {
                field(J, &j->sla_floor, &bad, J_SLA);
            } else if (KEY_IS(key, kn, "exempt")) {
                int is_bool = kind == PFI_JS_TRUE || kind == PFI_JS_FALSE || kind == PFI_JS_NULL;
                bad = is_bool ? bad & ~(1u << J_EXEMPT) : bad | 1u << J_EXEMPT;
                read_true(J, &j->exempt);
            } else if (KEY_IS(key, kn, "steady")) {
                j->steady_power_w = j->steady_tokens_per_s = NAN;
                bad &= ~(1u << J_STEADY_POWER | 1u << J_STEADY_TPS);
                const sub st[] = {SUB("power_w", &j->steady_power_w, J_STEADY_POWER, NULL),
                                  SUB("tokens_per_s", &j->steady_tokens_per_s, J_STEADY_TPS, NULL)};
                read_sub(J, st, 2, &bad);
            } else {
                pfi_jscan_skip(J);
            }
        }
    }
    j->n_gpus = n_gpus < PFI_CL_JOB_GPUS ? n_gpus : PFI_CL_JOB_GPUS;
    if (!(j->tokens_sd >= 0)) j->tokens_sd = NAN; /* absent (an older pfid): unknown */
    if (!(j->pfi_sd > 0)) j->pfi_sd = NAN;
    if (!(j->sla_floor > 0 && j->sla_floor <= 1)) j->sla_floor = NAN; /* none */
    if (J->rc != PFI_OK || L->sem.code != PFI_OK || i >= L->max) return J->rc;
    if (!id_ok)
        return pfi_error_set(&L->sem, PFI_EINVAL, NULL, 0, "job %zu: no valid id", i), J->rc;
    if (!gpus_ok || n_gpus == 0 || n_gpus > PFI_CL_JOB_GPUS)
        return pfi_error_set(&L->sem, PFI_EINVAL, NULL, 0, "job %s: bad \"gpus\"", j->id), J->rc;
    if (ix_bad)
        return pfi_error_set(&L->sem, PFI_EINVAL, NULL, 0, "job %s: bad GPU index", j->id), J->rc;
    if (bad)
        pfi_error_set(&L->sem, PFI_EINVAL, NULL, 0, "job %s: \"%s\" is not a %s", j->id,
                      J_NAMES[first_bit(bad)], first_bit(bad) == J_EXEMPT ? "boolean" : "number");
    return J->rc;
}

int pfi_cl_parse_jobs(const char *text, size_t len, pfi_cl_node *node, pfi_error *err)
{
    list L = {
        .key = "jobs", .max = PFI_CL_MAX_JOBS, .size = sizeof(pfi_cl_job), .entry = job_entry};
    int rc = read_list(&L, text, len, err);
    if (rc != PFI_OK) {
        free(L.items);
        return rc;
    }
    free(node->jobs);
    node->jobs = L.items ? L.items : calloc(1, sizeof(pfi_cl_job));
    node->n_jobs = L.n;
    return node->jobs ? PFI_OK : pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
}

void pfi_cl_node_clear(pfi_cl_node *node)
{
    if (!node) return;
    free(node->gpus);
    free(node->jobs);
    memset(node, 0, sizeof *node);
}

const pfi_cl_gpu *pfi_cl_node_gpu(const pfi_cl_node *node, unsigned idx)
{
    for (size_t i = 0; i < node->n_gpus; i++)
        if (node->gpus[i].index == idx) return &node->gpus[i];
    return NULL;
}

int pfi_cl_parse_curve(const char *text, size_t len, pfi_cl_point **pts, size_t *n, pfi_error *err)
{
    *pts = NULL;
    *n = 0;
    json_t *a = load_list(text, len, "points", err);
    if (!a) return err ? err->code : PFI_EPARSE;
    size_t m = json_array_size(a);
    if (m > PFI_CL_MAX_POINTS) {
        json_decref(a);
        return pfi_error_set(err, PFI_ERANGE, NULL, 0, "more than %d curve points",
                             PFI_CL_MAX_POINTS);
    }
    pfi_cl_point *p = calloc(m ? m : 1, sizeof *p);
    if (!p) {
        json_decref(a);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    int rc = PFI_OK;
    for (size_t i = 0; i < m && rc == PFI_OK; i++) {
        const json_t *o = json_array_get(a, i);
        int bad = !json_is_object(o) || num(o, "cap_w", &p[i].cap_w) ||
                  num(o, "power_w", &p[i].power_w) || num(o, "tokens_per_s", &p[i].tput) ||
                  num(o, "tokens_sd", &p[i].tput_sd) || num(o, "n", &p[i].n);
        if (!bad && isnan(p[i].tput_sd)) p[i].tput_sd = 0;
        if (!bad && isnan(p[i].n)) p[i].n = 1;
        if (bad || !(p[i].cap_w > 0) || !(p[i].power_w > 0) || !(p[i].tput >= 0) ||
            !(p[i].tput_sd >= 0) || !(p[i].n >= 1))
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0,
                               "curve point %zu: a value is missing or out of range", i + 1);
    }
    json_decref(a);
    if (rc != PFI_OK) {
        free(p);
        return rc;
    }
    *pts = p;
    *n = m;
    return PFI_OK;
}
