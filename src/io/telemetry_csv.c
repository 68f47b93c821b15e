/* telemetry.csv reader and writer. */
#include "pfi/telemetry_csv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/csv.h"

/* The largest value a field's unit allows (telemetry.h): DCGM_FI_PROF_*
 * activities are ratios, DCGM_FI_DEV_*_UTIL percents; the rest are open. */
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
    default:
        return INFINITY;
    }
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
            if (v < 0) {
                rc = pfi_error_set(err, PFI_ERANGE, path, ln, "%s is negative",
                                   pfi_tm_field_name(f));
                break;
            }
            double hi = unit_max(f);
            if (v > hi) {
                rc = pfi_error_set(err, PFI_ERANGE, path, ln,
                                   "column %d (%s): %g is outside its unit's range [0, %g] (%s)",
                                   cols[f] + 1, pfi_tm_field_name(f), v, hi,
                                   hi == 1 ? "a ratio: a percent written for a ratio?"
                                           : "a percent");
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
