/* Wide CSV traces and the h200-probe trace format (see trace_read.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/csv.h"
#include "pfi/trace_read.h"
#include "trace_build.h"
#include "trace_formats.h"

/* Column names besides the DCGM ones (pfi_tm_field_name, taken as they are)
 * and the factor to telemetry.csv units: run_trace.csv's and trace.csv's of
 * ../shared/data/h200-probe (README there; GPM metrics in percent, MB/s). */
static const struct {
    const char *col;
    pfi_tm_field f;
    double scale;
} aliases[] = {
    {"power_w", PFI_TM_POWER, 1},
    {"power_mW", PFI_TM_POWER, 1e-3},
    {"gpu_util", PFI_TM_GPU_UTIL, 1},
    {"util_gpu", PFI_TM_GPU_UTIL, 1},
    {"mem_copy_util", PFI_TM_MEM_COPY_UTIL, 1},
    {"util_mem", PFI_TM_MEM_COPY_UTIL, 1},
    {"fb_used_mib", PFI_TM_FB_USED, 1},
    {"fb_used_MiB", PFI_TM_FB_USED, 1},
    {"temp_c", PFI_TM_GPU_TEMP, 1},
    {"temp", PFI_TM_GPU_TEMP, 1},
    {"sm_clock_mhz", PFI_TM_SM_CLOCK, 1},
    {"sm_clock", PFI_TM_SM_CLOCK, 1},
    {"mem_clock_mhz", PFI_TM_MEM_CLOCK, 1},
    {"mem_clock", PFI_TM_MEM_CLOCK, 1},
    {"sm_util", PFI_TM_SM_ACTIVE, 0.01},
    {"tensor_util", PFI_TM_TENSOR_ACTIVE, 0.01},
    {"dram_bw_util", PFI_TM_DRAM_ACTIVE, 0.01},
    {"pcie_tx_MBps", PFI_TM_PCIE_TX, 1e6},
    {"pcie_rx_MBps", PFI_TM_PCIE_RX, 1e6},
};
static const struct {
    const char *col;
    double scale;
} limit_cols[] = {
    {"DCGM_FI_DEV_ENFORCED_POWER_LIMIT", 1},
    {"DCGM_FI_DEV_POWER_MGMT_LIMIT", 1},
    {"limit_w", 1},
    {"limit_mW", 1e-3},
};

static int find_col(const pfi_csv *c, const char *a, const char *b)
{
    int k = pfi_csv_col(c, a);
    return k >= 0 || !b ? k : pfi_csv_col(c, b);
}

/* A field, empty allowed: *ok 0 when empty. */
static int number(const pfi_csv *c, size_t r, int col, double *out, int *ok, pfi_error *err)
{
    *ok = 0;
    if (col < 0) return PFI_OK;
    if (pfi_csv_field(c, r, (size_t)col)[0] == '\0') return PFI_OK;
    int rc = pfi_csv_number(c, r, (size_t)col, 0, 0, out, err);
    *ok = rc == PFI_OK;
    return rc;
}

static int from_csv(const pfi_csv *c, const char *name, trace_build *b, pfi_error *err)
{
    int ct = find_col(c, "time_s", "t");
    if (ct < 0) return pfi_error_set(err, PFI_EPARSE, name, 1, "no time column (time_s or t)");
    int cgpu = pfi_csv_col(c, "gpu"), crun = pfi_csv_col(c, "run"),
        cphase = crun < 0 ? pfi_csv_col(c, "phase") : -1;
    int col[PFI_TM_NFIELDS];
    double scale[PFI_TM_NFIELDS];
    for (int f = 0; f < PFI_TM_NFIELDS; f++) {
        col[f] = pfi_csv_col(c, pfi_tm_field_name(f));
        scale[f] = 1;
        for (size_t k = 0; col[f] < 0 && k < sizeof aliases / sizeof aliases[0]; k++)
            if (aliases[k].f == (pfi_tm_field)f && (col[f] = pfi_csv_col(c, aliases[k].col)) >= 0)
                scale[f] = aliases[k].scale;
    }
    if (col[PFI_TM_POWER] < 0)
        return pfi_error_set(err, PFI_EPARSE, name, 1,
                             "no power column (DCGM_FI_DEV_POWER_USAGE, power_w or power_mW)");
    int climit = -1;
    double lscale = 1;
    for (size_t k = 0; climit < 0 && k < sizeof limit_cols / sizeof limit_cols[0]; k++)
        if ((climit = pfi_csv_col(c, limit_cols[k].col)) >= 0) lscale = limit_cols[k].scale;
    char stem[256];
    trace_build_stem(name, stem, sizeof stem);
    for (size_t r = 0; r < pfi_csv_rows(c); r++) {
        const char *run = stem;
        int label = -1;
        char buf[256];
        if (crun >= 0) run = pfi_csv_field(c, r, (size_t)crun);
        if (cphase >= 0) {
            /* the probe's labels: NAME_warm, NAME, idle */
            snprintf(buf, sizeof buf, "%s", pfi_csv_field(c, r, (size_t)cphase));
            size_t L = strlen(buf);
            label = PFI_PHASE_TRAINING;
            if (L > 5 && strcmp(buf + L - 5, "_warm") == 0) {
                buf[L - 5] = '\0';
                label = PFI_PHASE_WARMUP;
            }
            run = buf;
        }
        if (run[0] == '\0')
            return pfi_error_set(err, PFI_EPARSE, name, pfi_csv_line(c, r), "empty run name");
        if (strcmp(run, "idle") == 0) continue;
        double t, g = 0, lim = NAN, v[PFI_TM_NFIELDS];
        int ok, rc;
        uint32_t valid = 0;
        if ((rc = pfi_csv_number(c, r, (size_t)ct, 0, 0, &t, err)) != PFI_OK) return rc;
        if ((rc = number(c, r, cgpu, &g, &ok, err)) != PFI_OK) return rc;
        if (cgpu >= 0 && (!ok || g < 0 || g != floor(g) || g > 1e6))
            return pfi_error_set(err, PFI_EPARSE, name, pfi_csv_line(c, r),
                                 "gpu is not a device index");
        for (int f = 0; f < PFI_TM_NFIELDS; f++) {
            if ((rc = number(c, r, col[f], &v[f], &ok, err)) != PFI_OK) return rc;
            if (ok) {
                v[f] *= scale[f];
                valid |= 1u << f;
            } else {
                v[f] = NAN;
            }
        }
        if ((rc = number(c, r, climit, &lim, &ok, err)) != PFI_OK) return rc;
        lim = ok ? lim * lscale : NAN;
        if ((rc = trace_build_add(b, run, label, t, (long)g, v, valid, lim, pfi_csv_line(c, r),
                                  err)) != PFI_OK)
            return rc;
    }
    return PFI_OK;
}

int pfi_trace_csv_parse(const char *buf, size_t len, const char *name, pfi_trace_set *set,
                        pfi_error *err)
{
    pfi_csv *c = NULL;
    int rc = pfi_csv_parse(buf, len, name, &c, err);
    if (rc != PFI_OK) return rc;
    trace_build *b = trace_build_create(name);
    if (!b) {
        pfi_csv_destroy(c);
        return pfi_error_set(err, PFI_ENOMEM, name, 0, "out of memory");
    }
    rc = from_csv(c, name, b, err);
    if (rc == PFI_OK) rc = trace_build_finish(b, set, err);
    trace_build_destroy(b);
    pfi_csv_destroy(c);
    return rc;
}
