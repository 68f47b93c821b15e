/* What pfi sweep prints: the results (sweeps.csv and telemetry.csv in DIR,
 * a table or JSON, the PFI with its CI) and the --dry-run plan. */
#ifndef PFI_SWEEP_REPORT_H
#define PFI_SWEEP_REPORT_H

#include <stddef.h>

#include "sweep_opts.h"
#include "sweep_state.h"

/* Writes DIR's outputs and prints the results of o's caps; *complete is 1
 * when every cap was measured. Returns an exit status. */
int sweep_report(const sweep_opts *o, const sweep_state *st, int *complete);
/* The plan (text, or JSON with o->json); pending: DIR holds an unfinished
 * sweep whose GPUs the next run restores first. Returns an exit status. */
int sweep_dry_run(const sweep_opts *o, const sweep_state *st, int pending);
/* "M:SS" or "H:MM:SS". */
void sweep_fmt_time(double s, char *buf, size_t len);

#endif
