/* See tables.h. */
#include "tables.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/csv.h"
#include "pfi/features.h"
#include "pfi/stats.h"

/* ---- a table of text cells ---- */

rp_table *rp_table_new(rp_tables *ts, const char *id, const char *title, const char *const *head)
{
    rp_table *t = &ts->t[ts->n < RP_MAX_TABLES ? ts->n++ : RP_MAX_TABLES - 1];
    memset(t, 0, sizeof *t);
    t->id = id;
    snprintf(t->title, sizeof t->title, "%s", title);
    while (head[t->ncol] && t->ncol < RP_MAX_COLS) {
        t->head[t->ncol] = head[t->ncol];
        t->ncol++;
    }
    return t;
}

int rp_cell(rp_table *t, const char *fmt, ...)
{
    if (t->used == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        char **nc = realloc(t->cell, cap * sizeof *nc);
        if (!nc) return PFI_ENOMEM;
        t->cell = nc;
        t->cap = cap;
    }
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!(t->cell[t->used] = strdup(buf))) return PFI_ENOMEM;
    t->nrow = ++t->used / t->ncol;
    return PFI_OK;
}

/* a number with `dec` decimals, or "" when undefined; a difference that
 * rounds to zero reads 0.000, not -0.000 */
void rp_num(rp_table *t, int has, double v, int dec)
{
    if (has && isfinite(v) && fabs(v) < 0.5 * pow(10, -dec)) v = 0;
    if (has && isfinite(v))
        rp_cell(t, "%.*f", dec, v);
    else
        rp_cell(t, "%s", "");
}

void rp_gnum(rp_table *t, int has, double v)
{
    if (has && isfinite(v))
        rp_cell(t, "%.3g", v);
    else
        rp_cell(t, "%s", "");
}

void rp_tables_free(rp_tables *ts)
{
    for (size_t i = 0; i < ts->n; i++) {
        rp_table *t = &ts->t[i];
        for (size_t k = 0; k < t->used; k++)
            free(t->cell[k]);
        free(t->cell);
    }
    memset(ts, 0, sizeof *ts);
}

int rp_table_write_csv(FILE *f, const rp_table *t)
{
    for (size_t c = 0; c < t->ncol; c++) {
        if (c) fputc(',', f);
        pfi_csv_put_field(f, t->head[c]);
    }
    fputc('\n', f);
    for (size_t r = 0; r < t->nrow; r++) {
        for (size_t c = 0; c < t->ncol; c++) {
            if (c) fputc(',', f);
            pfi_csv_put_field(f, t->cell[r * t->ncol + c]);
        }
        fputc('\n', f);
    }
    return ferror(f) ? PFI_EIO : PFI_OK;
}

/* ---- the paper's values and the tables set beside them: tables_paper.c ---- */

static pfi_csv *paper_read(const char *dir, const char *file)
{
    if (!dir) return NULL;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    pfi_csv *c = NULL;
    return pfi_csv_read_file(p, &c, NULL) == PFI_OK ? c : NULL;
}

/* The paper's Spearman rho per feature, read from Figs. 5 and 14 (two
 * decimals as printed; DRAM copy product from Table 13). The PDF's text
 * gives the panels' numbers and labels interleaved: only the features whose
 * panel could be told are here, the others are NaN (empty cells). */
double rp_paper_rho(int f)
{
    switch (f) {
    case PFI_FEAT_SM_ACTIVE:
        return -0.27;
    case PFI_FEAT_TENSOR_ACTIVE:
        return -0.64;
    case PFI_FEAT_DRAM_ACTIVE:
        return 0.54;
    case PFI_FEAT_NVLINK_TX:
    case PFI_FEAT_NVLINK_RX:
        return -0.13;
    case PFI_FEAT_DRAM_COPY_PRODUCT:
        return 0.535;
    case PFI_FEAT_ARITH_INTENSITY:
        return -0.61;
    case PFI_FEAT_TENSOR_SM_RATIO:
        return -0.67;
    case PFI_FEAT_DRAM_SM_RATIO:
        return 0.63;
    case PFI_FEAT_SM_CLOCK:
    case PFI_FEAT_CLOCK_FRAC_BOOST:
        return 0.79;
    default:
        return NAN;
    }
}

static void corr(const rd_data *d, rp_tables *ts)
{
    static const char *const h[] = {"feature",  "label", "n", "rho",   "paper_rho",
                                    "diff_rho", "p",     "q", "stars", "undefined_because",
                                    NULL};
    rp_table *t = rp_table_new(ts, "fig5_correlations",
                               "Fig. 5/14: Spearman rho of each telemetry feature with PFI", h);
    snprintf(t->note, sizeof t->note,
             "Over the training groups; q: Benjamini-Hochberg over the "
             "features with a defined rho; * q < 0.05, ** q < 0.01.%s",
             d->paper ? " paper_rho: the paper's Figs. 5 and 14 (2 decimals; DRAM copy product "
                        "from Table 13), empty where its panel cannot be told from the PDF's "
                        "text."
                      : "");
    for (int f = 0; f < PFI_FEAT_N_TELEMETRY; f++) {
        const pfi_corr *c = &d->corr[f];
        rp_cell(t, "%s", pfi_feature_name(f));
        rp_cell(t, "%s", pfi_feature_label(f));
        rp_cell(t, "%zu", c->n);
        double pr = d->paper ? rp_paper_rho(f) : NAN;
        rp_num(t, c->has, c->rho, 3);
        rp_num(t, isfinite(pr), pr, f == PFI_FEAT_DRAM_COPY_PRODUCT ? 3 : 2);
        rp_num(t, c->has && isfinite(pr), c->rho - pr, 3);
        rp_gnum(t, c->has, c->p);
        rp_gnum(t, c->has, c->q);
        rp_cell(t, "%s", !c->has ? "" : c->q < 0.01 ? "**" : c->q < 0.05 ? "*" : "");
        rp_cell(t, "%s", c->has ? "" : c->why);
    }
}

/* The paper's Tables 12 and 13 (Appendix D.5), as printed. */
static const double paper_t12_rho[6] = {0.535, 0.477, 0.406, 0.321, 0.438, 0.463};
static const char *const paper_t12_dropped[6] = {"",
                                                 "Qwen3-30B-A3B (MoE, fine-tuning, 8 GPU)",
                                                 "gpt-oss-20b (MoE, fine-tuning, 8 GPU)",
                                                 "Qwen3-30B-A3B (MoE, fine-tuning, 16 GPU)",
                                                 "Qwen3-32B (dense, pretraining, 8 GPU)",
                                                 "Llama-3.1-70B (dense, pretraining, 16 GPU)"};
static const struct {
    const char *name;
    size_t n;
    double rho;
} paper_t13[PFI_TABLE13_SUBGROUPS] = {
    {"dense", 14, -0.178}, {"moe", 11, 0.509}, {"all-but-moe-ft", 21, 0.347}, {"all", 25, 0.535}};

static void tables12_13(const rd_data *d, rp_tables *ts)
{
    if (d->has_lev) {
        static const char *const h[] = {"k", "n",       "rho",           "paper_rho", "diff_rho",
                                        "p", "dropped", "paper_dropped", NULL};
        rp_table *t = rp_table_new(
            ts, "table12_leverage",
            "Table 12: DRAM copy product vs PFI as high-leverage groups are dropped", h);
        snprintf(t->note, sizeof t->note,
                 "Spearman rho over the training groups as the k highest-leverage groups (by the "
                 "predictor alone) are dropped in turn.%s",
                 d->paper ? " paper_*: the paper's Table 12 (its drop order names model, arch, "
                            "task and GPUs only)."
                          : "");
        for (size_t k = 0; k <= d->kmax; k++) {
            int hp = d->paper && k < 6;
            rp_cell(t, "%zu", k);
            rp_cell(t, "%zu", d->lev[k].n);
            rp_num(t, d->lev[k].has, d->lev[k].rho, 3);
            rp_num(t, hp, hp ? paper_t12_rho[k] : 0, 3);
            rp_num(t, hp && d->lev[k].has, d->lev[k].rho - (hp ? paper_t12_rho[k] : 0), 3);
            rp_gnum(t, d->lev[k].has, d->lev[k].p);
            rp_cell(t, "%s", k ? d->lev_dropped[k] : "");
            rp_cell(t, "%s", hp ? paper_t12_dropped[k] : "");
        }
    }
    static const char *const h[] = {"subgroup",  "n",        "paper_n", "rho",
                                    "paper_rho", "diff_rho", "p",       NULL};
    rp_table *t = rp_table_new(ts, "table13_subgroups",
                               "Table 13: DRAM copy product vs PFI within subgroups", h);
    snprintf(t->note, sizeof t->note,
             "Spearman rho within each subgroup of the training groups; empty where a subgroup "
             "has fewer than %d groups.%s",
             RD_MIN_RHO,
             d->paper ? " paper_*: the paper's Table 13 (moe: p = 0.11; all: p = 0.006)." : "");
    for (int s = 0; s < PFI_TABLE13_SUBGROUPS; s++) {
        int hp = d->paper && strcmp(paper_t13[s].name, d->sub[s].name) == 0;
        rp_cell(t, "%s", d->sub[s].name);
        rp_cell(t, "%zu", d->sub[s].n);
        if (hp)
            rp_cell(t, "%zu", paper_t13[s].n);
        else
            rp_cell(t, "%s", "");
        rp_num(t, d->sub[s].has, d->sub[s].rho, 3);
        rp_num(t, hp, paper_t13[s].rho, 3);
        rp_num(t, hp && d->sub[s].has, d->sub[s].rho - paper_t13[s].rho, 3);
        rp_gnum(t, d->sub[s].has, d->sub[s].p);
    }
}

/* Sec. 6: "Under a 30% power reduction on the production mix, PFI-aware
 * power allocation recovers ~1.5k tokens/s per job, 63% of the performance
 * gap between an equal-weight allocation and an oracle". */
#define PAPER_F8_RECOVERED 1500
#define PAPER_F8_RECOVERED_PCT 63

static void sim_table(const rd_data *d, rp_tables *ts)
{
    static const char *const h[] = {"mix",
                                    "reduction_pct",
                                    "policy",
                                    "tput_tok_s_per_job",
                                    "keeps_pct_of_uncapped",
                                    "gap_tok_s_per_job",
                                    "recovered_tok_s_per_job",
                                    "gap_recovered_pct",
                                    "paper_recovered_tok_s_per_job",
                                    "paper_gap_recovered_pct",
                                    NULL};
    rp_table *t = rp_table_new(ts, "fig8_simulation", "Fig. 8: the curtailment simulation", h);
    snprintf(t->note, sizeof t->note,
             "%zu workloads of %zu jobs per mix, seed 1. keeps: the policy's throughput as a "
             "share of the uncapped cluster's; gap: the oracle's throughput minus the policy's; "
             "recovered: the share of equal weight's gap the policy closes.%s",
             d->workloads, d->jobs,
             d->paper ? " paper_*: the one cell the paper prints (Sec. 6: production mix, 30%, "
                        "PFI-aware: ~1.5k tokens/s per job, 63% of the gap)."
                      : "");
    for (int mix = 0; mix < 2; mix++) {
        if (!d->has_sim[mix]) continue;
        const pfi_sim_result *r = &d->sim[mix];
        double base = r->cells[PFI_POLICY_ORACLE].tput_per_job; /* reduction 0 */
        for (size_t k = 0; k < r->n_reductions; k++)
            for (int p = 0; p < PFI_SIM_NPOLICIES; p++) {
                const pfi_sim_cell *c = &r->cells[k * PFI_SIM_NPOLICIES + p];
                if (!c->ran) continue;
                rp_cell(t, "%s", mix ? "production" : "random");
                rp_cell(t, "%g", 100 * r->reductions[k]);
                rp_cell(t, "%s", pfi_sim_policy_name(p));
                rp_num(t, 1, c->tput_per_job, 1);
                rp_num(t, base > 0, 100 * c->tput_per_job / base, 1);
                rp_num(t, 1, c->gap_per_job, 1);
                rp_num(t, c->has_recovered, c->recovered_per_job, 1);
                rp_num(t, c->has_recovered, 100 * c->gap_recovered, 1);
                /* the one cell the paper prints (Sec. 6): production, 30%, PFI-aware */
                int hp = d->paper && mix == 1 && p == PFI_POLICY_PFI &&
                         fabs(r->reductions[k] - 0.30) < 1e-9;
                rp_num(t, hp, PAPER_F8_RECOVERED, 0);
                rp_num(t, hp, PAPER_F8_RECOVERED_PCT, 0);
            }
    }
}
int rp_tables_build(const rd_data *d, const char *paper_dir, rp_tables *out, pfi_error *err)
{
    memset(out, 0, sizeof *out);
    rp_paper pp = {0};
    if (d->paper) {
        pp.t6 = paper_read(paper_dir, "table6_headline_pfi.csv");
        pp.t7 = paper_read(paper_dir, "table7_heldout_pfi.csv");
        pp.t8 = paper_read(paper_dir, "table8_h100_vs_h200.csv");
        pp.t9 = paper_read(paper_dir, "table9_grid_sensitivity.csv");
        pp.t3 = paper_read(paper_dir, "table3_predictor_ablation.csv");
        pp.t10 = paper_read(paper_dir, "table10_11_group_tests.csv");
    }
    rp_table6(d, &pp, out);
    rp_table7(d, &pp, out);
    rp_table8(d, &pp, out);
    rp_table9(d, &pp, out);
    rp_tables10_11(d, &pp, d->paper, out);
    if (d->has_tm) {
        rp_table3(d, &pp, out);
        corr(d, out);
        tables12_13(d, out);
    }
    if (d->has_sim[0] || d->has_sim[1]) sim_table(d, out);
    if (d->paper) rp_differences(d, &pp, out);
    pfi_csv_destroy(pp.t6);
    pfi_csv_destroy(pp.t7);
    pfi_csv_destroy(pp.t8);
    pfi_csv_destroy(pp.t9);
    pfi_csv_destroy(pp.t3);
    pfi_csv_destroy(pp.t10);
    /* a failed allocation leaves a row short */
    for (size_t i = 0; i < out->n; i++)
        if (out->t[i].used != out->t[i].nrow * out->t[i].ncol) {
            rp_tables_free(out);
            return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        }
    return PFI_OK;
}
