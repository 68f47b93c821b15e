/* See page.h. Figures go into the page as base64 data: URIs of their SVG,
 * so the page is one file that fetches nothing. */
#include "page.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "figures.h"
#include "pfi/base64.h"
#include "pfi/fileio.h"
#include "pfi/json.h"

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

static const char *css =
    "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;max-width:1320px;margin:0 auto;"
    "padding:16px 28px;color:#222;line-height:1.45}"
    "h1{font-size:26px;margin:8px 0 2px}h2{font-size:20px;border-bottom:1px solid #ccc;"
    "padding-bottom:4px;margin-top:34px}h3{font-size:16px;margin:22px 0 6px}"
    ".sub{color:#555;margin:0 0 14px}"
    ".summary{background:#f4f7fb;border:1px solid #d5dde8;border-radius:6px;padding:10px 18px}"
    ".summary li{margin:3px 0}.note{color:#8a5a00;background:#fff7e6;border-left:4px solid "
    "#e69f00;padding:6px 10px;margin:6px 0}"
    "figure{margin:14px 0 22px}figure img{width:100%;height:auto;border:1px solid #e3e3e3}"
    "figcaption{font-size:14px;color:#444;margin-top:4px}"
    "table{border-collapse:collapse;font-size:13px;margin:6px 0 4px}"
    "th,td{border:1px solid #ddd;padding:3px 7px;text-align:right;white-space:nowrap}"
    "th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}"
    "td.paper,th.paper{background:#f3f0fa}td.diff,th.diff{background:#fbf7ee}"
    ".tnote{font-size:13px;color:#555;max-width:1100px}"
    ".scroll{overflow-x:auto;max-width:100%;border:1px solid #eee}"
    ".toc{background:#fafafa;border:1px solid #e3e3e3;border-radius:6px;padding:6px 18px;"
    "font-size:14px;margin:12px 0}.toc ol{margin:4px 0;padding-left:22px}.toc li{margin:2px 0}"
    "code{background:#f2f2f2;padding:0 3px}";

static const rp_table *find_table(const rp_page *p, const char *id)
{
    for (size_t i = 0; i < p->tables->n; i++)
        if (strcmp(p->tables->t[i].id, id) == 0) return &p->tables->t[i];
    return NULL;
}

static void table_html(FILE *f, const rp_table *t)
{
    if (!t) return;
    fprintf(f, "<h3 id=\"%s\">", t->id);
    html_text(f, t->title);
    fprintf(
        f, " <small>(<code>tables/%s.csv</code>)</small></h3>\n<div class=\"scroll\"><table>\n<tr>",
        t->id);
    for (size_t c = 0; c < t->ncol; c++) {
        const char *h = t->head[c];
        fprintf(f, "<th%s>",
                strncmp(h, "paper_", 6) == 0  ? " class=\"paper\""
                : strncmp(h, "diff_", 5) == 0 ? " class=\"diff\""
                                              : "");
        html_text(f, h);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t r = 0; r < t->nrow; r++) {
        fputs("<tr>", f);
        for (size_t c = 0; c < t->ncol; c++) {
            const char *h = t->head[c];
            fprintf(f, "<td%s>",
                    strncmp(h, "paper_", 6) == 0  ? " class=\"paper\""
                    : strncmp(h, "diff_", 5) == 0 ? " class=\"diff\""
                                                  : "");
            html_text(f, t->cell[r * t->ncol + c]);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
    if (t->note[0]) {
        fputs("<p class=\"tnote\">", f);
        html_text(f, t->note);
        fputs("</p>\n", f);
    }
}

static void figure_html(FILE *f, const rp_page *p, pfi_plot_kind k)
{
    const rp_figure *fg = rp_figure_of(k);
    const char *why = "";
    if (!p->fig_ok[k]) {
        if (!rp_figure_available(k, p->d, &why) && fg->quiet) return;
        fputs("<p class=\"note\">", f);
        html_text(f, fg->title);
        fputs(" is not drawn: ", f);
        html_text(f, why && *why ? why : "it could not be drawn");
        fputs(".</p>\n", f);
        return;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/figures/%s.svg", p->dir, fg->name);
    char *buf = NULL;
    size_t len = 0;
    if (pfi_file_read_all(path, &buf, &len, NULL) != PFI_OK) return;
    /* no wider than drawn: a small figure (Fig. 9's one panel) stays its size */
    fprintf(f, "<figure id=\"%s\"><img style=\"max-width:%dpx\" alt=\"", fg->name, fg->w);
    html_text(f, fg->title);
    fputs("\" src=\"data:image/svg+xml;base64,", f);
    char *b64 = pfi_base64_encode((const unsigned char *)buf, len);
    if (b64) fputs(b64, f);
    free(b64);
    fputs("\"><figcaption><b>", f);
    html_text(f, fg->title);
    fputs(".</b> ", f);
    html_text(f, fg->caption);
    fprintf(f,
            " Files: <code>figures/%s.svg</code>, <code>.png</code>, "
            "<code>.pdf</code>.</figcaption></figure>\n",
            fg->name);
    free(buf);
}

/* ---- the headline numbers, shared by the page's summary and summary.json ---- */

typedef struct headline {
    int has_pfi;
    double lo, hi;
    const char *lo_name, *hi_name;
    size_t n_defined;
} headline;

static headline headline_of(const rd_data *d)
{
    headline h = {0};
    for (size_t i = 0; i < d->ng; i++) {
        const rd_group *r = &d->grp[i];
        if (!r->idx.has_pfi) continue;
        if (!h.has_pfi || r->idx.pfi < h.lo) h.lo = r->idx.pfi, h.lo_name = r->g->name;
        if (!h.has_pfi || r->idx.pfi > h.hi) h.hi = r->idx.pfi, h.hi_name = r->g->name;
        h.has_pfi = 1;
        h.n_defined++;
    }
    return h;
}

static const int policy_order[] = {PFI_POLICY_EQUAL,     PFI_POLICY_PFI, PFI_POLICY_MOE_FT,
                                   PFI_POLICY_DRAM_COPY, PFI_SIM_LEARN,  PFI_POLICY_ORACLE};
#define N_ORDER (sizeof policy_order / sizeof policy_order[0])

/* keeps: share of the uncapped cluster's throughput at 30% */
static double keeps(const pfi_sim_result *r, int p)
{
    double base = r->cells[PFI_POLICY_ORACLE].tput_per_job;
    return 100 * r->cells[RD_R30 * PFI_SIM_NPOLICIES + p].tput_per_job / base;
}

static void summary_html(FILE *f, const rp_page *p)
{
    const rd_data *d = p->d;
    headline h = headline_of(d);
    fputs("<div class=\"summary\"><ul>\n", f);
    if (h.has_pfi) {
        fprintf(f, "<li><b>PFI</b> ranges from %.2f (", h.lo);
        html_text(f, h.lo_name);
        fprintf(f, ") to %.2f (", h.hi);
        html_text(f, h.hi_name);
        fprintf(f, ") over %zu sweep groups.</li>\n", h.n_defined);
    }
    if (d->has_regimes) {
        fputs("<li><b>Regime medians</b>: ", f);
        for (size_t j = 0; j < d->regimes.k; j++)
            fprintf(f, "%s%s %.2f (n = %zu)", j ? ", " : "", d->regimes.name[j],
                    d->regimes.median[j], d->regimes.n[j]);
        if (d->regimes.test_rc == PFI_OK)
            fprintf(f, "; Kruskal-Wallis H = %.2f, p = %.4f", d->regimes.kw.H, d->regimes.kw.p);
        fputs(".</li>\n", f);
    }
    if (d->has_tm && d->best_set >= 0) {
        const pfi_ablation *a = &d->ab[d->best_set];
        fputs("<li><b>Best predictor</b> (leave-one-cluster-out R&sup2;): <code>", f);
        html_text(f, a->set.name);
        fprintf(f, "</code>, LOCO R&sup2; %.2f, ", a->loco.cv.r2_oos);
        if (a->loo.rc == PFI_OK)
            fprintf(f, "LOO R&sup2; %.2f", a->loo.cv.r2_oos);
        else {
            fputs("LOO R&sup2; undefined (", f);
            html_text(f, a->loo.msg);
            fputs(")", f);
        }
        fprintf(f, ", in-sample R&sup2; %.2f.</li>\n", a->ols.r2);
    }
    for (int mix = 0; mix < 2; mix++) {
        if (!d->has_sim[mix]) continue;
        const pfi_sim_result *r = &d->sim[mix];
        fprintf(f,
                "<li><b>At a 30%% power cut</b> (%s mix, %zu workloads of %zu jobs), the "
                "share of the uncapped throughput each policy keeps: ",
                mix ? "production" : "random", d->workloads, d->jobs);
        for (size_t q = 0; q < N_ORDER; q++) {
            const pfi_sim_cell *c = &r->cells[RD_R30 * PFI_SIM_NPOLICIES + policy_order[q]];
            if (!c->ran) continue;
            fprintf(f, "%s%s %.1f%%", q ? ", " : "", pfi_sim_policy_name(policy_order[q]),
                    keeps(r, policy_order[q]));
            if (c->has_recovered && policy_order[q] != PFI_POLICY_EQUAL &&
                policy_order[q] != PFI_POLICY_ORACLE)
                fprintf(f, " (closes %.0f%% of equal's gap)", 100 * c->gap_recovered);
        }
        fputs(".</li>\n", f);
    }
    fputs("</ul></div>\n", f);
}

/* The page's sections: each a list of figures (fig >= 0) and tables (by id). */
typedef struct item {
    int fig; /* pfi_plot_kind, or -1 for a table */
    const char *id;
} item;
#define FIG(k)                                                                                     \
    {                                                                                              \
        k, #k                                                                                      \
    }
#define TAB(id)                                                                                    \
    {                                                                                              \
        -1, id                                                                                     \
    }
static const struct {
    const char *title;
    item items[10];
} sections[] = {
    {"The Power Flexibility Index of each job",
     {FIG(PFI_PLOT_TRACE),
      FIG(PFI_PLOT_CURVES),
      FIG(PFI_PLOT_PFI),
      TAB("table6_pfi"),
      FIG(PFI_PLOT_GROUPS),
      FIG(PFI_PLOT_GROUPS2),
      FIG(PFI_PLOT_GROUPS3),
      {0, 0}}},
    {"Definitions, the cap grid and the GPU generation",
     {FIG(PFI_PLOT_CE),
      FIG(PFI_PLOT_CE_GROUPS),
      FIG(PFI_PLOT_DEFINITIONS),
      TAB("table9_grid"),
      TAB("table8_generations"),
      {0, 0}}},
    {"PFI by regime", {TAB("table10_regimes"), TAB("table11_dunn"), {0, 0}}},
    {"Predicting PFI from telemetry",
     {FIG(PFI_PLOT_FEATURES),
      TAB("fig5_correlations"),
      TAB("table3_ablation"),
      FIG(PFI_PLOT_PREDICTED),
      TAB("table7_heldout"),
      TAB("table12_leverage"),
      TAB("table13_subgroups"),
      {0, 0}}},
    {"Why: the SM clock under a cap", {FIG(PFI_PLOT_CLOCKS), {0, 0}}},
    {"Allocating a power cut", {FIG(PFI_PLOT_GAP), TAB("fig8_simulation"), {0, 0}}},
    {"Where this report differs from the paper", {TAB("differences"), {0, 0}}},
};
#define N_SECTIONS (sizeof sections / sizeof sections[0])

static const char *item_anchor(const item *it)
{
    return it->fig >= 0 ? rp_figure_of((pfi_plot_kind)it->fig)->name : it->id;
}

/* "Fig. 3" or "Table 6": the title up to its colon; NULL when the page
 * has no such figure or table. */
static const char *item_label(const rp_page *p, const item *it)
{
    static char buf[64];
    const char *t;
    if (it->fig >= 0) {
        if (!p->fig_ok[it->fig]) return NULL;
        t = rp_figure_of((pfi_plot_kind)it->fig)->title;
    } else {
        const rp_table *tb = find_table(p, it->id);
        if (!tb) return NULL;
        t = tb->title;
    }
    const char *colon = strchr(t, ':');
    if (!colon) return "table"; /* the section's title says what */
    snprintf(buf, sizeof buf, "%.*s%s", (int)(colon - t), t,
             it->fig < 0 && strncmp(t, "Fig", 3) == 0 ? " table" : "");
    return buf;
}

int rp_page_write_html(FILE *f, void *ctx)
{
    const rp_page *p = ctx;
    const rd_data *d = p->d;
    const pfi_report_opts *o = p->o;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n", f);
    fputs("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", f);
    html_text(f, o->title ? o->title : "pfi report");
    fprintf(f, "</title>\n<style>%s</style></head><body>\n<h1>", css);
    html_text(f, o->title ? o->title : "pfi report");
    fputs("</h1>\n<p class=\"sub\">Sweeps <code>", f);
    html_text(f, o->sweeps);
    fputs("</code>", f);
    if (o->telemetry) {
        fputs(", telemetry <code>", f);
        html_text(f, o->telemetry);
        fputs("</code>", f);
    }
    if (o->heldout) {
        fputs(", held-out <code>", f);
        html_text(f, o->heldout);
        fputs("</code>", f);
    }
    char held[48] = "";
    if (d->nh)
        snprintf(held, sizeof held, " and %zu held-out group%s", d->nh, d->nh > 1 ? "s" : "");
    fprintf(
        f, ". %zu groups%s. Made by <code>pfi report</code> " PFI_VERSION ".%s</p>\n", d->ng, held,
        d->paper ? " Groups named as the paper's: the columns <span class=\"paper\">paper_*</span>"
                   " hold its published values and diff_* ours minus them."
                 : "");
    summary_html(f, p);
    for (size_t i = 0; i < d->n_notes; i++) {
        fputs("<p class=\"note\">", f);
        html_text(f, d->notes[i]);
        fputs("</p>\n", f);
    }
    /* the table of contents first, then the sections in the same order */
    fputs("<nav class=\"toc\"><b>Contents</b><ol>\n", f);
    for (size_t i = 0; i < N_SECTIONS; i++) {
        fprintf(f, "<li><a href=\"#sec%zu\">", i + 1);
        html_text(f, sections[i].title);
        fputs("</a>", f);
        const char *sep = ": ";
        for (const item *it = sections[i].items; it->id; it++) {
            const char *label = item_label(p, it);
            if (!label) continue;
            fprintf(f, "%s<a href=\"#%s\">", sep, item_anchor(it));
            html_text(f, label);
            fputs("</a>", f);
            sep = ", ";
        }
        fputs("</li>\n", f);
    }
    fputs("</ol></nav>\n", f);
    for (size_t i = 0; i < N_SECTIONS; i++) {
        fprintf(f, "<h2 id=\"sec%zu\">%zu. ", i + 1, i + 1);
        html_text(f, sections[i].title);
        fputs("</h2>\n", f);
        for (const item *it = sections[i].items; it->id; it++) {
            if (it->fig >= 0)
                figure_html(f, p, (pfi_plot_kind)it->fig);
            else
                table_html(f, find_table(p, it->id));
        }
    }
    fputs("</body></html>\n", f);
    return ferror(f) ? PFI_EIO : PFI_OK;
}

static json_t *num_or_null(int has, double v)
{
    return has ? pfi_json_num(v) : json_null();
}

int rp_page_write_summary(FILE *f, void *ctx)
{
    const rp_page *p = ctx;
    const rd_data *d = p->d;
    headline h = headline_of(d);
    json_t *root = json_object();
    pfi_json_set(root, "groups", json_integer((json_int_t)d->ng));
    pfi_json_set(root, "heldout_groups", json_integer((json_int_t)d->nh));
    json_t *pf = json_object();
    pfi_json_set(pf, "n_defined", json_integer((json_int_t)h.n_defined));
    pfi_json_set(pf, "min", num_or_null(h.has_pfi, h.lo));
    pfi_json_set(pf, "min_group", h.has_pfi ? json_string(h.lo_name) : json_null());
    pfi_json_set(pf, "max", num_or_null(h.has_pfi, h.hi));
    pfi_json_set(pf, "max_group", h.has_pfi ? json_string(h.hi_name) : json_null());
    pfi_json_set(root, "pfi", pf);
    if (d->has_regimes) {
        json_t *arr = json_array();
        for (size_t j = 0; j < d->regimes.k; j++) {
            json_t *o = json_object();
            pfi_json_set(o, "name", json_string(d->regimes.name[j]));
            pfi_json_set(o, "n", json_integer((json_int_t)d->regimes.n[j]));
            pfi_json_set(o, "median", pfi_json_num(d->regimes.median[j]));
            pfi_json_set(o, "mean", pfi_json_num(d->regimes.mean[j]));
            json_array_append_new(arr, o);
        }
        pfi_json_set(root, "regimes", arr);
        if (d->regimes.test_rc == PFI_OK) {
            json_t *kw = json_object();
            pfi_json_set(kw, "H", pfi_json_num(d->regimes.kw.H));
            pfi_json_set(kw, "df", json_integer(d->regimes.kw.df));
            pfi_json_set(kw, "p", pfi_json_num(d->regimes.kw.p));
            pfi_json_set(root, "kruskal", kw);
        }
    }
    if (d->other) {
        json_t *g = json_object();
        pfi_json_set(g, "pairs", json_integer((json_int_t)d->npairs));
        pfi_json_set(g, "rho", num_or_null(d->has_match_stats, d->match_rho));
        pfi_json_set(g, "max_abs_diff", num_or_null(d->has_match_stats, d->match_max_abs));
        pfi_json_set(g, "median_rel_diff", num_or_null(d->has_match_stats, d->match_median_rel));
        pfi_json_set(root, "generations", g);
    }
    if (d->trace.has) { /* Fig. 2's run, in pfi trace --json's words */
        const rd_trace *tr = &d->trace;
        json_t *t = json_object(), *ph = json_object();
        pfi_json_set(t, "file", json_string(tr->file));
        pfi_json_set(t, "run", json_string(tr->run));
        pfi_json_set(t, "gpus", json_integer(tr->gpus));
        for (int k = 0; k < PFI_PHASE_COUNT; k++)
            pfi_json_set(ph, pfi_trace_phase_name((pfi_phase)k),
                         num_or_null(isfinite(tr->start[k]), tr->start[k]));
        pfi_json_set(t, "phases_s", ph);
        /* the drawn series' extent: what the figure's axes are scaled to */
        double pk = 0;
        for (size_t i = 0; i < tr->n; i++)
            pk = fmax(pk, tr->power_w[i]);
        pfi_json_set(t, "samples", json_integer((json_int_t)tr->n));
        pfi_json_set(t, "peak_power_w", pfi_json_num(pk));
        pfi_json_set(t, "throughput_reports", json_integer((json_int_t)tr->n_tput));
        pfi_json_set(t, "power_w", num_or_null(isfinite(tr->top_power_w), tr->top_power_w));
        pfi_json_set(t, "throughput_tok_s", num_or_null(isfinite(tr->top_tput), tr->top_tput));
        pfi_json_set(root, "trace", t);
    }
    if (d->has_tm && d->best_set >= 0) {
        const pfi_ablation *a = &d->ab[d->best_set];
        json_t *b = json_object();
        pfi_json_set(b, "predictors", json_string(a->set.name));
        pfi_json_set(b, "criterion", json_string("highest LOCO R2"));
        pfi_json_set(b, "loco_r2", pfi_json_num(a->loco.cv.r2_oos));
        pfi_json_set(b, "loo_r2", num_or_null(a->loo.rc == PFI_OK, a->loo.cv.r2_oos));
        pfi_json_set(b, "r2_in", pfi_json_num(a->ols.r2));
        pfi_json_set(root, "best_predictor", b);
    }
    if (d->has_sim[0] || d->has_sim[1]) {
        json_t *sim = json_object();
        pfi_json_set(sim, "workloads", json_integer((json_int_t)d->workloads));
        pfi_json_set(sim, "jobs", json_integer((json_int_t)d->jobs));
        pfi_json_set(sim, "reduction", pfi_json_num(rd_reductions[RD_R30]));
        for (int mix = 0; mix < 2; mix++) {
            if (!d->has_sim[mix]) continue;
            const pfi_sim_result *r = &d->sim[mix];
            json_t *m = json_object();
            for (size_t q = 0; q < N_ORDER; q++) {
                const pfi_sim_cell *c = &r->cells[RD_R30 * PFI_SIM_NPOLICIES + policy_order[q]];
                if (!c->ran) continue;
                json_t *o = json_object();
                pfi_json_set(o, "tput_tok_s_per_job", pfi_json_num(c->tput_per_job));
                pfi_json_set(o, "keeps_pct", pfi_json_num(keeps(r, policy_order[q])));
                pfi_json_set(o, "gap_tok_s_per_job", pfi_json_num(c->gap_per_job));
                pfi_json_set(o, "gap_recovered", num_or_null(c->has_recovered, c->gap_recovered));
                pfi_json_set(m, pfi_sim_policy_name(policy_order[q]), o);
            }
            pfi_json_set(sim, mix ? "production" : "random", m);
        }
        pfi_json_set(root, "at_30pct", sim);
    }
    json_t *figs = json_array(), *tabs = json_array(), *notes = json_array();
    for (int k = 0; k < PFI_PLOT_COUNT; k++)
        if (p->fig_ok[k]) json_array_append_new(figs, json_string(rp_figure_of(k)->name));
    for (size_t i = 0; i < p->tables->n; i++)
        json_array_append_new(tabs, json_string(p->tables->t[i].id));
    for (size_t i = 0; i < d->n_notes; i++)
        json_array_append_new(notes, json_string(d->notes[i]));
    pfi_json_set(root, "figures", figs);
    pfi_json_set(root, "tables", tabs);
    pfi_json_set(root, "notes", notes);
    int rc = pfi_json_print(f, root) == 0 ? PFI_OK : PFI_EIO;
    json_decref(root);
    return rc;
}
