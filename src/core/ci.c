/* Monte Carlo CI: the hot loop of `pfi index --ci`.
 *
 * Common random numbers: every group is perturbed by the same matrix of
 * standard normals Z (draw d, run slot j: column 2j for power, 2j+1 for
 * throughput), each column its own GSL stream seeded from (seed, column). So
 * a group's interval depends only on its own runs and the seed, not on where
 * it sits in the file, what other groups there are, or the thread count; and
 * generating the normals once instead of once per group makes 1,000 groups x
 * 10,000 draws cost about as much as the arithmetic. Each group's draws are
 * still independent across d, so each interval is an ordinary MC interval. */
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

/* Z: draws x cols standard normals, row-major. */
typedef struct {
    double *z;
    size_t draws, cols;
} noise;

static int noise_make(noise *nz, size_t draws, size_t runs, uint64_t seed)
{
    nz->draws = draws;
    nz->cols = 2 * runs;
    nz->z = malloc(draws * nz->cols * sizeof(double));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    if (!nz->z || !rng) {
        free(nz->z);
        gsl_rng_free(rng);
        return PFI_ENOMEM;
    }
    for (size_t j = 0; j < nz->cols; j++) {
        gsl_rng_set(rng, (unsigned long)splitmix64(seed ^ splitmix64(j + 1)));
        for (size_t d = 0; d < draws; d++)
            nz->z[d * nz->cols + j] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    }
    gsl_rng_free(rng);
    return PFI_OK;
}

/* One draw of the chosen estimator; non-zero when undefined for this draw. */
static int estimate(unsigned method, const double *P, const double *T, size_t n, double *v)
{
    int rc;
    switch (method) {
    case PFI_METHOD_AREA:
        rc = pfi_index_area(P, T, n, v);
        break;
    case PFI_METHOD_CE:
        rc = pfi_index_ce(P, T, n, v);
        break;
    default:
        rc = pfi_index_ratio(P, T, n, NULL, v);
        break;
    }
    return rc != PFI_OK || !isfinite(*v);
}

typedef struct {
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

static int ci_one(const pfi_group *g, const pfi_ci_opts *o, const noise *nz, work *w, pfi_ci *out)
{
    *out = (pfi_ci){0};
    size_t n = 0, last = g->n_runs - 1;
    const pfi_run *top = &g->runs[last];
    for (size_t i = 0; i < g->n_runs; i++) {
        const pfi_run *r = &g->runs[i];
        /* The ratio's point estimate leaves out runs at or above Tmax; the
         * draws leave out the same runs. Slots follow the group's own run
         * order, so Z column 2i always perturbs the i-th run. */
        if (o->method == PFI_METHOD_RATIO && i != last && !(r->tput < top->tput)) continue;
        w->P[n] = r->power_w;
        w->T[n] = r->tput;
        w->sp[n] = r->power_sem_w;
        w->st[n] = r->tput_sem;
        n++;
    }
    size_t m = 0;
    for (size_t d = 0; d < o->draws; d++) {
        const double *z = nz->z + d * nz->cols;
        for (size_t i = 0; i < n; i++) {
            w->Pd[i] = w->P[i] + w->sp[i] * z[2 * i];
            w->Td[i] = w->T[i] + w->st[i] * z[2 * i + 1];
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
    if (o->method != PFI_METHOD_RATIO && o->method != PFI_METHOD_AREA && o->method != PFI_METHOD_CE)
        return PFI_EINVAL;
    return PFI_OK;
}

int pfi_ci_group(const pfi_group *g, const pfi_ci_opts *o, pfi_ci *out)
{
    int rc = pfi_ci_batch(&g, 1, o, 1, out);
    return (rc == PFI_OK && !out->has) ? PFI_EUNDEFINED : rc;
}

typedef struct {
    const pfi_group *const *groups;
    size_t begin, end, max_runs;
    const pfi_ci_opts *o;
    const noise *nz;
    pfi_ci *out;
    int rc;
    pthread_t tid;
    int started; /* runs on its own thread, must be joined */
} batch_slice;

static void *batch_worker(void *arg)
{
    batch_slice *s = arg;
    work w;
    if (work_alloc(&w, s->max_runs, s->o->draws)) {
        s->rc = PFI_ENOMEM;
        return NULL;
    }
    for (size_t i = s->begin; i < s->end; i++) {
        int rc = ci_one(s->groups[i], s->o, s->nz, &w, &s->out[i]);
        /* An undefined interval is a per-group outcome (has = 0), not a failure. */
        if (rc != PFI_OK && rc != PFI_EUNDEFINED) s->rc = rc;
    }
    work_free(&w);
    return NULL;
}

int pfi_ci_batch(const pfi_group *const *groups, size_t n, const pfi_ci_opts *o, int threads,
                 pfi_ci *out)
{
    if (!groups || !out || check_opts(o)) return PFI_EINVAL;
    size_t max_runs = 2;
    for (size_t i = 0; i < n; i++) {
        if (!groups[i] || groups[i]->n_runs < 2) return PFI_EINVAL;
        if (groups[i]->n_runs > max_runs) max_runs = groups[i]->n_runs;
    }
    if (n == 0) return PFI_OK;
    noise nz;
    if (noise_make(&nz, o->draws, max_runs, o->seed) != PFI_OK) return PFI_ENOMEM;
    if (threads < 1) threads = 1;
    if ((size_t)threads > n) threads = (int)n;
    batch_slice *sl = calloc((size_t)threads, sizeof *sl);
    if (!sl) {
        free(nz.z);
        return PFI_ENOMEM;
    }
    int rc = PFI_OK;
    for (int t = 0; t < threads; t++) {
        sl[t] = (batch_slice){.groups = groups,
                              .begin = n * (size_t)t / (size_t)threads,
                              .end = n * (size_t)(t + 1) / (size_t)threads,
                              .max_runs = max_runs,
                              .o = o,
                              .nz = &nz,
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
    free(nz.z);
    return rc;
}
