/* The topology file (see topology.h): a JSON tree of domains walked once in
 * pre-order, then two sorted indexes (domain names, leaf members) that find
 * duplicates and answer the lookups in O(log n). A JSON document is a tree,
 * so a cycle cannot be written; a name used twice is the way a file would try
 * to make one, and that is refused. */
#include "pfi/topology.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pfi/fileio.h"

#define NAME_MAX_LEN 64
#define MEMBER_MAX_LEN 255
#define PATH_LEN 1024

typedef struct member_ix {
    const char *name;
    size_t leaf, k; /* domain and position in its list */
} member_ix;

struct pfi_topo {
    pfi_topo_domain *d;
    char **path; /* each domain's JSON path, for errors */
    size_t nd, cap;
    pfi_topo_member_kind kind;
    member_ix *by_name; /* domains sorted by name (leaf: the domain) */
    member_ix *members;
    size_t n_members;
    char **notes;
    size_t n_notes;
};

static const char *const kind_key[] = {NULL, "agents", "nodes", "jobs"};

/* The parse's state: the tree being built, the file's name, the path of the
 * value being read. */
typedef struct walk {
    pfi_topo *t;
    const char *file;
    char path[PATH_LEN];
    pfi_error *err;
} walk;

#define FAILF(w, ...)                                                                              \
    (snprintf(msg, sizeof msg, __VA_ARGS__),                                                       \
     pfi_error_set((w)->err, PFI_EINVAL, (w)->file, 0, "%s: %s", (w)->path, msg))

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > NAME_MAX_LEN) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              strchr("._:@-", c)))
            return 0;
    }
    return 1;
}

/* A member is printed in messages and sent in URLs: no control characters. */
static int valid_member(const char *s, size_t len)
{
    if (len == 0 || len > MEMBER_MAX_LEN || strlen(s) != len) return 0;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) return 0;
    return 1;
}

/* Appends a domain with its path; pointers into t->d are invalid after. */
static int push(pfi_topo *t, const char *path, size_t *idx)
{
    if (t->nd == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        pfi_topo_domain *d = realloc(t->d, cap * sizeof *d);
        if (!d) return PFI_ENOMEM;
        t->d = d;
        char **p = realloc(t->path, cap * sizeof *p);
        if (!p) return PFI_ENOMEM;
        t->path = p;
        t->cap = cap;
    }
    memset(&t->d[t->nd], 0, sizeof t->d[t->nd]);
    t->path[t->nd] = dup_str(path);
    if (!t->path[t->nd]) return PFI_ENOMEM;
    *idx = t->nd++;
    return PFI_OK;
}

static int add_note(pfi_topo *t, const char *line)
{
    char **n = realloc(t->notes, (t->n_notes + 1) * sizeof *n);
    if (!n) return PFI_ENOMEM;
    t->notes = n;
    if (!(n[t->n_notes] = dup_str(line))) return PFI_ENOMEM;
    t->n_notes++;
    return PFI_OK;
}

/* Reads an optional string key into *out (copied), non-empty. */
static int opt_string(walk *w, const json_t *o, const char *key, const char **out)
{
    char msg[256];
    const json_t *v = json_object_get(o, key);
    if (!v) return PFI_OK;
    size_t at = strlen(w->path);
    snprintf(w->path + at, PATH_LEN - at, ".%s", key);
    if (!json_is_string(v) || json_string_length(v) == 0 ||
        strlen(json_string_value(v)) != json_string_length(v))
        return FAILF(w, "must be a non-empty string");
    w->path[at] = '\0';
    if (!(*out = dup_str(json_string_value(v)))) return PFI_ENOMEM;
    return PFI_OK;
}

static int opt_watts(walk *w, const json_t *o, const char *key, int positive, double *out)
{
    char msg[256];
    const json_t *v = json_object_get(o, key);
    if (!v) return PFI_OK;
    size_t at = strlen(w->path);
    snprintf(w->path + at, PATH_LEN - at, ".%s", key);
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (!json_is_number(v)) return FAILF(w, "must be a number of watts");
    if (!isfinite(x) || (positive ? !(x > 0) : !(x >= 0)))
        return FAILF(w, "%g is not a finite %s number of watts", x,
                     positive ? "positive" : "non-negative");
    w->path[at] = '\0';
    *out = x;
    return PFI_OK;
}

static int read_openadr(walk *w, const json_t *o, pfi_topo_domain *d)
{
    char msg[256];
    const json_t *v = json_object_get(o, "openadr");
    if (!v) return PFI_OK;
    size_t at = strlen(w->path);
    snprintf(w->path + at, PATH_LEN - at, ".openadr");
    if (!json_is_object(v) || json_object_size(v) == 0)
        return FAILF(w, "must be an object with \"program\" or \"resource\"");
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        (void)val;
        if (strcmp(key, "program") != 0 && strcmp(key, "resource") != 0)
            return FAILF(w, "unknown key \"%.64s\" (known: program, resource)", key);
    }
    int rc = opt_string(w, v, "program", &d->openadr_program);
    if (rc == PFI_OK) rc = opt_string(w, v, "resource", &d->openadr_resource);
    if (rc == PFI_OK) w->path[at] = '\0';
    return rc;
}

static int read_members(walk *w, const json_t *arr, const char *key, size_t idx)
{
    char msg[256];
    pfi_topo *t = w->t;
    size_t at = strlen(w->path);
    snprintf(w->path + at, PATH_LEN - at, ".%s", key);
    if (!json_is_array(arr) || json_array_size(arr) == 0)
        return FAILF(w, "must be a non-empty array of strings");
    size_t n = json_array_size(arr);
    const char **m = calloc(n, sizeof *m);
    if (!m) return PFI_ENOMEM;
    t->d[idx].members = m;
    t->d[idx].n_members = n;
    for (size_t k = 0; k < n; k++) {
        const json_t *v = json_array_get(arr, k);
        if (!json_is_string(v) || !valid_member(json_string_value(v), json_string_length(v))) {
            snprintf(w->path + strlen(w->path), PATH_LEN - strlen(w->path), "[%zu]", k);
            return FAILF(w, "must be a string of 1-%d printable characters", MEMBER_MAX_LEN);
        }
        if (!(m[k] = dup_str(json_string_value(v)))) return PFI_ENOMEM;
    }
    w->path[at] = '\0';
    return PFI_OK;
}

/* The note for a domain rated above its nearest rated ancestor. */
static int note_rating(walk *w, size_t idx)
{
    pfi_topo *t = w->t;
    double lim = t->d[idx].limit_w;
    if (!isfinite(lim)) return PFI_OK;
    for (size_t a = t->d[idx].parent; a != PFI_TOPO_NONE; a = t->d[a].parent) {
        if (!isfinite(t->d[a].limit_w)) continue;
        if (lim <= t->d[a].limit_w) return PFI_OK;
        char line[PATH_LEN + 256];
        snprintf(line, sizeof line, "%s: %s (%s): limit_w %.17g W is above %s's %.17g W", w->file,
                 w->path, t->d[idx].name, lim, t->d[a].name, t->d[a].limit_w);
        return add_note(t, line);
    }
    return PFI_OK;
}

static int read_domain(walk *w, const json_t *o, size_t parent, size_t depth)
{
    static const char *const keys[] = {"name",    "limit_w",  "other_load_w", "other_load_query",
                                       "openadr", "children", "agents",       "nodes",
                                       "jobs",    NULL};
    char msg[256];
    pfi_topo *t = w->t;
    if (!json_is_object(o)) return FAILF(w, "a domain must be a JSON object");
    if (depth > PFI_TOPO_MAX_DEPTH)
        return FAILF(w, "deeper than %d levels below the root", PFI_TOPO_MAX_DEPTH);
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)o, key, val)
    {
        size_t k = 0;
        while (keys[k] && strcmp(keys[k], key) != 0)
            k++;
        if (!keys[k]) {
            size_t at = strlen(w->path);
            snprintf(w->path + at, PATH_LEN - at, ".%.64s", key);
            return FAILF(w, "unknown key (known: name, limit_w, other_load_w, other_load_query, "
                            "openadr, children, agents, nodes, jobs)");
        }
    }
    size_t idx;
    int rc = push(t, w->path, &idx);
    if (rc != PFI_OK) return rc;
    pfi_topo_domain *d = &t->d[idx];
    d->parent = parent;
    d->depth = depth;
    d->limit_w = INFINITY;
    const json_t *name = json_object_get(o, "name");
    size_t at = strlen(w->path);
    snprintf(w->path + at, PATH_LEN - at, ".name");
    if (!name) return FAILF(w, "missing (every domain has a name)");
    if (!json_is_string(name) || json_string_length(name) != strlen(json_string_value(name)) ||
        !valid_name(json_string_value(name)))
        return FAILF(w, "must be 1-%d characters of A-Z a-z 0-9 . _ : @ -", NAME_MAX_LEN);
    w->path[at] = '\0';
    if (!(d->name = dup_str(json_string_value(name)))) return PFI_ENOMEM;
    if ((rc = opt_watts(w, o, "limit_w", 1, &d->limit_w)) != PFI_OK ||
        (rc = opt_watts(w, o, "other_load_w", 0, &d->other_load_w)) != PFI_OK ||
        (rc = opt_string(w, o, "other_load_query", &d->other_load_query)) != PFI_OK ||
        (rc = read_openadr(w, o, d)) != PFI_OK || (rc = note_rating(w, idx)) != PFI_OK)
        return rc;

    const json_t *children = json_object_get(o, "children");
    pfi_topo_member_kind kind = PFI_TOPO_MEMBER_NONE;
    for (int k = PFI_TOPO_AGENTS; k <= PFI_TOPO_JOBS; k++) {
        if (!json_object_get(o, kind_key[k])) continue;
        if (children || kind != PFI_TOPO_MEMBER_NONE)
            return FAILF(w, "a domain has one of \"children\", \"agents\", \"nodes\", \"jobs\"");
        kind = (pfi_topo_member_kind)k;
    }
    if (kind != PFI_TOPO_MEMBER_NONE) {
        if (t->kind != PFI_TOPO_MEMBER_NONE && t->kind != kind)
            return FAILF(w, "lists \"%s\" where an earlier leaf lists \"%s\" (one kind per file)",
                         kind_key[kind], kind_key[t->kind]);
        t->kind = kind;
        rc = read_members(w, json_object_get(o, kind_key[kind]), kind_key[kind], idx);
    } else if (!children) {
        return FAILF(w, "a domain needs \"children\" or, at a leaf, \"agents\", \"nodes\" or "
                        "\"jobs\"");
    } else {
        snprintf(w->path + at, PATH_LEN - at, ".children");
        if (!json_is_array(children) || json_array_size(children) == 0)
            return FAILF(w, "must be a non-empty array of domains");
        for (size_t c = 0; c < json_array_size(children) && rc == PFI_OK; c++) {
            snprintf(w->path + at, PATH_LEN - at, ".children[%zu]", c);
            rc = read_domain(w, json_array_get(children, c), idx, depth + 1);
        }
        if (rc == PFI_OK) w->path[at] = '\0';
    }
    t->d[idx].subtree_end = t->nd;
    return rc;
}

static int cmp_member(const void *a, const void *b)
{
    const member_ix *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->leaf != y->leaf ? (x->leaf > y->leaf) - (x->leaf < y->leaf)
                              : (x->k > y->k) - (x->k < y->k);
}

/* Builds both indexes; a name or member listed twice is an error naming
 * both places (the later one first, so the message points at the copy). */
static int build_index(pfi_topo *t, const char *file, pfi_error *err)
{
    if (!(t->by_name = malloc(t->nd * sizeof *t->by_name))) return PFI_ENOMEM;
    for (size_t i = 0; i < t->nd; i++)
        t->by_name[i] = (member_ix){t->d[i].name, i, 0};
    size_t n = 0;
    for (size_t i = 0; i < t->nd; i++)
        n += t->d[i].n_members;
    if (n && !(t->members = malloc(n * sizeof *t->members))) return PFI_ENOMEM;
    t->n_members = 0;
    for (size_t i = 0; i < t->nd; i++)
        for (size_t k = 0; k < t->d[i].n_members; k++)
            t->members[t->n_members++] = (member_ix){t->d[i].members[k], i, k};
    qsort(t->by_name, t->nd, sizeof *t->by_name, cmp_member);
    if (n) qsort(t->members, n, sizeof *t->members, cmp_member);
    size_t bad = SIZE_MAX, first = 0;
    for (size_t i = 1; i < t->nd; i++)
        if (!strcmp(t->by_name[i].name, t->by_name[i - 1].name) && t->by_name[i].leaf < bad)
            bad = t->by_name[i].leaf, first = t->by_name[i - 1].leaf;
    if (bad != SIZE_MAX)
        return pfi_error_set(err, PFI_EINVAL, file, 0,
                             "%s.name: \"%s\" is already the name of %s (names are unique)",
                             t->path[bad], t->d[bad].name, t->path[first]);
    size_t bm = SIZE_MAX;
    for (size_t i = 1; i < n; i++)
        if (!strcmp(t->members[i].name, t->members[i - 1].name) &&
            (bm == SIZE_MAX || t->members[i].leaf < t->members[bm].leaf))
            bm = i;
    if (bm != SIZE_MAX) {
        const member_ix *a = &t->members[bm - 1], *b = &t->members[bm];
        const char *key = kind_key[t->kind];
        return pfi_error_set(err, PFI_EINVAL, file, 0,
                             "%s.%s[%zu]: \"%s\" is already listed at %s.%s[%zu] (a member is in "
                             "one leaf)",
                             t->path[b->leaf], key, b->k, b->name, t->path[a->leaf], key, a->k);
    }
    return PFI_OK;
}

int pfi_topo_parse(const char *text, size_t len, const char *name, pfi_topo **out, pfi_error *err)
{
    *out = NULL;
    if (!name) name = "topology";
    json_error_t je;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        return pfi_error_set(err, PFI_EPARSE, name, je.line > 0 ? je.line : 0, "%s (column %d)",
                             je.text, je.column);
    pfi_topo *t = calloc(1, sizeof *t);
    if (!t) {
        json_decref(j);
        return pfi_error_set(err, PFI_ENOMEM, name, 0, "out of memory");
    }
    walk w = {.t = t, .file = name, .path = "$", .err = err};
    int rc = read_domain(&w, j, PFI_TOPO_NONE, 0);
    json_decref(j);
    if (rc == PFI_OK) rc = build_index(t, name, err);
    if (rc == PFI_ENOMEM) pfi_error_set(err, rc, name, 0, "out of memory");
    if (rc != PFI_OK) {
        pfi_topo_destroy(t);
        return rc;
    }
    *out = t;
    return PFI_OK;
}

int pfi_topo_load(const char *path, pfi_topo **out, pfi_error *err)
{
    *out = NULL;
    char *buf;
    size_t len;
    int rc = pfi_file_read_all(path, &buf, &len, err);
    if (rc != PFI_OK) return rc;
    rc = pfi_topo_parse(buf, len, path, out, err);
    free(buf);
    return rc;
}

int pfi_topo_single(const char *name, double limit_w, pfi_topo_member_kind kind,
                    const char *const *members, size_t n, pfi_topo **out, pfi_error *err)
{
    *out = NULL;
    if (!name || !valid_name(name))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "domain name \"%s\" is not 1-%d characters of A-Z a-z 0-9 . _ : @ -",
                             name ? name : "(null)", NAME_MAX_LEN);
    if (!(limit_w > 0))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "domain %s: limit %g W is not positive",
                             name, limit_w);
    if (n && (kind == PFI_TOPO_MEMBER_NONE || kind > PFI_TOPO_JOBS))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "domain %s: members of no kind", name);
    for (size_t k = 0; k < n; k++)
        if (!members[k] || !valid_member(members[k], strlen(members[k])))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "domain %s: member %zu is not 1-%d printable characters", name, k,
                                 MEMBER_MAX_LEN);
    pfi_topo *t = calloc(1, sizeof *t);
    size_t idx;
    int rc = t ? push(t, "$", &idx) : PFI_ENOMEM;
    if (rc == PFI_OK) {
        pfi_topo_domain *d = &t->d[0];
        d->parent = PFI_TOPO_NONE;
        d->subtree_end = 1;
        d->limit_w = limit_w;
        t->kind = n ? kind : PFI_TOPO_MEMBER_NONE;
        const char **m = n ? calloc(n, sizeof *m) : NULL;
        if (!(d->name = dup_str(name)) || (n && !m)) rc = PFI_ENOMEM;
        d->members = m;
        d->n_members = m ? n : 0;
        for (size_t k = 0; k < d->n_members && rc == PFI_OK; k++)
            if (!(m[k] = dup_str(members[k]))) rc = PFI_ENOMEM;
    }
    if (rc == PFI_OK) rc = build_index(t, name, err);
    if (rc == PFI_ENOMEM) pfi_error_set(err, rc, NULL, 0, "out of memory");
    if (rc != PFI_OK) {
        pfi_topo_destroy(t);
        return rc;
    }
    *out = t;
    return PFI_OK;
}

void pfi_topo_destroy(pfi_topo *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->nd; i++) {
        pfi_topo_domain *d = &t->d[i];
        free((char *)d->name);
        free((char *)d->other_load_query);
        free((char *)d->openadr_program);
        free((char *)d->openadr_resource);
        for (size_t k = 0; d->members && k < d->n_members; k++)
            free((char *)d->members[k]);
        free((void *)d->members);
        free(t->path[i]);
    }
    for (size_t i = 0; i < t->n_notes; i++)
        free(t->notes[i]);
    free(t->notes);
    free(t->d);
    free(t->path);
    free(t->by_name);
    free(t->members);
    free(t);
}

size_t pfi_topo_domains(const pfi_topo *t)
{
    return t ? t->nd : 0;
}

const pfi_topo_domain *pfi_topo_domain_at(const pfi_topo *t, size_t i)
{
    return t && i < t->nd ? &t->d[i] : NULL;
}

pfi_topo_member_kind pfi_topo_member_kind_of(const pfi_topo *t)
{
    return t ? t->kind : PFI_TOPO_MEMBER_NONE;
}

size_t pfi_topo_find(const pfi_topo *t, const char *name)
{
    if (!t || !name) return PFI_TOPO_NONE;
    size_t lo = 0, hi = t->nd;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(t->by_name[mid].name, name);
        if (c == 0) return t->by_name[mid].leaf;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return PFI_TOPO_NONE;
}

size_t pfi_topo_leaf_of(const pfi_topo *t, const char *member)
{
    if (!t || !member) return PFI_TOPO_NONE;
    size_t lo = 0, hi = t->n_members;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(t->members[mid].name, member);
        if (c == 0) return t->members[mid].leaf;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return PFI_TOPO_NONE;
}

int pfi_topo_contains(const pfi_topo *t, size_t a, size_t d)
{
    return t && a < t->nd && d < t->nd && a <= d && d < t->d[a].subtree_end;
}

const char *pfi_topo_note(const pfi_topo *t, size_t i)
{
    return t && i < t->n_notes ? t->notes[i] : NULL;
}
