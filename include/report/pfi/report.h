/* The report: the paper's analysis end to end on one set of sweeps (and,
 * when given, their telemetry and held-out groups), written as a folder:
 *   report.html   one self-contained page (figures inline, nothing fetched)
 *   summary.json  the headline numbers
 *   tables/NAME.csv  every table, with the paper's values beside where it has one
 *   figures/NAME.svg, .png, .pdf  every figure, drawn through PLplot (cairo)
 * It computes through core and io only, as the pfi commands do.
 *
 * Ownership: callers own every string in the options; nothing is kept.
 */
#ifndef PFI_REPORT_H
#define PFI_REPORT_H

#include <stddef.h>

#include "pfi/error.h"

/* Progress: stage k of n named `stage`; frac in [0, 1] within the stage and
 * eta_s the seconds it expects to still need (< 0 when unknown). */
typedef void (*pfi_report_progress)(void *ctx, int k, int n, const char *stage, double frac,
                                    double eta_s);

typedef struct pfi_report_opts {
    const char *sweeps;    /* sweeps.csv, required */
    const char *telemetry; /* telemetry.csv or NULL: telemetry sections are skipped with a note */
    const char *heldout;   /* a sweeps.csv of validation groups (their telemetry rows are in
                              `telemetry`) or NULL */
    const char *matched;   /* a sweeps.csv of the same jobs on another GPU (Table 8: groups
                              named as ours with the platform changed) or NULL */
    const char *out_dir;   /* replaced whole: written to a temporary sibling, then renamed */
    const char *paper_dir; /* the paper's tables as CSV (Tables 3, 10-11), or NULL */
    const char *probe_dir; /* the real H200 probe (trace.csv) for Fig. 6, or NULL */
    const char *trace;     /* Fig. 2: a trace in pfi trace's formats (its first run), or NULL
                              for the probe's run_trace.csv when probe_dir has one */
    const char *steps;     /* the trace's step log (throughput), or NULL */
    const char *title;     /* page title, NULL for a default */
    size_t workloads;      /* simulation workloads per mix (paper: 500) */
    size_t ci_draws;       /* Monte Carlo CI draws (paper: 10000) */
    double tdp_w; /* per-GPU TDP of groups on platforms without a known one (0: such a group
                     is an error, since its largest cap may not be its uncapped run) */
    int threads;  /* >= 1 */
    pfi_report_progress progress; /* may be NULL */
    void *progress_ctx;
} pfi_report_opts;

/* workloads 500, ci_draws 10000, threads 1, everything else NULL. */
pfi_report_opts pfi_report_defaults(void);

/* Reads and checks every input before anything is computed (a missing file,
 * telemetry whose groups do not match the sweeps, an output folder whose
 * parent cannot be written: the error names it and nothing is written),
 * then computes, draws and writes. On failure out_dir is left as it was. */
int pfi_report_run(const pfi_report_opts *o, pfi_error *err);

/* The figures `pfi plot` can draw alone. */
typedef enum {
    PFI_PLOT_TRACE,       /* Fig. 2: one run's GPU power and throughput over time */
    PFI_PLOT_CURVES,      /* Fig. 3: power-throughput curves, raw and normalised */
    PFI_PLOT_PFI,         /* Fig. 4: PFI distribution, by regime and by cluster size */
    PFI_PLOT_FEATURES,    /* Fig. 5/14: PFI against each telemetry feature */
    PFI_PLOT_CLOCKS,      /* Fig. 6: SM and memory clock against cap */
    PFI_PLOT_PREDICTED,   /* Fig. 7: predicted against actual PFI */
    PFI_PLOT_GAP,         /* Fig. 8: gap to the oracle against reduction */
    PFI_PLOT_CE,          /* Fig. 9: the constant-elasticity fit of the paper's job */
    PFI_PLOT_CE_GROUPS,   /* Fig. 9's appendix: the same for every other group */
    PFI_PLOT_DEFINITIONS, /* Fig. 10: the three PFI definitions against each other */
    PFI_PLOT_GROUPS,      /* Fig. 11: raw and normalised curves, the first third of the groups */
    PFI_PLOT_GROUPS2,     /* Fig. 12: the second third */
    PFI_PLOT_GROUPS3,     /* Fig. 13: the rest */
    PFI_PLOT_COUNT
} pfi_plot_kind;

/* "trace", "curves", "pfi", "features", "clocks", "predicted", "gap", "ce",
 * "ce-groups", "definitions", "groups", "groups2", "groups3"; NULL past the
 * last. */
const char *pfi_plot_kind_name(pfi_plot_kind k);
int pfi_plot_kind_parse(const char *s, pfi_plot_kind *out); /* -1 if unknown */
/* One line: which inputs the kind takes. */
const char *pfi_plot_kind_inputs(pfi_plot_kind k);

typedef struct pfi_plot_opts {
    const char *sweeps, *telemetry, *heldout; /* as in pfi_report_opts */
    const char *sim_json[2];                  /* gap: one or two `pfi simulate --json` outputs */
    const char *probe_dir;                    /* clocks: the probe folder or NULL */
    const char *trace, *steps;                /* trace: the trace and its step log (or NULL) */
    const char *out;   /* .svg, .png or .pdf: the format follows the suffix */
    int width, height; /* pixels (points for PDF); 0 for the figure's default */
} pfi_plot_opts;

/* Draws one figure into o->out (written whole or not at all). */
int pfi_report_plot(pfi_plot_kind kind, const pfi_plot_opts *o, pfi_error *err);

#endif
