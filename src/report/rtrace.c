/* See rtrace.h: pfi trace's reader and summary, kept as a time series. */
#include "rtrace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/trace_read.h"
#include "pfi/trace_run.h"

void rd_trace_free(rd_trace *tr)
{
    if (!tr) return;
    free(tr->t);
    free(tr->power_w);
    free(tr->tput_t);
    free(tr->tput);
    memset(tr, 0, sizeof *tr);
}

/* The run's series from its first sample, total power over its GPUs. */
static int keep(rd_trace *tr, const pfi_trace_run *r, const pfi_trace_summary *sum)
{
    double t0 = r->t[0];
    size_t np = 0;
    tr->t = malloc((r->n ? r->n : 1) * sizeof *tr->t);
    tr->power_w = malloc((r->n ? r->n : 1) * sizeof *tr->power_w);
    tr->tput_t = malloc((r->n_tput ? r->n_tput : 1) * sizeof *tr->tput_t);
    tr->tput = malloc((r->n_tput ? r->n_tput : 1) * sizeof *tr->tput);
    if (!tr->t || !tr->power_w || !tr->tput_t || !tr->tput) return PFI_ENOMEM;
    for (size_t i = 0; i < r->n; i++) {
        if (!(r->tm[i].valid & (1u << PFI_TM_POWER))) continue; /* not read: a gap */
        tr->t[np] = r->t[i] - t0;
        tr->power_w[np++] = r->gpus * r->tm[i].v[PFI_TM_POWER];
    }
    tr->n = np;
    /* reports before the first sample (a step log that starts early) are
     * left out: the figure's time starts with the GPUs' */
    for (size_t i = 0; i < r->n_tput; i++)
        if (r->tput_t[i] >= t0 && isfinite(r->tput[i])) {
            tr->tput_t[tr->n_tput] = r->tput_t[i] - t0;
            tr->tput[tr->n_tput++] = r->tput[i];
        }
    for (int p = 0; p < PFI_PHASE_COUNT; p++)
        tr->start[p] = sum->start[p] - t0;
    tr->gpus = r->gpus;
    tr->top_power_w = sum->power_w;
    tr->top_tput = sum->tput_samples ? sum->tput : NAN;
    snprintf(tr->run, sizeof tr->run, "%s", r->name ? r->name : "");
    return PFI_OK;
}

int rd_trace_load(rd_trace *tr, const char *trace, const char *steps, pfi_error *err)
{
    memset(tr, 0, sizeof *tr);
    pfi_trace_set set = {0};
    int rc = pfi_trace_read(trace, &set, err);
    if (rc == PFI_OK && steps) rc = pfi_trace_steps_read(steps, &set, err);
    if (rc == PFI_OK && set.n == 0)
        rc = pfi_error_set(err, PFI_ENODATA, trace, 0, "no run in the trace (only idle samples)");
    pfi_trace_summary sum;
    if (rc == PFI_OK) rc = pfi_trace_run_summarize(&set.runs[0], NULL, 0.1, &sum, err);
    if (rc == PFI_OK) rc = keep(tr, &set.runs[0], &sum);
    if (rc == PFI_OK && tr->n < 2)
        rc = pfi_error_set(err, PFI_ENODATA, trace, 0, "run '%s' has fewer than 2 power samples",
                           tr->run);
    if (rc == PFI_OK) {
        const char *b = strrchr(trace, '/');
        snprintf(tr->file, sizeof tr->file, "%s", b ? b + 1 : trace);
        tr->has = 1;
    } else {
        if (rc == PFI_ENOMEM) pfi_error_set(err, rc, trace, 0, "out of memory");
        rd_trace_free(tr);
    }
    pfi_trace_set_free(&set);
    return rc;
}
