/* The appendix figures (Figs. 9-13): the PFI definitions and one panel per
 * group. Split from figures.c, which keeps the figure table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <plplot.h>

#include "figures_draw.h"
#include "pfi/stats.h"
#include "plot.h"

/* ---- Fig. 9 ---- */

/* A segment clipped to the current window (PLplot's cairo drivers draw
 * outside the box otherwise) */
static void plclip_line(double *x, double *y)
{
    PLFLT x0, x1, y0, y1;
    plgvpw(&x0, &x1, &y0, &y1);
    double t0 = 0, t1 = 1, dx = x[1] - x[0], dy = y[1] - y[0];
    double p[4] = {-dx, dx, -dy, dy}, q[4] = {x[0] - x0, x1 - x[0], y[0] - y0, y1 - y[0]};
    for (int i = 0; i < 4; i++) { /* Liang-Barsky */
        if (p[i] == 0) {
            if (q[i] < 0) return;
            continue;
        }
        double r = q[i] / p[i];
        if (p[i] < 0 && r > t0) t0 = r;
        if (p[i] > 0 && r < t1) t1 = r;
    }
    if (t0 > t1) return;
    double cx[2] = {x[0] + t0 * dx, x[0] + t1 * dx}, cy[2] = {y[0] + t0 * dy, y[0] + t1 * dy};
    rp_line(2, cx, cy, 1, 1.0);
}

/* One group's runs and fit in log(x / uncapped) coordinates; the fit is
 * drawn over the runs' power range only, clipped to the panel. */
static void ce_group(const rd_group *r)
{
    const pfi_group *g = r->g;
    const pfi_run *u = &g->runs[g->n_runs - 1];
    double x[64], y[64];
    size_t n = g->n_runs < 64 ? g->n_runs : 64;
    for (size_t k = 0; k < n; k++) {
        x[k] = log(g->runs[k].power_w / u->power_w);
        y[k] = log(g->runs[k].tput / u->tput);
    }
    rp_points(r->cluster, n, x, y);
    if (!r->idx.has_ce) return;
    double lx[2] = {x[0], 0}, ly[2];
    for (int e = 0; e < 2; e++)
        ly[e] = r->ce_alpha * (lx[e] + log(u->power_w)) + r->ce_logk - log(u->tput);
    rp_cluster_colour(r->cluster);
    plclip_line(lx, ly);
}

/* The paper's Fig. 9 job: gpt-oss-20b fine-tuning on 8 H200s (the first
 * such group), else the first group. */
static const rd_group *ce_job(const rd_data *d)
{
    for (size_t i = 0; i < d->ng; i++) {
        const pfi_group_meta *m = &d->grp[i].g->meta;
        if (strcmp(m->model, "gpt-oss-20b") == 0 && strcmp(m->task, "ft") == 0 && m->gpus == 8)
            return &d->grp[i];
    }
    return d->ng ? &d->grp[0] : NULL;
}

void rp_draw_ce(void *ctx)
{
    const rd_data *d = ctx;
    double lo = -1.0;
    for (size_t i = 0; i < d->ng; i++) {
        const pfi_group *g = d->grp[i].g;
        const pfi_run *u = &g->runs[g->n_runs - 1];
        for (size_t k = 0; k < g->n_runs; k++) {
            lo = fmin(lo, log(g->runs[k].power_w / u->power_w));
            lo = fmin(lo, log(g->runs[k].tput / u->tput));
        }
    }
    lo = floor(lo * 10 - 0.5) / 10;
    const rd_group *job = ce_job(d);
    pladv(0);
    char t[200];
    if (job)
        snprintf(t, sizeof t, "(a) %s %s, %d GPUs: PFI_CE %.2f",
                 job->g->meta.model[0] ? job->g->meta.model : job->g->name,
                 strcmp(job->g->meta.task, "ft") == 0 ? "FT" : "PT", job->g->meta.gpus,
                 job->idx.pfi_ce);
    rp_panel(0.07, 0.40, 0.12, 0.90, lo, 0.05, lo, 0.2, 0, 0, "log(P / Pmax)", "log(T / Tmax)",
             job ? t : "(a)");
    rp_diagonal(lo, 0.05);
    if (job) ce_group(job);
    rp_panel(0.50, 0.83, 0.12, 0.90, lo, 0.05, lo, 0.2, 0, 0, "log(P / Pmax)", NULL,
             "(b) every group (appendix)");
    rp_diagonal(lo, 0.05);
    for (size_t i = 0; i < d->ng; i++)
        ce_group(&d->grp[i]);
    int present[4];
    rp_present_clusters(d, 0, present);
    rp_legend_clusters(present);
}

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
 * ratio PFI. RP_GROUP_COLS pairs a row. */

/* character scale for a title of at most `fit` characters at `base` */
static double fit_scale(const char *s, double base, double fit)
{
    double n = (double)strlen(s);
    return n > fit ? base * fit / n : base;
}

/* "Dense PT H200x16 (Qwen3-32B, seq8192/bs4)", as the paper's titles */
static void group_title(const rd_group *r, char *t, size_t len)
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

/* The pair in the box x0..x1, y0..y1 (page fractions, axes only: the labels
 * and titles go outside it); gap: between the two panels, a fraction. */
static void group_pair(const rd_data *d, size_t i, double x0, double x1, double y0, double y1,
                       double gap, double pmax, double tmax, int xlabels)
{
    const rd_group *r = &d->grp[i];
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
        rp_line(m, x, y, 1, 1.2);
        rp_points(r->cluster, m, x, y);
    }
    /* one title over the pair: the job, then its PFI (and "held out") */
    char t[200], sub[64];
    group_title(r, t, sizeof t);
    if (r->idx.has_pfi)
        snprintf(sub, sizeof sub, "PFI = %.2f%s", r->idx.pfi, r->held ? ", held out" : "");
    else
        snprintf(sub, sizeof sub, "PFI undefined%s", r->held ? ", held out" : "");
    plvpor(x0, x1, y0, y1);
    plwind(0, 1, 0, 1);
    plcol0(RP_BLACK);
    double s1 = fit_scale(t, 0.62, 48);
    plschr(0, 0.62);
    rp_mtex("t", 0.8, 0.5, 0.5, sub);
    plschr(0, s1);
    rp_mtex("t", (0.8 + 1.3) * 0.62 / s1, 0.5, 0.5, t);
    plschr(0, 0.62);
}

size_t rp_groups_cols(size_t n)
{
    return n > 8 ? 3 : n > 2 ? 2 : 1;
}

void rp_draw_groups(void *ctx)
{
    const rd_data *d = ctx;
    size_t n = d->ng + d->nh, cols = rp_groups_cols(n), rows = (n + cols - 1) / cols;
    if (!rows) return;
    double pmax = 0, tmax = 0;
    for (size_t i = 0; i < n; i++) {
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
    PLFLT xp, yp;
    PLINT wpx, hpx, xo, yo;
    plgpage(&xp, &yp, &wpx, &hpx, &xo, &yo);
    double px = 1.0 / (wpx > 0 ? wpx : 1500), py = 1.0 / (hpx > 0 ? hpx : 2600);
    double cw = (1 - 20 * px) / (double)cols, rh = (1 - 20 * py) / (double)rows;
    for (size_t i = 0; i < n; i++) {
        size_t c = i % cols, rw = i / cols;
        double x0 = 20 * px + (double)c * cw, y1 = 1 - 20 * py - (double)rw * rh;
        /* x labels on the bottom row and on a pair with none under it */
        int xl = rw == rows - 1 || i + cols >= n;
        group_pair(d, i, x0 + 58 * px, x0 + cw - 22 * px, y1 - rh + 52 * py, y1 - 50 * py, 70 * px,
                   pmax, tmax, xl);
    }
    /* the legend in the cell after the last pair, or right of the last row */
    size_t c = n % cols, rw = n / cols;
    if (rw >= rows) c = cols, rw = rows - 1;
    double x0 = 20 * px + (double)c * cw, y1 = 1 - 20 * py - (double)rw * rh;
    plvpor(x0, x0 + 0.01, y1 - rh + 52 * py, y1 - 50 * py);
    plwind(0, 1, 0, 1);
    plschr(0, 0.9);
    int present[4];
    rp_present_clusters(d, 1, present);
    rp_legend_clusters(present);
}
