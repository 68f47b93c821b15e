/* Figs. 3 and 4: the power-throughput curves and the PFI distribution.
 * Split from figures.c, which keeps the figure table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <plplot.h>

#include "figures.h"
#include "figures_draw.h"
#include "pfi/features.h"
#include "pfi/gpumodel.h"
#include "pfi/stats.h"
#include "plot.h"
#include "tables.h"

/* ---- Fig. 3 ---- */

/* (c): per category, at each cap, the mean over its groups of P/Pmax and
 * T/Tmax (groups swept on different grids share the caps they have) */
static void category_means(const rd_data *d)
{
    static const double caps[] = {200, 300, 400, 500, 600, 700};
    for (int c = 0; c < 4; c++) {
        double x[6], y[6];
        size_t n = 0;
        for (size_t k = 0; k < 6; k++) {
            double sp = 0, st = 0;
            size_t m = 0;
            for (size_t i = 0; i < d->ng; i++) {
                const pfi_group *g = d->grp[i].g;
                const pfi_run *u = &g->runs[g->n_runs - 1];
                if (d->grp[i].cluster != c) continue;
                for (size_t j = 0; j < g->n_runs; j++)
                    if (fabs(g->runs[j].cap_w - caps[k]) < 0.5) {
                        sp += g->runs[j].power_w / u->power_w;
                        st += g->runs[j].tput / u->tput;
                        m++;
                    }
            }
            if (m) x[n] = sp / (double)m, y[n++] = st / (double)m;
        }
        rp_cluster_colour(c);
        rp_line(n, x, y, 1, 2.0);
        rp_points(c, n, x, y);
    }
}

void rp_draw_curves(void *ctx)
{
    const rd_data *d = ctx;
    double pmax = 0, tmax = 0;
    for (size_t i = 0; i < d->ng; i++) {
        const pfi_group *g = d->grp[i].g;
        for (size_t k = 0; k < g->n_runs; k++) {
            pmax = fmax(pmax, g->runs[k].power_w / 1000);
            tmax = fmax(tmax, g->runs[k].tput / 1000);
        }
    }
    pladv(0);
    /* (a) as the paper: the job's (cluster's) power and throughput, raw */
    rp_panel(0.07, 0.30, 0.13, 0.90, 0, pmax * 1.05, 0, tmax * 1.08, 0, 0, "Cluster GPU power (kW)",
             "Throughput (k tokens/s)", "(a) raw, per sweep");
    double x[64], y[64];
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            rp_panel(0.37, 0.60, 0.13, 0.90, 0, 1.05, 0, 1.05, 0, 0, "P / Pmax", "T / Tmax",
                     "(b) normalised, per sweep");
            rp_diagonal(0, 1.05);
        }
        for (size_t i = 0; i < d->ng; i++) {
            const pfi_group *g = d->grp[i].g;
            size_t n = g->n_runs < 64 ? g->n_runs : 64;
            const pfi_run *u = &g->runs[g->n_runs - 1];
            for (size_t k = 0; k < n; k++) {
                x[k] = pass ? g->runs[k].power_w / u->power_w : g->runs[k].power_w / 1000;
                y[k] = pass ? g->runs[k].tput / u->tput : g->runs[k].tput / 1000;
            }
            rp_cluster_colour(d->grp[i].cluster);
            rp_line(n, x, y, 1, 1.2);
            rp_points(d->grp[i].cluster, n, x, y);
        }
    }
    rp_panel(0.66, 0.86, 0.13, 0.90, 0, 1.05, 0, 1.05, 0, 0, "P / Pmax", "T / Tmax",
             "(c) mean per category");
    rp_diagonal(0, 1.05);
    category_means(d);
    int present[4];
    rp_present_clusters(d, 0, present);
    rp_legend_clusters(present);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the median of v (sorted in place), n > 0 */
static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- Fig. 4 ---- */
/* Fig. 4 (a): the histogram of the m PFIs, stacked by cluster, with the
 * PFI = 1 line and the median med. */
static void pfi_histogram(const rd_data *d, size_t m, double lo, double hi, double med)
{
    size_t n = d->ng;
    /* (a) histogram stacked by cluster, in bins of 0.1 (0.05 for a narrow
     * range): finer bins over the paper's 1.1-2.7 leave a comb of one-group
     * bars in four colours that reads as noise */
    double want = hi - lo > 1 ? 0.1 : 0.05;
    size_t nb = (size_t)ceil((hi - lo) / want - 1e-9);
    if (nb < 1) nb = 1;
    if (nb > 80) nb = 80;
    double bw = (hi - lo) / (double)nb, count[80][4] = {{0}}, top = 1;
    for (size_t i = 0; i < n; i++) {
        if (!d->grp[i].idx.has_pfi) continue;
        size_t b = (size_t)((d->grp[i].idx.pfi - lo) / bw);
        if (b >= nb) b = nb - 1;
        count[b][d->grp[i].cluster] += 1;
    }
    for (size_t b = 0; b < nb; b++) {
        double s = 0;
        for (int c = 0; c < 4; c++)
            s += count[b][c];
        top = fmax(top, s);
    }
    pladv(0);
    rp_panel_counts(0.06, 0.33, 0.14, 0.90, lo, hi, top + 1, "PFI (ratio, Eq. 1)", "Sweep groups",
                    "(a) distribution");
    /* PFI = 1: throughput falls as fast as power (the inelastic boundary) */
    double ox1[2] = {1, 1}, oy1[2] = {0, top + 1};
    plcol0(RP_GREY);
    rp_line(2, ox1, oy1, 2, 1.2);
    rp_text((1 - lo) / (hi - lo) + 0.01, 0.95, 0, 0.55, "PFI = 1");
    for (size_t b = 0; b < nb; b++) {
        double base = 0;
        for (int c = 0; c < 4; c++) {
            if (count[b][c] <= 0) continue;
            double bx[4] = {lo + b * bw, lo + (b + 1) * bw, lo + (b + 1) * bw, lo + b * bw};
            double by[4] = {base, base, base + count[b][c], base + count[b][c]};
            rp_cluster_colour(c);
            plfill(4, bx, by);
            plcol0(RP_BLACK);
            plwidth(0.5);
            double ox[5] = {bx[0], bx[1], bx[2], bx[3], bx[0]},
                   oy[5] = {by[0], by[1], by[2], by[3], by[0]};
            plline(5, ox, oy);
            plwidth(1);
            base += count[b][c];
        }
    }
    if (m) {
        char mt[48];
        double mx[2] = {med, med}, my[2] = {0, top + 1};
        plcol0(RP_BLACK);
        rp_line(2, mx, my, 1, 1.5);
        snprintf(mt, sizeof mt, "median %.2f", med);
        rp_text((med - lo) / (hi - lo) + 0.01, 0.88, 0, 0.55, mt);
    }
}

/* Fig. 4 (b): the PFIs by category. */
static void pfi_by_category(const rd_data *d, double lo, double hi)
{
    size_t n = d->ng;
    /* (b) by regime: jittered points, median bar */
    /* categories: no numeric x ticks, the regime names instead */
    plvpor(0.40, 0.62, 0.14, 0.90);
    plwind(0.4, 4.6, lo, hi);
    plcol0(RP_BLACK);
    plbox("bc", 0, 0, "bcnstv", 0, 0);
    rp_mtex("l", 5.0, 0.5, 0.5, "PFI (ratio)");
    rp_mtex("t", 1.0, 0.5, 0.5, "(b) by category, bar = median");
    plschr(0, 0.6);
    for (int r = 0; r < 4; r++)
        rp_mtex("b", 1.4, (r + 0.6) / 4.2, 0.5, rp_cluster_label(r));
    plschr(0, 0.78);
    {
        double one_x[2] = {0.4, 4.6}, one_y[2] = {1, 1};
        plcol0(RP_GREY);
        rp_line(2, one_x, one_y, 2, 1.0);
    }
    for (int c = 0; c < 4; c++) {
        double cv[256];
        size_t cn = 0;
        for (size_t i = 0; i < n; i++) {
            const rd_group *g = &d->grp[i];
            if (!g->idx.has_pfi || g->cluster != c) continue;
            double x = c + 1 + 0.25 * (((double)((i * 7919) % 17) / 16.0) - 0.5), y = g->idx.pfi;
            rp_points(g->cluster, 1, &x, &y);
            if (cn < 256) cv[cn++] = y;
        }
        if (!cn) continue;
        double mc = median_of(cv, cn), bx[2] = {c + 0.7, c + 1.3}, by[2] = {mc, mc};
        plcol0(RP_BLACK);
        rp_line(2, bx, by, 1, 2.0);
    }
}

/* Fig. 4 (c): the PFIs by the job's GPU count. */
static void pfi_by_size(const rd_data *d, double lo, double hi)
{
    size_t n = d->ng;
    /* (c) by cluster size: one category per GPU count (8, 16, 32 sit
     * unevenly on a numeric axis), each cluster in its own sub-column so the
     * clusters of one size do not hide each other */
    int sizes[8];
    size_t ns = 0;
    for (size_t i = 0; i < n; i++) {
        int gp = d->grp[i].g->meta.gpus;
        size_t k = 0;
        while (k < ns && sizes[k] != gp)
            k++;
        if (k == ns && ns < 8) sizes[ns++] = gp;
    }
    for (size_t a = 1; a < ns; a++) /* ascending */
        for (size_t b = a; b > 0 && sizes[b - 1] > sizes[b]; b--) {
            int t = sizes[b];
            sizes[b] = sizes[b - 1];
            sizes[b - 1] = t;
        }
    plvpor(0.70, 0.86, 0.14, 0.90);
    plwind(0.5, (double)ns + 0.5, lo, hi);
    plcol0(RP_LIGHT);
    plwidth(0.5);
    plbox("", 0, 0, "g", 0, 0);
    plwidth(1);
    plcol0(RP_BLACK);
    plbox("bc", 0, 0, "bcnstv", 0, 0);
    rp_mtex("l", 5.0, 0.5, 0.5, "PFI (ratio)");
    rp_mtex("t", 1.0, 0.5, 0.5, "(c) by cluster size");
    rp_mtex("b", 3.0, 0.5, 0.5, "GPUs in the job");
    for (size_t k = 0; k < ns; k++) {
        char lab[16];
        snprintf(lab, sizeof lab, "%d", sizes[k]);
        rp_mtex("b", 1.4, ((double)k + 0.5) / (double)ns, 0.5, lab);
    }
    for (size_t i = 0; i < n; i++) {
        const rd_group *g = &d->grp[i];
        if (!g->idx.has_pfi) continue;
        size_t k = 0;
        while (k < ns && sizes[k] != g->g->meta.gpus)
            k++;
        if (k == ns) continue; /* beyond eight sizes */
        double x = (double)k + 1 + 0.16 * ((double)g->cluster - 1.5), y = g->idx.pfi;
        rp_points(g->cluster, 1, &x, &y);
    }
}

void rp_draw_pfi(void *ctx)
{
    const rd_data *d = ctx;
    size_t n = d->ng;
    double *v = calloc(n ? n : 1, sizeof *v);
    if (!v) return;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (d->grp[i].idx.has_pfi) v[m++] = d->grp[i].idx.pfi;
    double lo, hi;
    rp_range(m, v, 0.08, &lo, &hi);
    lo = floor(fmin(lo, 0.95) * 10) / 10; /* the PFI = 1 line always shows */
    hi = ceil(hi * 10) / 10;
    double med = 0;
    if (m) {
        double *sv = malloc(m * sizeof *sv);
        if (sv) {
            memcpy(sv, v, m * sizeof *sv);
            med = median_of(sv, m);
            free(sv);
        }
    }
    pfi_histogram(d, m, lo, hi, med);
    pfi_by_category(d, lo, hi);
    pfi_by_size(d, lo, hi);
    int present[4];
    rp_present_clusters(d, 0, present);
    rp_legend_clusters(present);
    free(v);
}
