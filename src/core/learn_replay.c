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
    if (rc == PFI_OK) rc = pfi_learn_run(lj, n, budget_w, o, replay_observe, prob, pw, lr, err);
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
