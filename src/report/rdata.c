/* See rdata.h: the report's numbers, computed through core and io. */
#include "rdata.h"

#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/csv.h"
#include "pfi/features.h"
#include "pfi/sim_groups.h"
#include "pfi/sweeps_csv.h"

/* 0 is there so "what a policy keeps" has the uncapped total to divide by. */
const double rd_reductions[] = {0, 0.05, 0.10, 0.20, 0.30, 0.40};
const size_t rd_n_reductions = sizeof rd_reductions / sizeof rd_reductions[0];

void rd_note(rd_data *d, const char *fmt, ...)
{
    if (d->n_notes >= RD_MAX_NOTES) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->notes[d->n_notes++], sizeof d->notes[0], fmt, ap);
    va_end(ap);
}

static int cluster_of(const pfi_group *g)
{
    int moe = strcmp(g->meta.arch, "moe") == 0, ft = strcmp(g->meta.task, "ft") == 0;
    return moe ? (ft ? PFI_CLUSTER_MOE_FT : PFI_CLUSTER_MOE_PT)
               : (ft ? PFI_CLUSTER_DENSE_FT : PFI_CLUSTER_DENSE_PT);
}

static int check_arch_task(const pfi_group *g, const char *file, pfi_error *err)
{
    if ((strcmp(g->meta.arch, "dense") && strcmp(g->meta.arch, "moe")) ||
        (strcmp(g->meta.task, "pt") && strcmp(g->meta.task, "ft")))
        return pfi_error_set(err, PFI_EPARSE, file, g->line,
                             "group '%s': arch/task '%s/%s' is not dense|moe / pt|ft", g->name,
                             g->meta.arch, g->meta.task);
    return PFI_OK;
}

/* A group on a platform without a known TDP: its largest cap may not be its
 * uncapped run, so the caller's --tdp says what uncapped is (core checks the
 * known platforms the same way). tdp_w < 0: not checked (pfi plot). */
static int check_unknown_tdp(const pfi_sweeps *s, const char *file, double tdp_w, pfi_error *err)
{
    for (size_t i = 0; tdp_w >= 0 && s && i < pfi_sweeps_count(s); i++) {
        const pfi_group *g = pfi_sweeps_group(s, i);
        double top = g->runs[g->n_runs - 1].cap_w;
        if (pfi_platform_tdp_w(g->meta.platform) > 0) continue;
        if (tdp_w == 0)
            return pfi_error_set(err, PFI_EINVAL, file, g->line,
                                 "group \"%s\": platform \"%s\" has no TDP pfi knows, so its "
                                 "largest cap (%g W) may not be its uncapped run; pass --tdp W "
                                 "(the GPU's default power limit)",
                                 g->name, g->meta.platform, top);
        if (top < tdp_w - 0.5)
            return pfi_error_set(err, PFI_EINVAL, file, g->line,
                                 "group \"%s\" has no uncapped run: its largest cap is %g W, "
                                 "below the %g W TDP (--tdp)",
                                 g->name, top, tdp_w);
    }
    return PFI_OK;
}

/* Every telemetry column no row has, in one note: the features built on
 * them are left out of Fig. 5/14 and the tables, and a user should learn
 * which columns to add at once, not one run at a time. */
static void tm_missing_note(rd_data *d)
{
    char list[480] = "";
    size_t len = 0, n = 0;
    for (int f = 0; f < PFI_TM_NFIELDS; f++) {
        int any = 0;
        for (size_t i = 0; i < d->tm->n && !any; i++)
            any = (d->tm->rows[i].valid >> f) & 1u;
        if (any) continue;
        n++;
        if (len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "",
                                    pfi_tm_field_name((pfi_tm_field)f));
    }
    if (n)
        rd_note(d,
                "The telemetry has no value in %zu column%s (%s): the features built on them "
                "are left out.",
                n, n > 1 ? "s" : "", list);
}

int rd_load(rd_data *d, const char *sweeps, const char *telemetry, const char *heldout,
            double tdp_w, pfi_error *err)
{
    memset(d, 0, sizeof *d);
    if (!sweeps) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "no sweeps file");
    int rc = pfi_sweeps_read(sweeps, 0, &d->s, err);
    if (rc == PFI_OK && heldout) rc = pfi_sweeps_read(heldout, 0, &d->held, err);
    if (rc == PFI_OK) rc = check_unknown_tdp(d->s, sweeps, tdp_w, err);
    if (rc == PFI_OK) rc = check_unknown_tdp(d->held, heldout, tdp_w, err);
    if (rc == PFI_OK && telemetry) rc = pfi_telemetry_read(telemetry, &d->tm, err);
    if (rc != PFI_OK) return rc;
    size_t ns = pfi_sweeps_count(d->s), nh = d->held ? pfi_sweeps_count(d->held) : 0;
    for (size_t i = 0; i < ns && rc == PFI_OK; i++)
        rc = check_arch_task(pfi_sweeps_group(d->s, i), sweeps, err);
    for (size_t i = 0; i < nh && rc == PFI_OK; i++)
        rc = check_arch_task(pfi_sweeps_group(d->held, i), heldout, err);
    if (rc != PFI_OK) return rc;
    if (d->tm) {
        rc = pfi_analysis_join(d->s, d->held, d->tm, PFI_FEAT_H200_BOOST_MHZ, &d->obs, &d->nobs,
                               err);
        if (rc != PFI_OK) {
            snprintf(err->file, sizeof err->file, "%s", telemetry);
            if (rc == PFI_ENOTFOUND && err->line > 0 && !heldout) {
                size_t len = strlen(err->msg);
                snprintf(err->msg + len, sizeof err->msg - len,
                         " (validation groups: pass their sweeps as HELDOUT.csv)");
            }
            return rc;
        }
        d->has_tm = 1;
        tm_missing_note(d);
    }
    d->ng = ns;
    d->nh = nh;
    d->grp = calloc(ns + nh ? ns + nh : 1, sizeof *d->grp);
    if (!d->grp) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    d->paper = ns > 0;
    for (size_t i = 0; i < ns + nh; i++) {
        rd_group *r = &d->grp[i];
        r->g = i < ns ? pfi_sweeps_group(d->s, i) : pfi_sweeps_group(d->held, i - ns);
        r->held = i >= ns;
        r->cluster = cluster_of(r->g);
        r->paper = pfi_paper_group_find(r->g->name);
        if (i < ns && !r->paper) d->paper = 0;
    }
    if (!telemetry)
        rd_note(d, "No telemetry file: the correlations (Fig. 5/14), the predictor (Table 3, "
                   "Fig. 7), Tables 12-13 and the allocation simulation (Fig. 8) need one and "
                   "are skipped.");
    return PFI_OK;
}

/* Table 9's four-cap grid. */
static const double grid4[] = {200, 500, 600, 700};

static void subgrid4(rd_group *r)
{
    double P[4], T[4];
    size_t m = 0;
    if (r->g->n_runs <= 4) return;
    for (size_t k = 0; k < 4; k++)
        for (size_t j = 0; j < r->g->n_runs; j++)
            if (fabs(r->g->runs[j].cap_w - grid4[k]) < 0.5) {
                P[m] = r->g->runs[j].power_w;
                T[m++] = r->g->runs[j].tput;
            }
    r->has4 = m == 4 && pfi_index_ratio(P, T, 4, NULL, &r->pfi4) == PFI_OK;
}

/* log T = alpha log P + log k over every run (the CE definition's fit). */
static void ce_line(rd_group *r)
{
    if (!r->idx.has_ce) return;
    double mp = 0, mt = 0;
    for (size_t k = 0; k < r->g->n_runs; k++) {
        mp += log(r->g->runs[k].power_w);
        mt += log(r->g->runs[k].tput);
    }
    mp /= (double)r->g->n_runs;
    mt /= (double)r->g->n_runs;
    r->ce_alpha = 1 - r->idx.pfi_ce;
    r->ce_logk = mt - r->ce_alpha * mp;
}

static int has_noise(const pfi_group *g)
{
    for (size_t k = 0; k < g->n_runs; k++)
        if (g->runs[k].power_sem_w > 0 || g->runs[k].tput_sem > 0) return 1;
    return 0;
}

int rd_index(rd_data *d, size_t ci_draws, int threads, pfi_error *err)
{
    size_t n = d->ng + d->nh;
    const pfi_group **gs = calloc(n ? n : 1, sizeof *gs);
    pfi_ci *cis = calloc(n ? n : 1, sizeof *cis);
    int rc = gs && cis ? PFI_OK : pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (size_t i = 0; rc == PFI_OK && i < n; i++) {
        rd_group *r = &d->grp[i];
        gs[i] = r->g;
        if (pfi_index_group(r->g, PFI_METHOD_ALL, NULL, &r->idx) != PFI_OK)
            rc = pfi_error_set(err, PFI_EINVAL, NULL, 0, "group '%s': PFI failed", r->g->name);
        subgrid4(r);
        ce_line(r);
    }
    if (rc == PFI_OK && ci_draws > 0) {
        pfi_ci_opts o = {.draws = ci_draws, .seed = 1, .level = 0.95, .method = PFI_METHOD_RATIO};
        rc = pfi_ci_batch(gs, n, &o, threads, cis);
        if (rc != PFI_OK) pfi_error_set(err, rc, NULL, 0, "confidence intervals failed");
        size_t quiet = 0;
        for (size_t i = 0; rc == PFI_OK && i < n; i++) {
            d->grp[i].ci = cis[i];
            /* no run's noise known: every draw is the point, a CI of zero width */
            if (!has_noise(d->grp[i].g)) {
                d->grp[i].ci.has = 0;
                quiet++;
            }
        }
        if (quiet)
            rd_note(
                d,
                "%zu group%s have no SEM columns (power_sem_w, throughput_sem_tok_s): a 95%% CI "
                "needs each run's noise, so their CI cells are empty.",
                quiet, quiet > 1 ? "s" : "");
    }
    size_t n4 = 0;
    for (size_t i = 0; i < d->ng; i++)
        n4 += d->grp[i].has4 && d->grp[i].idx.has_pfi;
    if (rc == PFI_OK && d->ng && !n4)
        rd_note(d, "Table 9 (the cap grid) needs groups measured at 200, 500, 600 and 700 W and at "
                   "more caps; none is, so it is left out.");
    for (size_t i = 0; rc == PFI_OK && i < d->ng; i++)
        if (!d->grp[i].idx.has_pfi)
            rd_note(d,
                    "Group '%s': no capped run lost throughput, so its PFI is undefined; it "
                    "is left out of the statistics.",
                    d->grp[i].g->name);
    free(gs);
    free(cis);
    return rc;
}

int rd_regimes(rd_data *d, pfi_error *err)
{
    double *x = calloc(d->ng ? d->ng : 1, sizeof *x);
    int *moe = calloc(d->ng ? d->ng : 1, sizeof *moe), *ft = calloc(d->ng ? d->ng : 1, sizeof *ft);
    int rc = x && moe && ft ? PFI_OK : pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    size_t m = 0;
    int small = 0;
    for (size_t i = 0; rc == PFI_OK && i < d->ng; i++) {
        const rd_group *r = &d->grp[i];
        if (!r->idx.has_pfi) continue;
        x[m] = r->idx.pfi;
        moe[m] = r->cluster == PFI_CLUSTER_MOE_PT || r->cluster == PFI_CLUSTER_MOE_FT;
        ft[m++] = r->cluster == PFI_CLUSTER_DENSE_FT || r->cluster == PFI_CLUSTER_MOE_FT;
    }
    if (rc == PFI_OK && m > 0) {
        rc = pfi_regime_stats_compute(x, moe, ft, m, PFI_REGIME_BY_REGIME, &d->regimes);
        if (rc != PFI_OK) pfi_error_set(err, rc, NULL, 0, "group tests failed");
        d->has_regimes = rc == PFI_OK;
        /* a rank test on a regime of one group says nothing about the regime */
        for (size_t j = 0; rc == PFI_OK && d->regimes.test_rc == PFI_OK && j < d->regimes.k; j++)
            if (d->regimes.n[j] < RD_MIN_REGIME) {
                rd_note(d,
                        "Kruskal-Wallis and Dunn tests (Tables 10-11) need at least %d groups in "
                        "every regime and %s has %zu: the medians are shown, no test.",
                        RD_MIN_REGIME, d->regimes.name[j], d->regimes.n[j]);
                d->regimes.test_rc = PFI_EUNDEFINED;
                d->regimes.npairs = 0;
                small = 1;
            }
        if (rc == PFI_OK && !small && d->regimes.test_rc != PFI_OK)
            rd_note(d, "Kruskal-Wallis and Dunn tests (Tables 10-11) are undefined: %s.",
                    d->regimes.test_rc == PFI_ENODATA ? "fewer than two regimes have groups"
                                                      : "every PFI is equal");
    } else if (rc == PFI_OK) {
        rd_note(d, "No group has a defined PFI: the group tests are skipped.");
    }
    free(x);
    free(moe);
    free(ft);
    return rc;
}

static rd_group *find_group(rd_data *d, const char *name)
{
    for (size_t i = 0; i < d->ng + d->nh; i++)
        if (strcmp(d->grp[i].g->name, name) == 0) return &d->grp[i];
    return NULL;
}

/* Fig. 7: LOO predictions of the first Table 3 set for the training groups,
 * the fitted model's for the held-out ones. */
static void predictions(rd_data *d)
{
    const pfi_ablation *a = &d->ab[0];
    size_t n = d->nobs, rows = 0, p = a->set.p;
    if (a->fit_rc != PFI_OK || n == 0) return;
    double *X = malloc(n * p * sizeof *X), *y = malloc(n * sizeof *y),
           *pred = malloc(n * sizeof *pred);
    pfi_cv cv;
    if (X && y && pred && pfi_analysis_matrix(d->obs, n, &a->set, 0, X, y, &rows, NULL) == PFI_OK &&
        pfi_model_cv(X, y, rows, p, NULL, 0, pred, &cv, NULL) == PFI_OK) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (d->obs[i].holdout) continue;
            rd_group *r = find_group(d, d->obs[i].name);
            if (r) {
                r->pred = pred[k];
                r->has_pred = 1;
            }
            k++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!d->obs[i].holdout) continue;
        double x[PFI_MODEL_MAX_P];
        int ok = 1;
        for (size_t j = 0; j < p; j++) {
            ok &= (d->obs[i].f.valid >> a->set.ids[j]) & 1u;
            x[j] = d->obs[i].f.v[a->set.ids[j]];
        }
        rd_group *r = find_group(d, d->obs[i].name);
        if (r && ok) {
            r->pred = pfi_model_predict(&a->ols, x);
            r->has_pred = 1;
        }
    }
    free(X);
    free(y);
    free(pred);
}

int rd_telemetry(rd_data *d, pfi_error *err)
{
    if (!d->has_tm) return PFI_OK;
    if (pfi_analysis_corr(d->obs, d->nobs, d->corr) != PFI_OK)
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "correlations failed");
    size_t few = 0, fewest = SIZE_MAX;
    for (int f = 0; f < PFI_FEAT_N_TELEMETRY; f++)
        if (d->corr[f].has && d->corr[f].n < RD_MIN_RHO) {
            d->corr[f].has = 0;
            snprintf(d->corr[f].why, sizeof d->corr[f].why, "needs at least %d groups, has %zu",
                     RD_MIN_RHO, d->corr[f].n);
            few++;
            if (d->corr[f].n < fewest) fewest = d->corr[f].n;
        }
    if (few)
        rd_note(d,
                "Spearman rho (Fig. 5/14, Tables 12-13) needs at least %d groups (with fewer no "
                "rank correlation can reach p < 0.05); %zu feature%s ha%s only %zu: left empty.",
                RD_MIN_RHO, few, few > 1 ? "s" : "", few > 1 ? "ve" : "s", fewest);
    pfi_feature_set sets[PFI_TABLE3_SETS];
    pfi_analysis_table3_sets(sets);
    d->best_set = -1;
    for (int i = 0; i < PFI_TABLE3_SETS; i++) {
        if (pfi_analysis_ablation(d->obs, d->nobs, &sets[i], &d->ab[i]) != PFI_OK)
            return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "predictor ablation failed");
        const pfi_ablation *a = &d->ab[i];
        if (a->loco.rc == PFI_OK &&
            (d->best_set < 0 || a->loco.cv.r2_oos > d->ab[d->best_set].loco.cv.r2_oos))
            d->best_set = i;
    }
    predictions(d);
    /* Tables 12 and 13 on the DRAM copy product over the training groups, as pfi fit */
    size_t m = 0, n = d->nobs ? d->nobs : 1, *idx = malloc(n * sizeof *idx);
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    int ok = idx && x && y;
    for (size_t i = 0; ok && i < d->nobs; i++) {
        if (d->obs[i].holdout) continue;
        if (!((d->obs[i].f.valid >> PFI_FEAT_DRAM_COPY_PRODUCT) & 1u)) ok = 0;
        idx[m] = i;
        x[m] = d->obs[i].f.v[PFI_FEAT_DRAM_COPY_PRODUCT];
        y[m++] = d->obs[i].pfi;
    }
    d->kmax = m > 8 ? 5 : 0;
    d->has_lev =
        ok && m >= RD_MIN_RHO && pfi_model_leverage_drop(x, y, m, d->kmax, d->lev, NULL) == PFI_OK;
    for (size_t k = 1; d->has_lev && k <= d->kmax; k++)
        d->lev_dropped[k] = d->obs[idx[d->lev[k].dropped]].name;
    if (!d->has_lev)
        rd_note(d,
                ok && m < RD_MIN_RHO
                    ? "Table 12 (leverage) needs at least %d training groups, these are %zu."
                    : "Table 12 (leverage) is undefined on these groups (%d needed, %zu given).",
                RD_MIN_RHO, m);
    pfi_analysis_subgroups(d->obs, d->nobs, PFI_FEAT_DRAM_COPY_PRODUCT, d->sub);
    for (int k = 0; k < PFI_TABLE13_SUBGROUPS; k++)
        if (d->sub[k].n < RD_MIN_RHO) d->sub[k].has = 0;
    free(idx);
    free(x);
    free(y);
    return PFI_OK;
}

/* Both mixes on one bar: the random mix is the first half. */
typedef struct two_mixes {
    void (*fn)(void *, size_t, size_t);
    void *ctx;
    size_t mix;
} two_mixes;

static void mix_progress(void *ctx, size_t done, size_t total)
{
    two_mixes *t = ctx;
    if (t->fn) t->fn(t->ctx, t->mix * total + done, 2 * total);
}

int rd_simulate(rd_data *d, size_t workloads, int threads, void (*progress)(void *, size_t, size_t),
                void *ctx, pfi_error *err)
{
    if (!d->has_tm) return PFI_OK;
    pfi_feature_set sets[PFI_TABLE3_SETS];
    pfi_analysis_table3_sets(sets);
    pfi_ols m;
    pfi_sim_groups sg;
    pfi_error e = {0};
    if (pfi_sim_groups_build(d->s, d->obs, d->nobs, &sets[0], &m, &sg, &e) != PFI_OK) {
        rd_note(d, "The allocation simulation (Fig. 8) is skipped: %s.", e.msg);
        return PFI_OK;
    }
    pfi_sim_opts o = pfi_sim_defaults();
    o.workloads = d->workloads = workloads;
    d->jobs = o.jobs;
    o.reductions = rd_reductions;
    o.n_reductions = rd_n_reductions;
    o.threads = threads;
    two_mixes tm = {progress, ctx, 0};
    o.progress = mix_progress;
    o.progress_ctx = &tm;
    for (int mix = 0; mix < 2; mix++) {
        o.mix = mix ? PFI_SIM_PRODUCTION : PFI_SIM_RANDOM;
        tm.mix = (size_t)mix;
        if (pfi_sim_run(sg.g, sg.n, &o, &d->sim[mix], &e) == PFI_OK)
            d->has_sim[mix] = 1;
        else
            rd_note(d, "The %s mix of the simulation is skipped: %s.", pfi_sim_mix_name(o.mix),
                    e.msg);
    }
    pfi_sim_groups_free(&sg);
    (void)err;
    return PFI_OK;
}

static const char *const probe_loads[] = {"gemm", "stream", "dense_train", "moe_train"};

int rd_probe(rd_data *d, const char *dir, pfi_error *err)
{
    if (!dir) {
        rd_note(d, "No H200 probe folder: Fig. 6 shows the GPU model only.");
        return PFI_OK;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    pfi_csv *c = NULL;
    pfi_error e = {0};
    static const char *const need[] = {"phase", "sm_clock", "mem_clock", NULL};
    int rc = pfi_csv_read_file(path, &c, &e);
    if (rc == PFI_OK) rc = pfi_csv_require(c, need, &e);
    if (rc != PFI_OK) {
        pfi_csv_destroy(c);
        rd_note(d, "The H200 probe is not used in Fig. 6: %s: %s.", path, e.msg);
        return PFI_OK;
    }
    size_t ph = (size_t)pfi_csv_col(c, "phase"), sm = (size_t)pfi_csv_col(c, "sm_clock"),
           mem = (size_t)pfi_csv_col(c, "mem_clock");
    for (size_t l = 0; l < 4; l++) {
        double s = 0, t = 0, v, w;
        size_t n = 0;
        for (size_t r = 0; r < pfi_csv_rows(c); r++) {
            if (strcmp(pfi_csv_field(c, r, ph), probe_loads[l]) != 0) continue;
            if (pfi_csv_number(c, r, sm, 0, 0, &v, NULL) != PFI_OK ||
                pfi_csv_number(c, r, mem, 0, 0, &w, NULL) != PFI_OK)
                continue;
            s += v;
            t += w;
            n++;
        }
        if (!n) continue;
        snprintf(d->probe_name[d->n_probe], sizeof d->probe_name[0], "%s", probe_loads[l]);
        d->probe_sm[d->n_probe] = s / (double)n;
        d->probe_mem[d->n_probe++] = t / (double)n;
    }
    d->has_probe = d->n_probe > 0;
    pfi_csv_destroy(c);
    (void)err;
    return PFI_OK;
}

void rd_free(rd_data *d)
{
    if (!d) return;
    for (int m = 0; m < 2; m++)
        pfi_sim_result_free(&d->sim[m]);
    free(d->grp);
    free(d->pairs);
    pfi_sweeps_destroy(d->other);
    free(d->obs);
    pfi_telemetry_destroy(d->tm);
    pfi_sweeps_destroy(d->s);
    pfi_sweeps_destroy(d->held);
    rd_trace_free(&d->trace);
    memset(d, 0, sizeof *d);
}

const rd_group *rd_ce_job(const rd_data *d)
{
    for (size_t i = 0; i < d->ng; i++) {
        const pfi_group_meta *m = &d->grp[i].g->meta;
        if (strcmp(m->model, "gpt-oss-20b") == 0 && strcmp(m->task, "ft") == 0 && m->gpus == 8)
            return &d->grp[i];
    }
    return d->ng ? &d->grp[0] : NULL;
}
