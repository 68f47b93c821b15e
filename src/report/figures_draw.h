/* Draw functions and helpers shared by figures.c and the files of the draw
 * functions: figures_pfi.c, figures_model.c, figures_defs.c (each
 * draw function takes the rd_data as ctx, for rp_render). Private to
 * src/report. */
#ifndef PFI_REPORT_FIGURES_DRAW_H
#define PFI_REPORT_FIGURES_DRAW_H

#include "rdata.h"

/* present[c] = 1 for each arch x task cluster among the training groups
 * (and the held-out ones when held). */
void rp_present_clusters(const rd_data *d, int held, int present[4]);
/* The dashed y = x line from lo to hi. */
void rp_diagonal(double lo, double hi);
/* Figs. 11-13: pairs of panels a row for n groups (figures_defs.c). */
size_t rp_groups_cols(size_t n);

void rp_draw_trace(void *ctx);       /* Fig. 2 (figures_trace.c) */
void rp_draw_curves(void *ctx);      /* Fig. 3 (figures_pfi.c) */
void rp_draw_pfi(void *ctx);         /* Fig. 4 */
void rp_draw_features(void *ctx);    /* Figs. 5/14 (figures_model.c) */
void rp_draw_clocks(void *ctx);      /* Fig. 6 */
void rp_draw_predicted(void *ctx);   /* Fig. 7 */
void rp_draw_gap(void *ctx);         /* Fig. 8 */
void rp_draw_ce(void *ctx);          /* Fig. 9 (figures_defs.c) */
void rp_draw_definitions(void *ctx); /* Fig. 10 */
void rp_draw_groups(void *ctx);      /* Figs. 11-13 */

#endif
