/* The learn policy replayed (include/core/pfi/learn.h): the live loop of
 * learn_live.c driven period by period, each reading taken from observe().
 * pfi allocate --policy learn and pfi simulate run this; a controller runs
 * learn_live.h itself. */
#include "pfi/learn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/learn_live.h"

pfi_learn_opts pfi_learn_defaults(void)
{
    return (pfi_learn_opts){.rounds = 8, .round_s = 30, .event_s = 3600};
}

struct pfi_learn_plan {
    pfi_learn_opts o;
    size_t n;
    double *count;
    pfi_live *live;
    pfi_live_share *sh;
    pfi_live_reading *rd;
    double *pw; /* the last period's powers */
};

void pfi_learn_plan_destroy(pfi_learn_plan *s)
{
    if (!s) return;
    pfi_live_destroy(s->live);
    free(s->count);
    free(s->sh);
    free(s->rd);
    free(s->pw);
    free(s);
}

int pfi_learn_plan_reset(pfi_learn_plan *s, const pfi_learn_job *jobs, size_t n,
                         const pfi_learn_opts *o, pfi_error *err)
{
    pfi_learn_opts d = pfi_learn_defaults();
    if (!o) o = &d;
    s->n = 0;
    if (n == 0 || !jobs) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "learn: no jobs");
    if (o->rounds < 1 || o->rounds > 64 || !(o->round_s > 0) || !isfinite(o->event_s) ||
        o->event_s < (double)o->rounds * o->round_s || !(o->noise_rel >= 0 && o->noise_rel < 1))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "learn: need 1-64 rounds of positive length that fit in the event "
                             "(%zu x %g s in %g s) and a reading noise in [0, 1)",
                             o->rounds, o->round_s, o->event_s);
    for (size_t i = 0; i < n; i++)
        if (isnan(jobs[i].pfi_hat))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "learn: job #%zu has no predicted PFI",
                                 i + 1);
    pfi_live_destroy(s->live);
    s->live = NULL;
    double *cnt = realloc(s->count, n * sizeof *cnt);
    pfi_live_share *sh = cnt ? realloc(s->sh, n * sizeof *sh) : NULL;
    pfi_live_reading *rd = sh ? realloc(s->rd, n * sizeof *rd) : NULL;
    double *pw = rd ? realloc(s->pw, n * sizeof *pw) : NULL;
    if (cnt) s->count = cnt;
    if (sh) s->sh = sh;
    if (rd) s->rd = rd;
    if (pw) s->pw = pw;
    if (!pw) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    pfi_live_opts lo = pfi_live_defaults();
    lo.explore_rounds = o->rounds;
    /* no job goes silent in a replay: every round reads every job */
    lo.stale_s = 1e300;
    int rc = pfi_live_create(&lo, &s->live, err);
    for (size_t i = 0; rc == PFI_OK && i < n; i++) {
        const pfi_learn_job *j = &jobs[i];
        pfi_live_job lj = {.id = i,
                           .pmax_w = j->pmax_w,
                           .tmax = j->tmax,
                           .floor_w = j->floor_w,
                           .pfi_hat = j->pfi_hat,
                           .count = j->count,
                           .class_id = j->class_id};
        rc = pfi_live_job_set(s->live, &lj, err);
        s->count[i] = j->count ? (double)j->count : 1.0;
    }
    if (rc) return rc;
    s->o = *o;
    s->n = n;
    return PFI_OK;
}

int pfi_learn_plan_create(const pfi_learn_job *jobs, size_t n, const pfi_learn_opts *o,
                          pfi_learn_plan **out, pfi_error *err)
{
    *out = NULL;
    pfi_learn_plan *s = calloc(1, sizeof *s);
    if (!s) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int rc = pfi_learn_plan_reset(s, jobs, n, o, err);
    if (rc) {
        pfi_learn_plan_destroy(s);
        return rc;
    }
    *out = s;
    return PFI_OK;
}

int pfi_learn_plan_run(pfi_learn_plan *s, double budget_w, pfi_learn_observe observe, void *ctx,
                       double *power_w, pfi_learn_result *res, pfi_error *err)
{
    if (!s || s->n == 0 || !observe)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "learn: no jobs or no observer");
    size_t n = s->n;
    const pfi_learn_opts *o = &s->o;
    pfi_live_forget(s->live); /* a new event: nothing read yet */
    /* one proposal a period, the last period what is left of the event
     * (the first rounds explore, the rest keep: learn_live.h) */
    double np = ceil(o->event_s / o->round_s * (1 - 1e-12));
    size_t periods = np > PFI_LEARN_MAX_PERIODS ? PFI_LEARN_MAX_PERIODS : (size_t)np;
    if (periods < o->rounds) periods = o->rounds;
    double energy = 0, total = 0;
    for (size_t r = 0; r < periods; r++) {
        double now = (double)r * o->round_s;
        double secs = r + 1 < periods ? o->round_s : o->event_s - now;
        int rc = pfi_live_propose(s->live, budget_w, now, s->sh, n, err);
        if (rc) return rc;
        /* Exact readings of a kept proposal that stood are read again
         * unchanged, so it stands to the end: the rest of the event is one
         * period (what reading every period would give, without the passes;
         * a probe read again is not kept, learn_live.h) */
        int stood = r > o->rounds && o->noise_rel == 0;
        for (size_t i = 0; stood && i < n; i++)
            stood = s->sh[i].power_w == s->pw[i] && !s->sh[i].probing;
        if (stood) {
            secs = o->event_s - now;
            periods = r + 1;
        }
        total = 0;
        for (size_t i = 0; i < n; i++) {
            double t, p = s->sh[i].power_w;
            rc = observe(ctx, i, p, (size_t)s->count[i], secs, &t);
            if (rc != PFI_OK)
                return pfi_error_set(err, rc, NULL, 0, "learn: observing job #%zu failed", i + 1);
            total += s->count[i] * t;
            s->pw[i] = p;
            s->rd[i] = (pfi_live_reading){.id = i,
                                          .power_w = p,
                                          .cap_w = NAN,
                                          .tput = t,
                                          .tput_sd = o->noise_rel * t,
                                          .t_s = now + secs};
        }
        energy += secs * total;
        if (r + 1 < periods && (rc = pfi_live_observe(s->live, s->rd, n, err))) return rc;
    }
    if (res) {
        res->final_tput = total;
        res->avg_tput = energy / o->event_s;
        res->rounds = o->rounds;
        res->periods = periods;
    }
    if (power_w)
        for (size_t i = 0; i < n; i++)
            power_w[i] = s->sh[i].power_w;
    return PFI_OK;
}

int pfi_learn_run(const pfi_learn_job *jobs, size_t n, double budget_w, const pfi_learn_opts *o,
                  pfi_learn_observe observe, void *ctx, double *power_w, pfi_learn_result *res,
                  pfi_error *err)
{
    if (n == 0 || !jobs || !observe)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "learn: no jobs or no observer");
    pfi_learn_plan *s = NULL;
    int rc = pfi_learn_plan_create(jobs, n, o, &s, err);
    if (rc == PFI_OK) rc = pfi_learn_plan_run(s, budget_w, observe, ctx, power_w, res, err);
    pfi_learn_plan_destroy(s);
    return rc;
}

int pfi_learn_plan_set_tree(pfi_learn_plan *s, const pfi_alloc_domain *d, size_t nd,
                            const pfi_alloc_span *sp, size_t ns, pfi_error *err)
{
    if (!s || !s->live) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "learn: no plan");
    pfi_live_span *ls = malloc((ns ? ns : 1) * sizeof *ls);
    if (!ls) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (size_t k = 0; k < ns; k++) /* the loop's ids are the jobs' indices (reset) */
        ls[k] = (pfi_live_span){sp[k].job, sp[k].domain, sp[k].share};
    int rc = pfi_live_set_tree(s->live, d, nd, ls, ns, err);
    free(ls);
    return rc;
}
