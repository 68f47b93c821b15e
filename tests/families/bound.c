/* The information bound (bound.h): the loop that bench_info_bound ran. */
#include "bound.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/alloc.h"

enum { J = FAM_BOUND_JOBS, MAXP = 64 };

double fam_bound_sequential(const double *q, size_t nm, size_t periods, size_t k)
{
    double sum = 0;
    for (size_t t = 1; t <= periods; t++) {
        size_t m = (t - 1) / k;
        if (m > nm) m = nm;
        if (m > 0) sum += fmax(0, q[m - 1]);
    }
    return sum / (double)periods;
}

/* Pool adjacent violators, equal weights but for the last (exact) point. */
static void isotonic(double *y, size_t n)
{
    double by[MAXP + 1], bw[MAXP + 1];
    size_t start[MAXP + 1], nb = 0;
    for (size_t k = 0; k < n; k++) {
        start[nb] = k;
        by[nb] = y[k];
        bw[nb++] = k + 1 == n ? 1e300 : 1;
        while (nb > 1 && by[nb - 2] >= by[nb - 1]) {
            double w = bw[nb - 2] + bw[nb - 1];
            by[nb - 2] = (by[nb - 2] * bw[nb - 2] + by[nb - 1] * bw[nb - 1]) / w;
            bw[nb - 2] = w;
            nb--;
        }
    }
    for (size_t b = 0; b < nb; b++)
        for (size_t k = start[b]; k < (b + 1 < nb ? start[b + 1] : n); k++)
            y[k] = by[b];
}

/* One reading's unit errors at the nx places but the exact one, into z. */
static void draw_noise(gsl_rng *noise, size_t nx, size_t exact, double *z)
{
    for (size_t q = 0; q < nx; q++)
        z[q] = q == exact ? 0 : gsl_ran_gaussian_ziggurat(noise, 1);
}

/* The curve read: the true y off by sd z (relative), made non-decreasing,
 * into eT. */
static void estimate(const double *y, size_t nx, size_t exact, const double *z, double sd,
                     double *eT)
{
    for (size_t q = 0; q < nx; q++)
        eT[q] = q == exact ? y[q] : y[q] * (1 + sd * z[q]);
    isotonic(eT, nx);
    for (size_t q = 0; q < nx; q++)
        eT[q] = fmax(eT[q], 1e-9);
}

static double total(pfi_alloc_problem *truth, const pfi_alloc_out *o)
{
    double t = 0;
    for (size_t i = 0; i < J; i++)
        t += pfi_alloc_problem_tput_at(truth, i, o[i].power_w);
    return t;
}

/* The powers job i is read at, ascending, into x, and the true throughput
 * there into y (see bound.h); returns their count and the index of the
 * exact (uncapped) reading in *exact. */
static size_t places(pfi_alloc_problem *truth, size_t i, const pfi_alloc_job *tj, double offset,
                     const double *frac, double *x, double *y, size_t *exact)
{
    size_t n = tj->n, top = 0, ord[MAXP], nx = 0;
    for (size_t q = 1; q < n; q++)
        if (tj->P[q] > tj->P[top]) top = q;
    for (size_t q = 0; q < n; q++)
        ord[q] = q;
    for (size_t a = 1; a < n; a++) /* by power (sweeps come in cap order) */
        for (size_t b = a; b > 0 && tj->P[ord[b - 1]] > tj->P[ord[b]]; b--) {
            size_t t = ord[b];
            ord[b] = ord[b - 1];
            ord[b - 1] = t;
        }
    *exact = n;
    if (offset == 0) {
        for (size_t q = 0; q < n; q++) {
            if (ord[q] == top) *exact = q;
            x[nx] = tj->P[ord[q]];
            y[nx++] = tj->T[ord[q]];
        }
        return nx;
    }
    x[nx++] = tj->P[ord[0]];
    for (size_t q = 0; q + 1 < n; q++)
        x[nx++] = tj->P[ord[q]] + frac[q] * (tj->P[ord[q + 1]] - tj->P[ord[q]]);
    x[nx++] = tj->P[ord[n - 1]];
    for (size_t q = 0; q < nx; q++)
        y[q] = pfi_alloc_problem_tput_at(truth, i, x[q]);
    return nx;
}

/* What both bounds work with: the three streams, seeded as pfi simulate's
 * default (draw) and so that the bounds with and without classes read the
 * same workloads, places and noise; per job the places inside each interval
 * of its sweep (frac), the workload (tj), its estimate (ej) and the oracle's
 * allocation (out); the true curves' problem and the estimate's. */
typedef struct ws {
    gsl_rng *draw, *noise, *place;
    double (*frac)[MAXP];
    pfi_alloc_job *tj, *ej;
    pfi_alloc_out *out;
    pfi_alloc_problem *truth, *est;
} ws;

static void ws_close(ws *s)
{
    pfi_alloc_problem_destroy(s->truth);
    pfi_alloc_problem_destroy(s->est);
    free(s->frac);
    free(s->tj);
    free(s->ej);
    free(s->out);
    if (s->draw) gsl_rng_free(s->draw);
    if (s->noise) gsl_rng_free(s->noise);
    if (s->place) gsl_rng_free(s->place);
}

/* PFI_OK, or PFI_ENOMEM with *s closed. */
static int ws_open(ws *s)
{
    *s = (ws){.draw = gsl_rng_alloc(gsl_rng_mt19937),
              .noise = gsl_rng_alloc(gsl_rng_mt19937),
              .place = gsl_rng_alloc(gsl_rng_mt19937),
              .frac = malloc(J * sizeof *s->frac),
              .tj = malloc(J * sizeof *s->tj),
              .ej = malloc(J * sizeof *s->ej),
              .out = malloc(J * sizeof *s->out)};
    if (!s->draw || !s->noise || !s->place || !s->frac || !s->tj || !s->ej || !s->out) {
        ws_close(s);
        return PFI_ENOMEM;
    }
    gsl_rng_set(s->draw, 1);
    gsl_rng_set(s->noise, 2);
    gsl_rng_set(s->place, 3);
    return PFI_OK;
}

/* The next workload's jobs (tj), the places inside each interval of
 * their sweeps (frac: offset, or drawn once per job and interval) and the
 * true curves' problem (created on the first call). PFI_EINVAL for a sweep
 * of more than MAXP points. */
static int next_workload(const fam_set *fs, double offset, ws *s)
{
    fam_workload(fs, s->draw, s->tj, J);
    for (size_t i = 0; i < J; i++) {
        if (s->tj[i].n > MAXP) return PFI_EINVAL;
        for (size_t q = 0; q + 1 < s->tj[i].n; q++)
            s->frac[i][q] = offset > 0 ? offset : gsl_rng_uniform_pos(s->place);
    }
    return s->truth ? pfi_alloc_problem_reset(s->truth, s->tj, J, NULL)
                    : pfi_alloc_problem_create(s->tj, J, &s->truth, NULL);
}

/* Job i of the estimate: tj[i]'s job read at P, T (n points). */
static void ws_est_job(ws *s, size_t i, double *P, double *T, size_t n)
{
    s->ej[i] = s->tj[i];
    s->ej[i].P = P;
    s->ej[i].T = T;
    s->ej[i].cap = NULL;
    s->ej[i].n = n;
}

/* The estimate's problem over ej (created on the first call). */
static int ws_est_problem(ws *s)
{
    return s->est ? pfi_alloc_problem_reset(s->est, s->ej, J, NULL)
                  : pfi_alloc_problem_create(s->ej, J, &s->est, NULL);
}

int fam_bound_gaps(const fam_set *fs, size_t W, double offset, const unsigned *M, size_t nm,
                   const double *red, size_t nr, double *eq_gap, double *eq_sd, double *inf_gap)
{
    if (!(offset >= -1 && offset < 1)) return PFI_EINVAL;
    memset(eq_gap, 0, nr * sizeof *eq_gap);
    memset(eq_sd, 0, nr * sizeof *eq_sd);
    memset(inf_gap, 0, nm * nr * sizeof *inf_gap);
    ws s;
    int rc = ws_open(&s);
    if (rc != PFI_OK) return rc;
    /* per job: the powers read (n + 1 at most) and their estimate */
    double(*eT)[MAXP + 1] = malloc(J * sizeof *eT), (*eP)[MAXP + 1] = malloc(J * sizeof *eP);
    if (!eT || !eP) rc = PFI_ENOMEM;
    for (size_t w = 0; rc == PFI_OK && w < W; w++) {
        rc = next_workload(fs, offset, &s);
        for (size_t k = 0; rc == PFI_OK && k < nm; k++) {
            /* the noise of a reading is drawn once per (workload, m) */
            for (size_t i = 0; i < J; i++) {
                double y[MAXP + 1], z[MAXP + 1];
                size_t exact,
                    nx = places(s.truth, i, &s.tj[i], offset, s.frac[i], eP[i], y, &exact);
                draw_noise(s.noise, nx, exact, z);
                estimate(y, nx, exact, z, 0.01 / sqrt(M[k]), eT[i]);
                ws_est_job(&s, i, eP[i], eT[i], nx);
            }
            rc = ws_est_problem(&s);
            for (size_t r = 0; rc == PFI_OK && r < nr; r++) {
                double b;
                pfi_alloc_result orc, eq;
                rc = pfi_alloc_budget_for_reduction(s.truth, red[r], &b, NULL);
                if (rc == PFI_OK)
                    rc = pfi_alloc_run(s.truth, PFI_POLICY_ORACLE, b, NULL, &orc, NULL);
                if (rc == PFI_OK) rc = pfi_alloc_run(s.truth, PFI_POLICY_EQUAL, b, NULL, &eq, NULL);
                if (rc == PFI_OK)
                    rc = pfi_alloc_run(s.est, PFI_POLICY_ORACLE, b, s.out, NULL, NULL);
                if (rc != PFI_OK) break;
                if (k == 0) {
                    eq_gap[r] += fmax(0, orc.total_tput - eq.total_tput);
                    eq_sd[r] += 0.01 * eq.total_tput;
                }
                inf_gap[k * nr + r] += fmax(0, orc.total_tput - total(s.truth, s.out));
            }
        }
    }
    free(eT);
    free(eP);
    ws_close(&s);
    return rc;
}

/* Job i's class size in the workload tj: the jobs of its group (replicas
 * share their curve's arrays, fam_workload), or 1. */
static void class_sizes(const pfi_alloc_job *tj, int classes, size_t *c)
{
    for (size_t i = 0; i < J; i++) {
        c[i] = 0;
        for (size_t a = 0; a < J; a++)
            c[i] += classes ? tj[a].P == tj[i].P : a == i;
    }
}

/* Job i's readings a place in period t (from 1): *m, and the count whose
 * noise draws it takes (0: none). */
static size_t readings(size_t c, size_t t, size_t k, int fractional, double *m)
{
    if (fractional) {
        *m = (double)c * (double)(t - 1) / (double)k;
        return (size_t)ceil(*m);
    }
    *m = (double)(c * (t - 1) / k);
    return (size_t)*m;
}

int fam_bound_classed(const fam_set *fs, size_t W, double offset, size_t periods, size_t k,
                      int classes, int fractional, const double *red, size_t nr, double *bound)
{
    if (!(offset >= -1 && offset < 1) || k == 0 || periods == 0) return PFI_EINVAL;
    ws s; /* fam_bound_gaps' streams, so c = 1 is its bound to the last bit */
    int rc = ws_open(&s);
    if (rc != PFI_OK) return rc;
    /* per job: the places read and their true throughput, the estimate in
     * each period (from 2) */
    double(*x)[MAXP + 1] = malloc(J * sizeof *x), (*y)[MAXP + 1] = malloc(J * sizeof *y);
    double(*eT)[MAXP + 1] = malloc(J * periods * sizeof *eT);
    double *gap = calloc(periods * nr, sizeof *gap), *eq_gap = calloc(nr, sizeof *eq_gap);
    double *b = malloc(nr * sizeof *b), *orc = malloc(nr * sizeof *orc),
           *d = malloc(nr * sizeof *d), *eqw = malloc(nr * sizeof *eqw);
    double *m = malloc(J * periods * sizeof *m);
    size_t *lvl = malloc(J * periods * sizeof *lvl), *some = malloc(periods * sizeof *some);
    size_t *nx = malloc(J * sizeof *nx), *exact = malloc(J * sizeof *exact),
           *c = malloc(J * sizeof *c);
    if (!(x && y && eT && gap && eq_gap && b && orc && d && eqw && m && lvl && some && nx &&
          exact && c))
        rc = PFI_ENOMEM;
    for (size_t w = 0; rc == PFI_OK && w < W; w++) {
        rc = next_workload(fs, offset, &s);
        if (rc != PFI_OK) break;
        class_sizes(s.tj, classes, c);
        /* each job's count in each period (from 2), and the period's
         * readings at all (some) */
        size_t top = 0;
        for (size_t t = 2; t <= periods; t++) {
            some[t - 1] = 0;
            for (size_t i = 0; i < J; i++) {
                size_t *l = &lvl[i * periods + t - 1];
                *l = readings(c[i], t, k, fractional, &m[i * periods + t - 1]);
                some[t - 1] |= *l > 0;
            }
            for (size_t i = 0; i < J; i++) {
                size_t *l = &lvl[i * periods + t - 1];
                if (*l == 0 && some[t - 1]) *l = 1, m[i * periods + t - 1] = 1; /* granted */
                if (*l > top) top = *l;
            }
        }
        for (size_t i = 0; i < J; i++)
            nx[i] = places(s.truth, i, &s.tj[i], offset, s.frac[i], x[i], y[i], &exact[i]);
        /* the noise of a reading is drawn once per (workload, count), in
         * fam_bound_gaps' order; each period's estimate takes its count's */
        for (size_t l = 1; l <= top; l++)
            for (size_t i = 0; i < J; i++) {
                double z[MAXP + 1];
                draw_noise(s.noise, nx[i], exact[i], z);
                for (size_t t = 2; t <= periods; t++)
                    if (lvl[i * periods + t - 1] == l)
                        estimate(y[i], nx[i], exact[i], z, 0.01 / sqrt(m[i * periods + t - 1]),
                                 eT[i * periods + t - 1]);
            }
        for (size_t r = 0; rc == PFI_OK && r < nr; r++) {
            pfi_alloc_result o, eq;
            rc = pfi_alloc_budget_for_reduction(s.truth, red[r], &b[r], NULL);
            if (rc == PFI_OK) rc = pfi_alloc_run(s.truth, PFI_POLICY_ORACLE, b[r], NULL, &o, NULL);
            if (rc == PFI_OK) rc = pfi_alloc_run(s.truth, PFI_POLICY_EQUAL, b[r], NULL, &eq, NULL);
            if (rc != PFI_OK) break;
            orc[r] = o.total_tput;
            eqw[r] = fmax(0, o.total_tput - eq.total_tput);
            eq_gap[r] += eqw[r];
        }
        /* each period's gap; one whose counts are the last one's repeats it */
        int have = 0;
        for (size_t t = 2; rc == PFI_OK && t <= periods; t++) {
            int same = have && !fractional;
            for (size_t i = 0; i < J && same; i++)
                same = lvl[i * periods + t - 1] == lvl[i * periods + t - 2];
            if (!some[t - 1]) { /* the equal share: equal's gap, 0 of it recovered */
                for (size_t r = 0; r < nr; r++)
                    d[r] = eqw[r];
                have = 0;
            } else if (!same) {
                for (size_t i = 0; i < J; i++)
                    ws_est_job(&s, i, x[i], eT[i * periods + t - 1], nx[i]);
                rc = ws_est_problem(&s);
                for (size_t r = 0; rc == PFI_OK && r < nr; r++) {
                    rc = pfi_alloc_run(s.est, PFI_POLICY_ORACLE, b[r], s.out, NULL, NULL);
                    d[r] = fmax(0, orc[r] - total(s.truth, s.out));
                }
                have = 1;
            }
            for (size_t r = 0; r < nr; r++)
                gap[(t - 1) * nr + r] += d[r];
        }
    }
    for (size_t r = 0; rc == PFI_OK && r < nr; r++) {
        double sum = 0; /* fam_bound_sequential's sum, in its order */
        for (size_t t = 2; t <= periods; t++)
            sum += fmax(0, 1 - gap[(t - 1) * nr + r] / eq_gap[r]);
        bound[r] = eq_gap[r] > 0 ? sum / (double)periods : NAN;
    }
    free(x);
    free(y);
    free(eT);
    free(gap);
    free(eq_gap);
    free(b);
    free(orc);
    free(d);
    free(eqw);
    free(m);
    free(lvl);
    free(some);
    free(nx);
    free(exact);
    free(c);
    ws_close(&s);
    return rc;
}
