/* Trace files: the format from the first line, and step logs (see
 * include/io/pfi/trace_read.h). */
#include "pfi/trace_read.h"

#include <stdlib.h>
#include <string.h>

#include "pfi/csv.h"
#include "pfi/fileio.h"
#include "trace_formats.h"

/* A Prometheus page starts with a comment or a metric line (no comma before
 * any '{'); a CSV with a header of comma-separated names. */
static int looks_like_prom(const char *buf, size_t len)
{
    size_t i = 0;
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) i = 3; /* a BOM: CSV's reader skips it */
    while (i < len && (buf[i] == '\n' || buf[i] == '\r' || buf[i] == ' '))
        i++;
    if (i < len && buf[i] == '#') return 1;
    for (; i < len && buf[i] != '\n'; i++) {
        if (buf[i] == ',') return 0;
        if (buf[i] == '{') return 1;
    }
    return 1;
}

int pfi_trace_parse(const char *buf, size_t len, const char *name, pfi_trace_set *set,
                    pfi_error *err)
{
    return looks_like_prom(buf, len) ? pfi_trace_prom_parse(buf, len, name, set, err)
                                     : pfi_trace_csv_parse(buf, len, name, set, err);
}

int pfi_trace_read(const char *path, pfi_trace_set *set, pfi_error *err)
{
    char *buf;
    size_t len;
    int rc = pfi_file_read_all(path, &buf, &len, err);
    if (rc != PFI_OK) return rc;
    rc = pfi_trace_parse(buf, len, path, set, err);
    free(buf);
    return rc;
}

/* The rows of one run (or all rows, run NULL) as arrays, then as rates. */
static int attach(const pfi_csv *c, int crun, const char *run, pfi_trace_run *r, pfi_error *err)
{
    size_t rows = pfi_csv_rows(c), m = 0;
    double *t = malloc((rows ? rows : 1) * sizeof *t), *k = malloc((rows ? rows : 1) * sizeof *k);
    int rc = PFI_OK;
    if (!t || !k) {
        rc = pfi_error_set(err, PFI_ENOMEM, pfi_csv_name(c), 0, "out of memory");
        goto done;
    }
    int ct = pfi_csv_col(c, "time_s"), ck = pfi_csv_col(c, "tokens");
    long first_line = 0;
    for (size_t i = 0; i < rows; i++) {
        if (run && strcmp(pfi_csv_field(c, i, (size_t)crun), run) != 0) continue;
        if ((rc = pfi_csv_number(c, i, (size_t)ct, 0, 0, &t[m], err)) != PFI_OK ||
            (rc = pfi_csv_number(c, i, (size_t)ck, 0, 0, &k[m], err)) != PFI_OK)
            goto done;
        if (!first_line) first_line = pfi_csv_line(c, i);
        m++;
    }
    rc = pfi_trace_run_add_steps(r, t, k, m, err);
    if (rc != PFI_OK && err) {
        /* name the file; the message names the step */
        snprintf(err->file, sizeof err->file, "%s", pfi_csv_name(c));
        err->line = first_line;
    }
done:
    free(t);
    free(k);
    return rc;
}

int pfi_trace_steps_read(const char *path, pfi_trace_set *set, pfi_error *err)
{
    pfi_csv *c = NULL;
    int rc = pfi_csv_read_file(path, &c, err);
    if (rc != PFI_OK) return rc;
    static const char *const need[] = {"time_s", "tokens", NULL};
    if ((rc = pfi_csv_require(c, need, err)) != PFI_OK) goto done;
    int crun = pfi_csv_col(c, "run");
    if (crun >= 0) {
        for (size_t i = 0; i < pfi_csv_rows(c); i++) {
            const char *name = pfi_csv_field(c, i, (size_t)crun);
            size_t j = 0;
            while (j < set->n && strcmp(set->runs[j].name, name) != 0)
                j++;
            if (j == set->n) {
                rc = pfi_error_set(err, PFI_ENOTFOUND, path, pfi_csv_line(c, i),
                                   "steps of run '%s', which no trace has", name);
                goto done;
            }
        }
    }
    for (size_t j = 0; j < set->n && rc == PFI_OK; j++)
        rc = attach(c, crun, crun >= 0 ? set->runs[j].name : NULL, &set->runs[j], err);
done:
    pfi_csv_destroy(c);
    return rc;
}
