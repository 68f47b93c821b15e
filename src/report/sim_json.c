/* See rd_sim_from_json in rdata.h: `pfi simulate --json` back into a
 * pfi_sim_result, so `pfi plot gap` draws what simulate printed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rdata.h"

static int policy_of(const char *name)
{
    for (int p = 0; p < PFI_SIM_NPOLICIES; p++)
        if (strcmp(pfi_sim_policy_name(p), name) == 0) return p;
    return -1;
}

static int bad(pfi_error *err, const char *path, size_t i, const char *what)
{
    return pfi_error_set(err, PFI_EPARSE, path, 0, "results[%zu]: %s", i, what);
}

/* root is borrowed; path names it in errors */
static int from_root(rd_data *d, json_t *root, const char *path, pfi_error *err)
{
    int rc = PFI_OK;
    const char *mix = json_string_value(json_object_get(root, "mix"));
    json_t *res = json_object_get(root, "results");
    pfi_sim_mix m;
    if (!mix || pfi_sim_mix_parse(mix, &m) != 0)
        rc = pfi_error_set(err, PFI_EPARSE, path, 0,
                           "no \"mix\" of random or production: "
                           "not `pfi simulate --json` output?");
    else if (!json_is_array(res) || json_array_size(res) == 0)
        rc = pfi_error_set(err, PFI_EPARSE, path, 0, "no \"results\" array");
    size_t n = rc == PFI_OK ? json_array_size(res) : 0, nr = 0;
    double *red = calloc(n ? n : 1, sizeof *red);
    pfi_sim_cell *cells = calloc((n ? n : 1) * PFI_SIM_NPOLICIES, sizeof *cells);
    if (rc == PFI_OK && (!red || !cells))
        rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    for (size_t i = 0; rc == PFI_OK && i < n; i++) {
        json_t *e = json_array_get(res, i);
        json_t *r = json_object_get(e, "reduction"), *g = json_object_get(e, "gap_tok_s_per_job"),
               *t = json_object_get(e, "tput_tok_s_per_job");
        const char *pol = json_string_value(json_object_get(e, "policy"));
        int p = pol ? policy_of(pol) : -1;
        if (!json_is_number(r) || !json_is_number(g) || !json_is_number(t) || p < 0) {
            rc = bad(err, path, i,
                     "needs reduction, policy, tput_tok_s_per_job and gap_tok_s_per_job");
            break;
        }
        double rv = json_number_value(r), gv = json_number_value(g), tv = json_number_value(t);
        if (!(rv >= 0 && rv < 1) || !isfinite(gv) || !isfinite(tv)) {
            rc = bad(err, path, i, "reduction outside [0, 1) or a non-finite value");
            break;
        }
        size_t k = 0;
        while (k < nr && fabs(red[k] - rv) > 1e-12)
            k++;
        if (k == nr) red[nr++] = rv;
        pfi_sim_cell *c = &cells[k * PFI_SIM_NPOLICIES + p];
        c->ran = 1;
        c->tput_per_job = tv;
        c->gap_per_job = gv;
        json_t *gr = json_object_get(e, "gap_recovered");
        c->has_recovered = json_is_number(gr);
        if (c->has_recovered) c->gap_recovered = json_number_value(gr);
    }
    if (rc == PFI_OK) {
        pfi_sim_result_free(&d->sim[m]);
        d->sim[m] = (pfi_sim_result){.n_reductions = nr, .reductions = red, .cells = cells};
        d->has_sim[m] = 1;
        json_t *w = json_object_get(root, "workloads"), *j = json_object_get(root, "jobs");
        /* informational (the table's note): a negative count is left out */
        if (json_is_integer(w) && json_integer_value(w) >= 0)
            d->workloads = (size_t)json_integer_value(w);
        if (json_is_integer(j) && json_integer_value(j) >= 0)
            d->jobs = (size_t)json_integer_value(j);
    } else {
        free(red);
        free(cells);
    }
    return rc;
}

static int one(rd_data *d, const char *path, pfi_error *err)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        return pfi_error_set(err, PFI_EPARSE, path, je.line > 0 ? je.line : 0, "%s", je.text);
    int rc = from_root(d, root, path, err);
    json_decref(root);
    return rc;
}

int rd_sim_from_json_text(rd_data *d, const char *buf, size_t len, const char *name, pfi_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(buf, len, 0, &je);
    if (!root)
        return pfi_error_set(err, PFI_EPARSE, name, je.line > 0 ? je.line : 0, "%s", je.text);
    int rc = from_root(d, root, name, err);
    json_decref(root);
    return rc;
}

int rd_sim_from_json(rd_data *d, const char *const paths[2], pfi_error *err)
{
    if (!paths[0]) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "no simulate JSON file");
    int rc = one(d, paths[0], err);
    if (rc == PFI_OK && paths[1]) rc = one(d, paths[1], err);
    return rc;
}
