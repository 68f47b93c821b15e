/* Monte Carlo CI: the hot loop of `pfi index --ci`. One GSL generator per
 * group, reseeded from (seed, index), so a group's interval is the same
 * whichever thread computes it. */
#include "pfi/ci.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "pfi/index.h"
#include "pfi/quantile.h"

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* One draw of the chosen estimator; non-zero when undefined for this draw. */
static int estimate(unsigned method, const double *P, const double *T, size_t n, double *v)
{
    int rc;
    switch (method) {
    case PFI_METHOD_AREA: rc = pfi_index_area(P, T, n, v); break;
    case PFI_METHOD_CE: rc = pfi_index_ce(P, T, n, v); break;
    default: rc = pfi_index_ratio(P, T, n, NULL, v); break;
    }
    return rc != PFI_OK || !isfinite(*v);
}

typedef struct {
    size_t n;
    double *P, *T, *sp, *st, *Pd, *Td, *vals;
} work;

static int work_alloc(work *w, size_t n, size_t draws)
{
    memset(w, 0, sizeof *w);
    w->P = malloc(6 * n * sizeof(double));
    w->vals = malloc(draws * sizeof(double));
    if (!w->P || !w->vals) {
        free(w->P);
        free(w->vals);
        return PFI_ENOMEM;
    }
    w->T = w->P + n;
    w->sp = w->T + n;
    w->st = w->sp + n;
    w->Pd = w->st + n;
    w->Td = w->Pd + n;
    return PFI_OK;
}

static void work_free(work *w)
{
    free(w->P);
    free(w->vals);
}

static int ci_one(const pfi_group *g, size_t index, const pfi_ci_opts *o, gsl_rng *rng,
                  work *w, pfi_ci *out)
{
    *out = (pfi_ci){0};
    size_t n = 0, last = g->n_runs - 1;
    const pfi_run *top = &g->runs[last];
    for (size_t i = 0; i < g->n_runs; i++) {
        const pfi_run *r = &g->runs[i];
        /* The ratio's point estimate already leaves out runs at or above
         * Tmax; the draws leave out the same runs. */
        if (o->method == PFI_METHOD_RATIO && i != last && !(r->tput < top->tput)) continue;
        w->P[n] = r->power_w;
        w->T[n] = r->tput;
        w->sp[n] = r->power_sem_w;
        w->st[n] = r->tput_sem;
        n++;
    }
    gsl_rng_set(rng, (unsigned long)splitmix64(o->seed ^ splitmix64(index)));
    size_t m = 0;
    for (size_t d = 0; d < o->draws; d++) {
        for (size_t i = 0; i < n; i++) {
            w->Pd[i] = w->sp[i] > 0 ? w->P[i] + gsl_ran_gaussian_ziggurat(rng, w->sp[i]) : w->P[i];
            w->Td[i] = w->st[i] > 0 ? w->T[i] + gsl_ran_gaussian_ziggurat(rng, w->st[i]) : w->T[i];
        }
        double v;
        if (estimate(o->method, w->Pd, w->Td, n, &v) == 0) w->vals[m++] = v;
    }
    out->n_valid = m;
    if (m == 0) return PFI_EUNDEFINED;
    double a = (1.0 - o->level) / 2.0;
    out->low = pfi_quantile_select(w->vals, m, a);
    out->high = pfi_quantile_select(w->vals, m, 1.0 - a);
    out->has = 1;
    return PFI_OK;
}

static int check_opts(const pfi_ci_opts *o)
{
    if (!o || o->draws == 0 || !(o->level > 0 && o->level < 1)) return PFI_EINVAL;
    if (o->method != PFI_METHOD_RATIO && o->method != PFI_METHOD_AREA &&
        o->method != PFI_METHOD_CE)
        return PFI_EINVAL;
    return PFI_OK;
}

int pfi_ci_group(const pfi_group *g, size_t index, const pfi_ci_opts *o, pfi_ci *out)
{
    if (!g || !out || g->n_runs < 2 || check_opts(o)) return PFI_EINVAL;
    work w;
    if (work_alloc(&w, g->n_runs, o->draws)) return PFI_ENOMEM;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    int rc = rng ? ci_one(g, index, o, rng, &w, out) : PFI_ENOMEM;
    gsl_rng_free(rng);
    work_free(&w);
    return rc;
}

typedef struct {
    const pfi_group *const *groups;
    size_t begin, end;
    const pfi_ci_opts *o;
    pfi_ci *out;
    int rc;
    pthread_t tid;
    int started; /* runs on its own thread, must be joined */
} batch_slice;

static void *batch_worker(void *arg)
{
    batch_slice *s = arg;
    size_t maxn = 2;
    for (size_t i = s->begin; i < s->end; i++)
        if (s->groups[i]->n_runs > maxn) maxn = s->groups[i]->n_runs;
    work w;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    if (!rng || work_alloc(&w, maxn, s->o->draws)) {
        gsl_rng_free(rng);
        s->rc = PFI_ENOMEM;
        return NULL;
    }
    for (size_t i = s->begin; i < s->end; i++) {
        int rc = ci_one(s->groups[i], i, s->o, rng, &w, &s->out[i]);
        /* An undefined interval is a per-group outcome (has = 0), not a failure. */
        if (rc != PFI_OK && rc != PFI_EUNDEFINED) s->rc = rc;
    }
    gsl_rng_free(rng);
    work_free(&w);
    return NULL;
}

int pfi_ci_batch(const pfi_group *const *groups, size_t n, const pfi_ci_opts *o, int threads,
                 pfi_ci *out)
{
    if (!groups || !out || check_opts(o)) return PFI_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!groups[i] || groups[i]->n_runs < 2) return PFI_EINVAL;
    if (threads < 1) threads = 1;
    if ((size_t)threads > n) threads = n ? (int)n : 1;
    batch_slice *sl = calloc((size_t)threads, sizeof *sl);
    if (!sl) return PFI_ENOMEM;
    int rc = PFI_OK;
    for (int t = 0; t < threads; t++) {
        sl[t] = (batch_slice){.groups = groups,
                              .begin = n * (size_t)t / (size_t)threads,
                              .end = n * (size_t)(t + 1) / (size_t)threads,
                              .o = o,
                              .out = out};
        /* The last slice, or one whose thread failed to start, runs here. */
        if (t < threads - 1 && pthread_create(&sl[t].tid, NULL, batch_worker, &sl[t]) == 0)
            sl[t].started = 1;
        else
            batch_worker(&sl[t]);
    }
    for (int t = 0; t < threads; t++) {
        if (sl[t].started) pthread_join(sl[t].tid, NULL);
        if (sl[t].rc != PFI_OK) rc = sl[t].rc;
    }
    free(sl);
    return rc;
}
