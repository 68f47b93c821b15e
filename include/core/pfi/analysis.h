/* The paper's telemetry analysis on sweep groups: joins each group's PFI with
 * its telemetry features, then correlations (Fig. 5/14), the predictor
 * ablation (Table 3), validation on held-out groups, leverage sensitivity
 * (Table 12) and subgroup correlations (Table 13).
 *
 * Ownership: pfi_analysis_join returns an array the caller frees with free();
 * its strings are borrowed from the sweeps, which must outlive it.
 */
#ifndef PFI_ANALYSIS_H
#define PFI_ANALYSIS_H

#include <stddef.h>

#include "pfi/curve.h"
#include "pfi/error.h"
#include "pfi/features.h"
#include "pfi/model.h"
#include "pfi/telemetry.h"

/* arch x task clusters of the LOCO cross-validation */
enum {
    PFI_CLUSTER_DENSE_PT,
    PFI_CLUSTER_DENSE_FT,
    PFI_CLUSTER_MOE_PT,
    PFI_CLUSTER_MOE_FT,
    PFI_CLUSTER_COUNT
};
/* "dense-pt", "dense-ft", "moe-pt", "moe-ft" */
const char *pfi_cluster_name(int cluster);

typedef struct pfi_obs {
    const char *name, *arch, *task; /* borrowed from the sweeps */
    int gpus;
    double pfi;     /* ratio PFI (Eq. 1) */
    pfi_features f; /* telemetry + metadata features */
    int cluster;    /* PFI_CLUSTER_* */
    int holdout;    /* 1: validation group, left out of fits and tests */
    long tm_line;   /* telemetry.csv line of the group */
} pfi_obs;

/* One observation per telemetry row, in telemetry order. `held` (may be
 * NULL) holds validation groups: their observations get holdout = 1. A
 * telemetry row naming a group in neither sweeps is PFI_ENOTFOUND (err names
 * the line); so is a sweep group without a telemetry row (err names the
 * group); a group in both sweeps is PFI_EINVAL; a group whose PFI is
 * undefined is PFI_EUNDEFINED. boost_mhz as in pfi_features_compute. */
int pfi_analysis_join(const pfi_sweeps *s, const pfi_sweeps *held, const pfi_telemetry *t,
                      double boost_mhz, pfi_obs **out, size_t *n, pfi_error *err);

typedef struct pfi_feature_set {
    char name[160]; /* e.g. "dram_copy_product+job_metadata" */
    size_t p;
    int ids[PFI_MODEL_MAX_P]; /* pfi_feature ids */
} pfi_feature_set;

#define PFI_TABLE3_SETS 7
/* The seven predictor sets of Table 3, in its order: dram_copy_product,
 * arithmetic_intensity, their pair, job_metadata (arch_moe, task_ft,
 * log2_gpus), dram_copy_product+job_metadata, all_dcgm (the 13 DCGM
 * metrics), all_dcgm+job_metadata. */
void pfi_analysis_table3_sets(pfi_feature_set out[PFI_TABLE3_SETS]);

/* Parses "a,b" or "a+b": feature names (pfi_feature_name) and the groups
 * job_metadata and all_dcgm. Unknown or repeated names are PFI_EINVAL. */
int pfi_analysis_parse_set(const char *spec, pfi_feature_set *out, pfi_error *err);

/* A statistic that may be undefined: rc is PFI_OK or why not (msg). */
typedef struct pfi_cv_outcome {
    int rc;
    char msg[512];
    pfi_cv cv;
} pfi_cv_outcome;

typedef struct pfi_ablation {
    pfi_feature_set set;
    size_t n;   /* training groups */
    int fit_rc; /* PFI_OK or why the full fit failed (fit_msg) */
    char fit_msg[512];
    pfi_ols ols; /* valid when fit_rc == PFI_OK */
    pfi_cv_outcome loo, loco;
    int has_val; /* held-out groups were present and the fit worked */
    pfi_validation val;
} pfi_ablation;

/* Fits the set on the non-holdout observations, cross-validates it (LOO and
 * LOCO over arch x task), and validates it on the holdout ones. A feature
 * missing or undefined for a group fails the set with that group named. */
int pfi_analysis_ablation(const pfi_obs *obs, size_t n, const pfi_feature_set *set,
                          pfi_ablation *out);

/* The design matrix of a set over observations with holdout == want_holdout:
 * X (rows x p, row-major) and y; *rows gets the row count. Arrays hold n
 * rows at least. PFI_EUNDEFINED naming the group and feature when one is
 * not valid. */
int pfi_analysis_matrix(const pfi_obs *obs, size_t n, const pfi_feature_set *set, int want_holdout,
                        double *X, double *y, size_t *rows, pfi_error *err);

typedef struct pfi_corr {
    int feature;      /* pfi_feature id */
    size_t n;         /* groups where the feature is valid */
    int has;          /* rho defined */
    double rho, p, q; /* q: Benjamini-Hochberg over the features with has */
    char why[128];    /* when !has */
} pfi_corr;

/* Spearman of every telemetry feature (PFI_FEAT_N_TELEMETRY of them, out has
 * that many) against PFI over the non-holdout groups, with BH q-values. */
int pfi_analysis_corr(const pfi_obs *obs, size_t n, pfi_corr *out);

typedef struct pfi_subgroup_rho {
    const char *name; /* "dense", "moe", "all-but-moe-ft", "all" */
    size_t n;
    int has;
    double rho, p;
} pfi_subgroup_rho;

#define PFI_TABLE13_SUBGROUPS 4
/* Table 13: Spearman of one feature against PFI within subgroups of the
 * non-holdout groups. */
int pfi_analysis_subgroups(const pfi_obs *obs, size_t n, int feature,
                           pfi_subgroup_rho out[PFI_TABLE13_SUBGROUPS]);

#endif
