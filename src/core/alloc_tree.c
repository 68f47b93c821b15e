/* Nested budgets (alloc.h): the tree of domains a problem's jobs sit in, its
 * validation, each domain's room above the floors and its power after a
 * run. The policies under the tree are alloc_tree_oracle.c (with
 * alloc_tree_lp.c for jobs spread over domains) and alloc_tree_share.c. */
#include "alloc_problem.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void alloc_tree_free(struct alloc_tree *t)
{
    if (!t) return;
    void *bufs[] = {t->parent,   t->end,        t->limit, t->fixed, t->fixed_sub, t->names,
                    t->name_buf, t->home,       t->soff,  t->sdom,  t->sshare,    t->order,
                    t->jstart,   t->dpow,       t->resid, t->dem,   t->g,         t->touched,
                    t->mark,     t->own,        t->ts,    t->gw,    t->ts2,       t->blocked,
                    t->bdem,     t->blocked_at, t->qdem,  t->qidx,  t->qb,        t->okq};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        free(bufs[i]);
    free(t);
}

const char *alloc_tree_label(const struct alloc_tree *t, size_t d, char *buf, size_t len)
{
    if (t->names[d]) return t->names[d];
    snprintf(buf, len, "#%zu", d);
    return buf;
}

static const char *dom_label(const pfi_alloc_domain *d, size_t i, char *buf, size_t len)
{
    if (d[i].name && *d[i].name) return d[i].name;
    snprintf(buf, len, "#%zu", i);
    return buf;
}

/* The domains: pre-order (each parent is the previous domain or one of its
 * ancestors, so a subtree is a range), limits and fixed powers. */
int pfi_alloc_tree_check(const pfi_alloc_domain *d, size_t nd, pfi_error *err)
{
    char lb[32];
    for (size_t i = 0; i < nd; i++) {
        const char *nm = dom_label(d, i, lb, sizeof lb);
        if (i == 0 ? d[0].parent != PFI_ALLOC_NO_PARENT : d[i].parent >= i)
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "domain %s: parent out of order (the root is domain 0, a parent "
                                 "comes before its children)",
                                 nm);
        if (i > 0) {
            size_t a = i - 1; /* the parent must be on the path from i - 1 to the root */
            while (a != d[i].parent && a != 0)
                a = d[a].parent;
            if (a != d[i].parent)
                return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                     "domain %s: not in pre-order (its parent's subtree was "
                                     "already closed)",
                                     nm);
        }
        if (isnan(d[i].limit_w) || d[i].limit_w < 0 ||
            (isinf(d[i].limit_w) ? 0 : d[i].limit_w > PFI_ALLOC_MAX_W * PFI_ALLOC_MAX_COUNT))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "domain %s: limit %g W must be >= 0 (INFINITY for none)", nm,
                                 d[i].limit_w);
        if (!isfinite(d[i].fixed_w) || d[i].fixed_w < 0 ||
            d[i].fixed_w > PFI_ALLOC_MAX_W * PFI_ALLOC_MAX_COUNT)
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "domain %s: fixed power %g W must be finite and >= 0", nm,
                                 d[i].fixed_w);
    }
    return PFI_OK;
}

/* Spans: in range, shares in (0, 1] summing to 1 per job that has any. */
static int check_spans(const pfi_alloc_problem *p, const pfi_alloc_span *s, size_t ns, size_t nd,
                       double *sum, pfi_error *err)
{
    char lb[32];
    for (size_t i = 0; i < p->n; i++)
        sum[i] = 0;
    for (size_t k = 0; k < ns; k++) {
        if (s[k].job >= p->n)
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "span %zu: job %zu out of range (%zu)",
                                 k, s[k].job, p->n);
        /* the label only for an error: it costs a snprintf per span */
        if (s[k].domain >= nd)
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "job %s: domain %zu out of range (%zu domains)",
                                 alloc_label(p, s[k].job, lb, sizeof lb), s[k].domain, nd);
        if (!(s[k].share > 0 && s[k].share <= 1))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %s: share %g outside (0, 1]",
                                 alloc_label(p, s[k].job, lb, sizeof lb), s[k].share);
        sum[s[k].job] += s[k].share;
    }
    for (size_t i = 0; i < p->n; i++)
        if (sum[i] != 0 && !(fabs(sum[i] - 1) <= 1e-9))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "job %s: its domain shares sum to %.12g, not 1",
                                 alloc_label(p, i, lb, sizeof lb), sum[i]);
    return PFI_OK;
}

#define ALLOC_N(ptr, n) ((ptr) = calloc((n) > 0 ? (n) : 1, sizeof *(ptr)))

int pfi_alloc_problem_set_tree(pfi_alloc_problem *p, const pfi_alloc_domain *d, size_t nd,
                               const pfi_alloc_span *s, size_t ns, pfi_error *err)
{
    if (!p) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "no problem");
    p->tree = NULL; /* its memory (tree_mem) is kept for the next */
    if (nd == 0) return PFI_OK;
    if (!d || (ns && !s)) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "no domains or spans");
    if (p->n == 0) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "the problem holds no jobs");
    if (p->n >= UINT32_MAX || nd >= UINT32_MAX) /* the oracle's 32-bit indices */
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "too many jobs or domains for a tree");
    int rc = pfi_alloc_tree_check(d, nd, err);
    if (rc != PFI_OK) return rc;
    size_t n = p->n, name_len = 0;
    for (size_t i = 0; i < nd; i++)
        if (d[i].name) name_len += strlen(d[i].name) + 1;
    /* a controller sets its tree every period: the memory of the last one
     * is reused when it is large enough (fresh pages cost more than the
     * work, alloc.h's _reset) */
    struct alloc_tree *t = p->tree_mem;
    if (!t || t->cap_nd < nd || t->cap_n < n || t->cap_ns < ns || t->cap_names < name_len + 1) {
        alloc_tree_free(t);
        p->tree_mem = t = calloc(1, sizeof *t);
        if (!t || !ALLOC_N(t->parent, nd) || !ALLOC_N(t->end, nd) || !ALLOC_N(t->limit, nd) ||
            !ALLOC_N(t->fixed, nd) || !ALLOC_N(t->fixed_sub, nd) || !ALLOC_N(t->names, nd) ||
            !ALLOC_N(t->name_buf, name_len + 1) || !ALLOC_N(t->home, n) ||
            !ALLOC_N(t->soff, n + 1) || !ALLOC_N(t->sdom, ns) || !ALLOC_N(t->sshare, ns) ||
            !ALLOC_N(t->order, n) || !ALLOC_N(t->jstart, nd + 1) || !ALLOC_N(t->dpow, nd) ||
            !ALLOC_N(t->resid, nd) || !ALLOC_N(t->dem, nd) || !ALLOC_N(t->own, nd) ||
            !ALLOC_N(t->gw, 2 * nd) || !ALLOC_N(t->blocked, nd) || !ALLOC_N(t->blocked_at, nd) ||
            !ALLOC_N(t->bdem, nd) || !ALLOC_N(t->g, nd > n ? nd : n) || !ALLOC_N(t->touched, nd) ||
            !ALLOC_N(t->mark, nd)) {
            alloc_tree_free(t);
            p->tree_mem = NULL;
            return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory for %zu domains", nd);
        }
        t->cap_nd = nd;
        t->cap_n = n;
        t->cap_ns = ns;
        t->cap_names = name_len + 1;
    }
    t->n_spread = 0;
    t->have_pow = 0;
    memset(t->soff, 0, (n + 1) * sizeof *t->soff);
    /* g doubles as the per-job share sums while checking */
    if ((rc = check_spans(p, s, ns, nd, t->g, err)) != PFI_OK) return rc;
    t->nd = nd;
    t->n_jobs = n;
    size_t nb = 0;
    for (size_t i = 0; i < nd; i++) {
        t->parent[i] = d[i].parent;
        t->limit[i] = d[i].limit_w;
        t->fixed[i] = t->fixed_sub[i] = d[i].fixed_w;
        t->end[i] = i + 1;
        t->names[i] = NULL;
        if (d[i].name) {
            size_t l = strlen(d[i].name) + 1;
            memcpy(t->name_buf + nb, d[i].name, l);
            t->names[i] = t->name_buf + nb;
            nb += l;
        }
    }
    for (size_t i = nd; i-- > 1;) { /* children after parents: close subtrees from the back */
        size_t a = t->parent[i];
        t->fixed_sub[a] += t->fixed_sub[i];
        if (t->end[i] > t->end[a]) t->end[a] = t->end[i];
    }
    /* spans grouped by job (counting sort); a job whose spans all land in
     * one domain lives there, one without spans in the root */
    for (size_t k = 0; k < ns; k++)
        t->soff[s[k].job + 1]++;
    for (size_t i = 0; i < n; i++)
        t->soff[i + 1] += t->soff[i];
    for (size_t i = 0; i < n; i++)
        t->home[i] = t->soff[i]; /* fill cursor, replaced below */
    for (size_t k = 0; k < ns; k++) {
        size_t at = t->home[s[k].job]++;
        t->sdom[at] = s[k].domain;
        t->sshare[at] = s[k].share;
    }
    for (size_t i = 0; i < n; i++) {
        size_t h = t->soff[i] == t->soff[i + 1] ? 0 : t->sdom[t->soff[i]];
        for (size_t k = t->soff[i]; k < t->soff[i + 1]; k++)
            if (t->sdom[k] != h) h = ALLOC_SPREAD;
        t->home[i] = h;
        t->n_spread += h == ALLOC_SPREAD;
    }
    /* jobs by home (counting sort again), spread jobs last */
    memset(t->jstart, 0, (nd + 1) * sizeof *t->jstart);
    for (size_t i = 0; i < n; i++)
        if (t->home[i] != ALLOC_SPREAD) t->jstart[t->home[i] + 1]++;
    for (size_t a = 0; a < nd; a++)
        t->jstart[a + 1] += t->jstart[a];
    size_t *cur = t->touched; /* nd scratch as cursors */
    for (size_t a = 0; a < nd; a++)
        cur[a] = t->jstart[a];
    size_t sp = t->jstart[nd];
    for (size_t i = 0; i < n; i++)
        t->order[t->home[i] == ALLOC_SPREAD ? sp++ : cur[t->home[i]]++] = i;
    p->tree = t;
    return PFI_OK;
}

size_t pfi_alloc_problem_domains(const pfi_alloc_problem *p)
{
    return p && p->tree ? p->tree->nd : 0;
}

double pfi_alloc_problem_domain_power(const pfi_alloc_problem *p, size_t d)
{
    if (!p || !p->tree || d >= p->tree->nd || !p->tree->have_pow) return NAN;
    return p->tree->dpow[d];
}

double alloc_tree_alpha(const struct alloc_tree *t, size_t i, size_t a)
{
    if (t->home[i] != ALLOC_SPREAD) return a <= t->home[i] && t->home[i] < t->end[a];
    double s = 0;
    for (size_t k = t->soff[i]; k < t->soff[i + 1]; k++)
        if (a <= t->sdom[k] && t->sdom[k] < t->end[a]) s += t->sshare[k];
    return s;
}

/* acc[a] = the jobs' x (per job, count times) summed over a's subtree by
 * their shares. */
static void aggregate(const pfi_alloc_problem *p, const double *x, double *acc)
{
    const struct alloc_tree *t = p->tree;
    memset(acc, 0, t->nd * sizeof *acc);
    for (size_t i = 0; i < p->n; i++) {
        double v = p->cnt[i] * x[i];
        if (t->home[i] != ALLOC_SPREAD) {
            acc[t->home[i]] += v;
        } else {
            for (size_t k = t->soff[i]; k < t->soff[i + 1]; k++)
                acc[t->sdom[k]] += t->sshare[k] * v;
        }
    }
    for (size_t a = t->nd; a-- > 1;)
        acc[t->parent[a]] += acc[a];
}

void alloc_tree_powers(pfi_alloc_problem *p, const double *power_w)
{
    struct alloc_tree *t = p->tree;
    aggregate(p, power_w, t->dpow);
    for (size_t a = 0; a < t->nd; a++)
        t->dpow[a] += t->fixed_sub[a];
    t->have_pow = 1;
}

/* Rounding slack of a limit check: as pfi_alloc_run's, relative to the
 * largest powers in play. */
static double slack(const pfi_alloc_problem *p, double limit, double drawn)
{
    return 1e-12 * (double)(p->n + 1) * fmax(fmax(limit, drawn), 1.0) + 1e-9;
}

int alloc_tree_room(pfi_alloc_problem *p, double budget_w, double *room, pfi_error *err)
{
    struct alloc_tree *t = p->tree;
    char lb[32];
    aggregate(p, p->floor_w, room);
    t->have_pow = 0;
    for (size_t a = 0; a < t->nd; a++) {
        double need = room[a] + t->fixed_sub[a], lim = t->limit[a];
        if (need > lim && need - lim > slack(p, lim, need))
            return pfi_error_set(err, PFI_EINFEASIBLE, NULL, 0,
                                 "domain %s is infeasible: its jobs' floors and fixed power draw "
                                 "%.1f W over its limit %.1f W",
                                 alloc_tree_label(t, a, lb, sizeof lb), need, lim);
        room[a] = isinf(lim) ? INFINITY : fmax(0.0, lim - need);
    }
    /* the root also holds the jobs under budget_w (fixed power is not in it) */
    room[0] = fmin(room[0], fmax(0.0, budget_w - p->floor_total));
    return PFI_OK;
}

int alloc_tree_verify(pfi_alloc_problem *p, const double *power_w, const char *what, pfi_error *err)
{
    struct alloc_tree *t = p->tree;
    char lb[32];
    alloc_tree_powers(p, power_w);
    for (size_t a = 0; a < t->nd; a++) {
        double lim = t->limit[a], drawn = t->dpow[a];
        if (drawn > lim && drawn - lim > slack(p, lim, drawn)) {
            t->have_pow = 0;
            return pfi_error_set(err, PFI_EINFEASIBLE, NULL, 0,
                                 "domain %s: the %s allocation draws %.1f W over its limit %.1f W",
                                 alloc_tree_label(t, a, lb, sizeof lb), what, drawn, lim);
        }
    }
    return PFI_OK;
}

void alloc_tree_fit(pfi_alloc_problem *p, const double *room, double *power_w)
{
    struct alloc_tree *t = p->tree;
    double *x = p->room, *used = t->dem; /* watts above the floors; their sums */
    for (size_t i = 0; i < p->n; i++)
        x[i] = fmax(0.0, power_w[i] - p->floor_w[i]);
    aggregate(p, x, used);
    for (size_t a = 0; a < t->nd; a++) {
        if (!(used[a] > room[a])) continue;
        /* shrink the watts above the floors of a's jobs by the same factor */
        double f = room[a] / used[a];
        for (size_t i = 0; i < p->n; i++)
            if (alloc_tree_alpha(t, i, a) > 0) x[i] *= f;
        aggregate(p, x, used);
    }
    for (size_t i = 0; i < p->n; i++)
        power_w[i] = fmin(p->pmax[i], p->floor_w[i] + x[i]);
}

int pfi_alloc_problem_fit_tree(pfi_alloc_problem *p, double budget_w, double *power_w,
                               pfi_error *err)
{
    int rc = alloc_check_budget(p, budget_w, err);
    if (rc != PFI_OK) return rc;
    for (size_t i = 0; i < p->n; i++)
        power_w[i] = fmin(p->pmax[i], fmax(p->floor_w[i], power_w[i]));
    if (p->tree) {
        if ((rc = alloc_tree_room(p, budget_w, p->tree->resid, err)) != PFI_OK) return rc;
        alloc_tree_fit(p, p->tree->resid, power_w);
        return alloc_tree_verify(p, power_w, "fitted", err);
    }
    double above = 0;
    for (size_t i = 0; i < p->n; i++)
        above += p->cnt[i] * (power_w[i] - p->floor_w[i]);
    double room = budget_w - p->floor_total;
    if (above > room) {
        double f = fmax(0.0, room) / above;
        for (size_t i = 0; i < p->n; i++)
            power_w[i] = p->floor_w[i] + f * (power_w[i] - p->floor_w[i]);
    }
    return PFI_OK;
}

double pfi_alloc_problem_relax_tree(pfi_alloc_problem *p)
{
    struct alloc_tree *t = p ? p->tree : NULL;
    if (!t || p->n == 0) return 0;
    double worst = 0, *acc = t->dem;
    aggregate(p, p->floor_w, acc);
    for (size_t a = 0; a < t->nd; a++) {
        double need = acc[a] + t->fixed_sub[a];
        if (need > t->limit[a]) {
            worst = fmax(worst, need - t->limit[a]);
            t->limit[a] = need;
        }
    }
    return worst;
}
