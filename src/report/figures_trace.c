/* Fig. 2: one run of a trace, as the paper draws it (aggregate GPU power and
 * training throughput against elapsed time), with the phases pfi trace
 * finds and the steady state it keeps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <plplot.h>

#include "figures_draw.h"
#include "plot.h"

enum { TPUT_COLOUR = RP_CLUSTER0 + 3 }; /* orange, away from the power's blue */

static double series_max(const double *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] > m) m = v[i];
    return m;
}

/* x scaled: minutes for runs of 5 minutes or more (the paper's), else s */
static double *scaled(const double *v, size_t n, double k)
{
    double *o = malloc((n ? n : 1) * sizeof *o);
    if (o)
        for (size_t i = 0; i < n; i++)
            o[i] = v[i] * k;
    return o;
}

/* the phase boundaries (dotted) and names over the time axis */
static void phases(const rd_trace *tr, double xk, double xmax, double ymax)
{
    static const char *const name[PFI_PHASE_COUNT] = {"warmup", "startup", "training"};
    for (int p = 0; p < PFI_PHASE_COUNT; p++) {
        if (!isfinite(tr->start[p])) continue;
        double a = tr->start[p] * xk, b = xmax;
        for (int q = p + 1; q < PFI_PHASE_COUNT; q++)
            if (isfinite(tr->start[q])) {
                b = tr->start[q] * xk;
                break;
            }
        if (b - a <= 0) continue; /* a skipped phase */
        double x[2] = {a, a}, y[2] = {0, ymax};
        plcol0(RP_GREY);
        if (p > 0) rp_line(2, x, y, 2, 0.8);
        /* the name inside the top of its span, when the span can hold it */
        if ((b - a) / xmax > 0.06) rp_text((a + b) / 2 / xmax, 0.95, 0.5, 0.75, name[p]);
    }
}

void rp_draw_trace(void *ctx)
{
    const rd_data *d = ctx;
    const rd_trace *tr = &d->trace;
    if (!tr->has || tr->n < 2) return;
    double span = tr->t[tr->n - 1], xk = span >= 300 ? 1.0 / 60 : 1.0;
    double pmax = series_max(tr->power_w, tr->n), tmax = series_max(tr->tput, tr->n_tput);
    double pk = pmax >= 2000 ? 1e-3 : 1.0, tk = 1e-3;
    double *x = scaled(tr->t, tr->n, xk), *p = scaled(tr->power_w, tr->n, pk);
    double *tx = scaled(tr->tput_t, tr->n_tput, xk), *ty = scaled(tr->tput, tr->n_tput, tk);
    if (!x || !p || !tx || !ty) goto out;
    double xmax = span * xk, ymax = pmax * pk * 1.12, y2max = tmax > 0 ? tmax * tk * 1.12 : 1;
    char title[400]; /* run (64) and file (256) names whole */
    snprintf(title, sizeof title, "run %s of %s, %d GPU%s", tr->run, tr->file, tr->gpus,
             tr->gpus == 1 ? "" : "s");
    pladv(0);
    /* the left axis (power) through the shared panel; the right axis
     * (throughput) is a second window over the same viewport */
    plvpor(0.08, 0.90, 0.14, 0.88);
    plwind(0, xmax, 0, ymax);
    plcol0(RP_LIGHT);
    plbox("g", 0, 0, "g", 0, 0);
    plcol0(RP_BLACK);
    plbox("bcnst", 0, 0, "bnstv", 0, 0);
    rp_mtex("b", 3.0, 0.5, 0.5, xk < 1 ? "Elapsed time (min)" : "Elapsed time (s)");
    rp_mtex("t", 1.0, 0.5, 0.5, title);
    /* each axis' label in its line's colour: the legend of a two-axis plot */
    rp_cluster_colour(0);
    rp_mtex("l", 5.0, 0.5, 0.5, pk < 1 ? "GPU power, all GPUs (kW)" : "GPU power, all GPUs (W)");
    phases(tr, xk, xmax, ymax);
    rp_cluster_colour(0);
    rp_line(tr->n, x, p, 1, 1.4);
    if (isfinite(tr->top_power_w)) {
        double hx[2] = {tr->start[PFI_PHASE_TRAINING] * xk, xmax},
               hy[2] = {tr->top_power_w * pk, tr->top_power_w * pk};
        rp_line(2, hx, hy, 2, 1.0);
    }
    plwind(0, xmax, 0, y2max);
    plcol0(RP_BLACK);
    plbox("", 0, 0, "cmstv", 0, 0);
    plcol0(TPUT_COLOUR);
    rp_mtex("r", 4.5, 0.5, 0.5, "Throughput (k tokens/s)");
    if (tr->n_tput) {
        rp_line(tr->n_tput, tx, ty, 1, 1.4);
        if (isfinite(tr->top_tput)) {
            double hx[2] = {tr->start[PFI_PHASE_TRAINING] * xk, xmax},
                   hy[2] = {tr->top_tput * tk, tr->top_tput * tk};
            rp_line(2, hx, hy, 2, 1.0);
        }
    } else {
        rp_text(0.5, 0.5, 0.5, 0.8, "no step log: throughput not drawn");
    }
out:
    free(x);
    free(p);
    free(tx);
    free(ty);
}
