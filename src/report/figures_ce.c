/* Fig. 9, the constant-elasticity fit: the paper's one job alone, on the
 * paper's axes, and every other group in an appendix figure of small
 * panels. log T = alpha log P + log k, normalised by the uncapped run. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <plplot.h>

#include "figures_draw.h"
#include "plot.h"

/* the runs of r in log(x / uncapped) coordinates into x, y (at most 64) */
static size_t ce_points(const rd_group *r, double *x, double *y)
{
    const pfi_group *g = r->g;
    const pfi_run *u = &g->runs[g->n_runs - 1];
    size_t n = g->n_runs < 64 ? g->n_runs : 64;
    for (size_t k = 0; k < n; k++) {
        x[k] = log(g->runs[k].power_w / u->power_w);
        y[k] = log(g->runs[k].tput / u->tput);
    }
    return n;
}

/* the lowest log ratio of power (*px) and throughput (*py) over groups
 * [from, to) of d, skipping `skip` */
static void ce_low(const rd_data *d, size_t from, size_t to, const rd_group *skip, double *px,
                   double *py)
{
    double x[64], y[64];
    for (size_t i = from; i < to; i++) {
        if (&d->grp[i] == skip) continue;
        size_t n = ce_points(&d->grp[i], x, y);
        for (size_t k = 0; k < n; k++)
            *px = fmin(*px, x[k]), *py = fmin(*py, y[k]);
    }
}

/* One group's runs (its colour and marker, joined) and its fit, a dashed
 * black line across the whole panel, clipped to it. */
static void ce_group(const rd_group *r)
{
    double x[64], y[64];
    size_t n = ce_points(r, x, y);
    rp_cluster_colour(r->cluster);
    rp_line(n, x, y, 1, 1.0);
    rp_points(r->cluster, n, x, y);
    if (!r->idx.has_ce) return;
    const pfi_run *u = &r->g->runs[r->g->n_runs - 1];
    PLFLT x0, x1, y0, y1;
    plgvpw(&x0, &x1, &y0, &y1);
    double lx[2] = {x0, x1}, ly[2];
    for (int e = 0; e < 2; e++)
        ly[e] = r->ce_alpha * (lx[e] + log(u->power_w)) + r->ce_logk - log(u->tput);
    plcol0(RP_BLACK);
    rp_line_clipped(lx, ly, 2, 1.2);
}

/* "PFI_CE = 1 - α = -0.04 (α = 1.04)" */
static void ce_sub(const rd_group *r, char *t, size_t len, int alpha)
{
    if (!r->idx.has_ce)
        snprintf(t, len, "PFI_CE undefined%s", r->held ? ", held out" : "");
    else if (alpha)
        snprintf(t, len, "PFI_CE = 1 - α = %.2f (α = %.2f)%s", r->idx.pfi_ce, r->ce_alpha,
                 r->held ? ", held out" : "");
    else
        snprintf(t, len, "PFI_CE = %.2f%s", r->idx.pfi_ce, r->held ? ", held out" : "");
}

/* the legend: the fit's line, then the runs of each cluster present */
static void ce_legend(const int present[4], int row)
{
    int col[5] = {RP_BLACK}, sty[5] = {2};
    const char *gl[5] = {NULL}, *tx[5] = {"T = k P#uα#d fit"};
    size_t n = 1;
    for (int c = 0; c < 4; c++) {
        if (!present[c]) continue;
        col[n] = RP_CLUSTER0 + c;
        sty[n] = 1;
        gl[n] = rp_cluster_glyph(c);
        tx[n++] = row ? rp_cluster_label(c) : "Observed";
    }
    rp_legend_ex(n, col, gl, sty, tx, row);
}

void rp_draw_ce(void *ctx)
{
    const rd_data *d = ctx;
    const rd_group *job = rd_ce_job(d);
    if (!job) return;
    /* the paper's axes (log P/Pmax -1.0 to 0.0, log T/Tmax -1.0 to 0.2,
     * steps of 0.2), reaching further where the job's runs do */
    double xlo = -1.0, ylo = -1.0;
    ce_low(d, (size_t)(job - d->grp), (size_t)(job - d->grp) + 1, NULL, &xlo, &ylo);
    double px = 0.04 * -xlo, py = 0.04 * (0.2 - ylo);
    pladv(0);
    plschr(0, 0.95); /* one panel on a small page: PLplot's default text would be small */
    rp_next_ticks(0.2, 0.2);
    rp_panel(0.11, 0.70, 0.10, 0.87, xlo - px, px, ylo - py, 0.2 + py, 0, 0, "log(P / Pmax)",
             "log(T / Tmax)", NULL);
    ce_group(job);
    char t[200], sub[96];
    rp_group_title(job, t, sizeof t);
    ce_sub(job, sub, sizeof sub, 1);
    rp_title2(0.11, 0.70, 0.10, 0.87, t, sub, 60);
    int present[4] = {0};
    present[job->cluster] = 1;
    ce_legend(present, 0);
}

/* Fig. 9's appendix: every group but the body's job (training, then
 * held-out), a small panel each on shared axes, four a row. */
size_t rp_ce_cols(size_t n)
{
    return n > 3 ? 4 : n ? n : 1;
}

void rp_draw_ce_groups(void *ctx)
{
    const rd_data *d = ctx;
    const rd_group *job = rd_ce_job(d);
    size_t all = d->ng + d->nh, n = all - (job != NULL), cols = rp_ce_cols(n);
    size_t rows = (n + cols - 1) / cols;
    if (!rows) return;
    double xlo = -1.0, ylo = -1.0;
    ce_low(d, 0, all, job, &xlo, &ylo);
    double padx = 0.04 * -xlo, pady = 0.04 * (0.2 - ylo);
    pladv(0);
    plschr(7.0, 0.62); /* fixed, as Figs. 11-13: the page's height does not grow the text */
    double px, py;
    rp_pixel(&px, &py);
    double top = 60 * py, cw = (1 - 20 * px) / (double)cols,
           rh = (1 - top - 10 * py) / (double)rows;
    size_t k = 0;
    for (size_t i = 0; i < all; i++) {
        const rd_group *r = &d->grp[i];
        if (r == job) continue;
        size_t c = k % cols, rw = k / cols;
        double x0 = 20 * px + (double)c * cw + 52 * px, x1 = x0 + cw - 70 * px;
        double y1 = 1 - top - (double)rw * rh - 48 * py, y0 = y1 - rh + 96 * py;
        int xl = rw == rows - 1 || k + cols >= n;
        rp_next_ticks(0.5, 0.5);
        rp_panel(x0, x1, y0, y1, xlo - padx, padx, ylo - pady, 0.2 + pady, 0, 0,
                 xl ? "log(P / Pmax)" : NULL, c == 0 ? "log(T / Tmax)" : NULL, NULL);
        ce_group(r);
        char t[200], sub[96];
        rp_group_title(r, t, sizeof t);
        ce_sub(r, sub, sizeof sub, 0);
        rp_title2(x0, x1, y0, y1, t, sub, 36);
        k++;
    }
    /* the legend in a row across the top */
    plvpor(0.2, 0.8, 1 - top + 8 * py, 1 - 8 * py);
    plwind(0, 1, 0, 1);
    plschr(0, 0.9);
    int present[4] = {0};
    for (size_t i = 0; i < all; i++)
        if (&d->grp[i] != job) present[d->grp[i].cluster] = 1;
    ce_legend(present, 1);
}
