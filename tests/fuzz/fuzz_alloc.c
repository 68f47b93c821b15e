/* libFuzzer target: the allocation core on arbitrary curves and budgets.
 * The input is read as doubles (NaN, inf, negatives, duplicates, unsorted
 * points all reach the validator): a job count, per job a point count and
 * its points, then a budget fraction; every third job stands for two. Creation either fails with a
 * message or yields a problem on which every policy meets the budget, keeps each job in [floor,
 * Pmax], and never beats the oracle; or reports the budget infeasible exactly when the floors
 * exceed it. Then a tree of domains from the rest of the input (fuzz_tree). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/alloc.h"

static double take(const uint8_t **p, size_t *left)
{
    double v = 0;
    if (*left >= sizeof v) {
        memcpy(&v, *p, sizeof v);
        *p += sizeof v;
        *left -= sizeof v;
    }
    return v;
}

/* Nested budgets (issue 28) from what the input has left: up to 6
 * domains in pre-order, limits from the input's doubles (NaN: none), each
 * job in a domain or spread over two. A tree that is set must be kept by
 * every policy (each domain's power under its limit, up to rounding) or be
 * refused as infeasible naming a domain; the oracle never below a
 * proportional policy's throughput. */
static void fuzz_tree(pfi_alloc_problem *prob, size_t nj, double budget, double slack,
                      const uint8_t **p, size_t *left)
{
    enum { MAXD = 6 };
    if (*left < 2) return;
    size_t nd = (size_t)(**p % MAXD) + 1;
    (*p)++, (*left)--;
    pfi_alloc_domain d[MAXD];
    for (size_t a = 0; a < nd; a++) {
        double lim = take(p, left);
        size_t par = PFI_ALLOC_NO_PARENT;
        if (a > 0) { /* an ancestor of a - 1 (or a - 1): pre-order */
            par = a - 1;
            for (int up = *left ? **p % 3 : 0; up > 0 && par > 0; up--)
                par = d[par].parent;
        }
        if (*left) (*p)++, (*left)--;
        d[a] = (pfi_alloc_domain){NULL, par, isnan(lim) ? INFINITY : fabs(lim),
                                  a == nd - 1 ? fmod(fabs(take(p, left)), 1e6) : 0};
        if (!isfinite(d[a].fixed_w)) d[a].fixed_w = 0;
    }
    pfi_alloc_span s[2 * 8];
    size_t ns = 0;
    for (size_t i = 0; i < nj && ns + 2 <= sizeof s / sizeof *s; i++) {
        uint8_t b = *left ? **p : (uint8_t)i;
        if (*left) (*p)++, (*left)--;
        if (b & 0x80 && nd > 1) {
            s[ns++] = (pfi_alloc_span){i, (size_t)(b % nd), 0.5};
            s[ns++] = (pfi_alloc_span){i, (size_t)((b / 7 + 1) % nd), 0.5};
        } else {
            s[ns++] = (pfi_alloc_span){i, (size_t)(b % nd), 1};
        }
    }
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_alloc_problem_set_tree(prob, d, nd, s, ns, &err) != PFI_OK) {
        if (!err.msg[0]) __builtin_trap();
        return;
    }
    pfi_alloc_result orc, res;
    int orc_rc = pfi_alloc_run(prob, PFI_POLICY_ORACLE, budget, NULL, &orc, &err);
    for (int pol = 0; pol < PFI_POLICY_COUNT; pol++) {
        pfi_error_clear(&err);
        int rc = pfi_alloc_run(prob, (pfi_alloc_policy)pol, budget, NULL, &res, &err);
        if (rc == PFI_EINFEASIBLE || rc == PFI_ERANGE || rc == PFI_EINVAL) {
            if (!err.msg[0]) __builtin_trap();
            continue;
        }
        if (rc != PFI_OK) __builtin_trap();
        for (size_t a = 0; a < nd; a++) {
            double got = pfi_alloc_problem_domain_power(prob, a), lim = d[a].limit_w;
            if (!(got <= lim + 1e-9 * fmax(fmax(1.0, lim), got) + 1e-9)) __builtin_trap();
        }
        /* the flat check's slack: the rooms are differences of powers up to
         * 1e12 W, an ulp of which on a steep segment is worth its slope */
        if (orc_rc == PFI_OK && pol != PFI_POLICY_ORACLE &&
            res.total_tput > orc.total_tput + slack + 1e-6 * (fabs(orc.total_tput) + 1))
            __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAXJ = 8, MAXP = 8 };
    double P[MAXJ][MAXP], T[MAXJ][MAXP], C[MAXJ][MAXP];
    pfi_alloc_job jobs[MAXJ];
    const uint8_t *p = data;
    size_t left = size;
    size_t nj = (size_t)(size ? data[0] : 0) % MAXJ + 1;
    if (size) {
        p++;
        left--;
    }
    for (size_t i = 0; i < nj; i++) {
        size_t np = left ? (size_t)(*p % MAXP) + 1 : 2;
        if (left) {
            p++;
            left--;
        }
        for (size_t k = 0; k < np; k++) {
            P[i][k] = take(&p, &left);
            T[i][k] = take(&p, &left);
            C[i][k] = (double)k;
        }
        jobs[i] = (pfi_alloc_job){.P = P[i],
                                  .T = T[i],
                                  .cap = C[i],
                                  .n = np,
                                  .pfi = take(&p, &left),
                                  .dram_copy = take(&p, &left),
                                  .moe_ft = (int)(i & 1),
                                  .sla_frac = fabs(take(&p, &left)),
                                  .count = i % 3}; /* 0 (means 1), 1, 2 */
    }
    double frac = take(&p, &left);
    pfi_alloc_problem *prob = NULL;
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_alloc_problem_create(jobs, nj, &prob, &err) != PFI_OK) {
        if (!err.msg[0] || prob) __builtin_trap();
        return 0;
    }
    double fl = pfi_alloc_problem_floor_total(prob), pm = pfi_alloc_problem_pmax_total(prob);
    double budget =
        isfinite(frac) ? fl + fmod(fabs(frac), 1.5) * (pm - fl) - 1e-3 * fabs(frac) : pm;
    /* throughput scale: the oracle comparison is relative to it. Powers that
     * span many orders of magnitude round at ~1e-16 of the largest, and a
     * curve may rise 1e6 tokens/s per W, so this check catches gross breaks;
     * exactness is the unit tests' job (test_alloc, brute force). */
    double tscale = 0, steep = 0;
    for (size_t i = 0; i < nj; i++) {
        double tm;
        pfi_alloc_problem_job_range(prob, i, NULL, &tm, NULL);
        tscale += (double)pfi_alloc_problem_job_count(prob, i) * tm;
        for (size_t a = 0; a < jobs[i].n; a++)
            for (size_t b = 0; b < a; b++)
                if (P[i][a] != P[i][b])
                    steep = fmax(steep, fabs((T[i][a] - T[i][b]) / (P[i][a] - P[i][b])));
    }
    /* and what a rounding of the powers (a few ulps of the largest) buys on
     * the steepest segment: a policy a hair above a floor on a cliff */
    double slack = 1e-6 * (tscale + 1) + steep * 1e-14 * fmax(1.0, pm);
    pfi_alloc_out out[MAXJ];
    pfi_alloc_result res, orc;
    int orc_rc = pfi_alloc_run(prob, PFI_POLICY_ORACLE, budget, out, &orc, &err);
    for (int pol = 0; pol < PFI_POLICY_COUNT; pol++) {
        int rc = pfi_alloc_run(prob, (pfi_alloc_policy)pol, budget, out, &res, &err);
        if (rc == PFI_EINFEASIBLE || rc == PFI_ERANGE) {
            if (orc_rc == PFI_OK && rc == PFI_EINFEASIBLE) __builtin_trap();
            continue;
        }
        if (rc == PFI_EINVAL) continue; /* a policy input (PFI, DRAM copy) was NaN */
        if (rc != PFI_OK) __builtin_trap();
        /* rounding is relative to the largest powers in play */
        if (!(res.total_power_w <= budget + 1e-9 * fmax(1.0, pm))) __builtin_trap();
        if (!isfinite(res.total_tput)) __builtin_trap();
        /* never above the oracle given the same power (a policy may exceed
         * the budget by rounding, ~1e-16 relative, on steep curves) */
        pfi_alloc_result ref = orc;
        if (orc_rc == PFI_OK && res.total_power_w > budget &&
            pfi_alloc_run(prob, PFI_POLICY_ORACLE, res.total_power_w, NULL, &ref, &err) != PFI_OK)
            __builtin_trap();
        if (orc_rc == PFI_OK && res.total_tput > ref.total_tput + slack) __builtin_trap();
        for (size_t i = 0; i < nj; i++) {
            double pmax, f;
            pfi_alloc_problem_job_range(prob, i, &pmax, NULL, &f);
            if (out[i].power_w < f * (1 - 1e-12) - 1e-9 ||
                out[i].power_w > pmax * (1 + 1e-12) + 1e-9)
                __builtin_trap();
        }
    }
    fuzz_tree(prob, nj, budget, slack, &p, &left);
    pfi_alloc_problem_destroy(prob);
    return 0;
}
