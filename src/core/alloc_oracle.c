/* The exact oracle (alloc.h). It maximises sum_i E_i(p_i) subject to
 * sum_i p_i <= B and floor_i <= p_i <= Pmax_i, where E_i is job i's upper
 * concave envelope. Every E_i is piecewise linear and concave, so the problem
 * is a fractional knapsack over envelope segments: starting from the floors,
 * fill segments in order of decreasing slope (tokens/s per W) until the
 * budget is spent. Only the threshold slope is needed, which a weighted
 * selection finds in linear time. An entry standing for c identical jobs is
 * the same knapsack with its segments c times as wide.
 *
 * One path. Its speed path, kept because it pays (bench_alloc, 6-point
 * jobs, medians on this 2-core machine): the radix select below, against a
 * sort of the segments, 7x at 10^5 jobs (17 ms against 122 ms) and 3x at
 * 10^3. Removed because they did not pay: a bracket of the threshold from
 * a sample of the jobs (10^5 jobs: 18.1 ms with it, 16.7 ms without; 10^6:
 * 160 ms against 135 ms) and a cache of the envelope segments' slopes for
 * problems under 4,096 jobs (no gain at 10^3, 1% fewer instructions
 * without it in learn's simulation). The segments' slopes are read from
 * the problem (es), where the hull left them: not a cache, no division
 * here (learn's simulation: 1% fewer instructions, results identical). */
#include "alloc_problem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Weighted selection: the threshold slope lambda such that the segments
 * steeper than lambda hold less than L watts and those at least as steep hold
 * L or more. Returns lambda; *above gets the width strictly above it.
 *
 * A radix select on the slopes' bits (every slope is positive and finite,
 * and positive doubles order like their bit patterns): one pass finds the
 * range of keys, one adds each segment's width to one of NB buckets over
 * that range, a scan from the steepest bucket finds the one where the
 * widths reach L, and only that bucket's segments are kept for the next
 * level. Each level narrows the key range by a factor NB, so there are at
 * most 64 / log2(NB) + 1 levels whatever the input; no comparison branches
 * to mispredict, unlike a quickselect partition. */
enum { SEL_BITS = 8, SEL_NB = 1 << SEL_BITS };

static uint64_t slope_key(double v)
{
    uint64_t k;
    memcpy(&k, &v, sizeof k);
    return k;
}

static double select_threshold(struct seg *s, size_t n, double L, double *above, double *at)
{
    double acc = 0; /* width of segments known to be steeper than those left */
    while (n > 24) {
        uint64_t kmin = UINT64_MAX, kmax = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t k = slope_key(s[i].slope);
            kmin = k < kmin ? k : kmin;
            kmax = k > kmax ? k : kmax;
        }
        if (kmin == kmax) break; /* all equal: the scan below finds it */
        int shift = 0;
        while (((kmax - kmin) >> shift) >= SEL_NB)
            shift++;
        double hw[SEL_NB] = {0};
        for (size_t i = 0; i < n; i++)
            hw[(slope_key(s[i].slope) - kmin) >> shift] += s[i].width;
        int b = (int)((kmax - kmin) >> shift);
        while (b > 0 && acc + hw[b] < L)
            acc += hw[b--];
        size_t m = 0;
        for (size_t i = 0; i < n; i++) { /* keep bucket b's, without a branch */
            s[m] = s[i];
            m += (int)((slope_key(s[i].slope) - kmin) >> shift) == b;
        }
        n = m;
    }
    for (size_t i = 1; i < n; i++) { /* insertion sort, descending */
        struct seg x = s[i];
        size_t j = i;
        while (j > 0 && s[j - 1].slope < x.slope) {
            s[j] = s[j - 1];
            j--;
        }
        s[j] = x;
    }
    /* equal slopes share a bucket at every level, so all the segments at
     * the threshold are among those left */
    *at = 0;
    for (size_t i = 0; i < n; i++) {
        /* the last segment is the threshold when rounding leaves the sum
         * of the widths just short of L (a budget that fills a set of
         * segments exactly, summed in another order) */
        if (acc + s[i].width >= L || i + 1 == n) {
            /* widths of equal slopes before i are already in acc */
            size_t j = i;
            while (j > 0 && s[j - 1].slope == s[i].slope)
                acc -= s[--j].width;
            for (; j < n && s[j].slope == s[i].slope; j++)
                *at += s[j].width;
            *above = acc;
            return s[i].slope;
        }
        acc += s[i].width;
    }
    *above = acc;
    return 0; /* n == 0 */
}

/* Entry i's envelope segments with a positive slope, into out, their widths
 * counted for every job the entry stands for and added to *wsum. */
size_t alloc_job_segments(const pfi_alloc_problem *p, size_t i, struct seg *out, double *wsum)
{
    /* struct seg is two doubles: slope, width */
    return alloc_job_segments_into(p, i, &out->slope, sizeof *out / sizeof(double), wsum);
}

/* Entry i's envelope throughput at pw (no caps, no alternation: the totals). */
static double envelope_tput(const pfi_alloc_problem *p, size_t i, double pw)
{
    const double *P = p->cp + p->off[i], *T = p->ct + p->off[i];
    double ap = p->floor_w[i], at = p->ftput[i];
    for (size_t v = p->off[i]; v < p->eend[i] && pw > ap; v++) {
        double bp = P[p->ei[v]], bt = T[p->ei[v]];
        if (pw < bp) return at + p->es[v] * (pw - ap);
        ap = bp;
        at = bt;
    }
    return at;
}

int pfi_alloc_oracle(pfi_alloc_problem *p, double budget_w, double *power_w, double *total_tput,
                     pfi_error *err)
{
    int rc = alloc_check_budget(p, budget_w, err);
    if (rc) return rc;
    if (p->tree) {
        double total = NAN;
        if ((rc = alloc_tree_oracle(p, budget_w, power_w, &total, err)) != PFI_OK ||
            (rc = alloc_tree_verify(p, power_w, "oracle", err)) != PFI_OK)
            return rc;
        if (total_tput && !isnan(total)) {
            *total_tput = total;
        } else if (total_tput) {
            double sum = 0;
            for (size_t i = 0; i < p->n; i++)
                sum += p->cnt[i] * envelope_tput(p, i, power_w[i]);
            *total_tput = sum;
        }
        return PFI_OK;
    }
    size_t n = p->n, ns = 0;
    double L = budget_w - p->floor_total, wtot = 0, lambda = 0, above = 0, at_lambda = 0;
    for (size_t i = 0; i < n; i++)
        ns += alloc_job_segments(p, i, p->segs + ns, &wtot);
    int fill_all = wtot <= L;
    if (!fill_all && L > 0) lambda = select_threshold(p->segs, ns, L, &above, &at_lambda);
    /* the watts left for the segments at lambda, shared by all of them in
     * proportion to their widths, so that identical jobs get identical powers */
    double tie = fill_all || !(at_lambda > 0) ? 0 : fmin(1.0, fmax(0.0, L - above) / at_lambda);
    if (L <= 0) {
        lambda = INFINITY;
        tie = 0;
    }
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        const double *P = p->cp + p->off[i], *T = p->ct + p->off[i];
        /* (ap, at): the current segment's start vertex; (pw, tp): the power
         * and envelope throughput given so far. Every segment at exactly
         * lambda gets its share, consecutive ones of one job included (an
         * envelope may hold collinear runs whose slopes round equal). */
        double ap = p->floor_w[i], at = p->ftput[i], pw = ap, tp = at;
        for (size_t v = p->off[i]; v < p->eend[i]; v++) {
            double bp = P[p->ei[v]], bt = T[p->ei[v]];
            if (!(bt > at)) break;
            double dp = bp - ap, slope = p->es[v];
            if (fill_all || slope > lambda) {
                pw = bp;
                tp = bt;
            } else if (slope == lambda && tie > 0) {
                pw += tie * dp;
                tp += slope * tie * dp;
            } else {
                break;
            }
            ap = bp;
            at = bt;
        }
        power_w[i] = pw;
        total += p->cnt[i] * tp;
    }
    if (total_tput) *total_tput = total;
    return PFI_OK;
}

/* The envelope throughput at power_w and whether reaching it needs two caps:
 * it does when the plain curve lies below the envelope there (a skipped
 * point under the chord); otherwise the interpolated cap reaches it. */
void alloc_envelope_point(const pfi_alloc_problem *p, size_t i, double pw, int caps,
                          pfi_alloc_out *o)
{
    const double *P = p->cp + p->off[i], *T = p->ct + p->off[i], *C = p->cc + p->off[i];
    double ap = p->floor_w[i], at = p->ftput[i];
    double ac = caps ? pfi_alloc_problem_cap_at(p, i, ap) : 0;
    o->alternates = 0;
    o->tput = at;
    o->cap_w = ac;
    for (size_t v = p->off[i]; v < p->eend[i] && pw > ap; v++) {
        double bp = P[p->ei[v]], bt = T[p->ei[v]], bc = C[p->ei[v]];
        if (pw >= bp) {
            ap = bp;
            at = bt;
            ac = bc;
            o->tput = bt;
            o->cap_w = bc;
            continue;
        }
        double share = (pw - ap) / (bp - ap);
        o->tput = at + share * (bt - at);
        if (pfi_alloc_problem_tput_at(p, i, pw) >= o->tput - 1e-9 * fmax(1.0, p->tmax[i])) {
            if (caps) o->cap_w = pfi_alloc_problem_cap_at(p, i, pw);
            return;
        }
        o->alternates = 1;
        o->alt_low_cap_w = ac;
        o->alt_high_cap_w = bc;
        o->alt_high_share = share;
        o->cap_w = ac + share * (bc - ac);
        return;
    }
}
