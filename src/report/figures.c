/* See figures.h. One draw function per figure; each reads rd_data only. */
#include "figures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <plplot.h>

#include "pfi/features.h"
#include "pfi/gpumodel.h"
#include "pfi/stats.h"
#include "plot.h"
#include "figures_draw.h"
#include "tables.h"

static const rp_figure figures[PFI_PLOT_COUNT] = {
    {PFI_PLOT_CURVES, "fig3_curves", "Fig. 3: power-throughput curves",
     "Each line is one sweep group, from its lowest cap to the uncapped run. (a) the job's GPU "
     "power (kW, all its GPUs) and throughput (k tokens/s); (b) both normalised by the "
     "uncapped run; (c) the mean of (b) per arch x task at each cap. Above the dashed diagonal "
     "a job keeps more throughput than it gives up power (PFI > 1).",
     1500, 520},
    {PFI_PLOT_PFI, "fig4_pfi", "Fig. 4: PFI distribution, by regime and by cluster size",
     "Left: histogram of the ratio PFI (Eq. 1) with the median and PFI = 1 (dashed: throughput "
     "falls as fast as power). Middle: PFI by arch x task, bar = median. Right: PFI against the "
     "job's GPU count.",
     1300, 460},
    {PFI_PLOT_FEATURES, "fig5_features", "Fig. 5/14: PFI against each telemetry feature",
     "One panel per feature of the uncapped run, with the OLS line and Spearman rho; "
     "* q < 0.05, ** q < 0.01 (Benjamini-Hochberg over the features), and the paper's rho where "
     "its panel can be read. Held-out groups are circled: drawn, but in no fit or rho.",
     1400, 1700},
    {PFI_PLOT_CLOCKS, "fig6_clocks", "Fig. 6: SM and memory clock against the power cap",
     "Lines: the GPU model (H200) for the four probe loads. Markers: the real H200 probe, "
     "measured at its 700 W default limit (the probe changed no cap). A cap lowers the SM "
     "clock; the memory clock stays.",
     1100, 520},
    {PFI_PLOT_PREDICTED, "fig7_predicted", "Fig. 7: predicted against actual PFI",
     "The DRAM copy product predictor: leave-one-out predictions for the training groups, "
     "the fitted model's for the held-out groups (black outline), with the LOO and the "
     "validation R-squared. Dashed: perfect prediction.",
     900, 640},
    {PFI_PLOT_GAP, "fig8_gap", "Fig. 8: throughput gap to the oracle against power reduction",
     "Mean over workloads of the policy's total throughput minus the oracle's, per job, as the "
     "paper draws it: less negative is better; the oracle is exact for the measured curves. "
     "Diamonds: the paper's production 30% values (Sec. 6).",
     1300, 520},
    {PFI_PLOT_CE, "fig9_ce", "Fig. 9: the constant-elasticity fit",
     "log T = alpha log P + log k (normalised by the uncapped run): points are the runs, lines "
     "the least-squares fits over the runs' range; PFI_CE = 1 - alpha. (a) the paper's job "
     "(gpt-oss-20b fine-tuning on 8 H200s); (b) every group, the paper's appendix view.",
     1000, 600},
    {PFI_PLOT_DEFINITIONS, "fig10_definitions", "Fig. 10: the three PFI definitions",
     "Each group's ratio (Eq. 1), area (Eq. 5) and constant-elasticity PFI against each "
     "other, each on its own scale (their ranges differ by design); the titles give "
     "Spearman's rank correlation.",
     1300, 460},
    {PFI_PLOT_GROUPS, "fig11_groups", "Figs. 11-13: one panel per group",
     "Normalised throughput against normalised power for every group (model, arch and task "
     "in the title), with its ratio PFI; dashed: the diagonal (PFI = 1).",
     1400, 1750},
};

const rp_figure *rp_figure_of(pfi_plot_kind k)
{
    return (unsigned)k < PFI_PLOT_COUNT ? &figures[k] : NULL;
}

int rp_figure_available(pfi_plot_kind k, const rd_data *d, const char **why)
{
    switch (k) {
    case PFI_PLOT_FEATURES:
    case PFI_PLOT_PREDICTED:
        if (!d->has_tm) {
            *why = "it needs telemetry";
            return 0;
        }
        if (k == PFI_PLOT_FEATURES) {
            for (int f = 0; f < PFI_FEAT_N_TELEMETRY; f++)
                if (d->corr[f].has) return 1;
            *why = "no feature has a Spearman rho: it needs at least " RD_MIN_RHO_S " groups";
            return 0;
        }
        if (d->ab[0].fit_rc != PFI_OK) {
            *why = "the DRAM copy product predictor could not be fitted";
            return 0;
        }
        if (d->ab[0].loo.rc != PFI_OK) { /* "leave-one-out ... needs at least 4 groups" */
            *why = d->ab[0].loo.msg;
            return 0;
        }
        return 1;
    case PFI_PLOT_CLOCKS:
        for (size_t i = 0; i < d->ng + d->nh; i++)
            if (strcasecmp(d->grp[i].g->meta.platform, "H200") == 0) return 1;
        if (d->ng + d->nh == 0) return 1; /* pfi plot clocks: the model and the probe alone */
        *why = "it shows the H200's GPU model and probe, and no group here ran on an H200";
        return 0;
    case PFI_PLOT_GAP:
        if (!d->has_sim[0] && !d->has_sim[1]) {
            *why = "it needs the allocation simulation (telemetry)";
            return 0;
        }
        return 1;
    default:
        return 1;
    }
}

/* ---- helpers ---- */

void rp_present_clusters(const rd_data *d, int held, int present[4])
{
    memset(present, 0, 4 * sizeof *present);
    for (size_t i = 0; i < d->ng + (held ? d->nh : 0); i++)
        present[d->grp[i].cluster] = 1;
}

void rp_diagonal(double lo, double hi)
{
    double x[2] = {lo, hi};
    plcol0(RP_GREY);
    rp_line(2, x, x, 2, 1);
}

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

static void draw_curves(void *ctx)
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
static void draw_pfi(void *ctx)
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
    int present[4];
    rp_present_clusters(d, 0, present);
    rp_legend_clusters(present);
    free(v);
}

/* ---- Fig. 5/14 ---- */

/* An x label under a quarter-width panel: one line when it fits (~26
 * characters at scale `base`), else the name and its "(unit)" on two
 * smaller lines; shrinking a 45-character label onto one line made it
 * unreadable and it still ran into the neighbour's. Offsets are in lines of
 * the current size, so they are rescaled to keep the same place. */
static void xlabel_fit(const char *lab, double base)
{
    size_t n = strlen(lab);
    const char *paren = strstr(lab, " (");
    if (n <= 26 || !paren) {
        plschr(0, n > 26 ? base * 26.0 / (double)n : base);
        rp_mtex("b", 3.0 * base / (n > 26 ? base * 26.0 / (double)n : base), 0.5, 0.5, lab);
        return;
    }
    char l1[128];
    snprintf(l1, sizeof l1, "%.*s", (int)(paren - lab), lab);
    const char *l2 = paren + 1;
    size_t m = strlen(l1) > strlen(l2) ? strlen(l1) : strlen(l2);
    double sc = 0.85 * base;
    if (m > 28) sc = sc * 28.0 / (double)m;
    plschr(0, sc);
    rp_mtex("b", 3.0 * base / sc, 0.5, 0.5, l1);
    rp_mtex("b", 3.0 * base / sc + 1.1, 0.5, 0.5, l2);
}
static void draw_features(void *ctx)
{
    const rd_data *d = ctx;
    const int cols = 4, rows = (PFI_FEAT_N_TELEMETRY + cols - 1) / cols;
    double *x = malloc((d->nobs ? d->nobs : 1) * sizeof *x),
           *y = malloc((d->nobs ? d->nobs : 1) * sizeof *y);
    /* x, y: the training groups, then the held-out ones */
    int *cl = malloc((d->nobs ? d->nobs : 1) * sizeof *cl);
    if (!x || !y || !cl) goto out;
    pladv(0);
    plschr(0, 0.6);
    for (int f = 0; f < PFI_FEAT_N_TELEMETRY; f++) {
        size_t m = 0, mh;
        for (size_t i = 0; i < d->nobs; i++) {
            const pfi_obs *o = &d->obs[i];
            if (o->holdout || !((o->f.valid >> f) & 1u)) continue;
            x[m] = o->f.v[f];
            y[m] = o->pfi;
            cl[m++] = o->cluster;
        }
        /* the held-out groups after them: on the axes, in no fit or rho */
        mh = m;
        for (size_t i = 0; i < d->nobs; i++) {
            const pfi_obs *o = &d->obs[i];
            if (!o->holdout || !((o->f.valid >> f) & 1u)) continue;
            x[mh] = o->f.v[f];
            y[mh] = o->pfi;
            cl[mh++] = o->cluster;
        }
        int r = f / cols, c = f % cols;
        double x0 = 0.04 + c * (0.95 / cols), y1 = 0.98 - r * (0.96 / rows);
        double xlo, xhi, ylo, yhi;
        rp_range(mh, x, 0.08, &xlo, &xhi);
        rp_range(mh, y, 0.1, &ylo, &yhi);
        char title[96], ptxt[32] = "";
        const pfi_corr *co = &d->corr[f];
        double pr = d->paper ? rp_paper_rho(f) : NAN;
        if (isfinite(pr)) snprintf(ptxt, sizeof ptxt, " (paper %.2f)", pr);
        if (co->has)
            snprintf(title, sizeof title, "ρ = %.2f%s%s", co->rho,
                     co->q < 0.01   ? " **"
                     : co->q < 0.05 ? " *"
                                    : "",
                     ptxt);
        else
            snprintf(title, sizeof title, "ρ undefined%s", ptxt);
        rp_panel(x0 + 0.035, x0 + 0.95 / cols - 0.02, y1 - 0.96 / rows + 0.052, y1 - 0.02, xlo, xhi,
                 ylo, yhi, 0, 0, NULL, c == 0 ? "PFI (ratio)" : NULL, title);
        xlabel_fit(pfi_feature_label(f), 0.6);
        plschr(0, 0.6);
        for (size_t i = 0; i < m; i++)
            rp_points(cl[i], 1, &x[i], &y[i]);
        for (size_t i = m; i < mh; i++) { /* held out: an open black circle around */
            plcol0(RP_BLACK);
            plstring(1, &x[i], &y[i], "○");
            rp_points(cl[i], 1, &x[i], &y[i]);
        }
        /* OLS line of PFI on the feature */
        if (m >= 3) {
            double mx = 0, my = 0, sxx = 0, sxy = 0;
            for (size_t i = 0; i < m; i++)
                mx += x[i], my += y[i];
            mx /= (double)m;
            my /= (double)m;
            for (size_t i = 0; i < m; i++) {
                sxx += (x[i] - mx) * (x[i] - mx);
                sxy += (x[i] - mx) * (y[i] - my);
            }
            if (sxx > 0) {
                double b = sxy / sxx, lx[2] = {xlo, xhi},
                       ly[2] = {my + b * (xlo - mx), my + b * (xhi - mx)};
                plcol0(RP_BLACK);
                rp_line(2, lx, ly, 1, 1.2);
            }
        }
    }
    /* the legend in the empty cell after the last panel */
    int f = PFI_FEAT_N_TELEMETRY, r = f / cols, c = f % cols;
    double x0 = 0.04 + c * (0.95 / cols), y1 = 0.98 - r * (0.96 / rows);
    plvpor(x0 + 0.02, x0 + 0.03, y1 - 0.96 / rows + 0.045, y1 - 0.02);
    plwind(0, 1, 0, 1);
    plschr(0, 1.0);
    int present[4], col[6];
    const char *gl[6], *tx[6];
    rp_present_clusters(d, 1, present);
    size_t nl = 0;
    for (int k = 0; k < 4; k++)
        if (present[k])
            col[nl] = RP_CLUSTER0 + k, gl[nl] = rp_cluster_glyph(k), tx[nl++] = rp_cluster_label(k);
    if (d->nh) col[nl] = RP_BLACK, gl[nl] = "○", tx[nl++] = "held out (not in ρ)";
    rp_legend(nl, col, gl, tx);
out:
    free(x);
    free(y);
    free(cl);
}

/* ---- Fig. 6 ---- */
static void draw_clocks(void *ctx)
{
    const rd_data *d = ctx;
    const pfi_gpu_spec *gpu = pfi_gpumodel_h200();
    static const char *const loads[4] = {"gemm", "stream", "dense_train", "moe_train"};
    /* stream in pink: in the learn policy's blue it could not be told from dense_train */
    static const int colour[4] = {RP_POLICY0 + 1, RP_POLICY0 + 2, RP_CLUSTER0 + 0, RP_CLUSTER0 + 2};
    double cap[51], sm[51], mem[51];
    pladv(0);
    rp_panel(0.08, 0.72, 0.13, 0.90, gpu->min_limit_w - 10, gpu->max_limit_w + 15, 0, 3500, 0, 0,
             "Power cap per GPU (W)", "Clock (MHz)", "H200: the GPU model and the probe");
    for (int l = 0; l < 4; l++) {
        const pfi_job_model *job = pfi_gpumodel_preset(loads[l]);
        size_t n = 0;
        for (int k = 0; k <= 50 && job; k++) {
            pfi_gpumodel_point p;
            double c = gpu->min_limit_w + (gpu->max_limit_w - gpu->min_limit_w) * k / 50.0;
            if (pfi_gpumodel_eval(gpu, job, c, &p) != PFI_OK) continue;
            cap[n] = c;
            sm[n] = p.sm_clock_mhz;
            mem[n++] = p.mem_clock_mhz;
        }
        plcol0(colour[l]);
        rp_line(n, cap, sm, 1, 2.0);
        if (l == 0) {
            plcol0(RP_GREY);
            rp_line(n, cap, mem, 2, 2.0);
        }
    }
    int col[10];
    const char *gl[10], *tx[10];
    static const char *const model_txt[4] = {"model SM: gemm", "model SM: stream",
                                             "model SM: dense_train", "model SM: moe_train"};
    static char probe_txt[4][40];
    size_t n = 0;
    for (int l = 0; l < 4; l++)
        col[n] = colour[l], gl[n] = NULL, tx[n++] = model_txt[l];
    col[n] = RP_GREY, gl[n] = NULL, tx[n++] = "model memory clock";
    for (size_t i = 0; d->has_probe && i < d->n_probe; i++) {
        int l = 0;
        while (l < 3 && strcmp(loads[l], d->probe_name[i]) != 0)
            l++;
        double x = gpu->max_limit_w - 8 + 5.0 * (double)i, y = d->probe_sm[i], ym = d->probe_mem[i];
        plcol0(colour[l]);
        plstring(1, &x, &y, "◆");
        plcol0(RP_GREY);
        plstring(1, &x, &ym, "◇");
        snprintf(probe_txt[i], sizeof probe_txt[i], "probe SM: %s", d->probe_name[i]);
        col[n] = colour[l], gl[n] = "◆", tx[n++] = probe_txt[i];
    }
    if (d->has_probe) col[n] = RP_GREY, gl[n] = "◇", tx[n++] = "probe memory clock";
    rp_legend(n, col, gl, tx);
}

/* ---- Fig. 7 ---- */
static void draw_predicted(void *ctx)
{
    const rd_data *d = ctx;
    double v[128];
    size_t m = 0;
    for (size_t i = 0; i < d->ng + d->nh && m < 126; i++)
        if (d->grp[i].has_pred && d->grp[i].idx.has_pfi) {
            v[m++] = d->grp[i].pred;
            v[m++] = d->grp[i].idx.pfi;
        }
    double lo, hi;
    rp_range(m, v, 0.08, &lo, &hi);
    pladv(0);
    char t[160];
    const pfi_ablation *a = &d->ab[0];
    snprintf(t, sizeof t, "PFI ~ DRAM copy product: predicted against actual");
    rp_panel(0.10, 0.68, 0.12, 0.90, lo, hi, lo, hi, 0, 0, "Actual PFI (ratio, Eq. 1)",
             "Predicted PFI", t);
    char r2[96];
    snprintf(r2, sizeof r2, "LOO R² = %.2f (training, n = %zu)", a->loo.cv.r2_oos, a->loo.cv.n);
    rp_text(0.04, 0.93, 0, 0.7, r2);
    if (a->has_val && a->val.has_r2)
        snprintf(r2, sizeof r2, "validation R² = %.2f (held out, n = %zu)", a->val.r2, a->val.n);
    else
        snprintf(r2, sizeof r2, "validation R²: needs 2 held-out groups");
    rp_text(0.04, 0.86, 0, 0.7, r2);
    rp_diagonal(lo, hi);
    for (size_t i = 0; i < d->ng + d->nh; i++) {
        const rd_group *g = &d->grp[i];
        if (!g->has_pred || !g->idx.has_pfi) continue;
        double x = g->idx.pfi, y = g->pred;
        if (g->held) {
            plcol0(RP_BLACK);
            PLFLT def, cur;
            plgchr(&def, &cur);
            plschr(0, 1.5 * cur / def);
            plstring(1, &x, &y, "○");
            plschr(0, cur / def);
        }
        rp_points(g->cluster, 1, &x, &y);
    }
    int present[4], col[6];
    const char *gl[6], *tx[6];
    rp_present_clusters(d, 1, present);
    size_t n = 0;
    for (int c = 0; c < 4; c++)
        if (present[c])
            col[n] = RP_CLUSTER0 + c, gl[n] = rp_cluster_glyph(c), tx[n++] = rp_cluster_label(c);
    if (d->nh) col[n] = RP_BLACK, gl[n] = "○", tx[n++] = "held out";
    rp_legend(n, col, gl, tx);
}

/* ---- Fig. 8 ---- */
static void draw_gap(void *ctx)
{
    const rd_data *d = ctx;
    static const int order[] = {PFI_POLICY_EQUAL, PFI_POLICY_PFI, PFI_POLICY_MOE_FT,
                                PFI_POLICY_DRAM_COPY, PFI_SIM_LEARN};
    double top = 1, rmax = 0;
    for (int mix = 0; mix < 2; mix++) {
        if (!d->has_sim[mix]) continue;
        const pfi_sim_result *r = &d->sim[mix];
        for (size_t k = 0; k < r->n_reductions; k++) {
            rmax = fmax(rmax, 100 * r->reductions[k]);
            for (int p = 0; p < PFI_SIM_NPOLICIES; p++)
                if (r->cells[k * PFI_SIM_NPOLICIES + p].ran && p != PFI_POLICY_ORACLE)
                    top = fmax(top, r->cells[k * PFI_SIM_NPOLICIES + p].gap_per_job);
        }
    }
    /* the paper's production 30% cell (Sec. 6): PFI-aware recovers 1.5k
     * tokens/s per job, 63% of equal weight's gap, so equal's gap is
     * 1500 / 0.63 and PFI-aware's the 37% left */
    const double paper_equal = 1500 / 0.63, paper_pfi = 1500 / 0.63 - 1500;
    if (d->paper) top = fmax(top, paper_equal);
    pladv(0);
    for (int mix = 0; mix < 2; mix++) {
        char title[64];
        snprintf(title, sizeof title, "(%c) %s mix%s", 'a' + mix, mix ? "production" : "random",
                 d->has_sim[mix] ? "" : " (not simulated)");
        /* the paper's sign: policy minus oracle, less negative is better */
        rp_panel(0.09 + 0.36 * mix, 0.38 + 0.36 * mix, 0.13, 0.90, 0, rmax * 1.04, -top * 1.08,
                 0.04 * top, 0, 0, "Power reduction (%)",
                 mix ? NULL : "Policy - oracle (tokens/s per job)", title);
        if (mix == 1 && d->paper && d->has_sim[1]) {
            double px = 30, py[2] = {-paper_equal, -paper_pfi};
            rp_policy_colour(PFI_POLICY_EQUAL);
            plstring(1, &px, &py[0], "◇");
            rp_policy_colour(PFI_POLICY_PFI);
            plstring(1, &px, &py[1], "◇");
            plcol0(RP_BLACK);
            rp_text(30.0 / (rmax * 1.04) - 0.03, (py[1] + top * 1.08) / (top * 1.12) - 0.01, 1,
                    0.55, "paper -0.88k");
            rp_text(30.0 / (rmax * 1.04) - 0.03, (py[0] + top * 1.08) / (top * 1.12) - 0.01, 1,
                    0.55, "paper -2.38k");
        }
        if (!d->has_sim[mix]) continue;
        const pfi_sim_result *r = &d->sim[mix];
        double x[16], y[16];
        for (size_t q = 0; q < sizeof order / sizeof *order; q++) {
            size_t n = 0;
            for (size_t k = 0; k < r->n_reductions && n < 16; k++) {
                const pfi_sim_cell *c = &r->cells[k * PFI_SIM_NPOLICIES + order[q]];
                if (!c->ran) continue;
                x[n] = 100 * r->reductions[k];
                y[n++] = -c->gap_per_job;
            }
            rp_policy_colour(order[q]);
            rp_line(n, x, y, order[q] == PFI_SIM_LEARN ? 2 : 1, 2.0);
            plstring((PLINT)n, x, y, "●");
        }
    }
    int col[6];
    const char *gl[6], *tx[6];
    for (int q = 0; q < 5; q++)
        col[q] = RP_POLICY0 + order[q], gl[q] = NULL, tx[q] = rp_policy_label(order[q]);
    size_t nl = 5;
    if (d->paper) col[nl] = RP_BLACK, gl[nl] = "◇", tx[nl++] = "paper, 30% (Sec. 6)";
    rp_legend(nl, col, gl, tx);
}

static const rp_draw_fn draws[PFI_PLOT_COUNT] = {
    draw_curves, draw_pfi,   draw_features,       draw_clocks,    draw_predicted,
    draw_gap,    rp_draw_ce, rp_draw_definitions, rp_draw_groups,
};

int rp_figure_draw(pfi_plot_kind k, const rd_data *d, const char *path, int w, int h,
                   pfi_error *err)
{
    const rp_figure *f = rp_figure_of(k);
    const char *why = "";
    if (!f) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "unknown figure");
    if (!rp_figure_available(k, d, &why))
        return pfi_error_set(err, PFI_ENODATA, NULL, 0, "%s: %s", f->title, why);
    return rp_render(path, w > 0 ? w : f->w, h > 0 ? h : f->h, draws[k], (void *)d, err);
}
