/* The allocation problem's layout, shared by src/core/alloc*.c (private:
 * callers see only pfi/alloc.h's opaque handle).
 *
 * alloc.c         building a problem: validation, sorted curves, floors,
 *                 envelopes, counts; reset and update; accessors
 * alloc_share.c   the proportional policies (shares with floors)
 * alloc_oracle.c  the exact oracle over the envelopes
 * alloc_run.c     a policy's allocation with per-job output and totals
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
    /* capacities (elements) of the buffers above, so that reset reuses them */
    size_t cap_jobs, cap_pts, cap_names;
};

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
