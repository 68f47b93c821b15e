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

int fam_bound_gaps(const fam_set *fs, size_t W, double offset, const unsigned *M, size_t nm,
                   const double *red, size_t nr, double *eq_gap, double *eq_sd, double *inf_gap)
{
    if (!(offset >= -1 && offset < 1)) return PFI_EINVAL;
    gsl_rng *draw = gsl_rng_alloc(gsl_rng_mt19937), *noise = gsl_rng_alloc(gsl_rng_mt19937),
            *place = gsl_rng_alloc(gsl_rng_mt19937);
    /* per job: the powers read (n + 1 at most) and their estimate, the
     * random places of each interval */
    double(*eT)[MAXP + 1] = malloc(J * sizeof *eT), (*eP)[MAXP + 1] = malloc(J * sizeof *eP);
    double(*frac)[MAXP] = malloc(J * sizeof *frac);
    pfi_alloc_job *tj = malloc(J * sizeof *tj), *ej = malloc(J * sizeof *ej);
    pfi_alloc_out *out = malloc(J * sizeof *out);
    pfi_alloc_problem *truth = NULL, *est = NULL;
    int rc = draw && noise && place && eT && eP && frac && tj && ej && out ? PFI_OK : PFI_ENOMEM;
    memset(eq_gap, 0, nr * sizeof *eq_gap);
    memset(eq_sd, 0, nr * sizeof *eq_sd);
    memset(inf_gap, 0, nm * nr * sizeof *inf_gap);
    if (rc == PFI_OK) {
        gsl_rng_set(draw, 1); /* pfi simulate's default seed and draw */
        gsl_rng_set(noise, 2);
        gsl_rng_set(place, 3);
    }
    for (size_t w = 0; rc == PFI_OK && w < W; w++) {
        fam_workload(fs, draw, tj, J);
        for (size_t i = 0; rc == PFI_OK && i < J; i++) {
            if (tj[i].n > MAXP) rc = PFI_EINVAL;
            for (size_t q = 0; rc == PFI_OK && q + 1 < tj[i].n; q++)
                frac[i][q] = offset > 0 ? offset : gsl_rng_uniform_pos(place);
        }
        if (rc == PFI_OK)
            rc = truth ? pfi_alloc_problem_reset(truth, tj, J, NULL)
                       : pfi_alloc_problem_create(tj, J, &truth, NULL);
        for (size_t k = 0; rc == PFI_OK && k < nm; k++) {
            /* the noise of a reading is drawn once per (workload, m) */
            for (size_t i = 0; i < J; i++) {
                double y[MAXP + 1];
                size_t exact, nx = places(truth, i, &tj[i], offset, frac[i], eP[i], y, &exact);
                for (size_t q = 0; q < nx; q++)
                    if (q != exact) y[q] *= 1 + gsl_ran_gaussian_ziggurat(noise, 0.01 / sqrt(M[k]));
                isotonic(y, nx);
                for (size_t q = 0; q < nx; q++)
                    eT[i][q] = fmax(y[q], 1e-9);
                ej[i] = tj[i];
                ej[i].P = eP[i];
                ej[i].T = eT[i];
                ej[i].cap = NULL;
                ej[i].n = nx;
            }
            rc = est ? pfi_alloc_problem_reset(est, ej, J, NULL)
                     : pfi_alloc_problem_create(ej, J, &est, NULL);
            for (size_t r = 0; rc == PFI_OK && r < nr; r++) {
                double b;
                pfi_alloc_result orc, eq;
                rc = pfi_alloc_budget_for_reduction(truth, red[r], &b, NULL);
                if (rc == PFI_OK) rc = pfi_alloc_run(truth, PFI_POLICY_ORACLE, b, NULL, &orc, NULL);
                if (rc == PFI_OK) rc = pfi_alloc_run(truth, PFI_POLICY_EQUAL, b, NULL, &eq, NULL);
                if (rc == PFI_OK) rc = pfi_alloc_run(est, PFI_POLICY_ORACLE, b, out, NULL, NULL);
                if (rc != PFI_OK) break;
                if (k == 0) {
                    eq_gap[r] += fmax(0, orc.total_tput - eq.total_tput);
                    eq_sd[r] += 0.01 * eq.total_tput;
                }
                inf_gap[k * nr + r] += fmax(0, orc.total_tput - total(truth, out));
            }
        }
    }
    pfi_alloc_problem_destroy(truth);
    pfi_alloc_problem_destroy(est);
    free(eT);
    free(eP);
    free(frac);
    free(tj);
    free(ej);
    free(out);
    gsl_rng_free(draw);
    gsl_rng_free(noise);
    gsl_rng_free(place);
    return rc;
}
