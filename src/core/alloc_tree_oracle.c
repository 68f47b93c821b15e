/* The exact oracle under nested budgets (alloc.h).
 *
 * Jobs each in one domain. Maximise sum_i E_i(p_i) (concave envelopes)
 * subject to floor_i <= p_i <= Pmax_i and, for every domain a, the power of
 * a's subtree under its limit. The watts above the floors, split into the
 * envelopes' segments, form a polymatroid: laminar capacities on sums of
 * segment widths (each domain's room), every segment bounded by its width.
 * On a polymatroid the greedy is optimal for a linear objective (Edmonds),
 * here sum slope x width: take the segments by decreasing slope, each as
 * far as the tightest room on its path to the root allows. A job's later
 * segments are flatter, so they come later and fill in order. Segments of
 * equal slope form one step of the greedy, shared so that equal jobs get
 * equal watts: a domain whose room they overfill gives each of its
 * subtree's homes the same fraction (the largest that fits, children
 * first), which is a maximal vector of the step's polymatroid and so spends
 * as much as any (test_alloc_tree compares with an LP and brute force).
 *
 * Jobs spread over domains (a share in each) put fractional coefficients in
 * the constraints: no longer a polymatroid, and greedy by slope is not
 * optimal (a job with half its GPUs in a full rack costs that rack half a
 * watt per watt; test_alloc_tree shows the case). Those problems go to the
 * linear program of alloc_tree_lp.c.
 *
 * The greedy runs on buckets of slopes (greedy_top() and greedy() below)
 * rather than a sort of every segment: bench_alloc's 10^5 jobs under a
 * 4-level tree of 85 domains binding at every level, 0.41 s with a qsort,
 * 8.4-9.3 ms of CPU now against the flat oracle's 4.4-5.4 ms (1.74-1.89x;
 * 2.2-2.5x before the passes were fused, docs/nested-budgets.md). */
#include "alloc_problem.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_tseg(const void *a, const void *b)
{
    const struct tseg *x = a, *y = b;
    if (x->slope != y->slope) return x->slope < y->slope ? 1 : -1; /* steepest first */
    return (x->job > y->job) - (x->job < y->job);
}

static int cmp_desc(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x < y) - (x > y);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The smallest room on the path from h to the root. */
static double path_room(const struct alloc_tree *t, const double *room, size_t h)
{
    double m = INFINITY;
    for (size_t a = h;; a = t->parent[a]) {
        m = fmin(m, room[a]);
        if (a == 0) return m;
    }
}

/* Domain a has no room left: nothing under it can take more (after the
 * top-level bucket being taken). */
static void block(struct alloc_tree *t, size_t a)
{
    if (t->blocked[a]) return;
    for (size_t d = a; d < t->end[a]; d++) {
        t->blocked[d] = 1;
        if (t->blocked_at[d] > t->cur + 1) t->blocked_at[d] = t->cur + 1;
    }
}

static void path_take(struct alloc_tree *t, double *room, size_t h, double w)
{
    for (size_t a = h;; a = t->parent[a]) {
        if (!isinf(room[a])) {
            room[a] = fmax(0.0, room[a] - w);
            if (room[a] == 0) block(t, a);
        }
        if (a == 0) return;
    }
}

/* The largest f <= 1 with sum_k own_k min(g_k, f) <= R over k pairs
 * (g, own) in gw[2k] (sorted by g here). */
static double water_level(double *gw, size_t k, double R)
{
    double fixed = 0, free_w = 0;
    for (size_t j = 0; j < k; j++)
        free_w += gw[2 * j + 1];
    qsort(gw, k, 2 * sizeof *gw, cmp_dbl);
    for (size_t j = 0; j < k; j++) {
        /* levels up to g_j: the pairs before j are capped at their g */
        double g = gw[2 * j], at = fixed + g * free_w;
        if (at > R) return free_w > 0 ? fmax(0.0, (R - fixed) / free_w) : 1.0;
        fixed += gw[2 * j] * gw[2 * j + 1];
        free_w -= gw[2 * j + 1];
    }
    return 1.0; /* every pair fits at its own cap */
}

/* One greedy step: the segments ts[0..k) of equal slope. */
static void step(pfi_alloc_problem *p, const struct tseg *ts, size_t k, double *room, double *added)
{
    struct alloc_tree *t = p->tree;
    if (k == 1) {
        size_t h = ts[0].home;
        double m = fmin(ts[0].width, path_room(t, room, h));
        if (m > 0) {
            added[ts[0].job] += m;
            t->tp += ts[0].slope * m;
            path_take(t, room, h, m);
        }
        return;
    }
    /* demand per domain on the segments' paths */
    size_t nt = 0;
    for (size_t j = 0; j < k; j++) {
        size_t h = ts[j].home;
        for (size_t a = h;; a = t->parent[a]) {
            if (!t->mark[a]) {
                t->mark[a] = 1;
                t->dem[a] = t->own[a] = 0;
                t->g[a] = 1;
                t->touched[nt++] = a;
            }
            t->dem[a] += ts[j].width;
            if (a == 0) break;
        }
        t->own[h] += ts[j].width;
    }
    int fits = 1;
    for (size_t j = 0; j < nt; j++)
        fits &= t->dem[t->touched[j]] <= room[t->touched[j]];
    if (!fits) {
        /* children first: each overfilled domain caps its homes' fraction */
        qsort(t->touched, nt, sizeof *t->touched, cmp_desc);
        double *gw = t->gw;
        for (size_t j = 0; j < nt; j++) {
            size_t a = t->touched[j], m = 0;
            if (!(t->dem[a] > room[a])) continue;
            for (size_t q = 0; q < nt; q++) {
                size_t h = t->touched[q];
                if (h >= a && h < t->end[a] && t->own[h] > 0) {
                    gw[2 * m] = t->g[h];
                    gw[2 * m + 1] = t->own[h];
                    m++;
                }
            }
            double f = water_level(gw, m, room[a]);
            for (size_t q = 0; q < nt; q++) {
                size_t h = t->touched[q];
                if (h >= a && h < t->end[a]) t->g[h] = fmin(t->g[h], f);
            }
        }
    }
    for (size_t j = 0; j < k; j++) {
        size_t h = ts[j].home;
        double m = fits ? ts[j].width : ts[j].width * t->g[h];
        if (m > 0) {
            added[ts[j].job] += m;
            t->tp += ts[j].slope * m;
            path_take(t, room, h, m);
        }
    }
    for (size_t j = 0; j < nt; j++)
        t->mark[t->touched[j]] = 0;
}

/* A set of segments all of whose demands fit every room on their paths
 * (those under a full domain count nothing): the greedy would take each
 * whole, in any order. Leaves each domain's demand in t->bdem. */
static int bucket_fits(const pfi_alloc_problem *p, const struct tseg *ts, size_t n,
                       const double *room)
{
    struct alloc_tree *t = p->tree;
    memset(t->bdem, 0, t->nd * sizeof *t->bdem);
    for (size_t j = 0; j < n; j++) {
        size_t h = ts[j].home;
        if (!t->blocked[h]) t->bdem[h] += ts[j].width;
    }
    for (size_t a = t->nd; a-- > 1;)
        t->bdem[t->parent[a]] += t->bdem[a];
    for (size_t a = 0; a < t->nd; a++)
        if (t->bdem[a] > room[a]) return 0;
    return 1;
}

static void bucket_take(pfi_alloc_problem *p, const struct tseg *ts, size_t n, double *room,
                        double *added)
{
    struct alloc_tree *t = p->tree;
    for (size_t j = 0; j < n; j++)
        if (!t->blocked[ts[j].home]) {
            added[ts[j].job] += ts[j].width;
            t->tp += ts[j].slope * ts[j].width;
        }
    for (size_t a = 0; a < t->nd; a++) {
        if (isinf(room[a]) || !(t->bdem[a] > 0)) continue;
        room[a] = fmax(0.0, room[a] - t->bdem[a]);
        if (room[a] == 0) block(t, a);
    }
}

static uint64_t slope_key(double v)
{
    uint64_t k;
    memcpy(&k, &v, sizeof k);
    return k;
}

enum { GR_BITS = 8, GR_NB = 1 << GR_BITS };

/* The greedy over a[0..n) by decreasing slope without sorting it all: the
 * segments go to buckets of their slopes' bits (positive doubles order as
 * their bit patterns), steepest first; a bucket that fits everywhere is
 * taken whole, one that does not is split again on finer bits (into b, a
 * the scratch of the next level), and only a handful of equal or nearly
 * equal slopes are ever sorted. Once the root is full the rest is never
 * looked at: as the flat oracle's select, a few passes over the segments. */
static void greedy(pfi_alloc_problem *p, struct tseg *a, struct tseg *b, size_t n, uint64_t kmin,
                   uint64_t kmax, double *room, double *added)
{
    if (n == 0 || !(room[0] > 0)) return;
    int known = kmin <= kmax; /* the caller may know them */
    for (size_t i = 0; !known && i < n; i++) {
        uint64_t k = slope_key(a[i].slope);
        kmin = k < kmin ? k : kmin;
        kmax = k > kmax ? k : kmax;
    }
    if (kmin == kmax || n <= 24) {
        if (kmin != kmax) qsort(a, n, sizeof *a, cmp_tseg);
        for (size_t j = 0; j < n && room[0] > 0;) {
            size_t k = 1;
            while (j + k < n && a[j + k].slope == a[j].slope)
                k++;
            step(p, a + j, k, room, added);
            j += k;
        }
        return;
    }
    int shift = 0;
    while (((kmax - kmin) >> shift) >= GR_NB)
        shift++;
    size_t start[GR_NB + 1] = {0};
    for (size_t i = 0; i < n; i++)
        start[GR_NB - 1 - ((slope_key(a[i].slope) - kmin) >> shift) + 1]++; /* steepest first */
    for (int q = 0; q < GR_NB; q++)
        start[q + 1] += start[q];
    size_t at[GR_NB];
    memcpy(at, start, sizeof at);
    for (size_t i = 0; i < n; i++)
        b[at[GR_NB - 1 - ((slope_key(a[i].slope) - kmin) >> shift)]++] = a[i];
    for (int q = 0; q < GR_NB && room[0] > 0; q++) {
        size_t s = start[q], m = start[q + 1] - s;
        if (m == 0) continue;
        if (bucket_fits(p, b + s, m, room))
            bucket_take(p, b + s, m, room, added);
        else
            greedy(p, b + s, a + s, m, UINT64_MAX, 0, room, added);
    }
}

enum { WHOLE = 1, IDX_WIN = 16 };

/* The top level of greedy() over all of t->ts without moving them: with
 * each bucket's segments counted and its demand summed per home domain
 * (segments_top, start[q + 1]: bucket q's count), a bucket that fits is
 * taken on those sums alone (no pass over it), one that does not is
 * gathered (through a list of indices) and split by greedy(); a last pass
 * in the segments' order (job order: the writes to added go forward) gives
 * each job the whole buckets' segments it took, those before its domain
 * was blocked. Against greedy() on everything: half the passes and 24-byte
 * moves (bench_alloc, 10^5 jobs). */
static void greedy_top(pfi_alloc_problem *p, size_t ns, size_t *start, double *room, double *added)
{
    struct alloc_tree *t = p->tree;
    size_t nd = t->nd;
    unsigned char status[GR_NB] = {0};
    for (int q = 0; q < GR_NB; q++)
        start[q + 1] += start[q];
    size_t indexed = 0; /* buckets below it are indexed */
    for (size_t q = 0; q < GR_NB && room[0] > 0; q++) {
        size_t m = start[q + 1] - start[q];
        if (m == 0) continue;
        t->cur = (uint32_t)q;
        double *d = t->bdem;
        for (size_t a = 0; a < nd; a++)
            d[a] = t->blocked[a] ? 0 : t->qdem[q * nd + a];
        for (size_t a = nd; a-- > 1;)
            d[t->parent[a]] += d[a];
        int fits = 1;
        for (size_t a = 0; a < nd && fits; a++)
            fits = !(d[a] > room[a]);
        if (fits) {
            status[q] = WHOLE;
            for (size_t a = 0; a < nd; a++) {
                if (isinf(room[a]) || !(d[a] > 0)) continue;
                room[a] = fmax(0.0, room[a] - d[a]);
                if (room[a] == 0) block(t, a);
            }
            continue;
        }
        if (q >= indexed) { /* index this bucket and the next few (those split are close) */
            size_t at[GR_NB];
            memcpy(at, start, sizeof at);
            indexed = q + IDX_WIN;
            /* without a branch (a job's segments fall in many buckets): a
             * segment outside the window is written over its bucket's
             * first slot, which nothing reads before its bucket is
             * indexed again (an earlier bucket was taken whole; it is
             * not empty, so the slot is its own) */
            for (size_t j = 0; j < ns; j++) {
                unsigned b = t->qb[j];
                t->qidx[at[b]] = (uint32_t)j;
                at[b] += (size_t)b - q < IDX_WIN;
            }
        }
        struct tseg *a = t->ts2, *b = t->ts2 + m;
        for (size_t k = 0; k < m; k++)
            a[k] = t->ts[t->qidx[start[q] + k]];
        greedy(p, a, b, m, UINT64_MAX, 0, room, added);
    }
    /* which buckets each home took whole: a table of nd x 256 bytes (in
     * cache) read without a branch, against two tests a segment */
    unsigned char *ok = t->okq;
    for (size_t h = 0; h < nd; h++)
        for (size_t q = 0; q < GR_NB; q++)
            ok[h * GR_NB + q] = status[q] == WHOLE && q < t->blocked_at[h];
    double tp = 0;
    for (size_t j = 0; j < ns; j++) {
        double w = (double)ok[t->ts[j].home * GR_NB + t->qb[j]] * t->ts[j].width;
        added[t->ts[j].job] += w;
        tp += t->ts[j].slope * w;
    }
    t->tp += tp;
}

/* Nothing blocked but the domains without room, before any bucket. */
static void greedy_start(struct alloc_tree *t, const double *room)
{
    memset(t->blocked, 0, t->nd);
    t->cur = 0;
    for (size_t a = 0; a < t->nd; a++)
        t->blocked_at[a] = UINT32_MAX;
    for (size_t a = 0; a < t->nd; a++)
        if (room[a] == 0) {
            block(t, a);
            for (size_t d = a; d < t->end[a]; d++)
                t->blocked_at[d] = 0; /* before any bucket */
        }
}

void alloc_tree_greedy(pfi_alloc_problem *p, struct tseg *a, struct tseg *b, size_t n, double *room,
                       double *added)
{
    greedy_start(p->tree, room);
    greedy(p, a, b, n, UINT64_MAX, 0, room, added);
}

/* alloc_tree_segments and greedy_top's first pass in one, while each
 * segment is in cache: its top-level bucket, the buckets' counts into start[1..] and their demands
 * per home into t->qdem. Jobs each in one domain. */
static size_t segments_top(pfi_alloc_problem *p, size_t *start)
{
    struct alloc_tree *t = p->tree;
    size_t n = p->n, ns = 0, nd = t->nd;
    /* the slopes' range first, from two slopes a job: an envelope's slopes
     * strictly decrease, so its steepest is its first and its flattest
     * positive one ends its positive run (read from the hull's es, not
     * from the segments, which would be read again) */
    uint64_t kmin = UINT64_MAX, kmax = 0;
    for (size_t i = 0; i < n; i++) {
        size_t v = p->eend[i];
        while (v > p->off[i] && !(p->es[v - 1] > 0))
            v--;
        if (v == p->off[i]) continue;
        uint64_t hi = slope_key(p->es[p->off[i]]), lo = slope_key(p->es[v - 1]);
        kmax = hi > kmax ? hi : kmax;
        kmin = lo < kmin ? lo : kmin;
    }
    if (kmin > kmax) kmin = kmax = 0; /* no positive slope: no segment either */
    int shift = 0;
    while (kmax > kmin && ((kmax - kmin) >> shift) >= GR_NB)
        shift++;
    memset(t->qdem, 0, GR_NB * nd * sizeof *t->qdem);
    double wtot = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = alloc_job_segments_into(p, i, &t->ts[ns].slope,
                                           sizeof(struct tseg) / sizeof(double), &wtot);
        uint32_t h = (uint32_t)t->home[i];
        for (size_t j = ns; j < ns + k; j++) {
            t->ts[j].job = (uint32_t)i;
            t->ts[j].home = h;
            /* within the range but for a slope that underflowed to 0:
             * clamped, the buckets still order the slopes */
            uint64_t key = slope_key(t->ts[j].slope);
            key = key < kmin ? kmin : key > kmax ? kmax : key;
            size_t q = GR_NB - 1 - (size_t)((key - kmin) >> shift);
            t->qb[j] = (unsigned char)q; /* the later passes read a byte, not the segment */
            start[q + 1]++;
            t->qdem[q * nd + h] += t->ts[j].width;
        }
        ns += k;
    }
    return ns;
}

/* Room for every segment: each entry has fewer segments than points. */
static int segments_alloc(pfi_alloc_problem *p, pfi_error *err)
{
    struct alloc_tree *t = p->tree;
    size_t cap = p->off[p->n];
    if (cap > t->cap_ts) {
        struct tseg *a = realloc(t->ts, cap * sizeof *a);
        if (a) t->ts = a;
        struct tseg *b = realloc(t->ts2, 2 * cap * sizeof *b);
        if (b) t->ts2 = b;
        uint32_t *x = realloc(t->qidx, cap * sizeof *x);
        if (x) t->qidx = x;
        unsigned char *y = realloc(t->qb, cap);
        if (y) t->qb = y;
        if (!a || !b || !x || !y) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        t->cap_ts = cap;
    }
    if (!t->qdem && t->cap_nd <= 4096) {
        t->qdem = malloc(GR_NB * t->cap_nd * sizeof *t->qdem);
        t->okq = malloc(GR_NB * t->cap_nd);
        if (!t->okq) {
            free(t->qdem);
            t->qdem = NULL;
        }
    }
    return PFI_OK;
}

int alloc_tree_segments(pfi_alloc_problem *p, size_t *count, uint64_t *kmin, uint64_t *kmax,
                        pfi_error *err)
{
    struct alloc_tree *t = p->tree;
    size_t n = p->n, ns = 0;
    int rc = segments_alloc(p, err);
    if (rc != PFI_OK) return rc;
    double wtot = 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        /* struct tseg: slope, width, then the two indices (three doubles' room) */
        size_t k = alloc_job_segments_into(p, i, &t->ts[ns].slope,
                                           sizeof(struct tseg) / sizeof(double), &wtot);
        uint32_t h = t->home[i] == ALLOC_SPREAD ? UINT32_MAX : (uint32_t)t->home[i];
        for (size_t j = ns; j < ns + k; j++) {
            t->ts[j].job = (uint32_t)i;
            t->ts[j].home = h;
            uint64_t key = slope_key(t->ts[j].slope);
            lo = key < lo ? key : lo;
            hi = key > hi ? key : hi;
        }
        ns += k;
    }
    *count = ns;
    *kmin = lo;
    *kmax = hi;
    return PFI_OK;
}

int alloc_tree_oracle(pfi_alloc_problem *p, double budget_w, double *power_w, double *total,
                      pfi_error *err)
{
    struct alloc_tree *t = p->tree;
    double *room = t->resid;
    int rc = alloc_tree_room(p, budget_w, room, err);
    if (rc != PFI_OK) return rc;
    if (total) *total = NAN; /* the linear program's: the caller walks the envelopes */
    if (t->n_spread) return alloc_tree_lp(p, room, power_w, err);
    t->tp = 0;
    size_t n = p->n, ns;
    double *added = p->shed; /* watts above the floor, per entry (all its jobs) */
    for (size_t i = 0; i < n; i++)
        added[i] = 0;
    if ((rc = segments_alloc(p, err)) != PFI_OK) return rc;
    if (t->qdem) {
        size_t start[GR_NB + 1] = {0};
        ns = segments_top(p, start);
        greedy_start(t, room);
        greedy_top(p, ns, start, room, added);
    } else { /* a wide tree: the bucket sums would not fit in cache */
        uint64_t kmin, kmax;
        if ((rc = alloc_tree_segments(p, &ns, &kmin, &kmax, err)) != PFI_OK) return rc;
        greedy_start(t, room);
        greedy(p, t->ts, t->ts2, ns, kmin, kmax, room, added);
    }
    /* the total from the segments taken (the greedy's sum of slope x
     * watts), not a walk of every envelope again (1.2 ms at 10^5 jobs) */
    double base = 0;
    for (size_t i = 0; i < n; i++) {
        power_w[i] = fmin(p->pmax[i], p->floor_w[i] + added[i] / p->cnt[i]);
        base += p->cnt[i] * p->ftput[i];
    }
    if (total) *total = base + t->tp;
    return PFI_OK;
}
