/* Figures through PLplot (cairo drivers): one figure to one file, with the
 * report's style: white page, arch x task coded by one colour and one marker
 * everywhere, policies by one colour each. Private to src/report.
 * PLplot keeps global state: draw one figure at a time, from one thread. */
#ifndef PFI_REPORT_PLOT_H
#define PFI_REPORT_PLOT_H

#include <stddef.h>

#include "pfi/error.h"

typedef void (*rp_draw_fn)(void *ctx);

/* Renders draw() into path; the format follows the suffix (.svg: svgcairo,
 * .png: pngcairo, .pdf: pdfcairo). w x h pixels (points for PDF). Written to
 * a temporary name and renamed: never half a file. */
int rp_render(const char *path, int w, int h, rp_draw_fn draw, void *ctx, pfi_error *err);
/* Every text the last rp_render drew (titles, labels, legend entries, texts
 * placed with rp_mtex or rp_text), one a line; valid until the next render. */
const char *rp_texts(void);
/* plmtex, with the text kept for rp_texts. */
void rp_mtex(const char *side, double disp, double pos, double just, const char *text);
/* 1 when the suffix names a format rp_render draws. */
int rp_format_known(const char *path);

/* Colours of cmap0. */
enum { RP_BLACK = 1, RP_GREY = 2, RP_LIGHT = 3, RP_CLUSTER0 = 4, RP_POLICY0 = 8 };

void rp_cluster_colour(int cluster);
const char *rp_cluster_glyph(int cluster); /* a filled marker, UTF-8 */
const char *rp_cluster_label(int cluster); /* "Dense PT", ... */
void rp_policy_colour(int policy);         /* PFI_SIM_* policies */
const char *rp_policy_label(int policy);

/* A panel in viewport fractions (x0, x1, y0, y1) with world ranges, a box,
 * a light grid, labels and a title. logx/logy: the range is in log10 and the
 * axis is drawn logarithmic. */
void rp_panel(double x0, double x1, double y0, double y1, double wx0, double wx1, double wy0,
              double wy1, int logx, int logy, const char *xlabel, const char *ylabel,
              const char *title);
/* Tick steps for the next panel only (0: chosen from the range). */
void rp_next_ticks(double xt, double yt);
/* The same with a y axis from 0 that counts things: whole-number ticks. */
void rp_panel_counts(double x0, double x1, double y0, double y1, double wx0, double wx1, double wy1,
                     const char *xlabel, const char *ylabel, const char *title);
/* Points of one cluster (its colour and marker). */
void rp_points(int cluster, size_t n, const double *x, const double *y);
/* A line in the current colour; style 1 solid, 2 dashed. */
void rp_line(size_t n, const double *x, const double *y, int style, double width);
/* A legend outside the current panel's right edge: n entries with colours,
 * markers (NULL for a line entry) and texts. */
void rp_legend(size_t n, const int *colours, const char *const *glyphs, const char *const *labels);
/* rp_legend with line styles (1 solid, 2 dashed; NULL: all solid), placed
 * outside the panel's right edge (row 0) or as one row across the top of
 * the current viewport (row 1). */
void rp_legend_ex(size_t n, const int *colours, const char *const *glyphs, const int *styles,
                  const char *const *labels, int row);
/* The segment (x[0], y[0])-(x[1], y[1]) clipped to the current window:
 * PLplot's cairo drivers draw outside the box otherwise. */
void rp_line_clipped(const double *x, const double *y, int style, double width);
/* The legend of the four arch x task clusters (those with present[c] set). */
void rp_legend_clusters(const int present[4]);
/* Text in viewport fractions of the current panel, justification 0..1. */
void rp_text(double fx, double fy, double just, double scale, const char *s);

/* Padded range of n values into lo/hi (equal values get a +-0.5 pad). */
void rp_range(size_t n, const double *v, double pad, double *lo, double *hi);

#endif
