/* A policy's allocation with per-job output and totals (alloc.h). */
#include "alloc_problem.h"

#include <math.h>

int pfi_alloc_run(pfi_alloc_problem *p, pfi_alloc_policy policy, double budget_w,
                  pfi_alloc_out *out, pfi_alloc_result *res, pfi_error *err)
{
    if (!p) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "no problem");
    size_t n = p->n;
    char lb[32];
    double *power = p->pw;
    /* Checked here, once for every policy, not only inside each one: a policy
     * that forgets it (or rounds past it) must not hand out an allocation
     * over budget with PFI_OK (test_alloc: test_budget_below_floors). */
    int rc = alloc_check_budget(p, budget_w, err);
    if (rc != PFI_OK) return rc;
    if (policy == PFI_POLICY_ORACLE) {
        rc = pfi_alloc_oracle(p, budget_w, power, NULL, err);
    } else {
        double *w = p->w;
        rc = PFI_OK;
        for (size_t i = 0; i < n && rc == PFI_OK; i++) {
            switch (policy) {
            case PFI_POLICY_EQUAL:
                w[i] = p->pmax[i];
                break;
            case PFI_POLICY_PFI:
                if (isnan(p->pfi[i]))
                    rc = pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                       "job %s has no PFI: the pfi policy needs one for every job",
                                       alloc_label(p, i, lb, sizeof lb));
                /* a predicted PFI below 0 means "do not shed", not a negative share */
                w[i] = p->pmax[i] * fmax(p->pfi[i], 0.0) / p->tmax[i];
                break;
            case PFI_POLICY_MOE_FT:
                w[i] = p->pmax[i] * (p->moe_ft[i] ? 2.0 : 1.0);
                break;
            case PFI_POLICY_DRAM_COPY:
                if (isnan(p->dram[i]))
                    rc = pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                       "job %s has no DRAM copy product (telemetry)",
                                       alloc_label(p, i, lb, sizeof lb));
                w[i] = fmax(p->dram[i], 0.0);
                break;
            default:
                rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "unknown policy %d", (int)policy);
            }
        }
        if (rc == PFI_OK) {
            rc = pfi_alloc_proportional(p, w, budget_w, power, err);
        }
    }
    if (rc != PFI_OK) return rc;
    pfi_alloc_result r = {.budget_w = budget_w};
    for (size_t i = 0; i < n; i++) {
        pfi_alloc_out o = {.power_w = power[i]};
        o.at_floor = power[i] <= p->floor_w[i] * (1 + 1e-12);
        if (policy == PFI_POLICY_ORACLE) {
            alloc_envelope_point(p, i, power[i], out != NULL, &o);
        } else {
            o.tput = pfi_alloc_problem_tput_at(p, i, power[i]);
            if (out) o.cap_w = pfi_alloc_problem_cap_at(p, i, power[i]);
        }
        double c = p->cnt[i];
        r.total_power_w += c * o.power_w;
        r.total_tput += c * o.tput;
        r.n_at_floor += (size_t)o.at_floor * (size_t)c;
        r.n_alternating += (size_t)o.alternates * (size_t)c;
        if (out) out[i] = o;
    }
    /* the promise callers rely on: never over budget, up to the rounding of
     * a sum over n jobs relative to the largest powers in play (a job of
     * 1e11 W shed to its floor keeps a few ulps of its Pmax: fuzz_alloc) */
    double scale = fmax(budget_w, p->pmax_total);
    if (!(r.total_power_w <= budget_w + 1e-12 * (double)(n + 1) * scale + 1e-9))
        return pfi_error_set(err, PFI_EINFEASIBLE, NULL, 0,
                             "budget %.1f W is infeasible: the %s allocation draws %.1f W",
                             budget_w, pfi_alloc_policy_name(policy), r.total_power_w);
    /* and never over any domain's limit (the policies check it too; this
     * also leaves each domain's power for pfi_alloc_problem_domain_power) */
    if (p->tree && (rc = alloc_tree_verify(p, power, pfi_alloc_policy_name(policy), err)) != PFI_OK)
        return rc;
    if (res) *res = r;
    return PFI_OK;
}
