/* See pfi/sim_groups.h. */
#include "pfi/sim_groups.h"

#include <stdlib.h>
#include <string.h>

static const pfi_obs *find_obs(const pfi_obs *obs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(obs[i].name, name) == 0) return &obs[i];
    return NULL;
}

static int fit(const pfi_obs *obs, size_t nobs, const pfi_feature_set *set, pfi_ols *m,
               pfi_error *err)
{
    double *X = malloc((nobs ? nobs : 1) * (set->p ? set->p : 1) * sizeof *X);
    double *y = malloc((nobs ? nobs : 1) * sizeof *y);
    size_t rows = 0;
    int rc = X && y ? pfi_analysis_matrix(obs, nobs, set, 0, X, y, &rows, err)
                    : pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    if (rc == PFI_OK) rc = pfi_model_ols(X, y, rows, set->p, m, err);
    free(X);
    free(y);
    return rc;
}

void pfi_sim_groups_free(pfi_sim_groups *g)
{
    if (!g) return;
    free(g->g);
    free(g->buf);
    memset(g, 0, sizeof *g);
}

int pfi_sim_groups_build(const pfi_sweeps *s, const pfi_obs *obs, size_t nobs,
                         const pfi_feature_set *set, pfi_ols *m, pfi_sim_groups *out,
                         pfi_error *err)
{
    if (!s || !set || !m || !out || (nobs && !obs))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "bad argument");
    memset(out, 0, sizeof *out);
    int rc = fit(obs, nobs, set, m, err);
    if (rc != PFI_OK) return rc;
    size_t ng = pfi_sweeps_count(s), runs = 0;
    for (size_t i = 0; i < ng; i++)
        runs += pfi_sweeps_group(s, i)->n_runs;
    out->g = calloc(ng ? ng : 1, sizeof *out->g);
    out->buf = malloc((runs ? runs : 1) * 3 * sizeof *out->buf);
    if (!out->g || !out->buf) {
        pfi_sim_groups_free(out);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    double *C = out->buf, *P = C + runs, *T = P + runs;
    size_t k = 0;
    for (size_t i = 0; i < ng; i++) {
        const pfi_group *gr = pfi_sweeps_group(s, i);
        const pfi_obs *o = find_obs(obs, nobs, gr->name);
        if (!o) {
            pfi_sim_groups_free(out);
            return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0,
                                 "group '%s' has no row in the telemetry", gr->name);
        }
        if (o->holdout) continue;
        double x[PFI_MODEL_MAX_P];
        for (size_t j = 0; j <= set->p; j++) {
            /* the set's features, then the DRAM copy product (dram-copy policy) */
            int id = j < set->p ? set->ids[j] : PFI_FEAT_DRAM_COPY_PRODUCT;
            if (!((o->f.valid >> id) & 1u)) {
                pfi_sim_groups_free(out);
                return pfi_error_set(err, PFI_EUNDEFINED, NULL, 0,
                                     "group '%s': feature %s is %s in the telemetry", gr->name,
                                     pfi_feature_name(id),
                                     ((o->f.undefined >> id) & 1u) ? "undefined" : "missing");
            }
            if (j < set->p) x[j] = o->f.v[id];
        }
        pfi_sim_group *g = &out->g[out->n++];
        *g = (pfi_sim_group){.name = gr->name,
                             .cap = C + k,
                             .P = P + k,
                             .T = T + k,
                             .n = gr->n_runs,
                             .pfi_hat = pfi_model_predict(m, x),
                             .dram_copy = o->f.v[PFI_FEAT_DRAM_COPY_PRODUCT],
                             .moe = strcmp(gr->meta.arch, "moe") == 0,
                             .ft = strcmp(gr->meta.task, "ft") == 0,
                             .gpus = gr->meta.gpus};
        for (size_t r = 0; r < gr->n_runs; r++, k++) {
            C[k] = gr->runs[r].cap_w;
            P[k] = gr->runs[r].power_w;
            T[k] = gr->runs[r].tput;
        }
    }
    return PFI_OK;
}
