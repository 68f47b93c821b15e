/* A fitted PFI predictor as a JSON file (pfi fit --out, pfi predict --model):
 *
 *   {"format": "pfi-model", "version": 1, "kind": "ols",
 *    "features": ["dram_copy_product"], "intercept": 0.93,
 *    "coefficients": [0.047], "boost_mhz": 1980, "n_train": 25,
 *    "r2_in": 0.67, "rmse_in": 0.2}
 *
 * "coefficients" are in the features' raw units (pfi/features.h), one per
 * feature, in order. Loading checks everything: a known format and version,
 * known features without repeats, one finite coefficient per feature.
 */
#ifndef PFI_MODEL_JSON_H
#define PFI_MODEL_JSON_H

#include <jansson.h>

#include "pfi/analysis.h"
#include "pfi/model.h"

typedef struct pfi_model_file {
    pfi_feature_set set; /* features, in coefficient order */
    pfi_ols ols;         /* ols.p == set.p; r2, rmse, n informative */
    double boost_mhz;    /* boost clock the clock-fraction feature used */
} pfi_model_file;

/* A new JSON object (caller decrefs), or NULL on allocation failure. */
json_t *pfi_model_to_json(const pfi_model_file *m);
/* Parses a JSON object; errors name the offending key. */
int pfi_model_from_json(const json_t *j, pfi_model_file *m, pfi_error *err);

/* Writes atomically (no partial file on failure). */
int pfi_model_save(const char *path, const pfi_model_file *m, pfi_error *err);
int pfi_model_load(const char *path, pfi_model_file *m, pfi_error *err);

#endif
