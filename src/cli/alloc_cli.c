/* See alloc_cli.h. */
#include "alloc_cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pfi/csv.h"
#include "pfi/index.h"
#include "pfi/sweeps_csv.h"

void pfi_cli_curves_free(pfi_cli_curves *c)
{
    free(c->g);
    free(c->off);
    free(c->P);
    free(c->T);
    free(c->C);
    free(c->pfi);
    free(c->pfi_hat);
    free(c->dram);
    memset(c, 0, sizeof *c);
}

int pfi_cli_curves_build(const char *cmd, const pfi_sweeps *s, pfi_cli_curves *c)
{
    memset(c, 0, sizeof *c);
    size_t n = pfi_sweeps_count(s), runs = 0;
    for (size_t i = 0; i < n; i++)
        runs += pfi_sweeps_group(s, i)->n_runs;
    c->n = n;
    c->g = calloc(n ? n : 1, sizeof *c->g);
    c->off = calloc(n + 1, sizeof *c->off);
    c->P = calloc(runs ? runs : 1, sizeof(double));
    c->T = calloc(runs ? runs : 1, sizeof(double));
    c->C = calloc(runs ? runs : 1, sizeof(double));
    c->pfi = calloc(n ? n : 1, sizeof(double));
    c->pfi_hat = calloc(n ? n : 1, sizeof(double));
    c->dram = calloc(n ? n : 1, sizeof(double));
    if (!c->g || !c->off || !c->P || !c->T || !c->C || !c->pfi || !c->pfi_hat || !c->dram) {
        pfi_cli_curves_free(c);
        fprintf(stderr, "pfi %s: out of memory\n", cmd);
        return PFI_EXIT_DATA;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const pfi_group *g = c->g[i] = pfi_sweeps_group(s, i);
        c->off[i] = k;
        for (size_t r = 0; r < g->n_runs; r++, k++) {
            c->P[k] = g->runs[r].power_w;
            c->T[k] = g->runs[r].tput;
            c->C[k] = g->runs[r].cap_w;
        }
        pfi_index_result res;
        c->pfi[i] = pfi_index_group(g, PFI_METHOD_RATIO, NULL, &res) == PFI_OK && res.has_pfi
                        ? res.pfi
                        : NAN;
        c->pfi_hat[i] = c->dram[i] = NAN;
    }
    c->off[n] = k;
    return PFI_EXIT_OK;
}

int pfi_cli_alloc_dataset_load(const char *cmd, const char *sweeps, const char *telemetry,
                               const char *holdout, pfi_cli_dataset *d)
{
    memset(d, 0, sizeof *d);
    pfi_error err = {0};
    int rc = pfi_sweeps_read(sweeps, 0, &d->sweeps, &err);
    if (rc == PFI_OK) rc = pfi_telemetry_read(telemetry, &d->tm, &err);
    if (rc == PFI_OK) {
        /* swap the rows of unknown groups to the end and join the rest; the
         * table keeps (and later frees) every row */
        pfi_telemetry *t = d->tm;
        size_t all = t->n, kept = 0;
        for (size_t i = 0; i < all; i++)
            if (pfi_sweeps_find(d->sweeps, t->rows[i].group)) {
                pfi_tm_row tmp = t->rows[kept];
                t->rows[kept++] = t->rows[i];
                t->rows[i] = tmp;
            }
        t->n = kept;
        rc = pfi_analysis_join(d->sweeps, NULL, t, PFI_FEAT_H200_BOOST_MHZ, &d->obs, &d->n, &err);
        t->n = all;
        if (rc != PFI_OK) snprintf(err.file, sizeof err.file, "%s", telemetry);
    }
    if (rc != PFI_OK) {
        pfi_cli_dataset_free(d);
        return pfi_cli_fail(cmd, &err);
    }
    if (holdout) {
        pfi_csv *c = NULL;
        static const char *const need[] = {"group", NULL};
        rc = pfi_csv_read_file(holdout, &c, &err);
        if (rc == PFI_OK) rc = pfi_csv_require(c, need, &err);
        size_t col = rc == PFI_OK ? (size_t)pfi_csv_col(c, "group") : 0;
        for (size_t r = 0; rc == PFI_OK && r < pfi_csv_rows(c); r++) {
            const char *name = pfi_csv_field(c, r, col);
            size_t i = 0;
            while (i < d->n && strcmp(d->obs[i].name, name) != 0)
                i++;
            if (i < d->n)
                d->obs[i].holdout = 1;
            else
                rc = pfi_error_set(&err, PFI_ENOTFOUND, holdout, pfi_csv_line(c, r),
                                   "held-out group '%s' is not in the sweeps", name);
        }
        pfi_csv_destroy(c);
        if (rc != PFI_OK) {
            pfi_cli_dataset_free(d);
            return pfi_cli_fail(cmd, &err);
        }
    }
    return PFI_EXIT_OK;
}

static const pfi_obs *find_obs(const pfi_cli_dataset *d, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->obs[i].name, name) == 0) return &d->obs[i];
    return NULL;
}

int pfi_cli_curves_telemetry(const char *cmd, const pfi_cli_dataset *d, pfi_cli_curves *c)
{
    for (size_t i = 0; i < c->n; i++) {
        const pfi_obs *o = find_obs(d, c->g[i]->name);
        if (!o || !((o->f.valid >> PFI_FEAT_DRAM_COPY_PRODUCT) & 1u)) {
            fprintf(stderr, "pfi %s: group '%s' has no DRAM copy product in the telemetry\n", cmd,
                    c->g[i]->name);
            return PFI_EXIT_DATA;
        }
        c->dram[i] = o->f.v[PFI_FEAT_DRAM_COPY_PRODUCT];
    }
    return PFI_EXIT_OK;
}

int pfi_cli_curves_predict(const char *cmd, const pfi_cli_dataset *d, const pfi_feature_set *set,
                           const pfi_ols *m, pfi_cli_curves *c)
{
    for (size_t i = 0; i < c->n; i++) {
        const pfi_obs *o = find_obs(d, c->g[i]->name);
        double x[PFI_MODEL_MAX_P];
        for (size_t j = 0; j < set->p; j++) {
            int id = set->ids[j];
            if (!o || !((o->f.valid >> id) & 1u)) {
                fprintf(stderr, "pfi %s: group '%s': feature %s is %s in the telemetry\n", cmd,
                        c->g[i]->name, pfi_feature_name(id),
                        o && ((o->f.undefined >> id) & 1u) ? "undefined" : "missing");
                return PFI_EXIT_DATA;
            }
            x[j] = o->f.v[id];
        }
        c->pfi_hat[i] = pfi_model_predict(m, x);
    }
    return PFI_EXIT_OK;
}
