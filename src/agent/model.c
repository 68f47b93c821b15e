/* The live PFI estimate. The predictor's file format belongs to the model
 * module (include/pfi/model.h); until it can load a saved model, --model is
 * refused at start rather than accepted and ignored, and pfi_estimate stays
 * absent (null in JSON, no series in /metrics). */
#include "agent.h"

int agent_model_load(agent *a, const char *path, pfi_error *err)
{
    (void)a;
    return pfi_error_set(err, PFI_ENOTSUP, path, 0,
                         "--model: loading a saved predictor is not supported by this build");
}

void agent_model_estimate(agent *a, const agent_job *j, job_agg *agg)
{
    (void)j;
    agg->has_pfi = 0;
    if (!a->model) return;
}
