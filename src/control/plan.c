/* One period's allocation and caps (include/control/pfi/plan.h). */
#include "pfi/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "pfi/alloc.h"
#include "ctl_index.h"
#include "plan_cliff.h"
#include "plan_curve.h"
#include "plan_learn.h"
#include "plan_tree.h"

/* What the plan keeps of a job for its band. */
typedef struct plan_jb {
    plan_pt *pts; /* into pfi_plan.bp: its curve, by power */
    size_t n;
    plan_prior prior;
    double pmax, tmax;
    int class_only; /* class points and none of its own: the bound is the prior's at most */
    int class_used;
    double xr; /* its lowest measured point's P / Pmax (plan_curve_build) */
    /* what prior was built from (kept between periods: the same estimate,
     * whichever job now has this slot, gives the same prior) */
    double prior_pfi, prior_sd;
    int prior_ok;
} plan_jb;

struct pfi_plan {
    pfi_alloc_problem *prob;
    size_t n, cap_jobs;
    pfi_alloc_job *aj;
    double *pts; /* per job: 3 * (PRIOR_POINTS + obs + class + CLIFF_PTS) doubles: cap, P, T */
    size_t pts_cap;
    plan_pt *bp; /* the same points with their SDs */
    double *min_w, *max_w;
    pfi_alloc_out *out;
    plan_jb *jb;
    plan_cls_pt **cls;
    size_t *n_cls;
    int *split;
    plan_learn *learn; /* NULL until pfi_plan_use_learn */
    double now_s;
    double confidence, z;
    plan_tree tree;
    double *pw;       /* cap_jobs: learn's proposal brought under the tree */
    plan_cliff cliff; /* what the readings found under the jobs' measured points */
    ctl_index ix;     /* the set's jobs by their id's hash: the samples' jobs */
    /* the samples of job i: own[own_at[i] .. own_at[i + 1]) (cliff_rebase) */
    size_t own[PLAN_CLIFF_KEEP], *own_at, own_cap;
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
    if (*out) pfi_plan_set_confidence(*out, 0.9);
    return *out ? PFI_OK : PFI_ENOMEM;
}

void pfi_plan_set_confidence(pfi_plan *p, double confidence)
{
    if (!(confidence > 0 && confidence < 1)) return;
    p->confidence = confidence;
    p->z = gsl_cdf_ugaussian_Pinv(confidence); /* one-sided: P(T >= tput - z SD) = c */
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
    free(p->bp);
    free(p->jb);
    free(p->cls);
    free(p->n_cls);
    free(p->split);
    free(p->min_w);
    free(p->max_w);
    free(p->out);
    free(p->pw);
    plan_tree_free(&p->tree);
    ctl_index_free(&p->ix);
    free(p->own_at);
    free(p);
}

int pfi_plan_set_tree(pfi_plan *p, const pfi_plan_domain *d, size_t n, pfi_error *err)
{
    return plan_tree_set(&p->tree, d, n, err);
}

double pfi_plan_domain_power(const pfi_plan *p, size_t d)
{
    return p->tree.have_pow && d < p->tree.nd ? p->tree.dpow[d] : NAN;
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
        plan_jb *jb = realloc(p->jb, n * sizeof *jb);
        if (jb) {
            p->jb = jb;
            memset(jb + p->cap_jobs, 0, (n - p->cap_jobs) * sizeof *jb); /* no prior yet */
        }
        plan_cls_pt **cl = realloc(p->cls, n * sizeof *cl);
        if (cl) p->cls = cl;
        size_t *nc = realloc(p->n_cls, n * sizeof *nc);
        if (nc) p->n_cls = nc;
        int *sp = realloc(p->split, n * sizeof *sp);
        if (sp) p->split = sp;
        double *pw = realloc(p->pw, n * sizeof *pw);
        if (pw) p->pw = pw;
        if (!aj || !a || !b || !o || !jb || !cl || !nc || !sp || !pw) return PFI_ENOMEM;
        p->cap_jobs = n;
    }
    if (pts > p->pts_cap) {
        double *q = realloc(p->pts, pts * sizeof *q);
        if (q) p->pts = q;
        plan_pt *bp = realloc(p->bp, (pts / 3 + 1) * sizeof *bp);
        if (bp) p->bp = bp;
        if (!q || !bp) return PFI_ENOMEM;
        p->pts_cap = pts;
    }
    return PFI_OK;
}

/* Equal, NaN equal to NaN. */
static int same(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

/* The PFI the pfi policy weights a job by: its estimate, or the least
 * flexible group's of the dataset (the prior it is planned on). */
static double alloc_pfi(const pfi_plan_job *j)
{
    if (isfinite(j->pfi)) return j->pfi;
    double lo = INFINITY;
    for (size_t g = 0; g < plan_prior_n_groups; g++)
        lo = fmin(lo, plan_prior_groups[g].pfi);
    return lo;
}

/* Any position under the hash: a sample knows its job by its id's hash alone. */
static int any_pos(size_t pos, const void *ctx)
{
    (void)pos;
    (void)ctx;
    return 1;
}

/* Every sample of a job in the set taken again against its points now
 * (plan_cliff.h): a reading on a prior too pessimistic above a dead zone
 * counts once a point above has pinned the curve. */
static int cliff_rebase(pfi_plan *p, const pfi_plan_job *jobs, size_t n)
{
    size_t *at = ctl_grow(p->own_at, &p->own_cap, n + 1, sizeof *at);
    if (!at) return PFI_ENOMEM;
    p->own_at = at;
    memset(at, 0, (n + 1) * sizeof *at);
    ctl_index_clear(&p->ix);
    for (size_t i = 0; i < n; i++)
        if (jobs[i].id && ctl_index_put(&p->ix, ctl_hash_str(jobs[i].id), i) != 0)
            return PFI_ENOMEM;
    plan_cliff *c = &p->cliff;
    size_t whose[PLAN_CLIFF_KEEP];
    for (size_t k = 0; k < c->n; k++) {
        size_t i = c->job[k] ? ctl_index_get(&p->ix, c->job[k], any_pos, NULL) : SIZE_MAX;
        whose[k] = i;
        if (i == SIZE_MAX) continue;
        at[i + 1]++;
        plan_cliff_rebase(c, k,
                          plan_curve_from_above(&jobs[i], &p->jb[i].prior, p->jb[i].pmax, c->x[k],
                                                PLAN_CLIFF_MIN_D));
    }
    /* each job's samples together (a counting sort: at[i] its start, then
     * its end as they are placed, then shifted back to starts) */
    for (size_t i = 0; i < n; i++)
        at[i + 1] += at[i];
    for (size_t k = 0; k < c->n; k++)
        if (whose[k] != SIZE_MAX) p->own[at[whose[k]]++] = k;
    memmove(at + 1, at, n * sizeof *at);
    at[0] = 0;
    return PFI_OK;
}

int pfi_plan_set_jobs(pfi_plan *p, const pfi_plan_job *jobs, size_t n, pfi_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const pfi_plan_job *j = &jobs[i];
        if (j->n_gpus == 0 || !(j->min_w > 0) || !(j->max_w >= j->min_w) || !isfinite(j->max_w))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "job %s: no GPUs or no valid cap range",
                                 j->id ? j->id : "?");
    }
    if (grow(p, n ? n : 1, 3) != PFI_OK)
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    plan_cls_pt *cbuf = NULL;
    if (plan_class_pool(jobs, n, &cbuf, p->cls, p->n_cls, p->split) != PFI_OK)
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    size_t pts = 0;
    for (size_t i = 0; i < n; i++)
        pts += 3 * (PFI_PLAN_PRIOR_POINTS + jobs[i].n_obs + p->n_cls[i] + PLAN_CLIFF_PTS);
    if (grow(p, n ? n : 1, pts ? pts : 3) != PFI_OK) {
        free(cbuf);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    plan_pt *bp = p->bp;
    for (size_t i = 0; i < n; i++) {
        const pfi_plan_job *j = &jobs[i];
        size_t room = PFI_PLAN_PRIOR_POINTS + j->n_obs + p->n_cls[i] + PLAN_CLIFF_PTS;
        plan_jb *b = &p->jb[i];
        if (!b->prior_ok || !same(b->prior_pfi, j->pfi) || !same(b->prior_sd, j->pfi_sd)) {
            plan_prior_build(j->pfi, j->pfi_sd, &b->prior);
            b->prior_pfi = j->pfi;
            b->prior_sd = j->pfi_sd;
            b->prior_ok = 1;
        }
        b->pts = bp;
        b->n = plan_curve_build(j, &b->prior, p->cls[i], p->n_cls[i], bp, &b->xr);
        bp += room;
        b->pmax = isfinite(j->pmax_w) && j->pmax_w > 0 ? j->pmax_w : (double)j->n_gpus * j->max_w;
        b->tmax = isfinite(j->tmax) && j->tmax > 0 ? j->tmax : 1.0;
        b->class_used = p->n_cls[i] > 0;
        int own = 0;
        for (size_t o = 0; o < j->n_obs; o++)
            own |= j->obs[o].power_w > 0 && isfinite(j->obs[o].cap_w);
        b->class_only = b->class_used && !own;
        /* the reading of last period's cap: under the deepest point the
         * curve was measured at, a sample of what it overshoots there
         * (tokens/s against a known Tmax only) */
        const pfi_plan_obs *r = &j->reading;
        double x = r->power_w / b->pmax;
        if (isfinite(j->tmax) && j->tmax > 0 && r->power_w > 0 && r->power_w <= b->pmax)
            plan_cliff_add(&p->cliff, j->id ? ctl_hash_str(j->id) : 0, x, b->xr - x,
                           r->tput / j->tmax, r->tput > 0 ? r->tput_sd / r->tput : 0,
                           plan_curve_from_above(j, &b->prior, b->pmax, x, PLAN_CLIFF_MIN_D));
    }
    if (cliff_rebase(p, jobs, n) != PFI_OK) {
        free(cbuf);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    plan_cliff_fit(&p->cliff, p->confidence);
    double *q = p->pts;
    for (size_t i = 0; i < n; i++) {
        const pfi_plan_job *j = &jobs[i];
        size_t room = PFI_PLAN_PRIOR_POINTS + j->n_obs + p->n_cls[i] + PLAN_CLIFF_PTS;
        double *cap = q, *P = q + room, *T = q + 2 * room;
        q += 3 * room;
        plan_jb *b = &p->jb[i];
        b->n =
            plan_cliff_apply(&p->cliff, p->z, j, &b->prior, b->pmax, b->xr, p->own + p->own_at[i],
                             p->own_at[i + 1] - p->own_at[i], b->pts, b->n, room);
        size_t k = b->n;
        for (size_t t = 0; t < k; t++) {
            cap[t] = b->pts[t].cap;
            P[t] = b->pts[t].P;
            T[t] = b->pts[t].T;
        }
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
                                   .pfi = alloc_pfi(j),
                                   .dram_copy = NAN,
                                   .sla_frac = j->sla_frac};
        p->min_w[i] = j->min_w;
        p->max_w[i] = j->max_w;
    }
    free(cbuf);
    p->n = n;
    int rc = PFI_OK;
    if (n > 0)
        rc = p->prob ? pfi_alloc_problem_reset(p->prob, p->aj, n, err)
                     : pfi_alloc_problem_create(p->aj, n, &p->prob, err);
    if (rc == PFI_OK) rc = plan_tree_apply(&p->tree, jobs, n, p->prob, err);
    if (rc != PFI_OK) p->n = 0;
    /* the loop follows the job set (a job that left leaves it too) */
    if (rc == PFI_OK && p->learn) rc = plan_learn_sync(p->learn, jobs, n, p->prob, p->now_s, err);
    if (rc == PFI_OK && p->learn && n > 0)
        rc = plan_learn_tree(p->learn, p->tree.d, p->tree.nd, p->tree.s, p->tree.ns, err);
    return rc;
}

/* Job i's band at power_w with throughput tput: the SD parts; a job on its
 * class's points alone is never bound above its prior's bound. */
static void job_band(const pfi_plan *p, size_t i, double power_w, double tput, double *sdc,
                     double *sdi)
{
    const plan_jb *b = &p->jb[i];
    plan_curve_band(b->pts, b->n, power_w, sdc, sdi);
    if (!b->class_only) return;
    double y, sd;
    plan_prior_at(&b->prior, power_w / b->pmax, &y, &sd);
    double lo_prior = b->tmax * (y - p->z * sd);
    double lo = tput - p->z * sqrt(*sdc * *sdc + *sdi * *sdi);
    if (lo_prior < lo) {
        *sdc = (tput - lo_prior) / p->z;
        *sdi = 0;
    }
}

/* The bound of a total from its jobs' SD parts: shared ones add, independent in quadrature. */
static double total_sd(double sum_sdc, double sum_vari)
{
    return sqrt(sum_sdc * sum_sdc + sum_vari);
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
    /* the loop's proposal under the tree: a domain it would pass is cut
     * back (pfi_alloc_problem_fit_tree), those jobs priced on the plan's
     * curves */
    if (p->tree.nd) {
        for (size_t i = 0; i < p->n; i++)
            p->pw[i] = p->out[i].power_w;
        if ((rc = pfi_alloc_problem_fit_tree(p->prob, budget_w, p->pw, err)) != PFI_OK) return rc;
        for (size_t i = 0; i < p->n; i++) {
            if (p->pw[i] == p->out[i].power_w) continue;
            double fl;
            pfi_alloc_problem_job_range(p->prob, i, NULL, NULL, &fl);
            p->out[i].power_w = p->pw[i];
            p->out[i].tput = pfi_alloc_problem_tput_at(p->prob, i, p->pw[i]);
            p->out[i].at_floor = p->pw[i] <= fl * (1 + 1e-12);
        }
    }
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
    res->confidence = p->confidence;
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
    int all_floor = res->infeasible; /* the budget under the floors: every job at its floor */
    if (p->tree.shortfall_w > 0) {   /* a domain's floors over its limit (plan_tree.h) */
        res->infeasible = 1;
        res->shortfall_w = fmax(res->shortfall_w, p->tree.shortfall_w);
    }
    pfi_alloc_result ar;
    int rc = plan_allocate(p, policy, alloc_b * (1 + 1e-12), 1, &ar, err);
    if (rc != PFI_OK) return rc;
    plan_tree_keep(&p->tree, p->prob);
    double sum_sdc = 0, sum_vari = 0;
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
        int floor_job = all_floor || p->out[i].at_floor;
        c = floor_job ? ceil(c - 1e-9) : floor(c + 1e-9);
        if (c < p->min_w[i]) c = p->min_w[i];
        if (c > p->max_w[i]) c = p->max_w[i];
        double sdc, sdi;
        job_band(p, i, p->out[i].power_w, p->out[i].tput, &sdc, &sdi);
        double sd = sqrt(sdc * sdc + sdi * sdi);
        caps[i] = (pfi_plan_cap){.power_w = p->out[i].power_w,
                                 .cap_w = c,
                                 .tput = p->out[i].tput,
                                 .tmax = tm,
                                 .tput_lo = fmax(0, p->out[i].tput - p->z * sd),
                                 .tput_sd = sd,
                                 .class_used = p->jb[i].class_used,
                                 .at_floor = all_floor || p->out[i].at_floor};
        res->total_power_w += p->out[i].power_w;
        res->total_tput += p->out[i].tput;
        sum_sdc += sdc;
        sum_vari += sdi * sdi;
    }
    res->total_tput_sd = total_sd(sum_sdc, sum_vari);
    res->total_tput_lo = fmax(0, res->total_tput - p->z * res->total_tput_sd);
    return PFI_OK;
}

void pfi_plan_eval(const pfi_plan *p, pfi_plan_cap *caps, pfi_plan_result *res)
{
    double sum_sdc = 0, sum_vari = 0;
    res->total_power_w = res->total_tput = 0;
    for (size_t i = 0; i < p->n; i++) {
        pfi_plan_cap *c = &caps[i];
        const plan_jb *b = &p->jb[i];
        double P, T;
        if (c->cap_w >= p->max_w[i]) {
            P = b->pts[b->n - 1].P; /* its top: uncapped, or the highest cap's */
            T = b->pts[b->n - 1].T;
        } else {
            plan_curve_at_cap(b->pts, b->n, c->cap_w, &P, &T);
        }
        if (isfinite(P) && isfinite(T)) {
            c->power_w = P;
            c->tput = T;
        }
        double sdc, sdi;
        job_band(p, i, c->power_w, c->tput, &sdc, &sdi);
        c->tput_sd = sqrt(sdc * sdc + sdi * sdi);
        c->tput_lo = fmax(0, c->tput - p->z * c->tput_sd);
        res->total_power_w += c->power_w;
        res->total_tput += c->tput;
        sum_sdc += sdc;
        sum_vari += sdi * sdi;
    }
    res->total_tput_sd = total_sd(sum_sdc, sum_vari);
    res->total_tput_lo = fmax(0, res->total_tput - p->z * res->total_tput_sd);
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
        double sum_sdc = 0, sum_vari = 0;
        for (size_t i = 0; i < p->n; i++) {
            double sdc, sdi;
            job_band(p, i, p->out[i].power_w, p->out[i].tput, &sdc, &sdi);
            sum_sdc += sdc;
            sum_vari += sdi * sdi;
        }
        double sd = total_sd(sum_sdc, sum_vari), t_lo = fmax(0, ar.total_tput - p->z * sd);
        out[s] = (pfi_plan_flex){.gpu_power_w = ar.total_power_w,
                                 .tput = ar.total_tput,
                                 .kept = unc > 0 ? ar.total_tput / unc : NAN,
                                 .tput_lo = t_lo,
                                 .kept_lo = unc > 0 ? t_lo / unc : NAN,
                                 .tput_sd = sd};
    }
    return PFI_OK;
}
