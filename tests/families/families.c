/* Seeded curve families (families.h). */
#include "families.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/dataset.h"
#include "pfi/index.h"
#include "pfi/telemetry.h"

static const char *const names[FAM_COUNT] = {
    "embedded", "flat-knee", "sigmoid", "bumps", "dead-zone", "linear", "h100", "noisy", "mix",
};

const char *fam_name(fam_kind k)
{
    return (unsigned)k < FAM_COUNT ? names[k] : "?";
}

int fam_lookup(const char *name)
{
    for (int k = 0; k < FAM_COUNT; k++)
        if (strcmp(name, names[k]) == 0) return k;
    return -1;
}

int fam_select(const char *prog, const char *name, int on[FAM_COUNT])
{
    int k = fam_lookup(name);
    if (k < 0) {
        fprintf(stderr, "%s: no family '%s'\n", prog, name);
        return -1;
    }
    on[k] = 1;
    return 0;
}

int fam_selected(const int on[FAM_COUNT], int k)
{
    for (int i = 0; i < FAM_COUNT; i++)
        if (on[i]) return on[k];
    return 1;
}

enum { NSYN = 24, MAXPTS = 24, NAMELEN = 48 };

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) abort();
    return p;
}

/* The loss 1 - T/Tmax of a synthetic family at cut u = 1 - P/Pmax in
 * [0, umax]; par[] drawn once per group. */
static double loss_at(fam_kind k, const double *par, double u, double umax)
{
    switch (k) {
    case FAM_FLAT_KNEE: /* par: knee, loss at umax, exponent */
        return u <= par[0] ? 0 : par[1] * pow((u - par[0]) / (umax - par[0]), par[2]);
    case FAM_SIGMOID: { /* par: centre, width, height */
        double s0 = 1 / (1 + exp(par[0] / par[1]));
        return par[2] * (1 / (1 + exp(-(u - par[0]) / par[1])) - s0) / (1 - s0);
    }
    case FAM_BUMPS: /* par: scale, exponent, bump height, bumps */
        return par[0] * pow(u, par[1]) - par[2] * (u / umax) * sin(2 * M_PI * par[3] * u / umax);
    case FAM_DEAD_ZONE: { /* par: scale, exponent, zone start, throughput kept in it */
        double l = par[0] * pow(u, par[1]);
        return u < par[2] ? l : 1 - (1 - l) * par[3];
    }
    case FAM_LINEAR: /* par: scale, exponent */
    case FAM_NOISY:
        return par[0] * pow(u, par[1]);
    default:
        return 0;
    }
}

static void draw_params(fam_kind k, gsl_rng *r, double umax, double *par)
{
#define U(a, b) ((a) + ((b) - (a)) * gsl_rng_uniform(r))
    switch (k) {
    case FAM_FLAT_KNEE:
        par[0] = U(0.08, 0.45);
        par[1] = U(0.25, 0.65);
        par[2] = U(1.0, 1.6);
        break;
    case FAM_SIGMOID:
        par[0] = U(0.15, 0.5);
        par[1] = U(0.03, 0.08);
        par[2] = U(0.3, 0.8);
        break;
    case FAM_BUMPS:
        par[1] = U(1.2, 2.0);
        par[0] = U(0.3, 0.6) / pow(umax, par[1]);
        par[2] = U(0.03, 0.08);
        par[3] = (double)(2 + gsl_rng_uniform_int(r, 2));
        break;
    case FAM_DEAD_ZONE:
        par[1] = U(1.2, 2.0);
        par[0] = U(0.2, 0.45) / pow(umax, par[1]);
        par[2] = U(0.3, 0.55);
        par[3] = U(0.15, 0.5);
        break;
    case FAM_LINEAR:
        par[1] = U(0.92, 1.08);
        par[0] = U(0.85, 1.15);
        break;
    case FAM_NOISY:
        par[1] = U(1.1, 2.0);
        par[0] = U(0.3, 0.6) / pow(umax, par[1]);
        par[4] = U(0.005, 0.015); /* the sweep's noise */
        break;
    default:
        break;
    }
#undef U
}

/* Spearman's rank correlation (ties averaged). */
static double rank_of(const double *x, size_t n, size_t i)
{
    double below = 0, equal = 0;
    for (size_t j = 0; j < n; j++) {
        below += x[j] < x[i];
        equal += x[j] == x[i];
    }
    return below + (equal + 1) / 2;
}

static double spearman(const double *x, const double *y, size_t n)
{
    double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double a = rank_of(x, n, i), b = rank_of(y, n, i);
        sx += a;
        sy += b;
        sxx += a * a;
        syy += b * b;
        sxy += a * b;
    }
    double cxx = sxx - sx * sx / (double)n, cyy = syy - sy * sy / (double)n;
    double cxy = sxy - sx * sy / (double)n;
    return cxx > 0 && cyy > 0 ? cxy / sqrt(cxx * cyy) : 0;
}

/* pfi_hat[i] = OLS of pfi on dram over the groups with a defined PFI. */
static void predict(const double *pfi, const double *dram, size_t n, double *pfi_hat)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(pfi[i])) continue;
        sx += dram[i];
        sy += pfi[i];
        sxx += dram[i] * dram[i];
        sxy += dram[i] * pfi[i];
        m++;
    }
    double var = sxx - sx * sx / m, b = var > 0 ? (sxy - sx * sy / m) / var : 0;
    double a = (sy - b * sx) / m;
    for (size_t i = 0; i < n; i++)
        pfi_hat[i] = a + b * dram[i];
}

static double measured_pfi(const pfi_sim_group *g)
{
    double v;
    return pfi_index_ratio(g->P, g->T, g->n, NULL, &v) == PFI_OK ? v : NAN;
}

/* The embedded dataset's groups of one platform: their sweeps and the DRAM
 * copy product of their uncapped telemetry (DRAM active ratio x memory copy
 * utilisation percent). */
static int embedded(const char *platform, fam_set *s)
{
    pfi_dataset *d = NULL;
    pfi_error err;
    int rc = pfi_dataset_build(PFI_DATASET_SEED, &d, &err);
    if (rc) return rc;
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += strcmp(d->groups[i].paper->platform, platform) == 0 &&
             d->groups[i].paper->set != PFI_PAPER_HELDOUT;
    s->g = xcalloc(n, sizeof *s->g);
    s->buf = xcalloc(n * 3 * 6, sizeof(double));
    s->names = xcalloc(n, NAMELEN);
    s->n = 0;
    for (size_t i = 0; i < d->n; i++) {
        const pfi_dataset_group *dg = &d->groups[i];
        if (strcmp(dg->paper->platform, platform) != 0 || dg->paper->set == PFI_PAPER_HELDOUT)
            continue;
        size_t k = s->n++;
        pfi_sim_group *g = &s->g[k];
        double *P = s->buf + k * 18, *T = P + 6, *C = P + 12;
        memcpy(P, dg->power_w, dg->n_runs * sizeof *P);
        memcpy(T, dg->tput, dg->n_runs * sizeof *T);
        memcpy(C, dg->cap_w, dg->n_runs * sizeof *C);
        snprintf(s->names + k * NAMELEN, NAMELEN, "%.40s", dg->paper->name);
        *g =
            (pfi_sim_group){.name = s->names + k * NAMELEN,
                            .cap = C,
                            .P = P,
                            .T = T,
                            .n = dg->n_runs,
                            .gpus = dg->paper->gpus,
                            .moe = strcmp(dg->paper->arch, "moe") == 0,
                            .ft = strcmp(dg->paper->task, "ft") == 0,
                            .dram_copy = dg->tm[PFI_TM_DRAM_ACTIVE] * dg->tm[PFI_TM_MEM_COPY_UTIL]};
    }
    pfi_dataset_destroy(d);
    return PFI_OK;
}

/* NSYN groups of a synthetic family. */
static void synthetic(fam_kind k, gsl_rng *r, fam_set *s)
{
    s->n = NSYN;
    s->g = xcalloc(NSYN, sizeof *s->g);
    s->buf = xcalloc(NSYN * 3 * MAXPTS, sizeof(double));
    s->names = xcalloc(NSYN, NAMELEN);
    static const int gpus[] = {8, 16, 32, 64};
    for (size_t i = 0; i < NSYN; i++) {
        pfi_sim_group *g = &s->g[i];
        double *P = s->buf + i * 3 * MAXPTS, *T = P + MAXPTS, *C = P + 2 * MAXPTS;
        int ng = gpus[gsl_rng_uniform_int(r, 4)];
        /* uncapped draw per GPU; caps every 25 W from 200 W below it, the
         * uncapped run (cap 700 W) last */
        double draw = 560 + 140 * gsl_rng_uniform(r), tmax = ng * (500 + 2500 * gsl_rng_uniform(r));
        double umax = 1 - 200 * 0.995 / draw, par[5] = {0};
        draw_params(k, r, umax, par);
        size_t n = 0;
        for (double c = 200; c < draw - 12.5 && n < MAXPTS - 1; c += 25) {
            double pw = c * 0.995, u = 1 - pw / draw;
            double y = 1 - loss_at(k, par, u, umax);
            if (k == FAM_NOISY) y += gsl_ran_gaussian(r, par[4]);
            C[n] = c;
            P[n] = ng * pw;
            T[n] = tmax * fmax(y, 0.01);
            n++;
        }
        C[n] = 700;
        P[n] = ng * draw;
        T[n] = tmax;
        n++;
        snprintf(s->names + i * NAMELEN, NAMELEN, "%s-%02zu", fam_name(k), i + 1);
        *g = (pfi_sim_group){.name = s->names + i * NAMELEN,
                             .cap = C,
                             .P = P,
                             .T = T,
                             .n = n,
                             .gpus = ng,
                             .moe = (int)gsl_rng_uniform_int(r, 2),
                             .ft = gsl_rng_uniform(r) < 0.6};
    }
    /* telemetry: a DRAM copy product whose rank correlation with the PFI is
     * 0.5 +- 0.1 (Gaussian copula with Pearson 0.52; redrawn until close) */
    double pfi[NSYN], z[NSYN], mean = 0, sd = 0, m = 0;
    for (size_t i = 0; i < NSYN; i++) {
        pfi[i] = measured_pfi(&s->g[i]);
        if (isnan(pfi[i])) continue;
        mean += pfi[i];
        m++;
    }
    mean /= m;
    for (size_t i = 0; i < NSYN; i++)
        if (!isnan(pfi[i])) sd += (pfi[i] - mean) * (pfi[i] - mean) / m;
    sd = sqrt(sd) > 0 ? sqrt(sd) : 1;
    for (int tries = 0; tries < 200; tries++) {
        for (size_t i = 0; i < NSYN; i++) {
            double zp = isnan(pfi[i]) ? gsl_ran_gaussian(r, 1) : (pfi[i] - mean) / sd;
            z[i] = 0.52 * zp + sqrt(1 - 0.52 * 0.52) * gsl_ran_gaussian(r, 1);
        }
        if (fabs(spearman(z, pfi, NSYN) - 0.5) <= 0.1) break;
    }
    for (size_t i = 0; i < NSYN; i++)
        s->g[i].dram_copy = 20 + 8 * z[i];
}

/* Fills pfi_hat from the set's own fit and rank_corr. */
static void telemetry_fit(fam_set *s)
{
    double *pfi = xcalloc(s->n, sizeof *pfi), *dram = xcalloc(s->n, sizeof *dram);
    double *hat = xcalloc(s->n, sizeof *hat);
    for (size_t i = 0; i < s->n; i++) {
        pfi[i] = measured_pfi(&s->g[i]);
        dram[i] = s->g[i].dram_copy;
    }
    predict(pfi, dram, s->n, hat);
    for (size_t i = 0; i < s->n; i++)
        s->g[i].pfi_hat = hat[i];
    /* the correlation over the groups with a defined PFI */
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!isnan(pfi[i])) {
            pfi[m] = pfi[i];
            dram[m++] = dram[i];
        }
    s->rank_corr = spearman(dram, pfi, m);
    free(pfi);
    free(dram);
    free(hat);
}

/* The mix: every other family's groups, each with its own family's
 * predicted PFI (each has its own telemetry scale). */
static int mix(unsigned long seed, fam_set *s)
{
    fam_set part[FAM_MIX];
    size_t n = 0, pts = 0;
    for (int k = 0; k < FAM_MIX; k++) {
        int rc = fam_build((fam_kind)k, seed + (unsigned long)k, &part[k]);
        if (rc) {
            for (int j = 0; j < k; j++)
                fam_free(&part[j]);
            return rc;
        }
        n += part[k].n;
        for (size_t i = 0; i < part[k].n; i++)
            pts += part[k].g[i].n;
    }
    s->g = xcalloc(n, sizeof *s->g);
    s->buf = xcalloc(3 * pts, sizeof(double));
    s->names = xcalloc(n, NAMELEN);
    s->n = 0;
    double *b = s->buf, *pfi = xcalloc(n, sizeof *pfi), *dram = xcalloc(n, sizeof *dram);
    size_t m = 0;
    for (int k = 0; k < FAM_MIX; k++) {
        for (size_t i = 0; i < part[k].n; i++) {
            pfi_sim_group g = part[k].g[i];
            size_t np = g.n;
            memcpy(b, g.P, np * sizeof *b);
            memcpy(b + np, g.T, np * sizeof *b);
            memcpy(b + 2 * np, g.cap, np * sizeof *b);
            g.P = b;
            g.T = b + np;
            g.cap = b + 2 * np;
            b += 3 * np;
            snprintf(s->names + s->n * NAMELEN, NAMELEN, "%s", g.name);
            g.name = s->names + s->n * NAMELEN;
            double v = measured_pfi(&g);
            if (!isnan(v)) {
                pfi[m] = v;
                dram[m++] = g.pfi_hat; /* the prediction is the telemetry's information */
            }
            s->g[s->n++] = g;
        }
        fam_free(&part[k]);
    }
    s->rank_corr = spearman(dram, pfi, m);
    free(pfi);
    free(dram);
    return PFI_OK;
}

int fam_build(fam_kind k, unsigned long seed, fam_set *out)
{
    memset(out, 0, sizeof *out);
    if (k == FAM_MIX) return mix(seed, out);
    if (k == FAM_EMBEDDED || k == FAM_H100) {
        int rc = embedded(k == FAM_H100 ? "H100" : "H200", out);
        if (rc) return rc;
    } else {
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        if (!r) abort();
        gsl_rng_set(r, seed * 7919UL + (unsigned long)k);
        synthetic(k, r, out);
        gsl_rng_free(r);
    }
    telemetry_fit(out);
    return PFI_OK;
}

void fam_free(fam_set *s)
{
    if (!s) return;
    free(s->g);
    free(s->buf);
    free(s->names);
    memset(s, 0, sizeof *s);
}

void fam_workload(const fam_set *s, gsl_rng *r, pfi_alloc_job *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const pfi_sim_group *g = &s->g[gsl_rng_uniform_int(r, s->n)];
        jobs[i] = (pfi_alloc_job){.cap = g->cap,
                                  .P = g->P,
                                  .T = g->T,
                                  .n = g->n,
                                  .pfi = g->pfi_hat,
                                  .dram_copy = g->dram_copy};
    }
}
