/* Draw functions and helpers shared by figures.c and figures_defs.c (each
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

void rp_draw_ce(void *ctx);          /* Fig. 9 */
void rp_draw_definitions(void *ctx); /* Fig. 10 */
void rp_draw_groups(void *ctx);      /* Figs. 11-13 */

#endif
