/* See analysis_cli.h. */
#include "analysis_cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pfi/csv.h"
#include "pfi/sweeps_csv.h"

/* A held-out list that is not a sweeps file: groups of the main sweeps. */
static int mark_holdout(const char *cmd, pfi_csv *c, pfi_cli_dataset *d)
{
    pfi_error err = {0};
    const char *path = pfi_csv_name(c);
    static const char *const need[] = {"group", NULL};
    int rc = pfi_csv_require(c, need, &err);
    if (rc != PFI_OK) return pfi_cli_fail(cmd, &err);
    size_t col = (size_t)pfi_csv_col(c, "group");
    for (size_t r = 0; r < pfi_csv_rows(c); r++) {
        const char *name = pfi_csv_field(c, r, col);
        size_t i = 0;
        while (i < d->n && strcmp(d->obs[i].name, name) != 0)
            i++;
        if (i == d->n) {
            pfi_error_set(&err, PFI_ENOTFOUND, path, pfi_csv_line(c, r),
                          "held-out group '%s' is not in the telemetry", name);
            return pfi_cli_fail(cmd, &err);
        }
        d->obs[i].holdout = 1;
    }
    return PFI_EXIT_OK;
}

int pfi_cli_dataset_load(const char *cmd, const char *sweeps, const char *telemetry,
                         const char *holdout, double boost_mhz, pfi_cli_dataset *d)
{
    memset(d, 0, sizeof *d);
    pfi_error err = {0};
    pfi_csv *hc = NULL;
    int rc = pfi_sweeps_read(sweeps, 0, &d->sweeps, &err);
    if (rc == PFI_OK) rc = pfi_telemetry_read(telemetry, &d->tm, &err);
    if (rc == PFI_OK && holdout) {
        rc = pfi_csv_read_file(holdout, &hc, &err);
        /* a sweeps file: its groups are the validation set */
        if (rc == PFI_OK && pfi_csv_col(hc, "cap_w") >= 0) {
            rc = pfi_sweeps_from_csv(hc, 0, &d->held, &err);
            pfi_csv_destroy(hc);
            hc = NULL;
        }
    }
    if (rc == PFI_OK) {
        rc = pfi_analysis_join(d->sweeps, d->held, d->tm, boost_mhz, &d->obs, &d->n, &err);
        /* a line number refers to telemetry.csv; a group name to the pair */
        if (rc != PFI_OK) snprintf(err.file, sizeof err.file, "%s", telemetry);
        if (rc == PFI_ENOTFOUND && err.line > 0 && !holdout) {
            size_t len = strlen(err.msg);
            snprintf(err.msg + len, sizeof err.msg - len,
                     " (validation groups: pass their sweeps with --holdout)");
        }
    }
    if (rc != PFI_OK) {
        pfi_csv_destroy(hc);
        pfi_cli_dataset_free(d);
        return pfi_cli_fail(cmd, &err);
    }
    if (hc) {
        int ec = mark_holdout(cmd, hc, d);
        pfi_csv_destroy(hc);
        if (ec != PFI_EXIT_OK) {
            pfi_cli_dataset_free(d);
            return ec;
        }
    }
    return PFI_EXIT_OK;
}

void pfi_cli_dataset_free(pfi_cli_dataset *d)
{
    free(d->obs);
    pfi_telemetry_destroy(d->tm);
    pfi_sweeps_destroy(d->sweeps);
    pfi_sweeps_destroy(d->held);
    memset(d, 0, sizeof *d);
}

int pfi_cli_parse_positive(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || !(v > 0)) return -1;
    *out = v;
    return 0;
}
