/* The calibration of the controller's promises (calib.h). */
#include "calib.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/index.h"

#define MAX_OBS 128
#define OBS_WEIGHT 0.3 /* ctl_learned.c's exponential mean */

static const double budget_fracs[] = {0.6, 0.7, 0.55, 0.65};

calib_opts calib_defaults(void)
{
    return (calib_opts){.family = FAM_MIX,
                        .seed = 1,
                        .groups = 8,
                        .jobs_per_group = 3,
                        .events = 4,
                        .periods = 12,
                        .noise_rel = 0.01,
                        .churn = 0.25,
                        .classes = CALIB_NO_CLASS,
                        .policy = PFI_PLAN_PFI,
                        .confidence = 0.9};
}

typedef struct cjob {
    char id[32], cls[32];
    size_t g;
    pfi_plan_obs obs[MAX_OBS];
    double var[MAX_OBS];
    size_t n_obs;
    double last_cap;
    pfi_plan_obs reading; /* last period's (power_w 0: none) */
} cjob;

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) abort();
    return p;
}

/* Group g's true power and throughput at per-GPU cap c, linear between its
 * sweep's caps (held at the ends). */
void calib_truth(const pfi_sim_group *g, double c, double *P, double *T)
{
    if (c <= g->cap[0]) {
        *P = g->P[0];
        *T = g->T[0];
        return;
    }
    for (size_t k = 1; k < g->n; k++)
        if (c <= g->cap[k]) {
            double f = (c - g->cap[k - 1]) / (g->cap[k] - g->cap[k - 1]);
            *P = g->P[k - 1] + (g->P[k] - g->P[k - 1]) * f;
            *T = g->T[k - 1] + (g->T[k] - g->T[k - 1]) * f;
            return;
        }
    *P = g->P[g->n - 1];
    *T = g->T[g->n - 1];
}

/* The predictor's residual SD over the set: the estimate's honest SD. */
static double residual_sd(const fam_set *s)
{
    double q = 0, m = 0;
    for (size_t i = 0; i < s->n; i++) {
        double v;
        if (pfi_index_ratio(s->g[i].P, s->g[i].T, s->g[i].n, NULL, &v) != PFI_OK) continue;
        q += (v - s->g[i].pfi_hat) * (v - s->g[i].pfi_hat);
        m++;
    }
    return m > 1 ? sqrt(q / (m - 1)) : NAN;
}

static void label(const calib_opts *o, size_t slot, cjob *j)
{
    j->cls[0] = '\0';
    if (o->classes == CALIB_CLASS) snprintf(j->cls, sizeof j->cls, "g%zu", slot);
    if (o->classes == CALIB_MISLABELLED) snprintf(j->cls, sizeof j->cls, "g%zu", slot / 2);
}

/* A reading at cap: folded into the job's exponential mean there. */
static void observe(cjob *j, double cap, double P, double T, double var)
{
    for (size_t k = 0; k < j->n_obs; k++)
        if (j->obs[k].cap_w == cap) {
            j->obs[k].power_w += OBS_WEIGHT * (P - j->obs[k].power_w);
            j->obs[k].tput += OBS_WEIGHT * (T - j->obs[k].tput);
            j->var[k] =
                (1 - OBS_WEIGHT) * (1 - OBS_WEIGHT) * j->var[k] + OBS_WEIGHT * OBS_WEIGHT * var;
            j->obs[k].tput_sd = sqrt(j->var[k]);
            return;
        }
    if (j->n_obs == MAX_OBS) return;
    j->obs[j->n_obs] = (pfi_plan_obs){cap, P, T, sqrt(var)};
    j->var[j->n_obs++] = var;
}

int calib_run(const calib_opts *o, calib_event *ev, pfi_error *err)
{
    fam_set s;
    int rc = fam_build(o->family, o->seed, &s);
    if (rc) return pfi_error_set(err, rc, NULL, 0, "the family did not build");
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, o->seed);
    double sd = residual_sd(&s);
    size_t ng = o->groups < s.n ? o->groups : s.n, n = ng * o->jobs_per_group, next_id = 0;
    size_t *slot_g = xcalloc(ng, sizeof *slot_g);
    for (size_t k = 0; k < ng; k++) /* distinct groups */
        for (;;) {
            size_t g = gsl_rng_uniform_int(r, s.n), dup = 0;
            for (size_t q = 0; q < k; q++)
                dup |= slot_g[q] == g;
            if (!dup) {
                slot_g[k] = g;
                break;
            }
        }
    cjob *jobs = xcalloc(n, sizeof *jobs);
    for (size_t i = 0; i < n; i++) {
        jobs[i].g = i / o->jobs_per_group;
        snprintf(jobs[i].id, sizeof jobs[i].id, "job-%zu", next_id++);
        label(o, jobs[i].g, &jobs[i]);
    }
    /* points of departed jobs, relative, per slot label (class) */
    pfi_plan_obs *gone = xcalloc(ng * o->events * n * MAX_OBS / 4 + 1, sizeof *gone);
    char(*gone_cls)[32] = xcalloc(ng * o->events * n * MAX_OBS / 4 + 1, 32);
    size_t n_gone = 0, room_gone = ng * o->events * n * MAX_OBS / 4 + 1;
    pfi_plan_job *pj = xcalloc(n, sizeof *pj);
    pfi_plan_cap *caps = xcalloc(n, sizeof *caps);
    pfi_plan_obs *cls_obs = xcalloc(room_gone, sizeof *cls_obs);
    pfi_plan *plan;
    pfi_plan_create(&plan);
    pfi_plan_set_confidence(plan, o->confidence);
    /* learn: the controller's loop, a round a period */
    if (o->policy == PFI_PLAN_LEARN) rc = pfi_plan_use_learn(plan, 8, 1, err);
    double pmax_total = 0, floors = 0;
    for (size_t i = 0; i < n; i++) {
        const pfi_sim_group *g = &s.g[slot_g[jobs[i].g]];
        pmax_total += g->P[g->n - 1];
        floors += g->P[0];
    }
    for (size_t e = 0; e < o->events && rc == PFI_OK; e++) {
        calib_event *E = &ev[e];
        memset(E, 0, sizeof *E);
        E->budget_frac = budget_fracs[e % 4];
        double budget = fmax(E->budget_frac * pmax_total, 1.05 * floors);
        for (size_t i = 0; i < n; i++) {
            jobs[i].last_cap = NAN;
            jobs[i].reading = (pfi_plan_obs){0};
        }
        for (size_t t = 0; t < o->periods && rc == PFI_OK; t++) {
            /* the class's stored points: one array per label, shared by its jobs */
            size_t used = 0;
            for (size_t i = 0; i < n; i++) {
                const pfi_sim_group *g = &s.g[slot_g[jobs[i].g]];
                pj[i] = (pfi_plan_job){.id = jobs[i].id,
                                       .n_gpus = (size_t)g->gpus,
                                       .min_w = g->cap[0],
                                       .max_w = g->cap[g->n - 1],
                                       .pmax_w = g->P[g->n - 1],
                                       .tmax = g->T[g->n - 1],
                                       .pfi = g->pfi_hat,
                                       .pfi_sd = sd,
                                       .obs = jobs[i].obs,
                                       .n_obs = jobs[i].n_obs,
                                       .reading = jobs[i].reading,
                                       .job_class = jobs[i].cls[0] ? jobs[i].cls : NULL};
                if (!jobs[i].cls[0]) continue;
                size_t first = used;
                for (size_t q = 0; q < i && first == used; q++)
                    if (pj[q].job_class && strcmp(pj[q].job_class, jobs[i].cls) == 0) {
                        pj[i].class_obs = pj[q].class_obs;
                        pj[i].n_class_obs = pj[q].n_class_obs;
                        first = SIZE_MAX;
                    }
                if (first == SIZE_MAX) continue;
                for (size_t q = 0; q < n_gone; q++)
                    if (strcmp(gone_cls[q], jobs[i].cls) == 0) cls_obs[used++] = gone[q];
                pj[i].class_obs = cls_obs + first;
                pj[i].n_class_obs = used - first;
            }
            pfi_plan_result res;
            pfi_plan_set_time(plan, (double)(e * o->periods + t) * 60);
            rc = pfi_plan_set_jobs(plan, pj, n, err);
            if (rc == PFI_OK) rc = pfi_plan_run(plan, o->policy, budget, 0, 0, caps, &res, err);
            if (rc != PFI_OK) break;
            /* the controller's 5 W step, down (ctl_caps_next), and the
             * promise the pushed caps make */
            for (size_t i = 0; i < n; i++) {
                const pfi_sim_group *g = &s.g[slot_g[jobs[i].g]];
                double c = fmax(floor(caps[i].cap_w / 5) * 5, g->cap[0]);
                if (caps[i].cap_w >= g->cap[g->n - 1]) c = g->cap[g->n - 1];
                caps[i].cap_w = c;
            }
            pfi_plan_eval(plan, caps, &res);
            double real = 0, unc = 0, power = 0;
            for (size_t i = 0; i < n; i++) {
                const pfi_sim_group *g = &s.g[slot_g[jobs[i].g]];
                double c = caps[i].cap_w, P, T;
                calib_truth(g, c, &P, &T);
                real += T;
                power += P;
                unc += g->T[g->n - 1];
                double read = T * (1 + gsl_ran_gaussian(r, o->noise_rel)), v = 0;
                v = (o->noise_rel * read) * (o->noise_rel * read);
                /* a point once its cap has held a full period (caps settle) */
                if (jobs[i].last_cap == c && c < g->cap[g->n - 1]) observe(&jobs[i], c, P, read, v);
                jobs[i].reading = (pfi_plan_obs){c, P, read, o->noise_rel * read};
                jobs[i].last_cap = c;
            }
            double errv = fabs(res.total_tput - real) / real;
            if (getenv("CALIB_DEBUG"))
                fprintf(stderr, "e%zu t%zu exp %.1f lo %.1f real %.1f sd %.1f %s\n", e, t,
                        res.total_tput, res.total_tput_lo, real, res.total_tput_sd,
                        real >= res.total_tput_lo ? "" : "MISS");
            E->periods++;
            E->over += power > budget * (1 + 1e-9);
            E->covered += real >= res.total_tput_lo;
            E->err_mean += errv;
            E->err_max = fmax(E->err_max, errv);
            E->width_mean += (res.total_tput - res.total_tput_lo) / res.total_tput;
            E->realised += real;
            if (t == 0) {
                E->first_expected = res.total_tput / unc;
                E->first_lo = res.total_tput_lo / unc;
                E->first_realised = real / unc;
            }
        }
        if (E->periods) {
            E->err_mean /= (double)E->periods;
            E->width_mean /= (double)E->periods;
        }
        /* churn: some jobs end; new ones of the same groups start */
        size_t out = (size_t)lround(o->churn * (double)n);
        for (size_t q = 0; q < out; q++) {
            cjob *j = &jobs[gsl_rng_uniform_int(r, n)];
            const pfi_sim_group *g = &s.g[slot_g[j->g]];
            for (size_t k = 0; j->cls[0] && k < j->n_obs && n_gone < room_gone; k++) {
                gone[n_gone] = (pfi_plan_obs){j->obs[k].cap_w, j->obs[k].power_w / g->P[g->n - 1],
                                              j->obs[k].tput / g->T[g->n - 1],
                                              j->obs[k].tput_sd / g->T[g->n - 1]};
                snprintf(gone_cls[n_gone++], 32, "%s", j->cls);
            }
            j->n_obs = 0;
            snprintf(j->id, sizeof j->id, "job-%zu", next_id++);
        }
    }
    pfi_plan_destroy(plan);
    free(pj);
    free(caps);
    free(cls_obs);
    free(gone);
    free(gone_cls);
    free(jobs);
    free(slot_g);
    gsl_rng_free(r);
    fam_free(&s);
    return rc;
}
