/* One period's allocation and caps (include/control/pfi/plan.h). */
#include "pfi/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/alloc.h"
#include "plan_learn.h"

struct pfi_plan {
    pfi_alloc_problem *prob;
    size_t n, cap_jobs;
    pfi_alloc_job *aj;
    double *pts; /* per job: 3 * (PRIOR_POINTS + obs) doubles: cap, P, T */
    size_t pts_cap;
    double *min_w, *max_w;
    pfi_alloc_out *out;
    plan_learn *learn; /* NULL until pfi_plan_use_learn */
    double now_s;
};

const char *pfi_plan_policy_name(pfi_plan_policy p)
{
    return p == PFI_PLAN_EQUAL ? "equal" : p == PFI_PLAN_PFI ? "pfi" : "learn";
}

int pfi_plan_policy_parse(const char *s, pfi_plan_policy *out)
{
    if (strcmp(s, "equal") == 0)
        *out = PFI_PLAN_EQUAL;
    else if (strcmp(s, "pfi") == 0)
        *out = PFI_PLAN_PFI;
    else if (strcmp(s, "learn") == 0)
        *out = PFI_PLAN_LEARN;
    else
        return PFI_ENOTFOUND;
    return PFI_OK;
}

int pfi_plan_create(pfi_plan **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? PFI_OK : PFI_ENOMEM;
}

int pfi_plan_use_learn(pfi_plan *p, size_t explore_rounds, size_t hold, pfi_error *err)
{
    if (p->learn) return PFI_OK;
    pfi_live_opts o = pfi_live_defaults();
    if (explore_rounds) o.explore_rounds = explore_rounds;
    return plan_learn_create(&o, hold, &p->learn, err);
}

void pfi_plan_set_time(pfi_plan *p, double now_s)
{
    p->now_s = now_s;
}

void pfi_plan_destroy(pfi_plan *p)
{
    if (!p) return;
    pfi_alloc_problem_destroy(p->prob);
    plan_learn_destroy(p->learn);
    free(p->aj);
    free(p->pts);
    free(p->min_w);
    free(p->max_w);
    free(p->out);
    free(p);
}

static int grow(pfi_plan *p, size_t n, size_t pts)
{
    if (n > p->cap_jobs) {
        pfi_alloc_job *aj = realloc(p->aj, n * sizeof *aj);
        if (aj) p->aj = aj;
        double *a = realloc(p->min_w, n * sizeof *a);
        if (a) p->min_w = a;
        double *b = realloc(p->max_w, n * sizeof *b);
        if (b) p->max_w = b;
        pfi_alloc_out *o = realloc(p->out, n * sizeof *o);
        if (o) p->out = o;
        if (!aj || !a || !b || !o) return PFI_ENOMEM;
        p->cap_jobs = n;
    }
    if (pts > p->pts_cap) {
        double *q = realloc(p->pts, pts * sizeof *q);
        if (!q) return PFI_ENOMEM;
        p->pts = q;
        p->pts_cap = pts;
    }
    return PFI_OK;
}

/* The prior's shape, (P / Pmax)^(1 - PFI). */
static double shape(double p, double pmax, double pfi)
{
    return pow(p / pmax, 1 - pfi);
}

/* Job j's points into cap/P/T (room for PRIOR_POINTS + n_obs); returns how
 * many. Where the job has been measured the prior keeps only its shape: a
 * prior point between two measured points (the uncapped point above the
 * highest) is put where the prior's shape between them says, below the
 * lowest it is scaled to it. So one measurement that finds the prior
 * optimistic moves the whole curve near it, and the curve rises with power
 * (an SLA floor, the lowest power reaching a throughput, is read off it). */
static size_t curve(const pfi_plan_job *j, double *cap, double *P, double *T)
{
    double n = (double)j->n_gpus;
    double pmax = isfinite(j->pmax_w) && j->pmax_w > 0 ? j->pmax_w : n * j->max_w;
    double tmax = isfinite(j->tmax) && j->tmax > 0 ? j->tmax : 1.0;
    double pfi = isfinite(j->pfi) ? j->pfi : PFI_PLAN_PRIOR_PFI;
    if (pfi < 0) pfi = 0;
    if (pfi > 0.95) pfi = 0.95; /* keeps the exponent away from 0: T must fall with P */
    size_t k = 0;
    for (int s = 0; s < PFI_PLAN_PRIOR_POINTS; s++) {
        double c = j->min_w + (j->max_w - j->min_w) * s / (PFI_PLAN_PRIOR_POINTS - 1);
        int measured = 0;
        for (size_t o = 0; o < j->n_obs; o++)
            measured |= fabs(j->obs[o].cap_w - c) <= 5;
        if (measured) continue;
        double pw = fmin(n * c, pmax), t = tmax * shape(pw, pmax, pfi);
        double pl = NAN, tl = NAN, pu = pmax, tu = tmax; /* measured neighbours */
        for (size_t o = 0; o < j->n_obs; o++) {
            const pfi_plan_obs *ob = &j->obs[o];
            if (!(ob->power_w > 0) || !(ob->tput >= 0) || ob->power_w > pmax) continue;
            if (ob->power_w <= pw && !(ob->power_w <= pl)) pl = ob->power_w, tl = ob->tput;
            if (ob->power_w > pw && ob->power_w < pu) pu = ob->power_w, tu = ob->tput;
        }
        if (isfinite(pl)) {
            double a = shape(pl, pmax, pfi), b = shape(pu, pmax, pfi);
            t = b > a ? tl + (tu - tl) * (shape(pw, pmax, pfi) - a) / (b - a) : tl;
        } else if (pu < pmax) {
            t = tu * shape(pw, pmax, pfi) / shape(pu, pmax, pfi);
        }
        cap[k] = c;
        P[k] = pw;
        T[k] = t;
        k++;
    }
    for (size_t o = 0; o < j->n_obs; o++) {
        const pfi_plan_obs *ob = &j->obs[o];
        if (!(ob->power_w > 0) || !(ob->tput >= 0) || !isfinite(ob->cap_w)) continue;
        cap[k] = ob->cap_w;
        P[k] = ob->power_w;
        T[k] = ob->tput;
        k++;
    }
    return k;
}

int pfi_plan_set_jobs(pfi_plan *p, const pfi_plan_job *jobs, size_t n, pfi_error *err)
{
    size_t pts = 0;
    for (size_t i = 0; i < n; i++) {
        const pfi_plan_job *j = &jobs[i];
        if (j->n_gpus == 0 || !(j->min_w > 0) || !(j->max_w >= j->min_w) || !isfinite(j->max_w))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %s: no GPUs or no valid cap range",
                                 j->id ? j->id : "?");
        pts += 3 * (PFI_PLAN_PRIOR_POINTS + j->n_obs);
    }
    if (grow(p, n ? n : 1, pts ? pts : 1) != PFI_OK)
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    double *q = p->pts;
    for (size_t i = 0; i < n; i++) {
        const pfi_plan_job *j = &jobs[i];
        size_t room = PFI_PLAN_PRIOR_POINTS + j->n_obs;
        double *cap = q, *P = q + room, *T = q + 2 * room;
        q += 3 * room;
        size_t k = curve(j, cap, P, T);
        /* A job whose uncapped power is at or under its lowest cap cannot be
         * cut: its curve is one point. Give it a second at a hair below so the
         * allocator sees a (flat) curve; its cap stays at the range. */
        if (k < 2 || P[0] == P[k - 1]) {
            cap[0] = j->min_w;
            P[0] = P[k - 1] * (1 - 1e-9);
            T[0] = T[k - 1];
            if (k < 2) k = 2;
        }
        p->aj[i] = (pfi_alloc_job){.name = j->id,
                                   .cap = cap,
                                   .P = P,
                                   .T = T,
                                   .n = k,
                                   .pfi = isfinite(j->pfi) ? j->pfi : PFI_PLAN_PRIOR_PFI,
                                   .dram_copy = NAN,
                                   .sla_frac = j->sla_frac};
        p->min_w[i] = j->min_w;
        p->max_w[i] = j->max_w;
    }
    p->n = n;
    int rc = PFI_OK;
    if (n > 0)
        rc = p->prob ? pfi_alloc_problem_reset(p->prob, p->aj, n, err)
                     : pfi_alloc_problem_create(p->aj, n, &p->prob, err);
    if (rc != PFI_OK) p->n = 0;
    /* the loop follows the job set (a job that left leaves it too) */
    if (rc == PFI_OK && p->learn) rc = plan_learn_sync(p->learn, jobs, n, p->prob, p->now_s, err);
    return rc;
}

/* The one place a policy becomes an allocation. live: a period's decision
 * (learn runs a round of its loop); otherwise a what-if (the supply curve),
 * for which learn is the oracle on the current curves and its loop is left
 * as it is. */
static int plan_allocate(pfi_plan *p, pfi_plan_policy policy, double budget_w, int live,
                         pfi_alloc_result *res, pfi_error *err)
{
    switch (policy) {
    case PFI_PLAN_EQUAL:
        return pfi_alloc_run(p->prob, PFI_POLICY_EQUAL, budget_w, p->out, res, err);
    case PFI_PLAN_PFI:
        return pfi_alloc_run(p->prob, PFI_POLICY_PFI, budget_w, p->out, res, err);
    case PFI_PLAN_LEARN:
        break;
    }
    if (!p->learn)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "learn: pfi_plan_use_learn was not called");
    double floors = pfi_alloc_problem_floor_total(p->prob);
    if (!live || budget_w >= pfi_alloc_problem_pmax_total(p->prob))
        return pfi_alloc_run(p->prob, PFI_POLICY_ORACLE, budget_w, p->out, res, err);
    int rc = plan_learn_propose(p->learn, budget_w, floors, p->now_s, p->out, p->n, err);
    if (rc != PFI_OK) return rc;
    memset(res, 0, sizeof *res);
    res->budget_w = budget_w;
    for (size_t i = 0; i < p->n; i++) {
        res->total_power_w += p->out[i].power_w;
        res->total_tput += p->out[i].tput;
        res->n_at_floor += (size_t)p->out[i].at_floor;
    }
    return PFI_OK;
}

int pfi_plan_run(pfi_plan *p, pfi_plan_policy policy, double budget_w, double fixed_w,
                 double trim_w, pfi_plan_cap *caps, pfi_plan_result *res, pfi_error *err)
{
    memset(res, 0, sizeof *res);
    double b = budget_w - fixed_w - (trim_w > 0 ? trim_w : 0);
    res->jobs_budget_w = b;
    if (p->n == 0) {
        res->infeasible = b < 0;
        res->shortfall_w = b < 0 ? -b : 0;
        return PFI_OK;
    }
    res->pmax_total_w = pfi_alloc_problem_pmax_total(p->prob);
    res->floor_total_w = pfi_alloc_problem_floor_total(p->prob);
    for (size_t i = 0; i < p->n; i++) {
        double pm, tm, fl;
        pfi_alloc_problem_job_range(p->prob, i, &pm, &tm, &fl);
        res->uncapped_tput += tm;
    }
    double alloc_b = b;
    if (alloc_b < res->floor_total_w) {
        res->infeasible = 1;
        res->shortfall_w = res->floor_total_w - alloc_b;
        alloc_b = res->floor_total_w; /* every job at its floor */
    }
    pfi_alloc_result ar;
    int rc = plan_allocate(p, policy, alloc_b * (1 + 1e-12), 1, &ar, err);
    if (rc != PFI_OK) return rc;
    for (size_t i = 0; i < p->n; i++) {
        double pm, tm, fl;
        pfi_alloc_problem_job_range(p->prob, i, &pm, &tm, &fl);
        /* At Pmax the job is not cut: the top of its range (the prior's flat
         * top would give the lowest cap reaching Pmax, a cap that binds). */
        double c = p->out[i].power_w >= pm * (1 - 1e-9)
                       ? p->max_w[i]
                       : pfi_alloc_problem_cap_at(p->prob, i, p->out[i].power_w);
        /* Whole watts, rounded down (never above the plan), within the
         * range; up for a job at its floor (never below its SLA). */
        int floor_job = res->infeasible || p->out[i].at_floor;
        c = floor_job ? ceil(c - 1e-9) : floor(c + 1e-9);
        if (c < p->min_w[i]) c = p->min_w[i];
        if (c > p->max_w[i]) c = p->max_w[i];
        caps[i] = (pfi_plan_cap){.power_w = p->out[i].power_w,
                                 .cap_w = c,
                                 .tput = p->out[i].tput,
                                 .tmax = tm,
                                 .at_floor = res->infeasible || p->out[i].at_floor};
        res->total_power_w += p->out[i].power_w;
        res->total_tput += p->out[i].tput;
    }
    return PFI_OK;
}

int pfi_plan_flexibility(pfi_plan *p, pfi_plan_policy policy, size_t n, pfi_plan_flex *out,
                         pfi_error *err)
{
    if (n < 2) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "a supply curve needs 2+ steps");
    if (p->n == 0) return pfi_error_set(err, PFI_ENODATA, NULL, 0, "no jobs");
    double hi = pfi_alloc_problem_pmax_total(p->prob), lo = pfi_alloc_problem_floor_total(p->prob);
    double unc = 0;
    for (size_t i = 0; i < p->n; i++) {
        double pm, tm, fl;
        pfi_alloc_problem_job_range(p->prob, i, &pm, &tm, &fl);
        unc += tm;
    }
    for (size_t s = 0; s < n; s++) {
        double b = hi - (hi - lo) * (double)s / (double)(n - 1);
        pfi_alloc_result ar;
        int rc = plan_allocate(p, policy, b * (1 + 1e-12), 0, &ar, err);
        if (rc != PFI_OK) return rc;
        out[s] = (pfi_plan_flex){.gpu_power_w = ar.total_power_w,
                                 .tput = ar.total_tput,
                                 .kept = unc > 0 ? ar.total_tput / unc : NAN};
    }
    return PFI_OK;
}
