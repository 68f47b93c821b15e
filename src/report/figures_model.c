/* Figs. 5-8: the features against PFI, the clocks, the predicted PFI and the
 * allocation gap. Split from figures.c, which keeps the figure table. */
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
void rp_draw_features(void *ctx)
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
    plvpor(x0 + 0.02, x0 + 0.03, y1 - 0.96 / rows + 0.045,
           y1 - 0.04); /* below the x label above it */
    plwind(0, 1, 0, 1);
    plschr(0, 0.85);
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
void rp_draw_clocks(void *ctx)
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
void rp_draw_predicted(void *ctx)
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
void rp_draw_gap(void *ctx)
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
