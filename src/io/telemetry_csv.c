/* telemetry.csv reader and writer. */
#include "pfi/telemetry_csv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/csv.h"

/* The largest value a field can physically take, in its telemetry.csv unit
 * (telemetry.h): DCGM_FI_PROF_* activities are ratios, DCGM_FI_DEV_*_UTIL
 * percents; the others are bounded well above any GPU made (an H200 draws
 * 700 W, clocks under 2 GHz and 5 GHz, 141 GB of HBM, NVLink 900 GB/s), so
 * that only impossible values are refused (1e308 W made `pfi predict` print
 * a 300-digit PFI). */
static double unit_max(int f)
{
    switch (f) {
    case PFI_TM_SM_ACTIVE:
    case PFI_TM_TENSOR_ACTIVE:
    case PFI_TM_DRAM_ACTIVE:
        return 1;
    case PFI_TM_MEM_COPY_UTIL:
    case PFI_TM_GPU_UTIL:
        return 100;
    case PFI_TM_POWER:
        return 10000; /* W per GPU */
    case PFI_TM_SM_CLOCK:
    case PFI_TM_MEM_CLOCK:
        return 100000; /* MHz */
    case PFI_TM_FB_USED:
        return 16777216; /* MiB: 16 TiB */
    case PFI_TM_GPU_TEMP:
        return 200; /* C */
    default:
        return 1e13; /* NVLink, PCIe: bytes/s, 10 TB/s */
    }
}

static const char *unit_why(double hi)
{
    return hi == 1     ? "a ratio: a percent written for a ratio?"
           : hi == 100 ? "a percent"
                       : "beyond any GPU";
}

int pfi_telemetry_read(const char *path, pfi_telemetry **out, pfi_error *err)
{
    *out = NULL;
    pfi_csv *c;
    int rc = pfi_csv_read_file(path, &c, err);
    if (rc != PFI_OK) return rc;
    /* Only `group` and at least one field are required: a column the file
     * lacks is a field missing on every row (valid bit clear), so a command
     * that needs it says which group and field (analysis.c, alloc), and one
     * that does not never looks. */
    static const char *const req[] = {"group", NULL};
    rc = pfi_csv_require(c, req, err);
    int cols[PFI_TM_NFIELDS], any = 0;
    for (int f = 0; f < PFI_TM_NFIELDS; f++) {
        cols[f] = pfi_csv_col(c, pfi_tm_field_name(f));
        any |= cols[f] >= 0;
    }
    if (rc == PFI_OK && !any)
        rc = pfi_error_set(err, PFI_EPARSE, path, 1,
                           "no DCGM field column (e.g. \"%s\"): is this a telemetry.csv?",
                           pfi_tm_field_name(PFI_TM_SM_ACTIVE));
    if (rc == PFI_OK && pfi_csv_rows(c) == 0)
        rc = pfi_error_set(err, PFI_ENODATA, path, 0, "no data rows");
    pfi_telemetry *t = calloc(1, sizeof *t);
    if (rc == PFI_OK && (!t || !(t->rows = calloc(pfi_csv_rows(c), sizeof *t->rows))))
        rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    int cg = pfi_csv_col(c, "group");
    for (size_t r = 0; rc == PFI_OK && r < pfi_csv_rows(c); r++) {
        pfi_tm_row *row = &t->rows[t->n];
        long ln = pfi_csv_line(c, r);
        const char *g = pfi_csv_field(c, r, (size_t)cg);
        if (!g[0]) {
            rc = pfi_error_set(err, PFI_EPARSE, path, ln, "empty group name");
            break;
        }
        const pfi_tm_row *dup = pfi_telemetry_find(t, g);
        if (dup) {
            rc = pfi_error_set(err, PFI_EINVAL, path, ln, "group \"%s\" repeats line %ld", g,
                               dup->line);
            break;
        }
        row->line = ln;
        for (int f = 0; f < PFI_TM_NFIELDS && rc == PFI_OK; f++) {
            double v = NAN;
            if (cols[f] >= 0) rc = pfi_csv_number(c, r, (size_t)cols[f], 1, NAN, &v, err);
            if (rc != PFI_OK) break;
            double hi = unit_max(f);
            if (v < 0 || v > hi) {
                rc = pfi_error_set(err, PFI_ERANGE, path, ln,
                                   "column %d (%s): %g is outside its unit's range [0, %g] (%s)",
                                   cols[f] + 1, pfi_tm_field_name(f), v, hi,
                                   v < 0 ? "negative" : unit_why(hi));
                break;
            }
            row->v[f] = v;
            if (!isnan(v)) row->valid |= 1u << f;
        }
        if (rc != PFI_OK) break;
        if (!(row->group = strdup(g))) {
            rc = pfi_error_set(err, PFI_ENOMEM, path, ln, "out of memory");
            break;
        }
        t->n++;
    }
    pfi_csv_destroy(c);
    if (rc != PFI_OK) {
        pfi_telemetry_destroy(t);
        return rc;
    }
    *out = t;
    return PFI_OK;
}

int pfi_telemetry_write(FILE *f, const pfi_telemetry *t)
{
    fputs("group", f);
    for (int k = 0; k < PFI_TM_NFIELDS; k++)
        fprintf(f, ",%s", pfi_tm_field_name(k));
    fputc('\n', f);
    for (size_t i = 0; i < t->n; i++) {
        pfi_csv_put_field(f, t->rows[i].group);
        for (int k = 0; k < PFI_TM_NFIELDS; k++) {
            if (t->rows[i].valid & (1u << k))
                fprintf(f, ",%.8g", t->rows[i].v[k]);
            else
                fputc(',', f);
        }
        fputc('\n', f);
    }
    return ferror(f) ? PFI_EIO : PFI_OK;
}
