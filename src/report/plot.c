/* See plot.h. */
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <plplot.h>

#include "pfi/analysis.h"
#include "pfi/sim.h"

/* Okabe-Ito colours: distinguishable with the common colour-vision deficiencies. */
static const unsigned char cluster_rgb[4][3] = {
    {0, 114, 178},  /* dense-pt: blue */
    {86, 180, 233}, /* dense-ft: sky blue */
    {213, 94, 0},   /* moe-pt: vermillion */
    {230, 159, 0},  /* moe-ft: orange */
};
static const char *const cluster_glyph[4] = {"●", "■", "▲", "◆"};
static const char *const cluster_label[4] = {"Dense PT", "Dense FT", "MoE PT", "MoE FT"};

/* equal, pfi, moe-ft, dram-copy, oracle, learn */
static const unsigned char policy_rgb[PFI_SIM_NPOLICIES][3] = {
    {120, 120, 120}, {0, 158, 115}, {204, 121, 167}, {170, 140, 0}, {0, 0, 0}, {0, 90, 200},
};

static const char *device_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot) return NULL;
    if (strcmp(dot, ".svg") == 0) return "svgcairo";
    if (strcmp(dot, ".png") == 0) return "pngcairo";
    if (strcmp(dot, ".pdf") == 0) return "pdfcairo";
    return NULL;
}

int rp_format_known(const char *path)
{
    return device_of(path) != NULL;
}

static void palette(void)
{
    plscmap0n(16);
    plscolbg(255, 255, 255);
    plscol0(RP_BLACK, 0, 0, 0);
    plscol0(RP_GREY, 110, 110, 110);
    plscol0(RP_LIGHT, 225, 225, 225);
    for (int c = 0; c < 4; c++)
        plscol0(RP_CLUSTER0 + c, cluster_rgb[c][0], cluster_rgb[c][1], cluster_rgb[c][2]);
    for (int p = 0; p < PFI_SIM_NPOLICIES; p++)
        plscol0(RP_POLICY0 + p, policy_rgb[p][0], policy_rgb[p][1], policy_rgb[p][2]);
}

/* The texts of the figure being drawn, one a line: the SVG holds its text as
 * glyph outlines, so this is what tests and readers can search. */
static char *texts;
static size_t texts_len, texts_cap;

static void texts_add(const char *s)
{
    size_t n = strlen(s);
    if (texts_len + n + 2 > texts_cap) {
        size_t cap = texts_cap ? 2 * texts_cap : 1024;
        while (cap < texts_len + n + 2)
            cap *= 2;
        char *t = realloc(texts, cap);
        if (!t) return; /* the log is lost, never the figure */
        texts = t;
        texts_cap = cap;
    }
    memcpy(texts + texts_len, s, n);
    texts_len += n;
    texts[texts_len++] = '\n';
    texts[texts_len] = 0;
}

const char *rp_texts(void)
{
    return texts ? texts : "";
}

void rp_mtex(const char *side, double disp, double pos, double just, const char *text)
{
    texts_add(text);
    plmtex(side, disp, pos, just, text);
}

int rp_render(const char *path, int w, int h, rp_draw_fn draw, void *ctx, pfi_error *err)
{
    texts_len = 0;
    if (texts) texts[0] = 0;
    const char *dev = device_of(path);
    if (!dev)
        return pfi_error_set(err, PFI_EINVAL, path, 0,
                             "unknown figure format (want .svg, .png or .pdf)");
    char tmp[4096];
    int len = snprintf(tmp, sizeof tmp, "%s.tmp%ld%s", path, (long)getpid(), strrchr(path, '.'));
    if (len < 0 || (size_t)len >= sizeof tmp)
        return pfi_error_set(err, PFI_EINVAL, path, 0, "path too long");
    /* PLplot exits the process when it cannot open its file: check first */
    FILE *f = fopen(tmp, "wb");
    if (!f) return pfi_error_set(err, PFI_EIO, path, 0, "cannot write: %s", strerror(errno));
    fclose(f);
    plsdev(dev);
    plsfnam(tmp);
    plspage(0, 0, w, h, 0, 0);
    palette();
    plinit();
    plschr(0, 0.78);
    draw(ctx);
    plend1();
    FILE *chk = fopen(tmp, "rb");
    long size = -1;
    if (chk) {
        fseek(chk, 0, SEEK_END);
        size = ftell(chk);
        fclose(chk);
    }
    if (size <= 0) {
        remove(tmp);
        return pfi_error_set(err, PFI_EIO, path, 0, "PLplot wrote nothing");
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return pfi_error_set(err, PFI_EIO, path, 0, "cannot rename: %s", strerror(e));
    }
    return PFI_OK;
}

void rp_cluster_colour(int c)
{
    plcol0(RP_CLUSTER0 + (c & 3));
}
const char *rp_cluster_glyph(int c)
{
    return cluster_glyph[c & 3];
}
const char *rp_cluster_label(int c)
{
    return cluster_label[c & 3];
}
void rp_policy_colour(int p)
{
    plcol0(RP_POLICY0 + (p >= 0 && p < PFI_SIM_NPOLICIES ? p : 0));
}

const char *rp_policy_label(int p)
{
    switch (p) {
    case PFI_POLICY_EQUAL:
        return "equal weight";
    case PFI_POLICY_PFI:
        return "PFI-aware";
    case PFI_POLICY_MOE_FT:
        return "MoE-FT-weighted";
    case PFI_POLICY_DRAM_COPY:
        return "DRAM-copy";
    case PFI_POLICY_ORACLE:
        return "oracle";
    default:
        return "learn (closed loop)";
    }
}

/* A 1, 2 or 5 times 10^k step giving at most `most` intervals over the
 * range, so tick labels never run into each other in small panels. */
static double nice_step(double range, int most)
{
    double raw = range / most, p = pow(10, floor(log10(raw)));
    return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

static double next_xt, next_yt; /* rp_next_ticks */

/* A tick label with as many decimals as its axis' step needs (0.25: two). */
static void step_label(PLINT axis, PLFLT value, char *label, PLINT length, PLPointer data)
{
    const double *steps = data;
    double st = axis == PL_Y_AXIS ? steps[1] : steps[0];
    int dec = 0;
    while (dec < 4 && fabs(st * pow(10, dec) - round(st * pow(10, dec))) > 1e-9)
        dec++;
    if (fabs(value) < 1e-12) value = 0;
    snprintf(label, (size_t)length, "%.*f", dec, value);
}

void rp_next_ticks(double xt, double yt)
{
    next_xt = xt;
    next_yt = yt;
}

/* counts: the y axis counts things, so its ticks are whole numbers */
static void panel(double x0, double x1, double y0, double y1, double wx0, double wx1, double wy0,
                  double wy1, int logx, int logy, int counts, const char *xlabel,
                  const char *ylabel, const char *title)
{
    plvpor(x0, x1, y0, y1);
    plwind(wx0, wx1, wy0, wy1);
    /* plain tick labels up to 6 digits: PLplot's "(x10^-2)" exponent sits
     * above the panel where it is clipped or runs into the title */
    plsxax(6, 0);
    plsyax(6, 0);
    /* about one tick label per 90 points of axis */
    PLFLT mx0, mx1, my0, my1;
    plgspa(&mx0, &mx1, &my0, &my1);
    int nx = (int)((x1 - x0) * (mx1 - mx0) / 18.0), ny = (int)((y1 - y0) * (my1 - my0) / 12.0);
    double xt = logx ? 0 : nice_step(wx1 - wx0, nx < 2 ? 2 : nx > 10 ? 10 : nx);
    double yt = logy ? 0 : nice_step(wy1 - wy0, ny < 2 ? 2 : ny > 10 ? 10 : ny);
    if (counts && yt < 1) yt = 1;
    int forced = next_xt > 0 || next_yt > 0;
    if (next_xt > 0) xt = next_xt;
    if (next_yt > 0) yt = next_yt;
    next_xt = next_yt = 0;
    /* PLplot rounds 0.25 to "0.3": label forced steps at their own precision */
    static double steps[2];
    steps[0] = xt;
    steps[1] = yt;
    if (forced) plslabelfunc(step_label, steps);
    plcol0(RP_LIGHT);
    plwidth(0.5);
    plbox(logx ? "gl" : "g", xt, 0, logy ? "gl" : "g", yt, 0);
    plwidth(1);
    plcol0(RP_BLACK);
    plbox(logx     ? "bcnstl"
          : forced ? "bcnsto"
                   : "bcnst",
          xt, 0,
          logy     ? "bcnstvl"
          : counts ? "bcntv"
          : forced ? "bcnstvo"
                   : "bcnstv",
          yt, 0);
    if (forced) plslabelfunc(NULL, NULL);
    if (xlabel) rp_mtex("b", 3.0, 0.5, 0.5, xlabel);
    if (ylabel) rp_mtex("l", 5.0, 0.5, 0.5, ylabel);
    if (title) rp_mtex("t", 1.0, 0.5, 0.5, title);
}

void rp_panel(double x0, double x1, double y0, double y1, double wx0, double wx1, double wy0,
              double wy1, int logx, int logy, const char *xlabel, const char *ylabel,
              const char *title)
{
    panel(x0, x1, y0, y1, wx0, wx1, wy0, wy1, logx, logy, 0, xlabel, ylabel, title);
}

void rp_panel_counts(double x0, double x1, double y0, double y1, double wx0, double wx1, double wy1,
                     const char *xlabel, const char *ylabel, const char *title)
{
    panel(x0, x1, y0, y1, wx0, wx1, 0, wy1, 0, 0, 1, xlabel, ylabel, title);
}

void rp_points(int cluster, size_t n, const double *x, const double *y)
{
    if (!n) return;
    rp_cluster_colour(cluster);
    PLFLT def, cur;
    plgchr(&def, &cur);
    plschr(0, 0.6 * cur / def); /* markers smaller than text */
    plstring((PLINT)n, x, y, cluster_glyph[cluster & 3]);
    plschr(0, cur / def);
}

void rp_line(size_t n, const double *x, const double *y, int style, double width)
{
    if (n < 2) return;
    pllsty(style == 2 ? 2 : 1);
    plwidth(width);
    plline((PLINT)n, x, y);
    pllsty(1);
    plwidth(1);
}

void rp_legend_ex(size_t n, const int *colours, const char *const *glyphs, const int *styles,
                  const char *const *labels, int row)
{
    if (!n || n > 16) return;
    PLINT opt[16], tc[16], lc[16], ls[16], sc[16], sn[16];
    PLFLT lw[16], ss[16];
    const char *sym[16];
    for (size_t i = 0; i < n; i++) {
        opt[i] = glyphs && glyphs[i] ? PL_LEGEND_SYMBOL : PL_LEGEND_LINE;
        tc[i] = RP_BLACK;
        lc[i] = sc[i] = colours[i];
        ls[i] = styles && styles[i] == 2 ? 2 : 1;
        lw[i] = 2.5;
        ss[i] = 0.6;
        sn[i] = 1;
        sym[i] = glyphs && glyphs[i] ? glyphs[i] : "";
        texts_add(labels[i]);
    }
    PLFLT w, h;
    if (row)
        pllegend(&w, &h, 0, PL_POSITION_INSIDE | PL_POSITION_TOP, 0, 0.0, 0.04, 0, RP_LIGHT, 1, 1,
                 (PLINT)n, (PLINT)n, opt, 0.8, 0.7, 1.8, 0.0, tc, labels, NULL, NULL, NULL, NULL,
                 lc, ls, lw, sc, ss, sn, sym);
    else
        pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
                 PL_POSITION_OUTSIDE | PL_POSITION_RIGHT, 0.02, 0.0, 0.06, 0, RP_LIGHT, 1, (PLINT)n,
                 1, (PLINT)n, opt, 0.8, 0.7, 1.8, 0.0, tc, labels, NULL, NULL, NULL, NULL, lc, ls,
                 lw, sc, ss, sn, sym);
}

void rp_legend(size_t n, const int *colours, const char *const *glyphs, const char *const *labels)
{
    rp_legend_ex(n, colours, glyphs, NULL, labels, 0);
}

void rp_line_clipped(const double *x, const double *y, int style, double width)
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
    rp_line(2, cx, cy, style, width);
}

void rp_legend_clusters(const int present[4])
{
    int col[4];
    const char *gl[4], *tx[4];
    size_t n = 0;
    for (int c = 0; c < 4; c++) {
        if (present && !present[c]) continue;
        col[n] = RP_CLUSTER0 + c;
        gl[n] = cluster_glyph[c];
        tx[n++] = cluster_label[c];
    }
    rp_legend(n, col, gl, tx);
}

void rp_text(double fx, double fy, double just, double scale, const char *s)
{
    PLFLT xmin, xmax, ymin, ymax;
    plgvpw(&xmin, &xmax, &ymin, &ymax);
    PLFLT def, cur;
    plgchr(&def, &cur);
    plschr(0, scale);
    texts_add(s);
    plptex(xmin + fx * (xmax - xmin), ymin + fy * (ymax - ymin), 1, 0, just, s);
    plschr(0, cur / def);
}

void rp_range(size_t n, const double *v, double pad, double *lo, double *hi)
{
    double a = INFINITY, b = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            if (v[i] < a) a = v[i];
            if (v[i] > b) b = v[i];
        }
    if (!(a <= b)) a = 0, b = 1;
    if (b - a < 1e-12) a -= 0.5, b += 0.5;
    double d = (b - a) * pad;
    *lo = a - d;
    *hi = b + d;
}
