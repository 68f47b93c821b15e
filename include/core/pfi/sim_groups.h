/* The groups the curtailment simulation (pfi/sim.h) samples jobs from, built
 * from sweeps and their telemetry observations (pfi/analysis.h) the way the
 * paper does: the PFI predictor is fitted by OLS on the uncapped runs'
 * telemetry of the groups that are not held out, and every group that is not
 * held out becomes a pfi_sim_group with its predicted PFI and DRAM copy
 * product. Shared by `pfi simulate` and the report.
 *
 * Ownership: pfi_sim_groups_build fills *out with arrays it allocates;
 * pfi_sim_groups_free (NULL-safe) releases them. Names and metadata are
 * borrowed from the sweeps, which must outlive *out.
 */
#ifndef PFI_SIM_GROUPS_H
#define PFI_SIM_GROUPS_H

#include <stddef.h>

#include "pfi/analysis.h"
#include "pfi/curve.h"
#include "pfi/error.h"
#include "pfi/model.h"
#include "pfi/sim.h"

typedef struct pfi_sim_groups {
    pfi_sim_group *g; /* n groups, in sweeps order */
    size_t n;
    double *buf; /* storage of the groups' cap, P and T arrays */
} pfi_sim_groups;

/* Fits the model of `set` on the non-holdout observations into *m, then
 * builds the groups. A sweep group without an observation is PFI_ENOTFOUND;
 * a feature of the set or the DRAM copy product missing or undefined for a
 * group is PFI_EUNDEFINED; a fit failure keeps pfi_model_ols's code. err
 * names the group. */
int pfi_sim_groups_build(const pfi_sweeps *s, const pfi_obs *obs, size_t nobs,
                         const pfi_feature_set *set, pfi_ols *m, pfi_sim_groups *out,
                         pfi_error *err);
void pfi_sim_groups_free(pfi_sim_groups *g);

#endif
