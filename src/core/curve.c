/* Sweep groups: collection, validation and sub-grids. */
#include "pfi/curve.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct pfi_sweeps {
    pfi_group *groups;
    size_t n, cap;
    size_t last; /* index of the group last added to: rows usually come grouped */
    /* Open-addressing index of groups by name (slot = group index + 1, 0 =
     * empty), kept at most half full: a lookup by name is O(1), so reading N
     * groups is linear in N (a scan of every group per new name made 100k
     * groups take 45 s; bench/bench_parse.c). */
    size_t *slots, n_slots;
};

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int index_grow(pfi_sweeps *s)
{
    size_t n = s->n_slots ? s->n_slots * 2 : 64;
    size_t *sl = calloc(n, sizeof *sl);
    if (!sl) return PFI_ENOMEM;
    for (size_t i = 0; i < s->n; i++) {
        size_t k = (size_t)name_hash(s->groups[i].name) & (n - 1);
        while (sl[k])
            k = (k + 1) & (n - 1);
        sl[k] = i + 1;
    }
    free(s->slots);
    s->slots = sl;
    s->n_slots = n;
    return PFI_OK;
}

static char *dupstr(const char *s)
{
    s = s ? s : "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

pfi_sweeps *pfi_sweeps_create(void)
{
    return calloc(1, sizeof(pfi_sweeps));
}

static void group_free(pfi_group *g)
{
    free(g->name);
    free((char *)g->meta.platform);
    free((char *)g->meta.model);
    free((char *)g->meta.arch);
    free((char *)g->meta.task);
    free((char *)g->meta.config);
    free(g->runs);
}

void pfi_sweeps_destroy(pfi_sweeps *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++)
        group_free(&s->groups[i]);
    free(s->groups);
    free(s->slots);
    free(s);
}

size_t pfi_sweeps_count(const pfi_sweeps *s)
{
    return s ? s->n : 0;
}

const pfi_group *pfi_sweeps_group(const pfi_sweeps *s, size_t i)
{
    return (s && i < s->n) ? &s->groups[i] : NULL;
}

static long find_index(const pfi_sweeps *s, const char *name)
{
    if (s->last < s->n && strcmp(s->groups[s->last].name, name) == 0) return (long)s->last;
    if (!s->n_slots) return -1;
    for (size_t k = (size_t)name_hash(name) & (s->n_slots - 1); s->slots[k];
         k = (k + 1) & (s->n_slots - 1))
        if (strcmp(s->groups[s->slots[k] - 1].name, name) == 0) return (long)s->slots[k] - 1;
    return -1;
}

const pfi_group *pfi_sweeps_find(const pfi_sweeps *s, const char *name)
{
    if (!s || !name) return NULL;
    long i = find_index(s, name);
    return i < 0 ? NULL : &s->groups[i];
}

static int new_group(pfi_sweeps *s, const char *name, const pfi_group_meta *m, long line)
{
    if (2 * (s->n + 1) > s->n_slots && index_grow(s) != PFI_OK) return PFI_ENOMEM;
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 16;
        pfi_group *ng = realloc(s->groups, nc * sizeof *ng);
        if (!ng) return PFI_ENOMEM;
        s->groups = ng;
        s->cap = nc;
    }
    pfi_group *g = &s->groups[s->n];
    memset(g, 0, sizeof *g);
    g->name = dupstr(name);
    g->meta.platform = dupstr(m->platform);
    g->meta.model = dupstr(m->model);
    g->meta.arch = dupstr(m->arch);
    g->meta.task = dupstr(m->task);
    g->meta.config = dupstr(m->config);
    g->meta.gpus = m->gpus;
    g->line = line;
    if (!g->name || !g->meta.platform || !g->meta.model || !g->meta.arch || !g->meta.task ||
        !g->meta.config) {
        group_free(g);
        return PFI_ENOMEM;
    }
    size_t k = (size_t)name_hash(g->name) & (s->n_slots - 1);
    while (s->slots[k])
        k = (k + 1) & (s->n_slots - 1);
    s->slots[k] = s->n + 1;
    s->n++;
    return PFI_OK;
}

static int same(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static int meta_mismatch(const pfi_group_meta *a, const pfi_group_meta *b)
{
    if (!same(a->platform, b->platform)) return 1;
    if (!same(a->model, b->model)) return 1;
    if (!same(a->arch, b->arch)) return 1;
    if (!same(a->task, b->task)) return 1;
    if (!same(a->config, b->config)) return 1;
    return a->gpus != b->gpus;
}

/* Caps closer than this are the same cap (nvidia-smi sets whole watts). */
#define CAP_EPS_W 0.5

int pfi_sweeps_add_run(pfi_sweeps *s, const char *group, const pfi_group_meta *meta,
                       const pfi_run *r, const char *file, pfi_error *err)
{
    if (!s || !group || !meta || !r)
        return pfi_error_set(err, PFI_EINVAL, file, 0, "null argument");
    long ln = r->line;
    if (!group[0]) return pfi_error_set(err, PFI_EINVAL, file, ln, "empty group name");
    if (meta->gpus <= 0)
        return pfi_error_set(err, PFI_ERANGE, file, ln, "gpus must be a positive integer");
    if (!isfinite(r->cap_w) || r->cap_w <= 0)
        return pfi_error_set(err, PFI_ERANGE, file, ln, "cap_w must be positive");
    if (!isfinite(r->power_w) || r->power_w <= 0)
        return pfi_error_set(err, PFI_ERANGE, file, ln, "power_w must be positive, got %g",
                             r->power_w);
    if (!isfinite(r->tput) || r->tput <= 0)
        return pfi_error_set(err, PFI_ERANGE, file, ln, "throughput_tok_s must be positive, got %g",
                             r->tput);
    if (!isfinite(r->power_sem_w) || r->power_sem_w < 0 || !isfinite(r->tput_sem) ||
        r->tput_sem < 0)
        return pfi_error_set(err, PFI_ERANGE, file, ln, "standard errors must be >= 0");

    long gi = find_index(s, group);
    if (gi < 0) {
        if (new_group(s, group, meta, ln) != PFI_OK)
            return pfi_error_set(err, PFI_ENOMEM, file, ln, "out of memory");
        gi = (long)s->n - 1;
    } else if (meta_mismatch(&s->groups[gi].meta, meta)) {
        return pfi_error_set(err, PFI_EINVAL, file, ln,
                             "group \"%s\" metadata differs from its first row (line %ld)", group,
                             s->groups[gi].line);
    }
    s->last = (size_t)gi;
    pfi_group *g = &s->groups[gi];
    for (size_t i = 0; i < g->n_runs; i++)
        if (fabs(g->runs[i].cap_w - r->cap_w) < CAP_EPS_W)
            return pfi_error_set(err, PFI_EINVAL, file, ln,
                                 "duplicate cap %g W in group \"%s\" (also line %ld)", r->cap_w,
                                 group, g->runs[i].line);
    pfi_run *nr = realloc(g->runs, (g->n_runs + 1) * sizeof *nr);
    if (!nr) return pfi_error_set(err, PFI_ENOMEM, file, ln, "out of memory");
    g->runs = nr;
    g->runs[g->n_runs++] = *r;
    return PFI_OK;
}

static int cmp_cap(const void *a, const void *b)
{
    double x = ((const pfi_run *)a)->cap_w, y = ((const pfi_run *)b)->cap_w;
    return (x > y) - (x < y);
}

double pfi_platform_tdp_w(const char *platform)
{
    static const struct {
        const char *name;
        double tdp_w;
    } known[] = {
        {"H200", 700}, {"H100", 700}, {"B200", 1000}, {"A100", 400}, {"GH200", 900},
    };
    if (!platform) return 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcasecmp(platform, known[i].name) == 0) return known[i].tdp_w;
    return 0;
}

/* Sorts each group's runs by cap and checks it has two at least. */
static int sort_and_count(pfi_sweeps *s, const char *file, const char *what, pfi_error *err)
{
    for (size_t i = 0; i < s->n; i++) {
        pfi_group *g = &s->groups[i];
        qsort(g->runs, g->n_runs, sizeof *g->runs, cmp_cap);
        if (g->n_runs < 2)
            return pfi_error_set(err, PFI_ENODATA, file, g->line,
                                 "%sgroup \"%s\" has %zu run; PFI needs at least two caps", what,
                                 g->name, g->n_runs);
    }
    return PFI_OK;
}

int pfi_sweeps_finalize(pfi_sweeps *s, double tdp_w, const char *file, pfi_error *err)
{
    if (!s) return pfi_error_set(err, PFI_EINVAL, file, 0, "null sweeps");
    if (s->n == 0) return pfi_error_set(err, PFI_ENODATA, file, 0, "no sweep groups");
    int rc = sort_and_count(s, file, "", err);
    if (rc != PFI_OK) return rc;
    for (size_t i = 0; i < s->n; i++) {
        const pfi_group *g = &s->groups[i];
        double tdp = tdp_w > 0 ? tdp_w : pfi_platform_tdp_w(g->meta.platform);
        double top = g->runs[g->n_runs - 1].cap_w;
        if (tdp > 0 && top < tdp - CAP_EPS_W)
            return pfi_error_set(err, PFI_EINVAL, file, g->line,
                                 "group \"%s\" has no uncapped run: its largest cap is %g W, "
                                 "below the %g W TDP",
                                 g->name, top, tdp);
    }
    return PFI_OK;
}

static int cap_in(double cap, const double *caps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fabs(caps[i] - cap) < CAP_EPS_W) return 1;
    return 0;
}

int pfi_sweeps_subgrid(const pfi_sweeps *s, const double *caps, size_t n_caps, pfi_sweeps **out,
                       pfi_error *err)
{
    *out = NULL;
    if (!s || !caps || n_caps == 0) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "empty grid");
    pfi_sweeps *t = pfi_sweeps_create();
    if (!t) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int rc = PFI_OK;
    for (size_t i = 0; i < s->n && rc == PFI_OK; i++) {
        const pfi_group *g = &s->groups[i];
        const pfi_run *top = &g->runs[g->n_runs - 1];
        if (!cap_in(top->cap_w, caps, n_caps)) {
            rc = pfi_error_set(err, PFI_EINVAL, NULL, g->line,
                               "grid leaves group \"%s\" without its uncapped run (%g W)", g->name,
                               top->cap_w);
            break;
        }
        for (size_t k = 0; k < g->n_runs && rc == PFI_OK; k++)
            if (cap_in(g->runs[k].cap_w, caps, n_caps))
                rc = pfi_sweeps_add_run(t, g->name, &g->meta, &g->runs[k], NULL, err);
        if (rc == PFI_OK && pfi_sweeps_find(t, g->name) == NULL)
            rc = pfi_error_set(err, PFI_ENODATA, NULL, g->line, "grid leaves group \"%s\" empty",
                               g->name);
    }
    /* The source passed the TDP check and each group kept its top cap, so only
     * the run count can fail here. */
    if (rc == PFI_OK) rc = sort_and_count(t, NULL, "on this grid, ", err);
    if (rc != PFI_OK) {
        pfi_sweeps_destroy(t);
        return rc;
    }
    *out = t;
    return PFI_OK;
}
