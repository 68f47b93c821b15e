/* The Sec. 6 curtailment simulation (see include/core/pfi/sim.h). */
#include "pfi/sim.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pfi_sim_mix_name(pfi_sim_mix m)
{
    return m == PFI_SIM_PRODUCTION ? "production" : "random";
}

int pfi_sim_mix_parse(const char *s, pfi_sim_mix *out)
{
    if (s && strcmp(s, "random") == 0)
        *out = PFI_SIM_RANDOM;
    else if (s && strcmp(s, "production") == 0)
        *out = PFI_SIM_PRODUCTION;
    else
        return PFI_ENOTFOUND;
    return PFI_OK;
}

const char *pfi_sim_policy_name(int policy)
{
    if (policy == PFI_SIM_LEARN) return "learn";
    return pfi_alloc_policy_name((pfi_alloc_policy)policy);
}

pfi_sim_opts pfi_sim_defaults(void)
{
    return (pfi_sim_opts){.mix = PFI_SIM_RANDOM,
                          .workloads = 500,
                          .jobs = 100,
                          .seed = 1,
                          .ft_share = PFI_SIM_DEFAULT_FT_SHARE,
                          .threads = 1,
                          .learn = pfi_learn_defaults()};
}

void pfi_sim_result_free(pfi_sim_result *r)
{
    if (!r) return;
    free(r->reductions);
    free(r->cells);
    r->reductions = NULL;
    r->cells = NULL;
}

/* Draws W x J group indices. */
static int draw_workloads(const pfi_sim_group *g, size_t ng, const pfi_sim_opts *o, size_t *idx,
                          pfi_error *err)
{
    size_t total = o->workloads * o->jobs;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    gsl_rng_set(r, o->seed);
    int rc = PFI_OK;
    if (o->mix == PFI_SIM_RANDOM) {
        for (size_t k = 0; k < total; k++)
            idx[k] = (size_t)gsl_rng_uniform_int(r, ng);
        gsl_rng_free(r);
        return PFI_OK;
    }
    /* production: FT groups weighted 1 / gpus, PT groups weighted gpus */
    double *wft = calloc(ng, sizeof *wft), *wpt = calloc(ng, sizeof *wpt);
    gsl_ran_discrete_t *dft = NULL, *dpt = NULL;
    size_t nft = 0, npt = 0;
    if (!wft || !wpt) {
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < ng; i++) {
        if (g[i].ft) {
            wft[i] = 1.0 / g[i].gpus;
            nft++;
        } else {
            wpt[i] = g[i].gpus;
            npt++;
        }
    }
    if ((o->ft_share > 0 && nft == 0) || (o->ft_share < 1 && npt == 0)) {
        rc = pfi_error_set(err, PFI_EINVAL, NULL, 0,
                           "the production mix needs fine-tuning and pretraining groups "
                           "(have %zu FT, %zu PT)",
                           nft, npt);
        goto out;
    }
    if (nft) dft = gsl_ran_discrete_preproc(ng, wft);
    if (npt) dpt = gsl_ran_discrete_preproc(ng, wpt);
    if ((nft && !dft) || (npt && !dpt)) {
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < total; k++) {
        int ft = gsl_rng_uniform(r) < o->ft_share;
        idx[k] = gsl_ran_discrete(r, ft ? dft : dpt);
    }
out:
    gsl_ran_discrete_free(dft);
    gsl_ran_discrete_free(dpt);
    free(wft);
    free(wpt);
    gsl_rng_free(r);
    return rc;
}

typedef struct shared {
    const pfi_sim_group *g;
    size_t ng;
    const pfi_sim_opts *o;
    const size_t *idx;
    double *tot; /* [w][r][policy] total throughput of workload w */
    pthread_mutex_t lock;
    size_t done, next;
    int rc;
    pfi_error err;
} shared;

/* What learn sees of a job: its true throughput at the power applied, times
 * (1 + noise_rel x N(0, 1)) when measurements are noisy. The true work of
 * every period is summed apart, so that the event's throughput is
 * accounted from what the jobs really did, not from what was read. */
typedef struct {
    pfi_alloc_problem *prob;
    double noise_rel;
    gsl_rng *rng;
    double true_work; /* tokens */
} learn_ctx;

static int observe_true(void *ctx, size_t job, double power_w, size_t jobs, double secs,
                        double *tput)
{
    learn_ctx *c = ctx;
    double t = pfi_alloc_problem_tput_at(c->prob, job, power_w);
    c->true_work += (double)jobs * secs * t;
    *tput = c->noise_rel > 0 ? t * (1 + gsl_ran_gaussian_ziggurat(c->rng, c->noise_rel)) : t;
    return PFI_OK;
}

static pfi_alloc_job group_job(const pfi_sim_group *g, size_t count)
{
    return (pfi_alloc_job){.name = g->name,
                           .cap = g->cap,
                           .P = g->P,
                           .T = g->T,
                           .n = g->n,
                           .pfi = g->pfi_hat,
                           .dram_copy = g->dram_copy,
                           .moe_ft = g->moe && g->ft,
                           .count = count};
}

/* Workload w's jobs as allocation entries, into jobs (J slots; cnt: ng
 * slots of scratch). Without reading noise the jobs drawn from one group
 * are identical in all that any policy sees, and every policy treats
 * identical jobs alike (alloc.h, learn.h), so one entry per group with its
 * count gives the totals of one entry per job at a fraction of the cost (a
 * workload of 100 jobs holds about 20 groups). Noisy readings tell the jobs
 * apart: then one entry per job. cls (J slots) gets each entry's class
 * (pfi_sim_opts.classes; 0 none). Returns the entries. */
static size_t workload_entries(const shared *s, size_t w, pfi_alloc_job *jobs, size_t *cnt,
                               uint64_t *cls)
{
    size_t J = s->o->jobs, ne = 0, groups = 0;
    const size_t *idx = s->idx + w * J;
    memset(cnt, 0, s->ng * sizeof *cnt);
    for (size_t k = 0; k < J; k++)
        groups += cnt[idx[k]]++ == 0;
    if (s->o->noise_rel > 0) {
        for (size_t k = 0; k < J; k++) {
            cls[ne] = s->o->classes == PFI_SIM_CLASS_GROUP   ? idx[k] + 1
                      : s->o->classes == PFI_SIM_CLASS_WRONG ? k % groups + 1
                                                             : 0;
            jobs[ne++] = group_job(&s->g[idx[k]], 1);
        }
        return ne;
    }
    for (size_t i = 0; i < s->ng; i++)
        if (cnt[i]) {
            /* exact: an entry is its group's jobs; wrong classes join two groups */
            cls[ne] = s->o->classes == PFI_SIM_CLASS_GROUP   ? i + 1
                      : s->o->classes == PFI_SIM_CLASS_WRONG ? ne / 2 + 1
                                                             : 0;
            jobs[ne++] = group_job(&s->g[i], cnt[i]);
        }
    return ne;
}

static int run_workload(shared *s, size_t w, pfi_alloc_problem **prob, pfi_learn_plan **plan,
                        pfi_alloc_job *jobs, size_t *cnt, uint64_t *cls, pfi_learn_job *lj,
                        gsl_rng *rng, pfi_error *err)
{
    const pfi_sim_opts *o = s->o;
    size_t ne = workload_entries(s, w, jobs, cnt, cls);
    int rc = *prob ? pfi_alloc_problem_reset(*prob, jobs, ne, err)
                   : pfi_alloc_problem_create(jobs, ne, prob, err);
    if (rc) return rc;
    for (size_t k = 0; k < ne; k++) {
        pfi_alloc_problem_job_range(*prob, k, &lj[k].pmax_w, &lj[k].tmax, &lj[k].floor_w);
        lj[k].pfi_hat = jobs[k].pfi;
        lj[k].count = pfi_alloc_problem_job_count(*prob, k);
        lj[k].class_id = cls[k];
    }
    if (!o->no_learn) {
        /* learn's per-workload set-up once, for every reduction */
        pfi_learn_opts lo = o->learn;
        lo.noise_rel = o->noise_rel; /* learn knows its readings' spread */
        rc = *plan ? pfi_learn_plan_reset(*plan, lj, ne, &lo, err)
                   : pfi_learn_plan_create(lj, ne, &lo, plan, err);
        if (rc) return rc;
    }
    learn_ctx lc = {.prob = *prob, .noise_rel = o->noise_rel, .rng = rng};
    /* one stream per workload: results do not depend on which thread ran it */
    if (rng) gsl_rng_set(rng, o->seed * 1000003UL + w + 1);
    for (size_t r = 0; r < o->n_reductions; r++) {
        double budget, *cell = s->tot + (w * o->n_reductions + r) * PFI_SIM_NPOLICIES;
        rc = pfi_alloc_budget_for_reduction(*prob, o->reductions[r], &budget, err);
        for (int pol = 0; rc == PFI_OK && pol < PFI_POLICY_COUNT; pol++) {
            pfi_alloc_result res;
            rc = pfi_alloc_run(*prob, (pfi_alloc_policy)pol, budget, NULL, &res, err);
            cell[pol] = res.total_tput;
        }
        if (rc == PFI_OK && o->no_learn) {
            cell[PFI_SIM_LEARN] = 0;
        } else if (rc == PFI_OK) {
            lc.true_work = 0;
            rc = pfi_learn_plan_run(*plan, budget, observe_true, &lc, NULL, NULL, err);
            cell[PFI_SIM_LEARN] = lc.true_work / o->learn.event_s;
        }
        if (rc) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            return pfi_error_set(err, rc, NULL, 0, "workload %zu, reduction %g: %s", w + 1,
                                 o->reductions[r], msg);
        }
    }
    return PFI_OK;
}

static void *worker(void *arg)
{
    shared *s = arg;
    size_t J = s->o->jobs;
    pfi_alloc_problem *prob = NULL;
    pfi_learn_plan *plan = NULL;
    pfi_alloc_job *jobs = malloc(J * sizeof *jobs);
    pfi_learn_job *lj = malloc(J * sizeof *lj);
    size_t *cnt = malloc(s->ng * sizeof *cnt);
    uint64_t *cls = malloc(J * sizeof *cls);
    gsl_rng *rng = s->o->noise_rel > 0 ? gsl_rng_alloc(gsl_rng_mt19937) : NULL;
    pfi_error err = {0};
    int rc = jobs && lj && cnt && cls && (rng || !(s->o->noise_rel > 0))
                 ? PFI_OK
                 : pfi_error_set(&err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (;;) {
        pthread_mutex_lock(&s->lock);
        if (rc != PFI_OK && s->rc == PFI_OK) {
            s->rc = rc;
            s->err = err;
        }
        size_t w = s->next++;
        int stop = s->rc != PFI_OK || w >= s->o->workloads;
        pthread_mutex_unlock(&s->lock);
        if (stop) break;
        rc = run_workload(s, w, &prob, &plan, jobs, cnt, cls, lj, rng, &err);
        if (rc == PFI_OK && s->o->progress) {
            pthread_mutex_lock(&s->lock);
            s->done++;
            s->o->progress(s->o->progress_ctx, s->done, s->o->workloads);
            pthread_mutex_unlock(&s->lock);
        }
    }
    pfi_alloc_problem_destroy(prob);
    pfi_learn_plan_destroy(plan);
    free(jobs);
    free(lj);
    free(cnt);
    free(cls);
    gsl_rng_free(rng);
    return NULL;
}

int pfi_sim_run(const pfi_sim_group *g, size_t ng, const pfi_sim_opts *o, pfi_sim_result *out,
                pfi_error *err)
{
    memset(out, 0, sizeof *out);
    if (!g || ng == 0) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "no sweep groups");
    if (o->workloads == 0 || o->jobs == 0 || o->n_reductions == 0 || !o->reductions ||
        o->threads < 1 || !(o->ft_share >= 0 && o->ft_share <= 1) ||
        !(o->noise_rel >= 0 && o->noise_rel < 1))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "simulation needs workloads, jobs, reductions and threads >= 1, "
                             "an FT share in [0, 1] and a noise in [0, 1)");
    if (o->workloads > ((size_t)1 << 32) / o->jobs)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "too many workloads x jobs");
    for (size_t r = 0; r < o->n_reductions; r++)
        if (!(o->reductions[r] >= 0 && o->reductions[r] < 1))
            return pfi_error_set(err, PFI_ERANGE, NULL, 0, "reduction %g outside [0, 1)",
                                 o->reductions[r]);
    for (size_t i = 0; i < ng; i++)
        if (g[i].gpus <= 0 || isnan(g[i].pfi_hat) || isnan(g[i].dram_copy))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "group %s needs GPUs, a predicted PFI and a DRAM copy product",
                                 g[i].name ? g[i].name : "?");
    /* every curve is checked once here, so workers only see good ones */
    {
        pfi_alloc_job *jobs = malloc(ng * sizeof *jobs);
        if (!jobs) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        for (size_t i = 0; i < ng; i++)
            jobs[i] = (pfi_alloc_job){
                .name = g[i].name, .cap = g[i].cap, .P = g[i].P, .T = g[i].T, .n = g[i].n};
        pfi_alloc_problem *p = NULL;
        int rc = pfi_alloc_problem_create(jobs, ng, &p, err);
        pfi_alloc_problem_destroy(p);
        free(jobs);
        if (rc) return rc;
    }

    size_t W = o->workloads, R = o->n_reductions;
    size_t *idx = malloc(W * o->jobs * sizeof *idx);
    double *tot = malloc(W * R * PFI_SIM_NPOLICIES * sizeof *tot);
    out->reductions = malloc(R * sizeof(double));
    out->cells = calloc(R * PFI_SIM_NPOLICIES, sizeof *out->cells);
    int rc = PFI_OK;
    if (!idx || !tot || !out->reductions || !out->cells) {
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        goto done;
    }
    rc = draw_workloads(g, ng, o, idx, err);
    if (rc) goto done;

    shared s = {.g = g, .ng = ng, .o = o, .idx = idx, .tot = tot, .rc = PFI_OK};
    pthread_mutex_init(&s.lock, NULL);
    int nt = o->threads > 64 ? 64 : o->threads;
    pthread_t tid[64];
    int started = 0;
    for (int t = 1; t < nt; t++)
        if (pthread_create(&tid[started], NULL, worker, &s) == 0) started++;
    worker(&s); /* this thread works too; a thread that failed to start is not needed */
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&s.lock);
    if (s.rc != PFI_OK) {
        rc = s.rc;
        if (err) *err = s.err;
        goto done;
    }

    /* means over workloads, summed in workload order */
    out->n_reductions = R;
    memcpy(out->reductions, o->reductions, R * sizeof(double));
    double J = (double)o->jobs;
    for (size_t r = 0; r < R; r++) {
        pfi_sim_cell *c = out->cells + r * PFI_SIM_NPOLICIES;
        double sum[PFI_SIM_NPOLICIES] = {0}, gap[PFI_SIM_NPOLICIES] = {0};
        for (size_t w = 0; w < W; w++) {
            const double *t = tot + (w * R + r) * PFI_SIM_NPOLICIES;
            for (int p = 0; p < PFI_SIM_NPOLICIES; p++) {
                sum[p] += t[p] / J;
                /* the oracle is an upper bound; rounding may put a policy a
                 * hair above it */
                gap[p] += fmax(0.0, t[PFI_POLICY_ORACLE] - t[p]) / J;
            }
        }
        double geq = gap[PFI_POLICY_EQUAL] / (double)W;
        double oracle = sum[PFI_POLICY_ORACLE] / (double)W;
        for (int p = 0; p < PFI_SIM_NPOLICIES; p++) {
            c[p].ran = p != PFI_SIM_LEARN || !o->no_learn;
            if (!c[p].ran) continue;
            c[p].tput_per_job = sum[p] / (double)W;
            c[p].gap_per_job = gap[p] / (double)W;
            c[p].recovered_per_job = geq - c[p].gap_per_job;
            c[p].has_recovered = geq > 1e-9 * oracle;
            c[p].gap_recovered = c[p].has_recovered ? 1 - c[p].gap_per_job / geq : 0;
        }
    }
done:
    free(idx);
    free(tot);
    if (rc) pfi_sim_result_free(out);
    return rc;
}
