/* The live PFI estimate: the --model predictor (pfi fit --out, a
 * pfi-model JSON file) applied to a job's features, computed from the
 * top-10% training-phase aggregates as the predictor's training data were
 * (telemetry of the uncapped run's training phase). */
#include <math.h>
#include <stdlib.h>

#include "agent.h"
#include "pfi/features.h"
#include "pfi/model_json.h"

/* Loads path and puts it in place under mu: the running sampler and
 * scrapes see the old model or the new one, never half of either. */
int agent_model_load(agent *a, const char *path, pfi_error *err)
{
    pfi_model_file *m = calloc(1, sizeof *m);
    if (!m) return pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    int rc = pfi_model_load(path, m, err);
    if (rc != PFI_OK) {
        free(m);
        return rc;
    }
    pthread_mutex_lock(&a->mu);
    pfi_model_file *old = a->model;
    a->model = m;
    /* The clock-fraction feature must use the boost clock it was fitted with. */
    a->boost_mhz = m->boost_mhz > 0 ? m->boost_mhz : PFI_AGENT_BOOST_MHZ;
    for (size_t i = 0; i < a->n_jobs; i++)
        a->jobs[i]->agg_valid = 0; /* re-estimate */
    a->gen++;
    pthread_mutex_unlock(&a->mu);
    free(old);
    pfi_log("model %s: %s (%zu feature(s))", path, m->set.name, m->set.p);
    return PFI_OK;
}

/* The estimate's SD for a new job: the residual SE with its degrees of
 * freedom, sqrt(n / (n - p - 1)) x the in-sample RMSE, and the fit's own
 * error, sqrt(1 + 1/n) (the prediction SE without the leverage, which the
 * file does not keep: 0.219 for the DRAM-copy model on the dataset, whose
 * leave-one-out RMSE is 0.241). NaN when the file cannot say. */
double agent_model_sd(const pfi_ols *m)
{
    double n = (double)m->n, p = (double)m->p;
    if (!(m->rmse > 0) || !(n > p + 1)) return NAN;
    return m->rmse * sqrt(n / (n - p - 1)) * sqrt(1 + 1 / n);
}

void agent_model_estimate(agent *a, const agent_job *j, job_agg *agg)
{
    agg->has_pfi = 0;
    if (!a->model || !agg->training) return;
    pfi_features ft;
    agent_job_features(a, j, agg, &ft);
    double x[PFI_MODEL_MAX_P];
    for (size_t k = 0; k < a->model->set.p; k++) {
        int id = a->model->set.ids[k];
        /* Job metadata come from the registration (arch, task): a job
         * registered without them has no estimate from a model that needs
         * them, rather than a guess. */
        if (!(ft.valid & (1u << id))) return;
        x[k] = ft.v[id];
    }
    double v = pfi_model_predict(&a->model->ols, x);
    if (!isfinite(v)) return;
    agg->pfi = v;
    agg->pfi_sd = agent_model_sd(&a->model->ols);
    agg->has_pfi = 1;
}
