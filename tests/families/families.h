/* Seeded curve families for the allocation policies (issue 12, item 2):
 * shapes that real jobs have and that no GPU model promises. Shared by
 * tests/unit/test_families.c (asserts learn's bars on small sizes) and
 * bench/bench_families.c (prints the full table for the README).
 *
 * Every dataset is a set of sweep groups as pfi_sim_run takes them: a
 * sweep (per-GPU caps, aggregate power, throughput), the DRAM copy product
 * of its uncapped telemetry and the PFI predicted from it by least squares
 * (as the paper's predictor is fitted). The synthetic families' telemetry
 * is drawn so that the DRAM copy product's rank correlation with the
 * curves' PFI (Eq. 1) is about the paper's, 0.5 (within 0.1; the achieved
 * value is in fam_set.rank_corr).
 *
 * Deterministic for a seed (GSL mt19937). Test code: it aborts on running
 * out of memory rather than reporting it.
 */
#ifndef PFI_TEST_FAMILIES_H
#define PFI_TEST_FAMILIES_H

#include <gsl/gsl_rng.h>
#include <stddef.h>

#include "pfi/alloc.h"
#include "pfi/sim.h"

typedef enum {
    FAM_EMBEDDED,  /* the embedded dataset's 25 H200 headline groups */
    FAM_FLAT_KNEE, /* no loss until a knee, then falling (memory-bound) */
    FAM_SIGMOID,   /* loss a logistic step in the cut */
    FAM_BUMPS,     /* a power law with bumps: not concave */
    FAM_DEAD_ZONE, /* below a clock floor the GPU duty-cycles: throughput collapses */
    FAM_LINEAR,    /* loss proportional to the cut, PFI about 1 */
    FAM_H100,      /* the embedded dataset's 6 H100 groups */
    FAM_NOISY,     /* a power law measured with 0.5-1.5% noise per point: not monotone */
    FAM_MIX,       /* all of the above together */
    FAM_COUNT
} fam_kind;

const char *fam_name(fam_kind k); /* "embedded", "flat-knee", ... */
/* The family named name (as fam_name spells it), or -1: the benchmarks' --family. */
int fam_lookup(const char *name);
/* The benchmarks' --family NAME: marks on[its kind], or says on stderr that
 * prog knows no such family and returns -1. */
int fam_select(const char *prog, const char *name, int on[FAM_COUNT]);
/* Whether family k runs: every one when none was selected. */
int fam_selected(const int on[FAM_COUNT], int k);

typedef struct fam_set {
    pfi_sim_group *g;
    size_t n;
    double rank_corr; /* Spearman of the DRAM copy product with the measured PFI */
    /* storage */
    double *buf;
    char *names;
} fam_set;

/* Builds family k's groups. PFI_OK or a pfi error (the embedded dataset
 * failed to build). */
int fam_build(fam_kind k, unsigned long seed, fam_set *out);
void fam_free(fam_set *s);

/* A workload of n jobs, each a group of s drawn uniformly with r (as the
 * benchmarks that replay pfi simulate's draw use it: one entry per job,
 * count 0), into jobs; their curves point into s. */
void fam_workload(const fam_set *s, gsl_rng *r, pfi_alloc_job *jobs, size_t n);

#endif
