/* The report's figures: each kind drawn from the computed analysis (rdata.h).
 * Private to src/report. */
#ifndef PFI_REPORT_FIGURES_H
#define PFI_REPORT_FIGURES_H

#include "pfi/report.h"
#include "rdata.h"

typedef struct rp_figure {
    pfi_plot_kind kind;
    const char *name;    /* file base name under figures/, e.g. "fig3_curves" */
    const char *title;   /* "Fig. 3: ..." */
    const char *caption; /* what a reader should see */
    int w, h;            /* default size, pixels; h 0: grows with the groups */
    int quiet;           /* not drawn: the page says nothing (a continuation with nothing left) */
} rp_figure;

const rp_figure *rp_figure_of(pfi_plot_kind k);
/* Whether d has what the kind draws from; when not, why (a sentence). */
int rp_figure_available(pfi_plot_kind k, const rd_data *d, const char **why);
/* Draws the figure of kind k from d into path (rp_render's formats). */
int rp_figure_draw(pfi_plot_kind k, const rd_data *d, const char *path, int w, int h,
                   pfi_error *err);

#endif
