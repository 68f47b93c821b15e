/* The report's computed analysis: every number a table or figure shows,
 * computed once through core (and read through io), then drawn and written.
 * Private to src/report. */
#ifndef PFI_REPORT_RDATA_H
#define PFI_REPORT_RDATA_H

#include <stddef.h>

#include "pfi/analysis.h"
#include "pfi/ci.h"
#include "pfi/curve.h"
#include "pfi/index.h"
#include "pfi/model.h"
#include "pfi/paper_groups.h"
#include "pfi/regime.h"
#include "pfi/sim.h"
#include "pfi/telemetry_csv.h"
#include "rtrace.h"

typedef struct rd_group {
    const pfi_group *g;
    int cluster;              /* PFI_CLUSTER_* */
    pfi_index_result idx;     /* ratio, area, CE */
    double ce_alpha, ce_logk; /* log T = alpha log P + log k (Fig. 9), valid with idx.has_ce */
    pfi_ci ci;
    const pfi_paper_group *paper; /* the paper's group of this name, or NULL */
    int has4;                     /* runs at 200/500/600/700 W and more (Table 9) */
    double pfi4;
    int held;     /* a held-out group */
    int has_pred; /* pred valid: LOO (training) or model (held out) */
    double pred;
} rd_group;

#define RD_MAX_NOTES 24
/* The fewest groups a statistic is shown for; below it a note says so. A
 * Spearman test of fewer than 5 pairs cannot reach p < 0.05 (its smallest
 * exact two-sided p with 4 is 1/12), and a rank test on a regime of one
 * group says nothing about the regime. */
#define RD_MIN_RHO 5
#define RD_MIN_RHO_S "5"
#define RD_MIN_REGIME 2

/* Table 8: one of our groups and the same job swept on another GPU. */
typedef struct rd_pair {
    const rd_group *a;  /* ours (training or held-out) */
    const pfi_group *b; /* the other GPU's, from rd_data.other */
    int has;            /* both PFIs defined */
    double pfi_a, pfi_b;
} rd_pair;

typedef struct rd_data {
    pfi_sweeps *s, *held;
    pfi_telemetry *tm;
    pfi_obs *obs;
    size_t nobs;
    rd_group *grp; /* training groups, then held-out ones */
    size_t ng, nh;
    int paper; /* every training group is one of the paper's (paper values apply) */
    pfi_regime_stats regimes;
    int has_regimes;
    /* telemetry */
    int has_tm;
    pfi_corr corr[PFI_FEAT_N_TELEMETRY];
    pfi_ablation ab[PFI_TABLE3_SETS];
    int best_set; /* index into ab: highest LOCO R2 */
    int has_lev;
    size_t kmax;
    pfi_leverage_step lev[6];
    const char *lev_dropped[6];
    pfi_subgroup_rho sub[PFI_TABLE13_SUBGROUPS];
    /* simulation, one per mix */
    int has_sim[2];
    pfi_sim_result sim[2];
    size_t workloads, jobs;
    char sim_why[256];
    /* the probe: per load its mean SM and memory clock at the 700 W limit */
    int has_probe;
    size_t n_probe;
    char probe_name[4][16];
    double probe_sm[4], probe_mem[4];
    /* Table 8: the same jobs on another GPU (NULL when not given) */
    pfi_sweeps *other;
    rd_pair *pairs;
    size_t npairs;
    int has_match_stats; /* >= 3 pairs with both PFIs and a defined rho */
    double match_rho, match_max_abs, match_median_rel; /* rel: |b - a| / a */
    rd_trace trace;                                    /* Fig. 2 (rd_trace_load) */
    char notes[RD_MAX_NOTES][640];                     /* sections skipped and why */
    size_t n_notes;
} rd_data;

void rd_note(rd_data *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reads the inputs (sweeps required; telemetry and heldout may be NULL) and
 * joins them; every problem with a file is reported here. tdp_w: the TDP of
 * groups on platforms pfi does not know (0: such a group is an error, < 0:
 * not checked). */
int rd_load(rd_data *d, const char *sweeps, const char *telemetry, const char *heldout,
            double tdp_w, pfi_error *err);
/* The stages, in order; each needs rd_load. */
int rd_index(rd_data *d, size_t ci_draws, int threads, pfi_error *err);
int rd_regimes(rd_data *d, pfi_error *err);
int rd_telemetry(rd_data *d, pfi_error *err); /* corr, ablation, validation, Tables 12-13 */
int rd_simulate(rd_data *d, size_t workloads, int threads, void (*progress)(void *, size_t, size_t),
                void *ctx, pfi_error *err);
int rd_probe(rd_data *d, const char *probe_dir, pfi_error *err);
/* Table 8: reads the other GPU's sweeps (after rd_load, before any work, so
 * a bad file is reported first), then pairs them with ours by name with the
 * platform blanked (pfi/group_key.h) once rd_index has run. */
int rd_load_matched(rd_data *d, const char *sweeps, pfi_error *err);
int rd_match(rd_data *d, pfi_error *err);
/* Fig. 8 from `pfi simulate --json` outputs instead (paths[1] may be NULL):
 * each file fills the slot of its mix. Errors name the file. */
int rd_sim_from_json(rd_data *d, const char *const paths[2], pfi_error *err);
/* The same for one document in memory (tests/fuzz/fuzz_sim_json.c); name
 * stands for the file in errors. */
int rd_sim_from_json_text(rd_data *d, const char *buf, size_t len, const char *name,
                          pfi_error *err);
void rd_free(rd_data *d);
/* Fig. 9's job: the paper's (gpt-oss-20b fine-tuning on 8 GPUs; it has two
 * and does not say which: the first training group of them), else the first
 * training group; NULL when none. */
const rd_group *rd_ce_job(const rd_data *d);

/* The reductions of the simulation (fractions), and which is "at 30%". */
extern const double rd_reductions[];
extern const size_t rd_n_reductions;
#define RD_R30 4

#endif
