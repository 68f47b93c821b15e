/* Draw functions and helpers shared by figures.c and the files of the draw
 * functions: figures_pfi.c, figures_model.c, figures_ce.c, figures_defs.c
 * (each draw function takes the rd_data as ctx, for rp_render). Private to
 * src/report. */
#ifndef PFI_REPORT_FIGURES_DRAW_H
#define PFI_REPORT_FIGURES_DRAW_H

#include "pfi/report.h"
#include "rdata.h"

/* present[c] = 1 for each arch x task cluster among the training groups
 * (and the held-out ones when held). */
void rp_present_clusters(const rd_data *d, int held, int present[4]);
/* The dashed y = x line from lo to hi. */
void rp_diagonal(double lo, double hi);

/* "Dense PT H200x16 (Qwen3-32B, seq8192/bs4)", as the paper's titles. */
void rp_group_title(const rd_group *r, char *t, size_t len);
/* A title of two lines over the box x0..x1, y0..y1 (page fractions): t on
 * top, shrunk to fit about `fit` characters, and sub under it. */
void rp_title2(double x0, double x1, double y0, double y1, const char *t, const char *sub,
               double fit);
/* One pixel of the page as a fraction of its width (*px) and height (*py). */
void rp_pixel(double *px, double *py);

/* Fig. 9's appendix: panels a row for n groups. */
size_t rp_ce_cols(size_t n);
/* Figs. 11-13: the groups (training, then held-out) split as the paper, at
 * most 10 to a figure over at most three figures, in order; the range
 * [*from, *to) of figure part 0, 1 or 2 (empty past the last). */
void rp_groups_part(const rd_data *d, int part, size_t *from, size_t *to);
/* The height in pixels of a figure that grows with its groups (Figs. 9's
 * appendix and 11-13); 0 for the others. */
int rp_figure_rows_height(pfi_plot_kind k, const rd_data *d);

void rp_draw_trace(void *ctx);       /* Fig. 2 (figures_trace.c) */
void rp_draw_curves(void *ctx);      /* Fig. 3 (figures_pfi.c) */
void rp_draw_pfi(void *ctx);         /* Fig. 4 */
void rp_draw_features(void *ctx);    /* Figs. 5/14 (figures_model.c) */
void rp_draw_clocks(void *ctx);      /* Fig. 6 */
void rp_draw_predicted(void *ctx);   /* Fig. 7 */
void rp_draw_gap(void *ctx);         /* Fig. 8 */
void rp_draw_ce(void *ctx);          /* Fig. 9 (figures_ce.c) */
void rp_draw_ce_groups(void *ctx);   /* Fig. 9's appendix */
void rp_draw_definitions(void *ctx); /* Fig. 10 (figures_defs.c) */
void rp_draw_groups1(void *ctx);     /* Fig. 11 */
void rp_draw_groups2(void *ctx);     /* Fig. 12 */
void rp_draw_groups3(void *ctx);     /* Fig. 13 */

#endif
