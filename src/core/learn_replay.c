/* learn replayed against known curves (learn.h: pfi_learn_replay): the
 * problem's curves answer for the jobs, as `pfi allocate --policy learn`
 * replays a sweep file. */
#include <math.h>
#include <stdlib.h>

#include "alloc_problem.h"
#include "pfi/learn.h"

static int replay_observe(void *ctx, size_t job, double power_w, size_t jobs, double secs,
                          double *tput)
{
    (void)jobs;
    (void)secs;
    *tput = pfi_alloc_problem_tput_at(ctx, job, power_w);
    return PFI_OK;
}

/* pfi_learn_run with prob's tree, if any, on the loop, and its last
 * allocation brought under the tree. */
static int run(pfi_alloc_problem *prob, const pfi_learn_job *lj, size_t n, double budget_w,
               const pfi_learn_opts *o, double *pw, pfi_learn_result *lr, pfi_error *err)
{
    const struct alloc_tree *t = prob->tree;
    if (!t) return pfi_learn_run(lj, n, budget_w, o, replay_observe, prob, pw, lr, err);
    pfi_alloc_domain *d = malloc(t->nd * sizeof *d);
    pfi_alloc_span *sp = malloc((n + t->soff[n]) * sizeof *sp);
    pfi_learn_plan *pl = NULL;
    int rc = d && sp ? PFI_OK : pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    size_t ns = 0;
    for (size_t a = 0; rc == PFI_OK && a < t->nd; a++)
        d[a] = (pfi_alloc_domain){t->names[a], t->parent[a], t->limit[a], t->fixed[a]};
    for (size_t i = 0; rc == PFI_OK && i < n; i++) {
        if (t->home[i] != ALLOC_SPREAD) {
            sp[ns++] = (pfi_alloc_span){i, t->home[i], 1};
            continue;
        }
        for (size_t k = t->soff[i]; k < t->soff[i + 1]; k++)
            sp[ns++] = (pfi_alloc_span){i, t->sdom[k], t->sshare[k]};
    }
    if (rc == PFI_OK) rc = pfi_learn_plan_create(lj, n, o, &pl, err);
    if (rc == PFI_OK) rc = pfi_learn_plan_set_tree(pl, d, t->nd, sp, ns, err);
    if (rc == PFI_OK) rc = pfi_learn_plan_run(pl, budget_w, replay_observe, prob, pw, lr, err);
    if (rc == PFI_OK) rc = pfi_alloc_problem_fit_tree(prob, budget_w, pw, err);
    pfi_learn_plan_destroy(pl);
    free(d);
    free(sp);
    return rc;
}

int pfi_learn_replay(pfi_alloc_problem *prob, const double *pfi_hat, double budget_w,
                     const pfi_learn_opts *o, pfi_alloc_out *out, pfi_alloc_result *res,
                     pfi_learn_result *lr, pfi_error *err)
{
    size_t n = pfi_alloc_problem_jobs(prob);
    char lb[32];
    pfi_learn_job *lj = calloc(n ? n : 1, sizeof *lj);
    double *pw = calloc(n ? n : 1, sizeof *pw);
    int rc = lj && pw ? PFI_OK : pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (size_t k = 0; rc == PFI_OK && k < n; k++) {
        pfi_alloc_problem_job_range(prob, k, &lj[k].pmax_w, &lj[k].tmax, &lj[k].floor_w);
        lj[k].pfi_hat = pfi_hat[k];
        if (isnan(lj[k].pfi_hat))
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0,
                               "job %s has no PFI: learn's prior needs one",
                               alloc_label(prob, k, lb, sizeof lb));
    }
    if (rc == PFI_OK) rc = run(prob, lj, n, budget_w, o, pw, lr, err);
    *res = (pfi_alloc_result){.budget_w = budget_w};
    for (size_t k = 0; rc == PFI_OK && k < n; k++) {
        double fl;
        pfi_alloc_problem_job_range(prob, k, NULL, NULL, &fl);
        out[k] = (pfi_alloc_out){.power_w = pw[k],
                                 .cap_w = pfi_alloc_problem_cap_at(prob, k, pw[k]),
                                 .tput = pfi_alloc_problem_tput_at(prob, k, pw[k]),
                                 .at_floor = pw[k] <= fl * (1 + 1e-12)};
        res->total_power_w += out[k].power_w;
        res->total_tput += out[k].tput;
        res->n_at_floor += (size_t)out[k].at_floor;
    }
    free(lj);
    free(pw);
    return rc;
}
