/* The appendix figures (Figs. 10-13): the PFI definitions and a pair of
 * panels per group. Split from figures.c, which keeps the figure table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <plplot.h>

#include "figures_draw.h"
#include "pfi/stats.h"
#include "plot.h"

/* ---- Fig. 10 ---- */
void rp_draw_definitions(void *ctx)
{
    const rd_data *d = ctx;
    /* each definition on its own axis: their ranges differ by design (ratio
     * about 1 to 2.7, area about -0.1 to 0.1, paper Appendix A), so on one
     * shared axis the area and CE values were a flat line at zero; the
     * panel titles give the rank agreement instead of an equality line */
    static const char *const name[3] = {"ratio PFI (Eq. 1)", "area PFI (Eq. 5)",
                                        "CE PFI (1 - alpha)"};
    static const int pa[3] = {0, 0, 1}, pb[3] = {1, 2, 2};
    size_t n = d->ng;
    double *buf = calloc(4 * (n ? n : 1), sizeof *buf);
    if (!buf) return;
    double *xs = buf, *ys = buf + n, *rx = buf + 2 * n, *ry = buf + 3 * n;
    pladv(0);
    for (int p = 0; p < 3; p++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            const pfi_index_result *x = &d->grp[i].idx;
            int has[3] = {x->has_pfi, x->has_area, x->has_ce};
            double val[3] = {x->pfi, x->pfi_area, x->pfi_ce};
            if (!has[pa[p]] || !has[pb[p]]) continue;
            xs[m] = val[pa[p]];
            ys[m++] = val[pb[p]];
        }
        double xlo, xhi, ylo, yhi, rho = 0, pv = 0;
        rp_range(m, xs, 0.08, &xlo, &xhi);
        rp_range(m, ys, 0.08, &ylo, &yhi);
        memcpy(rx, xs, m * sizeof *xs);
        memcpy(ry, ys, m * sizeof *ys);
        char t[64];
        if (pfi_stats_spearman(rx, ry, m, &rho, &pv) == PFI_OK)
            snprintf(t, sizeof t, "(%c) Spearman rho %.2f", 'a' + p, rho);
        else
            snprintf(t, sizeof t, "(%c)", 'a' + p);
        double x0 = 0.075 + 0.285 * p;
        rp_panel(x0, x0 + 0.19, 0.14, 0.90, xlo, xhi, ylo, yhi, 0, 0, name[pa[p]], name[pb[p]], t);
        for (size_t i = 0, k = 0; i < n; i++) {
            const pfi_index_result *x = &d->grp[i].idx;
            int has[3] = {x->has_pfi, x->has_area, x->has_ce};
            if (!has[pa[p]] || !has[pb[p]]) continue;
            rp_points(d->grp[i].cluster, 1, &xs[k], &ys[k]);
            k++;
        }
    }
    free(buf);
    int present[4];
    rp_present_clusters(d, 0, present);
    rp_legend_clusters(present);
}

/* ---- Figs. 11-13 ---- */
/* As the paper draws them: per group a pair of panels, raw (the job's GPU
 * power in kW against k tokens/s, on axes shared by every group so sizes
 * compare) and normalised (T / Tmax against P / Pmax with the diagonal),
 * under one title naming arch, task, platform x GPUs and model, with the
 * ratio PFI. Two pairs a row and at most ten a figure, as the paper's
 * pages; the legend across the top. */

/* character scale for a title of at most `fit` characters at `base` */
static double fit_scale(const char *s, double base, double fit)
{
    double n = (double)strlen(s);
    return n > fit ? base * fit / n : base;
}

void rp_group_title(const rd_group *r, char *t, size_t len)
{
    const pfi_group_meta *m = &r->g->meta;
    if (!m->model[0]) {
        snprintf(t, len, "%s %s", rp_cluster_label(r->cluster), r->g->name);
        return;
    }
    snprintf(t, len, "%s %sx%d (%s%s%s)", rp_cluster_label(r->cluster),
             m->platform[0] ? m->platform : "GPU", m->gpus, m->model, m->config[0] ? ", " : "",
             m->config);
}

void rp_title2(double x0, double x1, double y0, double y1, const char *t, const char *sub,
               double fit)
{
    PLFLT def, cur;
    plgchr(&def, &cur);
    double base = cur / def, s1 = fit_scale(t, base, fit);
    plvpor(x0, x1, y0, y1);
    plwind(0, 1, 0, 1);
    plcol0(RP_BLACK);
    rp_mtex("t", 0.8, 0.5, 0.5, sub);
    plschr(0, s1);
    rp_mtex("t", (0.8 + 1.3) * base / s1, 0.5, 0.5, t);
    plschr(0, base);
}

void rp_pixel(double *px, double *py)
{
    PLFLT xp, yp;
    PLINT wpx, hpx, xo, yo;
    plgpage(&xp, &yp, &wpx, &hpx, &xo, &yo);
    *px = 1.0 / (wpx > 0 ? wpx : 1400);
    *py = 1.0 / (hpx > 0 ? hpx : 1600);
}

/* The pair in the box x0..x1, y0..y1 (page fractions, axes only: the labels
 * and titles go outside it); gap: between the two panels, a fraction. */
static void group_pair(const rd_group *r, double x0, double x1, double y0, double y1, double gap,
                       double pmax, double tmax, int xlabels)
{
    const pfi_group *g = r->g;
    const pfi_run *u = &g->runs[g->n_runs - 1];
    size_t m = g->n_runs < 64 ? g->n_runs : 64;
    double x[64], y[64], w = (x1 - x0 - gap) / 2;
    for (int pass = 0; pass < 2; pass++) {
        double px0 = x0 + pass * (w + gap);
        if (pass == 0)
            rp_panel(px0, px0 + w, y0, y1, 0, pmax, 0, tmax, 0, 0,
                     xlabels ? "Cluster power (kW)" : NULL, "Tput (k tok/s)", NULL);
        else {
            rp_next_ticks(0.25, 0.25); /* the paper's steps */
            rp_panel(px0, px0 + w, y0, y1, 0, 1.05, 0, 1.05, 0, 0, xlabels ? "P / Pmax" : NULL,
                     "T / Tmax", NULL);
            rp_diagonal(0, 1.05);
        }
        for (size_t k = 0; k < m; k++) {
            x[k] = pass ? g->runs[k].power_w / u->power_w : g->runs[k].power_w / 1000;
            y[k] = pass ? g->runs[k].tput / u->tput : g->runs[k].tput / 1000;
        }
        rp_cluster_colour(r->cluster);
        rp_line(m, x, y, r->held ? 2 : 1, 1.2); /* held out: dashed, as the legend says */
        rp_points(r->cluster, m, x, y);
    }
    /* one title over the pair: the job ("[held out]" as the paper), its PFI */
    char t[220], sub[64];
    rp_group_title(r, t, sizeof t);
    if (r->held) strncat(t, " [held out]", sizeof t - strlen(t) - 1);
    if (r->idx.has_pfi)
        snprintf(sub, sizeof sub, "PFI = %.2f", r->idx.pfi);
    else
        snprintf(sub, sizeof sub, "PFI undefined (no capped run below the uncapped throughput)");
    rp_title2(x0, x1, y0, y1, t, sub, 64);
}

void rp_groups_part(const rd_data *d, int part, size_t *from, size_t *to)
{
    size_t n = d->ng + d->nh, parts = (n + 9) / 10;
    if (parts > 3) parts = 3; /* the paper's three figures; past 30 groups each holds more */
    size_t per = parts ? (n + parts - 1) / parts : 0;
    *from = part >= 0 && (size_t)part < parts ? (size_t)part * per : n;
    *to = *from + per < n ? *from + per : n;
}

/* two pairs a row as the paper, three when a figure holds over 20 */
static size_t groups_cols(size_t n)
{
    return n > 20 ? 3 : n > 1 ? 2 : 1;
}

int rp_figure_rows_height(pfi_plot_kind k, const rd_data *d)
{
    size_t from, to, n, cols;
    switch (k) {
    case PFI_PLOT_GROUPS:
    case PFI_PLOT_GROUPS2:
    case PFI_PLOT_GROUPS3:
        rp_groups_part(d, k - PFI_PLOT_GROUPS, &from, &to);
        n = to - from, cols = groups_cols(n);
        return 60 + 300 * (int)((n + cols - 1) / cols); /* 300 px a row, the legend above */
    case PFI_PLOT_CE_GROUPS:
        n = d->ng + d->nh - (rd_ce_job(d) != NULL);
        cols = rp_ce_cols(n);
        return 70 + 250 * (int)((n + cols - 1) / cols);
    default:
        return 0;
    }
}

static void draw_groups(const rd_data *d, int part)
{
    size_t from, to;
    rp_groups_part(d, part, &from, &to);
    size_t n = to - from, cols = groups_cols(n), rows = (n + cols - 1) / cols;
    if (!rows) return;
    /* raw axes shared by every group of every part, so the three compare */
    double pmax = 0, tmax = 0;
    for (size_t i = 0; i < d->ng + d->nh; i++) {
        const pfi_group *g = d->grp[i].g;
        for (size_t k = 0; k < g->n_runs; k++) {
            pmax = fmax(pmax, g->runs[k].power_w / 1000);
            tmax = fmax(tmax, g->runs[k].tput / 1000);
        }
    }
    pmax *= 1.08, tmax *= 1.08;
    pladv(0);
    /* PLplot's default text height grows with the page: fix it at Fig. 3's
     * (7 mm) so a tall figure of many rows keeps readable small text */
    plschr(7.0, 0.62);
    /* margins in pixels, as fractions of the page: the text does not grow
     * with the page, so fractions of it would squash the panels */
    double px, py;
    rp_pixel(&px, &py);
    double top = 50 * py, cw = (1 - 20 * px) / (double)cols,
           rh = (1 - top - 10 * py) / (double)rows;
    for (size_t i = 0; i < n; i++) {
        size_t c = i % cols, rw = i / cols;
        double x0 = 20 * px + (double)c * cw, y1 = 1 - top - (double)rw * rh;
        /* x labels on the bottom row and on a pair with none under it */
        int xl = rw == rows - 1 || i + cols >= n;
        group_pair(&d->grp[from + i], x0 + 58 * px, x0 + cw - 30 * px, y1 - rh + 52 * py,
                   y1 - 50 * py, 76 * px, pmax, tmax, xl);
    }
    /* the legend across the top, as the paper's: arch x task, and held out */
    int present[4] = {0}, held = 0;
    for (size_t i = from; i < to; i++)
        present[d->grp[i].cluster] = 1, held |= d->grp[i].held;
    int col[5], sty[5];
    const char *gl[5], *tx[5];
    size_t m = 0;
    for (int c = 0; c < 4; c++) {
        if (!present[c]) continue;
        col[m] = RP_CLUSTER0 + c, sty[m] = 1, gl[m] = rp_cluster_glyph(c);
        tx[m++] = rp_cluster_label(c);
    }
    if (held) col[m] = RP_GREY, sty[m] = 2, gl[m] = NULL, tx[m++] = "Held out";
    plvpor(0.2, 0.8, 1 - top + 6 * py, 1 - 6 * py);
    plwind(0, 1, 0, 1);
    plschr(0, 0.9);
    rp_legend_ex(m, col, gl, sty, tx, 1);
}

void rp_draw_groups1(void *ctx)
{
    draw_groups(ctx, 0);
}

void rp_draw_groups2(void *ctx)
{
    draw_groups(ctx, 1);
}

void rp_draw_groups3(void *ctx)
{
    draw_groups(ctx, 2);
}
