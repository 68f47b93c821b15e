/* telemetry.csv reader and writer. */
#include "pfi/telemetry_csv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/csv.h"

int pfi_telemetry_read(const char *path, pfi_telemetry **out, pfi_error *err)
{
    *out = NULL;
    pfi_csv *c;
    int rc = pfi_csv_read_file(path, &c, err);
    if (rc != PFI_OK) return rc;
    const char *req[PFI_TM_NFIELDS + 2] = {"group"};
    for (int f = 0; f < PFI_TM_NFIELDS; f++) req[f + 1] = pfi_tm_field_name(f);
    rc = pfi_csv_require(c, req, err);
    if (rc == PFI_OK && pfi_csv_rows(c) == 0)
        rc = pfi_error_set(err, PFI_ENODATA, path, 0, "no data rows");
    pfi_telemetry *t = calloc(1, sizeof *t);
    if (rc == PFI_OK && (!t || !(t->rows = calloc(pfi_csv_rows(c), sizeof *t->rows))))
        rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    int cols[PFI_TM_NFIELDS];
    for (int f = 0; f < PFI_TM_NFIELDS; f++) cols[f] = pfi_csv_col(c, pfi_tm_field_name(f));
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
            double v;
            rc = pfi_csv_number(c, r, (size_t)cols[f], 1, NAN, &v, err);
            if (rc != PFI_OK) break;
            if (v < 0) {
                rc = pfi_error_set(err, PFI_ERANGE, path, ln, "%s is negative", pfi_tm_field_name(f));
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
    for (int k = 0; k < PFI_TM_NFIELDS; k++) fprintf(f, ",%s", pfi_tm_field_name(k));
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
