/* See pfi/report.h: the pipeline, and the output folder written beside the
 * target and swapped in whole. */
#define _GNU_SOURCE /* renameat2 */
#include "pfi/report.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "figures.h"
#include "page.h"
#include "plot.h"
#include "pfi/fileio.h"
#include "rdata.h"
#include "tables.h"

pfi_report_opts pfi_report_defaults(void)
{
    pfi_report_opts o = {0};
    o.workloads = 500;
    o.ci_draws = 10000;
    o.threads = 1;
    return o;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum { ST_INDEX, ST_REGIMES, ST_TELEMETRY, ST_SIM, ST_TABLES, ST_FIGURES, ST_PAGE, ST_N };
static const char *const stage_name[ST_N] = {"index with 95% CIs",
                                             "group tests",
                                             "correlations and predictor",
                                             "allocation simulation",
                                             "tables",
                                             "figures",
                                             "report.html"};

typedef struct run {
    const pfi_report_opts *o;
    double t0; /* start of the simulation */
} run;

static void stage(const run *r, int k, double frac, double eta)
{
    if (r->o->progress) r->o->progress(r->o->progress_ctx, k + 1, ST_N, stage_name[k], frac, eta);
}

static void sim_progress(void *ctx, size_t done, size_t total)
{
    run *r = ctx;
    double frac = (double)done / (double)total, el = now_s() - r->t0;
    double eta = frac > 0.02 ? el * (1 - frac) / frac : -1;
    if (done % 50 == 0 || done == total) stage(r, ST_SIM, frac, eta);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void rm_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The temporary folder beside the target: same file system, so the final
 * rename is atomic. Creating it is also the check that we can write there. */
static int make_temp(const char *out, char *tmp, size_t len, pfi_error *err)
{
    struct stat st;
    if (stat(out, &st) == 0 && !S_ISDIR(st.st_mode))
        return pfi_error_set(err, PFI_EINVAL, out, 0, "exists and is not a folder");
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", out);
    size_t n = strlen(parent);
    while (n > 1 && parent[n - 1] == '/')
        parent[--n] = 0;
    char *slash = strrchr(parent, '/');
    const char *base = slash ? slash + 1 : parent;
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == parent)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - parent), parent);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return pfi_error_set(err, PFI_ENOTFOUND, out, 0, "its parent folder %s does not exist",
                             dir);
    if ((size_t)snprintf(tmp, len, "%s/.%s.tmp-XXXXXX", dir, base) >= len)
        return pfi_error_set(err, PFI_EINVAL, out, 0, "path too long");
    if (!mkdtemp(tmp))
        return pfi_error_set(err, PFI_EIO, out, 0, "cannot write in %s: %s", dir, strerror(errno));
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/figures", tmp);
    int ok = mkdir(sub, 0777) == 0;
    snprintf(sub, sizeof sub, "%s/tables", tmp);
    ok = ok && mkdir(sub, 0777) == 0;
    if (!ok) {
        int e = errno;
        rm_tree(tmp);
        return pfi_error_set(err, PFI_EIO, tmp, 0, "cannot create: %s", strerror(e));
    }
    chmod(tmp, 0755);
    return PFI_OK;
}

/* Puts tmp in out's place: one atomic exchange when out exists (the old
 * report then sits at tmp and is removed), else one rename. */
static int swap_in(const char *tmp, const char *out, pfi_error *err)
{
    if (rename(tmp, out) == 0) return PFI_OK;
    if (errno != EEXIST && errno != ENOTEMPTY)
        return pfi_error_set(err, PFI_EIO, out, 0, "cannot rename %s: %s", tmp, strerror(errno));
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_EXCHANGE) == 0) {
        rm_tree(tmp);
        return PFI_OK;
    }
    /* no exchange on this file system: move the old one aside first */
    char old[4200];
    snprintf(old, sizeof old, "%s.old", tmp);
    if (rename(out, old) != 0 || rename(tmp, out) != 0)
        return pfi_error_set(err, PFI_EIO, out, 0, "cannot replace: %s", strerror(errno));
    rm_tree(old);
    return PFI_OK;
}

typedef struct csv_job {
    const rp_table *t;
} csv_job;

static int write_table(FILE *f, void *ctx)
{
    return rp_table_write_csv(f, ((csv_job *)ctx)->t);
}

static int write_texts(FILE *f, void *ctx)
{
    (void)ctx;
    fputs(rp_texts(), f);
    return ferror(f) ? PFI_EIO : PFI_OK;
}

static int compute(rd_data *d, const pfi_report_opts *o, run *r, pfi_error *err)
{
    stage(r, ST_INDEX, 0, -1);
    int rc = rd_index(d, o->ci_draws, o->threads, err);
    if (rc == PFI_OK) rc = rd_match(d, err);
    if (rc == PFI_OK) {
        stage(r, ST_REGIMES, 0, -1);
        rc = rd_regimes(d, err);
    }
    if (rc == PFI_OK) {
        stage(r, ST_TELEMETRY, 0, -1);
        rc = rd_telemetry(d, err);
    }
    if (rc == PFI_OK && d->has_tm) {
        r->t0 = now_s();
        stage(r, ST_SIM, 0, -1);
        rc = rd_simulate(d, o->workloads, o->threads, sim_progress, r, err);
    }
    if (rc == PFI_OK) rc = rd_probe(d, o->probe_dir, err);
    return rc;
}

static int write_all(const rd_data *d, const pfi_report_opts *o, const run *r, const char *tmp,
                     pfi_error *err)
{
    stage(r, ST_TABLES, 0, -1);
    rp_tables ts;
    int rc = rp_tables_build(d, o->paper_dir, &ts, err);
    if (rc != PFI_OK) return rc;
    char path[4400];
    for (size_t i = 0; rc == PFI_OK && i < ts.n; i++) {
        snprintf(path, sizeof path, "%s/tables/%s.csv", tmp, ts.t[i].id);
        csv_job j = {&ts.t[i]};
        rc = pfi_file_write_atomic(path, write_table, &j, err);
    }
    rp_page page = {.d = d, .tables = &ts, .o = o, .dir = tmp};
    static const char *const ext[] = {"svg", "png", "pdf"};
    for (int k = 0; rc == PFI_OK && k < PFI_PLOT_COUNT; k++) {
        stage(r, ST_FIGURES, (double)k / PFI_PLOT_COUNT, -1);
        const char *why;
        if (!rp_figure_available(k, d, &why)) continue;
        for (int e = 0; rc == PFI_OK && e < 3; e++) {
            snprintf(path, sizeof path, "%s/figures/%s.%s", tmp, rp_figure_of(k)->name, ext[e]);
            rc = rp_figure_draw(k, d, path, 0, 0, err);
            if (rc == PFI_OK && e == 0) { /* the figure's texts: the SVG draws them as outlines */
                snprintf(path, sizeof path, "%s/figures/%s.txt", tmp, rp_figure_of(k)->name);
                rc = pfi_file_write_atomic(path, write_texts, NULL, err);
            }
        }
        page.fig_ok[k] = rc == PFI_OK;
    }
    if (rc == PFI_OK) {
        stage(r, ST_PAGE, 0, -1);
        snprintf(path, sizeof path, "%s/summary.json", tmp);
        rc = pfi_file_write_atomic(path, rp_page_write_summary, &page, err);
    }
    if (rc == PFI_OK) {
        snprintf(path, sizeof path, "%s/report.html", tmp);
        rc = pfi_file_write_atomic(path, rp_page_write_html, &page, err);
    }
    rp_tables_free(&ts);
    return rc;
}

/* Fig. 2's run: a trace given is an input like the sweeps (its errors stop
 * the report before any work); without one, the probe's run_trace.csv when
 * the probe folder has it, and a note when it cannot be read. */
static int load_trace(rd_data *d, const pfi_report_opts *o, pfi_error *err)
{
    if (o->trace) return rd_trace_load(&d->trace, o->trace, o->steps, err);
    char t[4200], s[4200];
    struct stat st;
    if (!o->probe_dir) {
        rd_note(d, "No trace: Fig. 2 (a run's power and throughput over time) needs one "
                   "(--trace FILE, in pfi trace's formats).");
        return PFI_OK;
    }
    snprintf(t, sizeof t, "%s/run_trace.csv", o->probe_dir);
    snprintf(s, sizeof s, "%s/run_steps.csv", o->probe_dir);
    if (stat(t, &st) != 0) {
        rd_note(d, "No trace: Fig. 2 needs one (--trace FILE); the probe folder has no "
                   "run_trace.csv.");
        return PFI_OK;
    }
    pfi_error e = {0};
    if (rd_trace_load(&d->trace, t, stat(s, &st) == 0 ? s : NULL, &e) != PFI_OK)
        rd_note(d, "Fig. 2 is not drawn: %s: %s.", e.file[0] ? e.file : t, e.msg);
    return PFI_OK;
}

int pfi_report_run(const pfi_report_opts *o, pfi_error *err)
{
    if (!o || !o->sweeps || !o->out_dir || o->threads < 1 || o->workloads == 0)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "bad report options");
    /* the report validates held-out groups' predictions (pfi plot draws
     * their curves without) */
    if (o->heldout && !o->telemetry)
        return pfi_error_set(err, PFI_EINVAL, o->heldout, 0,
                             "held-out groups need the telemetry file too");
    rd_data d;
    int rc = rd_load(&d, o->sweeps, o->telemetry, o->heldout, o->tdp_w, err);
    if (rc == PFI_OK) rc = rd_load_matched(&d, o->matched, err);
    if (rc == PFI_OK) rc = load_trace(&d, o, err);
    char tmp[4096] = "";
    if (rc == PFI_OK) rc = make_temp(o->out_dir, tmp, sizeof tmp, err);
    run r = {.o = o};
    if (rc == PFI_OK) rc = compute(&d, o, &r, err);
    if (rc == PFI_OK) rc = write_all(&d, o, &r, tmp, err);
    if (rc == PFI_OK) rc = swap_in(tmp, o->out_dir, err);
    if (rc != PFI_OK && tmp[0]) rm_tree(tmp);
    rd_free(&d);
    return rc;
}

/* ---- pfi plot ---- */

static const char *const kind_names[PFI_PLOT_COUNT] = {
    "trace", "curves",    "pfi",         "features", "clocks",  "predicted", "gap",
    "ce",    "ce-groups", "definitions", "groups",   "groups2", "groups3"};
static const char *const kind_inputs[PFI_PLOT_COUNT] = {
    "TRACE [--steps STEPS.csv] (pfi trace's formats; its first run)",
    "SWEEPS.csv",
    "SWEEPS.csv",
    "SWEEPS.csv TELEMETRY.csv",
    "[--probe DIR]",
    "SWEEPS.csv TELEMETRY.csv [HELDOUT.csv]",
    "SIM.json [SIM2.json] (pfi simulate --json)",
    "SWEEPS.csv",
    "SWEEPS.csv [HELDOUT.csv]",
    "SWEEPS.csv",
    "SWEEPS.csv [HELDOUT.csv]",
    "SWEEPS.csv [HELDOUT.csv]",
    "SWEEPS.csv [HELDOUT.csv]"};

const char *pfi_plot_kind_name(pfi_plot_kind k)
{
    return (unsigned)k < PFI_PLOT_COUNT ? kind_names[k] : NULL;
}

const char *pfi_plot_kind_inputs(pfi_plot_kind k)
{
    return (unsigned)k < PFI_PLOT_COUNT ? kind_inputs[k] : NULL;
}

int pfi_plot_kind_parse(const char *s, pfi_plot_kind *out)
{
    for (int k = 0; k < PFI_PLOT_COUNT; k++)
        if (strcmp(s, kind_names[k]) == 0) {
            *out = (pfi_plot_kind)k;
            return 0;
        }
    return -1;
}

int pfi_report_plot(pfi_plot_kind kind, const pfi_plot_opts *o, pfi_error *err)
{
    if (!o || !o->out || (unsigned)kind >= PFI_PLOT_COUNT)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "bad plot options");
    if (!rp_format_known(o->out))
        return pfi_error_set(err, PFI_EINVAL, o->out, 0,
                             "unknown figure format (want .svg, .png or .pdf)");
    rd_data d;
    int rc;
    if (kind == PFI_PLOT_GAP) {
        memset(&d, 0, sizeof d);
        rc = rd_sim_from_json(&d, o->sim_json, err);
    } else if (kind == PFI_PLOT_TRACE) {
        memset(&d, 0, sizeof d);
        rc = rd_trace_load(&d.trace, o->trace, o->steps, err);
    } else if (kind == PFI_PLOT_CLOCKS) {
        memset(&d, 0, sizeof d);
        rc = rd_probe(&d, o->probe_dir, err);
    } else {
        rc = rd_load(&d, o->sweeps, o->telemetry, o->heldout, -1, err);
        if (rc == PFI_OK) rc = rd_index(&d, 0, 1, err);
        if (rc == PFI_OK) rc = rd_regimes(&d, err);
        if (rc == PFI_OK && (kind == PFI_PLOT_FEATURES || kind == PFI_PLOT_PREDICTED))
            rc = rd_telemetry(&d, err);
    }
    if (rc == PFI_OK) rc = rp_figure_draw(kind, &d, o->out, o->width, o->height, err);
    rd_free(&d);
    return rc;
}
