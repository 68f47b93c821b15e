/* libFuzzer target: pfi-model files (pfi predict --model, pfid). A model that
 * loads must be usable as is: 1..PFI_MODEL_MAX_P known, distinct features,
 * finite coefficients and a finite prediction; a failure carries a message.
 * Then the telemetry features of the input read as a row of numbers must never
 * come out inf or NaN. Never a crash or a leak. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pfi/features.h"
#include "pfi/model_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t je;
    json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
    if (j) {
        pfi_model_file m;
        pfi_error err;
        pfi_error_clear(&err);
        if (pfi_model_from_json(j, &m, &err) == PFI_OK) {
            if (m.set.p == 0 || m.set.p > PFI_MODEL_MAX_P || m.ols.p != m.set.p) __builtin_trap();
            double x[PFI_MODEL_MAX_P];
            for (size_t k = 0; k < m.set.p; k++) {
                if (!pfi_feature_name(m.set.ids[k]) || !isfinite(m.ols.coef[k + 1]))
                    __builtin_trap();
                for (size_t i = 0; i < k; i++)
                    if (m.set.ids[i] == m.set.ids[k]) __builtin_trap();
                x[k] = 0;
            }
            if (!isfinite(pfi_model_predict(&m.ols, x)) || !(m.boost_mhz > 0)) __builtin_trap();
        } else if (!err.msg[0]) {
            __builtin_trap();
        }
        json_decref(j);
    }
    /* features of arbitrary non-negative field values (the telemetry reader
     * rejects negatives, NaN and inf): finite or flagged, never inf/NaN */
    pfi_tm_row row;
    memset(&row, 0, sizeof row);
    for (int f = 0; f < PFI_TM_NFIELDS && (size_t)(f + 1) * sizeof(double) <= size; f++) {
        double v;
        memcpy(&v, data + (size_t)f * sizeof v, sizeof v);
        if (isfinite(v) && v >= 0) {
            row.v[f] = v;
            row.valid |= 1u << f;
        }
    }
    pfi_features out;
    if (pfi_features_compute(&row, 1980, &out) != PFI_OK) __builtin_trap();
    for (int f = 0; f < PFI_FEAT_COUNT; f++)
        if (!isfinite(out.v[f])) __builtin_trap();
    return 0;
}
