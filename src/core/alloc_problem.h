/* The allocation problem's layout, shared by src/core/alloc*.c (private:
 * callers see only pfi/alloc.h's opaque handle).
 *
 * alloc.c         building a problem: validation, sorted curves, floors,
 *                 envelopes, counts; reset and update; accessors
 * alloc_share.c   the proportional policies (shares with floors)
 * alloc_oracle.c  the exact oracle over the envelopes
 * alloc_run.c     a policy's allocation with per-job output and totals
 * alloc_tree.c    nested budgets: the tree, its checks, domain powers
 * alloc_tree_oracle.c, alloc_tree_lp.c, alloc_tree_share.c
 *                 the oracle and the proportional policies under the tree
 */
#ifndef PFI_ALLOC_PROBLEM_H
#define PFI_ALLOC_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include "pfi/alloc.h"

struct kv {
    double key;    /* sort key */
    size_t i;      /* job */
    double sp, sw; /* water-fill's sweep: sums of count x Pmax and x weight from here on */
};

struct seg {
    double slope; /* tokens/s per W */
    double width; /* W */
};

struct pfi_alloc_problem {
    size_t n;
    size_t *off;          /* n + 1: job i's curve points are [off[i], off[i+1]) */
    double *cp, *ct, *cc; /* curve points sorted by power: power, throughput, cap */
    /* Job i's envelope on [floor, Pmax]: the floor point (floor_w, ftput),
     * then the curve points ei[off[i] .. eend[i]) (indices into the job's
     * own points; a job's envelope has at most its points, so it lives in
     * the job's own slot and one job can be rebuilt alone, see _update).
     * Indices, not copies: the set-up writes less memory. */
    size_t *eend;
    uint32_t *ei;
    /* es[v]: the slope of the envelope segment that ends at vertex ei[v]
     * (from the one before it, or the floor point), as alloc_slope gives it:
     * the hull divides once and the oracle reads it twice a run */
    double *es;
    double *cnt; /* jobs each entry stands for (>= 1) */
    double *pmax, *tmax, *floor_w, *ftput;
    double *pfi, *dram;
    unsigned char *moe_ft;
    const char **names; /* into name_buf; NULL where the job had none */
    char *name_buf;
    double pmax_total, floor_total;
    /* scratch for the runs */
    struct seg *segs;
    double *w, *wn, *room, *shed, *pw;
    struct kv *kv;
    /* _update's: the new offsets (n + 1) and which entries it rebuilds */
    size_t *noff;
    unsigned char *mark;
    /* capacities (elements) of the buffers above, so that reset reuses them */
    size_t cap_jobs, cap_pts, cap_names;
    struct alloc_tree *tree;     /* nested budgets; NULL when none is set */
    struct alloc_tree *tree_mem; /* the memory of the last tree set, kept for the next */
};

/* An envelope segment of job `job` in domain `home` (UINT32_MAX: spread),
 * as the tree's oracle walks them; 32-bit indices keep it 24 bytes. */
struct tseg {
    double slope, width;
    uint32_t job, home;
};
_Static_assert(sizeof(struct tseg) == 3 * sizeof(double) &&
                   sizeof(struct seg) == 2 * sizeof(double),
               "alloc_job_segments_into writes records of whole doubles");

/* Entry i's envelope segments with a positive slope from its floor up, into
 * out, widths counted for every job the entry stands for, added to *wsum. */
size_t alloc_job_segments(const pfi_alloc_problem *p, size_t i, struct seg *out, double *wsum);

/* The same into any array of records that start with the two doubles
 * (slope, width), stride doubles apart: the flat oracle's struct seg and the
 * tree's struct tseg are filled by one walk of the envelope. */
static inline size_t alloc_job_segments_into(const pfi_alloc_problem *p, size_t i, double *out,
                                             size_t stride, double *wsum)
{
    size_t k = 0;
    double c = p->cnt[i];
    const double *P = p->cp + p->off[i], *T = p->ct + p->off[i];
    double ap = p->floor_w[i], at = p->ftput[i];
    for (size_t v = p->off[i]; v < p->eend[i]; v++) {
        double bp = P[p->ei[v]], bt = T[p->ei[v]];
        if (!(bt > at)) break; /* concave: every later segment is flatter */
        out[k * stride] = p->es[v];
        out[k * stride + 1] = c * (bp - ap);
        *wsum += c * (bp - ap);
        k++;
        ap = bp;
        at = bt;
    }
    return k;
}

/* A job's home when its power lands in several domains. */
#define ALLOC_SPREAD ((size_t)-1)

/* The tree of pfi_alloc_problem_set_tree. Domains are in pre-order, so a
 * domain's subtree is [d, end[d]); the jobs sorted by home domain put a
 * subtree's home jobs in one range too, order[jstart[d] .. jstart[end[d]]). */
struct alloc_tree {
    size_t nd, n_jobs;                       /* domains; the job count it was set for */
    size_t cap_nd, cap_n, cap_ns, cap_names; /* what its buffers hold */
    size_t *parent, *end;
    double *limit, *fixed, *fixed_sub; /* fixed_sub: fixed power of the subtree */
    const char **names;                /* into name_buf; NULL where none */
    char *name_buf;
    size_t *home;           /* per job: its one domain, or ALLOC_SPREAD */
    size_t *soff;           /* n_jobs + 1: a spread job's spans [soff[i], soff[i+1]) */
    size_t *sdom;           /* their domains */
    double *sshare;         /* and shares */
    size_t *order, *jstart; /* jobs by home (spread ones last); jstart: nd + 1 */
    size_t n_spread;        /* spread jobs: order[jstart[nd] ..) */
    double *dpow;           /* after a run: each domain's power, W */
    int have_pow;
    double *resid, *dem, *g, *own; /* per-domain scratch (g: max of domains and jobs) */
    double *gw;                    /* 2 nd doubles of scratch */
    struct tseg *ts, *ts2;         /* the oracle's segments, cap_ts; scratch, 2 cap_ts */
    size_t cap_ts;
    unsigned char *blocked; /* per domain: it or an ancestor has no room left */
    uint32_t *blocked_at;   /* per domain: the top-level bucket after which it was */
    uint32_t cur;           /* the top-level bucket being taken */
    double *qdem;           /* top-level buckets x domains: the buckets' demands */
    unsigned char *okq;     /* domains x top-level buckets: taken whole */
    uint32_t *qidx;         /* the segments by top-level bucket (cap_ts) */
    unsigned char *qb;      /* each segment's top-level bucket (cap_ts) */
    double *bdem;           /* per domain: a bucket's demand */
    double tp;              /* the greedy's throughput above the floors so far */
    size_t *touched;        /* per-domain scratch */
    unsigned char *mark;    /* per-domain scratch */
};

/* The label of domain d ("#<d>" in buf when it has no name). */
const char *alloc_tree_label(const struct alloc_tree *t, size_t d, char *buf, size_t len);
/* The watts domain a (with its subtree) may give the jobs above their
 * floors, the root's also under budget_w; PFI_EINFEASIBLE naming the first
 * domain (pre-order) whose floors and fixed power exceed its limit. */
int alloc_tree_room(pfi_alloc_problem *p, double budget_w, double *room, pfi_error *err);
/* Each domain's power (jobs at power_w plus fixed) into t->dpow. */
void alloc_tree_powers(pfi_alloc_problem *p, const double *power_w);
/* The share of job i's power that lands in domain a's subtree. */
double alloc_tree_alpha(const struct alloc_tree *t, size_t i, size_t a);
/* The nested oracle's and proportional policies' powers (same contracts as
 * pfi_alloc_oracle's and pfi_alloc_proportional's, under the tree); the
 * oracle's total throughput into *total when it has it, else NAN. */
int alloc_tree_oracle(pfi_alloc_problem *p, double budget_w, double *power_w, double *total,
                      pfi_error *err);
/* Every job's envelope segments (positive slopes) into t->ts, *count of
 * them, and the least and greatest of their slopes' bit patterns. */
int alloc_tree_segments(pfi_alloc_problem *p, size_t *count, uint64_t *kmin, uint64_t *kmax,
                        pfi_error *err);
/* The greedy over single-domain segments a[0..n) (moved; b: n of scratch),
 * from room (spent) into added (per entry, added to). */
void alloc_tree_greedy(pfi_alloc_problem *p, struct tseg *a, struct tseg *b, size_t n, double *room,
                       double *added);
int alloc_tree_lp(pfi_alloc_problem *p, const double *room, double *power_w, pfi_error *err);
int alloc_tree_share(pfi_alloc_problem *p, const double *w, double budget_w, double *power_w,
                     pfi_error *err);
/* PFI_OK when every domain's power is within its limit (up to rounding),
 * else PFI_EINFEASIBLE naming the domain; fills t->dpow. */
int alloc_tree_verify(pfi_alloc_problem *p, const double *power_w, const char *what,
                      pfi_error *err);
/* Takes back what rounding left over a domain's room (room as
 * alloc_tree_room gives it): the watts above the floors of the jobs in each
 * such domain shrink by one factor. */
void alloc_tree_fit(pfi_alloc_problem *p, const double *room, double *power_w);
void alloc_tree_free(struct alloc_tree *t);

/* The slope of an envelope segment from (ap, at) to (bp, bt), bp > ap, in
 * tokens/s per W: one formula wherever a segment's slope is needed, so that
 * equal segments compare equal everywhere. */
static inline double alloc_slope(double ap, double at, double bp, double bt)
{
    return (bt - at) / (bp - ap);
}

/* The job's name, or "#<i+1>" in buf. */
const char *alloc_label(const pfi_alloc_problem *p, size_t i, char *buf, size_t len);
/* PFI_OK, or the error for an empty problem, a bad budget or one below the
 * floors (PFI_EINFEASIBLE). */
int alloc_check_budget(const pfi_alloc_problem *p, double budget_w, pfi_error *err);
/* Job i's envelope throughput at power_w into o (tput, alternates and its
 * caps; cap_w when caps). */
void alloc_envelope_point(const pfi_alloc_problem *p, size_t i, double pw, int caps,
                          pfi_alloc_out *o);

#endif
