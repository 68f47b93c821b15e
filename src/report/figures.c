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
    {PFI_PLOT_TRACE, "fig2_trace", "Fig. 2: a run's GPU power and throughput over time",
     "One run of a trace, as the paper's Fig. 2: the GPU power summed over the run's GPUs "
     "(left axis) and the training throughput from its step log (right axis) against elapsed "
     "time, with the phases pfi trace finds (warmup: frame buffer under 10 GiB; startup: "
     "loaded, GPU idle; training: utilisation held at 50% or more). Dashed: the steady state, "
     "the mean of the top 10% of the training samples, which leaves out evals and checkpoints.",
     1200, 480, 0},
    {PFI_PLOT_CURVES, "fig3_curves", "Fig. 3: power-throughput curves",
     "Each line is one sweep group, from its lowest cap to the uncapped run. (a) the job's GPU "
     "power (kW, all its GPUs) and throughput (k tokens/s); (b) both normalised by the "
     "uncapped run; (c) the mean of (b) per arch x task at each cap. Above the dashed diagonal "
     "a job keeps more throughput than it gives up power (PFI > 1).",
     1500, 520, 0},
    {PFI_PLOT_PFI, "fig4_pfi", "Fig. 4: PFI distribution, by regime and by cluster size",
     "Left: histogram of the ratio PFI (Eq. 1) with the median and PFI = 1 (dashed: throughput "
     "falls as fast as power). Middle: PFI by arch x task, bar = median. Right: PFI against the "
     "job's GPU count.",
     1300, 460, 0},
    {PFI_PLOT_FEATURES, "fig5_features", "Fig. 5/14: PFI against each telemetry feature",
     "One panel per feature of the uncapped run, with the OLS line and Spearman rho; "
     "* q < 0.05, ** q < 0.01 (Benjamini-Hochberg over the features), and the paper's rho where "
     "its panel can be read. Held-out groups are circled: drawn, but in no fit or rho.",
     1400, 1700, 0},
    {PFI_PLOT_CLOCKS, "fig6_clocks", "Fig. 6: SM and memory clock against the power cap",
     "Lines: the GPU model (H200) for the four probe loads. Markers: the real H200 probe, "
     "measured at its 700 W default limit (the probe changed no cap). A cap lowers the SM "
     "clock; the memory clock stays.",
     1100, 520, 0},
    {PFI_PLOT_PREDICTED, "fig7_predicted", "Fig. 7: predicted against actual PFI",
     "The DRAM copy product predictor: leave-one-out predictions for the training groups, "
     "the fitted model's for the held-out groups (black outline), with the LOO and the "
     "validation R-squared. Dashed: perfect prediction.",
     900, 640, 0},
    {PFI_PLOT_GAP, "fig8_gap", "Fig. 8: throughput gap to the oracle against power reduction",
     "Mean over workloads of the policy's total throughput minus the oracle's, per job, as the "
     "paper draws it: less negative is better; the oracle is exact for the measured curves. "
     "Diamonds: the paper's production 30% values (Sec. 6).",
     1300, 520, 0},
    {PFI_PLOT_CE, "fig9_ce", "Fig. 9: the constant-elasticity fit against the observed curve",
     "As the paper's Fig. 9: log T = alpha log P + log k fitted to one job's runs, both "
     "normalised by its uncapped run (PFI_CE = 1 - alpha), on the paper's axes, extended where "
     "the runs reach further; dashed, the fit across the axes; joined, the runs. The job is the "
     "paper's, gpt-oss-20b fine-tuning on 8 H200s (the paper has two such groups and does not "
     "say which: the first is drawn), or in data without it the first group. Every other "
     "group: the appendix figure below.",
     720, 540, 0},
    {PFI_PLOT_CE_GROUPS, "fig9_ce_groups",
     "Fig. 9 (appendix): the constant-elasticity fit of every other group",
     "The fit of Fig. 9 for each group it does not show (training groups, then held-out), on "
     "axes shared by every panel. Where the dashed line leaves the runs, the one-parameter "
     "model misses the curve's bend: the paper's reason to adopt the ratio PFI.",
     1500, 0, 1},
    {PFI_PLOT_DEFINITIONS, "fig10_definitions", "Fig. 10: the three PFI definitions",
     "Each group's ratio (Eq. 1), area (Eq. 5) and constant-elasticity PFI against each "
     "other, each on its own scale (their ranges differ by design); the titles give "
     "Spearman's rank correlation.",
     1300, 460, 0},
    {PFI_PLOT_GROUPS, "fig11_groups",
     "Fig. 11: power-throughput curves (raw and normalised) for each headline and validation run",
     "As the paper's Figs. 11-13, which split the groups over three figures in Table 6's order "
     "(the sweeps file's; held-out groups last), ten a figure: per group, left, the job's GPU "
     "power (kW, all its GPUs) against its throughput (k tokens/s), on axes shared by every "
     "group of the three figures; right, both normalised by the uncapped run, dashed the "
     "diagonal (PFI = 1). The title names arch, task, platform x GPUs and model, with the ratio "
     "PFI (Eq. 1); held-out groups are dashed. The legend codes arch x task by colour and marker "
     "as every figure here does.",
     1400, 0, 0},
    {PFI_PLOT_GROUPS2, "fig12_groups",
     "Fig. 12: power-throughput curves (raw and normalised) for each headline and validation run "
     "(continued)",
     "The next ten groups, drawn as Fig. 11.", 1400, 0, 1},
    {PFI_PLOT_GROUPS3, "fig13_groups",
     "Fig. 13: power-throughput curves (raw and normalised) for each headline and validation run "
     "(continued)",
     "The rest of the groups, drawn as Fig. 11.", 1400, 0, 1},
};

const rp_figure *rp_figure_of(pfi_plot_kind k)
{
    return (unsigned)k < PFI_PLOT_COUNT ? &figures[k] : NULL;
}

int rp_figure_available(pfi_plot_kind k, const rd_data *d, const char **why)
{
    switch (k) {
    case PFI_PLOT_TRACE:
        if (!d->trace.has) {
            *why = "it needs a trace (--trace FILE, in pfi trace's formats)";
            return 0;
        }
        return 1;
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
    case PFI_PLOT_CE_GROUPS:
        if (d->ng + d->nh <= 1) {
            *why = "Fig. 9 shows the only group";
            return 0;
        }
        return 1;
    case PFI_PLOT_GROUPS2:
    case PFI_PLOT_GROUPS3: {
        size_t from, to;
        rp_groups_part(d, k - PFI_PLOT_GROUPS, &from, &to);
        if (from == to) {
            *why = k == PFI_PLOT_GROUPS2 ? "every group is in Fig. 11"
                                         : "every group is in Figs. 11 and 12";
            return 0;
        }
        return 1;
    }
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

static const rp_draw_fn draws[PFI_PLOT_COUNT] = {
    rp_draw_trace,     rp_draw_curves,  rp_draw_pfi,     rp_draw_features,  rp_draw_clocks,
    rp_draw_predicted, rp_draw_gap,     rp_draw_ce,      rp_draw_ce_groups, rp_draw_definitions,
    rp_draw_groups1,   rp_draw_groups2, rp_draw_groups3,
};

int rp_figure_draw(pfi_plot_kind k, const rd_data *d, const char *path, int w, int h,
                   pfi_error *err)
{
    const rp_figure *f = rp_figure_of(k);
    const char *why = "";
    if (!f) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "unknown figure");
    if (!rp_figure_available(k, d, &why))
        return pfi_error_set(err, PFI_ENODATA, NULL, 0, "%s: %s", f->title, why);
    if (h <= 0 && f->h == 0) h = rp_figure_rows_height(k, d); /* as tall as its rows need */
    return rp_render(path, w > 0 ? w : f->w, h > 0 ? h : f->h, draws[k], (void *)d, err);
}
