/* Power allocation, the problem (see include/core/pfi/alloc.h and alloc_problem.h).
 *
 * Layout: every job's curve, floor-restricted envelope and attributes live in
 * flat arrays indexed through offsets, so one problem of a million jobs is a
 * handful of allocations and the oracle walks memory in order.
 *
 * Building one validates and copies the curves sorted by power, finds each
 * job's floor (lowest power or SLA) and the upper concave envelope above it
 * (Andrew's monotone chain); the oracle (alloc_oracle.c) needs nothing else.
 */
#include "alloc_problem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const policy_names[PFI_POLICY_COUNT] = {
    [PFI_POLICY_EQUAL] = "equal",   [PFI_POLICY_PFI] = "pfi",
    [PFI_POLICY_MOE_FT] = "moe-ft", [PFI_POLICY_DRAM_COPY] = "dram-copy",
    [PFI_POLICY_ORACLE] = "oracle",
};

const char *pfi_alloc_policy_name(pfi_alloc_policy p)
{
    return (unsigned)p < PFI_POLICY_COUNT ? policy_names[p] : "unknown";
}

int pfi_alloc_policy_parse(const char *name, pfi_alloc_policy *out)
{
    for (int i = 0; i < PFI_POLICY_COUNT; i++)
        if (name && strcmp(name, policy_names[i]) == 0) {
            *out = (pfi_alloc_policy)i;
            return PFI_OK;
        }
    return PFI_ENOTFOUND;
}

void pfi_alloc_problem_destroy(pfi_alloc_problem *p)
{
    if (!p) return;
    void *bufs[] = {p->off,    p->cp,    p->ct,       p->cc,      p->eend,  p->ei,  p->es,
                    p->cnt,    p->pmax,  p->tmax,     p->floor_w, p->ftput, p->pfi, p->dram,
                    p->moe_ft, p->names, p->name_buf, p->segs,    p->w,     p->wn,  p->room,
                    p->shed,   p->pw,    p->kv,       p->noff,    p->mark};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        free(bufs[i]);
    alloc_tree_free(p->tree_mem);
    free(p);
}

/* Grows *buf to hold `need` elements of `size` bytes; keeps it when large
 * enough (reset's reuse). */
static int grow(void *buf, size_t need, size_t size, size_t *cap)
{
    void **b = buf;
    if (need <= *cap && *b) return 0;
    void *nb = realloc(*b, (need ? need : 1) * size);
    if (!nb) return -1;
    *b = nb;
    return 0;
}

static const char *job_label(const pfi_alloc_job *j, size_t i, char *buf, size_t len)
{
    if (j->name && *j->name) return j->name;
    snprintf(buf, len, "#%zu", i + 1);
    return buf;
}

const char *alloc_label(const pfi_alloc_problem *p, size_t i, char *buf, size_t len)
{
    if (p->names[i]) return p->names[i];
    snprintf(buf, len, "#%zu", i + 1);
    return buf;
}

/* Interpolates y over x (ascending, n >= 1) at v, clamped to the ends. */
static double interp(const double *x, const double *y, size_t n, double v)
{
    if (v <= x[0]) return y[0];
    if (v >= x[n - 1]) return y[n - 1];
    size_t lo = 0, hi = n - 1; /* x[lo] <= v < x[hi] */
    if (n <= 16) {
        /* a handful of points (a sweep): count those at or below v, no
         * branch to mispredict; x ascends strictly, so this is the same
         * segment the bisection finds */
        for (size_t k = 1; k < n - 1; k++)
            lo += x[k] <= v;
        hi = lo + 1;
    }
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (x[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    double t = (v - x[lo]) / (x[hi] - x[lo]);
    return y[lo] + t * (y[hi] - y[lo]);
}

/* Sorts one job's points by power (insertion sort: sweeps have a handful of
 * points; qsort beyond 32) and merges equal powers keeping the higher
 * throughput. Returns the number of points kept. */
typedef struct {
    double p, t, c;
} pt3;

static int cmp_pt3(const void *a, const void *b)
{
    const pt3 *x = a, *y = b;
    if (x->p != y->p) return x->p < y->p ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

static size_t sort_points(pt3 *v, size_t n)
{
    if (n > 32) {
        qsort(v, n, sizeof *v, cmp_pt3);
    } else {
        for (size_t i = 1; i < n; i++) {
            pt3 x = v[i];
            size_t j = i;
            while (j > 0 && cmp_pt3(&v[j - 1], &x) > 0) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k > 0 && v[i].p == v[k - 1].p) {
            if (v[i].t > v[k - 1].t) v[k - 1] = v[i];
            continue;
        }
        v[k++] = v[i];
    }
    return k;
}

/* The lowest power from which the interpolated curve stays at or above
 * `target` all the way up to Pmax (scanning down from Pmax). */
static double sla_power(const double *P, const double *T, size_t n, double target)
{
    for (size_t k = n - 1; k > 0; k--) {
        if (T[k - 1] >= target) continue;
        /* T[k] >= target > T[k-1]: the curve crosses target inside the segment */
        double t = (target - T[k - 1]) / (T[k] - T[k - 1]);
        return P[k - 1] + t * (P[k] - P[k - 1]);
    }
    return P[0];
}

/* Checks one job's values (the curve is checked point by point as it is
 * copied, so the inputs are read once). */
static int check_job(const pfi_alloc_job *j, size_t i, pfi_error *err)
{
    char lb[32];
    const char *nm = job_label(j, i, lb, sizeof lb);
    if (j->n < 2 || !j->P || !j->T)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "job %s: a curve needs at least two points, got %zu", nm, j->n);
    if (j->n > UINT32_MAX)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %s: too many points", nm);
    for (size_t k = 0; k < j->n; k++) {
        if (!(j->P[k] >= PFI_ALLOC_MIN_W && j->P[k] <= PFI_ALLOC_MAX_W))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "job %s: point %zu: power %g W outside [%g, %g]", nm, k + 1,
                                 j->P[k], PFI_ALLOC_MIN_W, PFI_ALLOC_MAX_W);
        if (!(j->T[k] >= 0 && j->T[k] <= PFI_ALLOC_MAX_TPUT))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "job %s: point %zu: throughput %g outside [0, %g]", nm, k + 1,
                                 j->T[k], PFI_ALLOC_MAX_TPUT);
        if (j->cap && !(j->cap[k] >= 0 && j->cap[k] <= PFI_ALLOC_MAX_W))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "job %s: point %zu: cap %g W outside [0, %g]", nm, k + 1,
                                 j->cap[k], PFI_ALLOC_MAX_W);
    }
    if (!isfinite(j->sla_frac) || j->sla_frac < 0 || j->sla_frac > 1)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %s: SLA fraction must be in [0, 1]",
                             nm);
    if (isinf(j->pfi) || isinf(j->dram_copy) || fabs(j->pfi) > 1e6 || fabs(j->dram_copy) > 1e12)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "job %s: PFI or DRAM copy product is infinite or absurdly large", nm);
    if (j->count > PFI_ALLOC_MAX_COUNT)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %s: count %zu above %g", nm, j->count,
                             PFI_ALLOC_MAX_COUNT);
    return PFI_OK;
}

/* Copies job j's curve sorted by power into P, T, C; returns the points
 * kept, 0 on a bad value or on all points at one power (err set). */
static size_t copy_curve(const pfi_alloc_job *j, size_t i, double *P, double *T, double *C,
                         pfi_error *err)
{
    size_t m = j->n;
    int sorted = 1, ok = 1;
    /* checked while copied (the inputs are read once; & rather than &&, no
     * branch per comparison: a closed loop rebuilds its estimates every
     * round and this loop was a tenth of its time); sweeps normally arrive
     * sorted by power, and then the copy is the result. Powers that ascend
     * strictly (a NaN does not) are in range when both ends are, so only
     * the throughputs are checked point by point; unsorted ones are. */
    double prev = -INFINITY;
    for (size_t k = 0; k < m; k++) {
        double pk = j->P[k], tk = j->T[k];
        ok &= (tk >= 0) & (tk <= PFI_ALLOC_MAX_TPUT);
        sorted &= pk > prev;
        prev = pk;
        P[k] = pk;
        T[k] = tk;
    }
    if (sorted)
        ok &= (P[0] >= PFI_ALLOC_MIN_W) & (P[m - 1] <= PFI_ALLOC_MAX_W);
    else
        for (size_t k = 0; k < m; k++)
            ok &= (P[k] >= PFI_ALLOC_MIN_W) & (P[k] <= PFI_ALLOC_MAX_W);
    if (j->cap) {
        for (size_t k = 0; k < m; k++) {
            double ck = j->cap[k];
            ok &= (ck >= 0) & (ck <= PFI_ALLOC_MAX_W);
            C[k] = ck;
        }
    } else {
        memset(C, 0, m * sizeof *C);
    }
    if (!ok || !isfinite(j->sla_frac) || j->sla_frac < 0 || j->sla_frac > 1 || isinf(j->pfi) ||
        isinf(j->dram_copy) || fabs(j->pfi) > 1e6 || fabs(j->dram_copy) > 1e12 ||
        j->count > PFI_ALLOC_MAX_COUNT) {
        check_job(j, i, err);
        return 0;
    }
    if (sorted) return m;
    pt3 small[32], *tmp = m > 32 ? malloc(m * sizeof *tmp) : small;
    if (!tmp) {
        pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        return 0;
    }
    for (size_t k = 0; k < m; k++)
        tmp[k] = (pt3){j->P[k], j->T[k], j->cap ? j->cap[k] : 0};
    m = sort_points(tmp, m);
    for (size_t k = 0; k < m; k++) {
        P[k] = tmp[k].p;
        T[k] = tmp[k].t;
        C[k] = tmp[k].c;
    }
    if (tmp != small) free(tmp);
    if (m < 2) {
        char lb[32];
        pfi_error_set(err, PFI_EINVAL, NULL, 0,
                      "job %s: all points have the same power; a curve needs two",
                      job_label(j, i, lb, sizeof lb));
        return 0;
    }
    return m;
}

/* Builds job i (curve copied sorted to its slot at off[i], attributes,
 * floor, envelope). Returns its points kept, 0 on an error (err set). */
static size_t build_job(pfi_alloc_problem *p, const pfi_alloc_job *j, size_t i, pfi_error *err)
{
    size_t c = p->off[i];
    double *P = p->cp + c, *T = p->ct + c;
    size_t m = copy_curve(j, i, P, T, p->cc + c, err);
    if (m == 0) return 0;
    double pmax = P[m - 1], tmax = T[m - 1];
    if (!(tmax > 0)) {
        char lb[32];
        pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %s: throughput at the highest power is 0",
                      job_label(j, i, lb, sizeof lb));
        return 0;
    }
    double fl = P[0], ft = T[0];
    size_t k0 = 1;
    if (j->sla_frac > 0) {
        fl = fmax(fl, sla_power(P, T, m, j->sla_frac * tmax));
        ft = interp(P, T, m, fl);
        while (k0 < m && P[k0] <= fl)
            k0++;
    }
    p->pmax[i] = pmax;
    p->tmax[i] = tmax;
    p->floor_w[i] = fl;
    p->ftput[i] = ft;
    p->pfi[i] = j->pfi;
    p->dram[i] = j->dram_copy;
    p->moe_ft[i] = j->moe_ft ? 1 : 0;
    p->cnt[i] = j->count ? (double)j->count : 1.0;

    /* Upper concave envelope of the curve restricted to [floor, Pmax]
     * (Andrew's monotone chain): the floor point, then the points above.
     * A middle vertex stays only when its segments' slopes, computed as the
     * oracle computes them (alloc_slope), strictly decrease: then no job's
     * envelope holds two consecutive segments of equal slope (collinear
     * runs whose slopes round equal), which the oracle's tie share relies
     * on. The floor point has no index. */
    uint32_t *EI = p->ei + c;
    /* ES[v]: the slope of the hull's segment ending at vertex v (es) */
    double *ES = p->es + c;
    size_t h = 0; /* vertices after the floor point */
    /* the top vertex (ap, at) and its slope (as) in registers: the common
     * step (a concave estimate) then reads nothing back that it just stored
     * (bench_sim: the hull was a quarter of its time) */
    double ap = fl, at = ft, as = INFINITY;
    for (size_t k = k0; k < m; k++) {
        double pk = P[k], tk = T[k], sk;
        for (;;) {
            sk = alloc_slope(ap, at, pk, tk);
            if (h == 0 || as > sk) break;
            if (--h) {
                ap = P[EI[h - 1]];
                at = T[EI[h - 1]];
                as = ES[h - 1];
            } else {
                ap = fl;
                at = ft;
            }
        }
        ES[h] = as = sk;
        EI[h++] = (uint32_t)k;
        ap = pk;
        at = tk;
    }
    p->eend[i] = c + h;
    return m;
}

/* The totals, summed in job order (an update gives the same sums as a reset). */
static void sum_totals(pfi_alloc_problem *p, size_t n)
{
    double pmax_total = 0, floor_total = 0;
    for (size_t i = 0; i < n; i++) {
        pmax_total += p->cnt[i] * p->pmax[i];
        floor_total += p->cnt[i] * p->floor_w[i];
    }
    p->pmax_total = pmax_total;
    p->floor_total = floor_total;
}

int pfi_alloc_problem_reset(pfi_alloc_problem *p, const pfi_alloc_job *jobs, size_t n,
                            pfi_error *err)
{
    p->n = 0;
    if (p->tree) p->tree->have_pow = 0;
    if (p->tree && p->tree->n_jobs != n) /* a tree is for one job count (alloc.h) */
        p->tree = NULL;
    if (n == 0) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "no jobs to allocate");
    if (!jobs) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "jobs is NULL");
    size_t total = 0, name_len = 0;
    for (size_t i = 0; i < n; i++) {
        if (jobs[i].n < 2 || !jobs[i].P || !jobs[i].T || jobs[i].n > UINT32_MAX)
            return check_job(&jobs[i], i, err);
        total += jobs[i].n;
        if (jobs[i].name) name_len += strlen(jobs[i].name) + 1;
    }
    /* every per-job buffer holds n + 1 (off needs it), so that one capacity
     * stands for them all */
    size_t nj = n + 1, cj = p->cap_jobs, cpt = p->cap_pts, cnm = p->cap_names;
    if (grow(&p->off, nj, sizeof(size_t), &cj) || grow(&p->eend, nj, sizeof(size_t), &cj) ||
        grow(&p->cnt, nj, sizeof(double), &cj) || grow(&p->pmax, nj, sizeof(double), &cj) ||
        grow(&p->tmax, nj, sizeof(double), &cj) || grow(&p->floor_w, nj, sizeof(double), &cj) ||
        grow(&p->ftput, nj, sizeof(double), &cj) || grow(&p->pfi, nj, sizeof(double), &cj) ||
        grow(&p->dram, nj, sizeof(double), &cj) || grow(&p->moe_ft, nj, 1, &cj) ||
        grow(&p->names, nj, sizeof(char *), &cj) || grow(&p->w, nj, sizeof(double), &cj) ||
        grow(&p->wn, nj, sizeof(double), &cj) || grow(&p->room, nj, sizeof(double), &cj) ||
        grow(&p->shed, nj, sizeof(double), &cj) || grow(&p->pw, nj, sizeof(double), &cj) ||
        grow(&p->kv, nj, sizeof(struct kv), &cj) || grow(&p->noff, nj, sizeof(size_t), &cj) ||
        grow(&p->mark, nj, 1, &cj) || grow(&p->cp, total, sizeof(double), &cpt) ||
        grow(&p->ct, total, sizeof(double), &cpt) || grow(&p->cc, total, sizeof(double), &cpt) ||
        grow(&p->segs, total, sizeof(struct seg), &cpt) ||
        grow(&p->ei, total, sizeof(uint32_t), &cpt) || grow(&p->es, total, sizeof(double), &cpt) ||
        grow(&p->name_buf, name_len + 1, 1, &cnm)) {
        /* buffers may now differ in size: start over next time */
        p->cap_jobs = p->cap_pts = p->cap_names = 0;
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory for %zu jobs", n);
    }
    if (nj > p->cap_jobs) p->cap_jobs = nj;
    if (total > p->cap_pts) p->cap_pts = total;
    if (name_len + 1 > p->cap_names) p->cap_names = name_len + 1;

    size_t c = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        const pfi_alloc_job *j = &jobs[i];
        p->names[i] = NULL;
        if (j->name) {
            size_t l = strlen(j->name) + 1;
            memcpy(p->name_buf + nb, j->name, l);
            p->names[i] = p->name_buf + nb;
            nb += l;
        }
        p->off[i] = c;
        size_t m = build_job(p, j, i, err);
        if (m == 0) return err ? err->code : PFI_EINVAL;
        c += m;
    }
    p->off[n] = c;
    sum_totals(p, n);
    p->n = n;
    return PFI_OK;
}

/* Entry i's points and envelope moved from offset `from` to `to`. */
static void move_entry(pfi_alloc_problem *p, size_t i, size_t from, size_t len, size_t to)
{
    size_t h = p->eend[i] - from;
    memmove(p->cp + to, p->cp + from, len * sizeof *p->cp);
    memmove(p->ct + to, p->ct + from, len * sizeof *p->ct);
    memmove(p->cc + to, p->cc + from, len * sizeof *p->cc);
    memmove(p->ei + to, p->ei + from,
            h * sizeof *p->ei); /* indices within the entry's own points */
    memmove(p->es + to, p->es + from, h * sizeof *p->es);
    p->eend[i] = to + h;
}

/* The layout for new point counts of the changed entries (jobs[i].n for
 * those marked): the others' points and envelopes move to their new
 * offsets, in an order that reads every one before it is overwritten (the
 * new layout keeps the entries in order: one moving left lands past the
 * old place of every entry before it that moves right, and the reverse),
 * so that only the changed entries are rebuilt. A closed loop's estimates
 * change length every round, and a reset rebuilt every entry (the Sec. 6
 * experiment: 96% of learn's updates fell back to one; now 12% fewer hulls
 * are built, 2% fewer instructions). -1 on no memory (p unchanged). */
static int relayout(pfi_alloc_problem *p, const pfi_alloc_job *jobs)
{
    size_t n = p->n, *no = p->noff, *o = p->off;
    no[0] = 0;
    for (size_t i = 0; i < n; i++)
        no[i + 1] = no[i] + (p->mark[i] ? jobs[i].n : o[i + 1] - o[i]);
    size_t total = no[n], cpt = p->cap_pts;
    if (grow(&p->cp, total, sizeof(double), &cpt) || grow(&p->ct, total, sizeof(double), &cpt) ||
        grow(&p->cc, total, sizeof(double), &cpt) ||
        grow(&p->segs, total, sizeof(struct seg), &cpt) ||
        grow(&p->ei, total, sizeof(uint32_t), &cpt) || grow(&p->es, total, sizeof(double), &cpt))
        return -1; /* the grown ones hold what they held: p is as it was */
    if (total > p->cap_pts) p->cap_pts = total;
    for (size_t i = 0; i < n; i++)
        if (!p->mark[i] && no[i] < o[i]) move_entry(p, i, o[i], o[i + 1] - o[i], no[i]);
    for (size_t i = n; i-- > 0;)
        if (!p->mark[i] && no[i] > o[i]) move_entry(p, i, o[i], o[i + 1] - o[i], no[i]);
    memcpy(o, no, (n + 1) * sizeof *o);
    return 0;
}

int pfi_alloc_problem_update(pfi_alloc_problem *p, const pfi_alloc_job *jobs, size_t n,
                             const size_t *changed, size_t k, pfi_error *err)
{
    if (!p || !jobs || n != p->n || (k && !changed))
        return pfi_alloc_problem_reset(p, jobs, n, err);
    int moves = 0;
    memset(p->mark, 0, n);
    for (size_t a = 0; a < k; a++) {
        size_t i = changed[a];
        if (i >= n || jobs[i].n < 2 || !jobs[i].P || !jobs[i].T || jobs[i].n > UINT32_MAX ||
            (jobs[i].name ? !p->names[i] || strcmp(jobs[i].name, p->names[i]) != 0
                          : p->names[i] != NULL))
            return pfi_alloc_problem_reset(p, jobs, n, err);
        p->mark[i] = 1;
        moves |= jobs[i].n != p->off[i + 1] - p->off[i];
    }
    /* a changed job whose point count differs: the others move (relayout) */
    if (moves && relayout(p, jobs)) return pfi_alloc_problem_reset(p, jobs, n, err);
    for (size_t a = 0; a < k; a++) {
        size_t i = changed[a], slot = p->off[i + 1] - p->off[i];
        size_t m = build_job(p, &jobs[i], i, err);
        if (m == 0) {
            p->n = 0; /* as reset: after an error the problem holds no jobs */
            return err ? err->code : PFI_EINVAL;
        }
        if (m != slot) return pfi_alloc_problem_reset(p, jobs, n, err); /* equal powers merged */
    }
    sum_totals(p, n);
    return PFI_OK;
}

int pfi_alloc_problem_create(const pfi_alloc_job *jobs, size_t n, pfi_alloc_problem **out,
                             pfi_error *err)
{
    *out = NULL;
    pfi_alloc_problem *p = calloc(1, sizeof *p);
    if (!p) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int rc = pfi_alloc_problem_reset(p, jobs, n, err);
    if (rc) {
        pfi_alloc_problem_destroy(p);
        return rc;
    }
    *out = p;
    return PFI_OK;
}

size_t pfi_alloc_problem_jobs(const pfi_alloc_problem *p)
{
    return p ? p->n : 0;
}
double pfi_alloc_problem_pmax_total(const pfi_alloc_problem *p)
{
    return p->pmax_total;
}
double pfi_alloc_problem_floor_total(const pfi_alloc_problem *p)
{
    return p->floor_total;
}
size_t pfi_alloc_problem_job_count(const pfi_alloc_problem *p, size_t i)
{
    return (size_t)p->cnt[i];
}

void pfi_alloc_problem_job_range(const pfi_alloc_problem *p, size_t i, double *pmax, double *tmax,
                                 double *floor_w)
{
    if (pmax) *pmax = p->pmax[i];
    if (tmax) *tmax = p->tmax[i];
    if (floor_w) *floor_w = p->floor_w[i];
}

double pfi_alloc_problem_tput_at(const pfi_alloc_problem *p, size_t i, double power_w)
{
    size_t o = p->off[i];
    return interp(p->cp + o, p->ct + o, p->off[i + 1] - o, power_w);
}

double pfi_alloc_problem_cap_at(const pfi_alloc_problem *p, size_t i, double power_w)
{
    size_t o = p->off[i];
    return interp(p->cp + o, p->cc + o, p->off[i + 1] - o, power_w);
}

int pfi_alloc_budget_for_reduction(const pfi_alloc_problem *p, double reduction, double *budget_w,
                                   pfi_error *err)
{
    if (!isfinite(reduction) || reduction < 0 || reduction >= 1)
        return pfi_error_set(err, PFI_ERANGE, NULL, 0,
                             "reduction %g outside [0, 1): it is a fraction of the cluster's power",
                             reduction);
    *budget_w = (1 - reduction) * p->pmax_total;
    return PFI_OK;
}

int alloc_check_budget(const pfi_alloc_problem *p, double budget_w, pfi_error *err)
{
    if (p->n == 0) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "the problem holds no jobs");
    if (!isfinite(budget_w) || budget_w < 0)
        return pfi_error_set(err, PFI_ERANGE, NULL, 0, "budget %g W must be finite and >= 0",
                             budget_w);
    /* a relative slack so that a budget equal to the floors' sum is feasible */
    if (p->floor_total > budget_w * (1 + 1e-12) + 1e-9)
        return pfi_error_set(err, PFI_EINFEASIBLE, NULL, 0,
                             "budget %.1f W is infeasible: the jobs' floors (lowest cap power "
                             "or SLA) already draw %.1f W",
                             budget_w, p->floor_total);
    return PFI_OK;
}
