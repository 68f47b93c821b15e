/* The --jobs-file of SLA floors (include/control/pfi/sla_file.h). */
#include "pfi/sla_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/csv.h"

int pfi_sla_read(const char *path, pfi_sla **out, size_t *n, pfi_error *err)
{
    *out = NULL;
    *n = 0;
    pfi_csv *c = NULL;
    static const char *const need[] = {"job", "sla", NULL};
    int rc = pfi_csv_read_file(path, &c, err);
    if (rc == PFI_OK) rc = pfi_csv_require(c, need, err);
    if (rc != PFI_OK) {
        pfi_csv_destroy(c);
        return rc;
    }
    size_t rows = pfi_csv_rows(c), cj = (size_t)pfi_csv_col(c, "job"),
           cs = (size_t)pfi_csv_col(c, "sla");
    pfi_sla *s = calloc(rows ? rows : 1, sizeof *s);
    if (!s) rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    for (size_t r = 0; rc == PFI_OK && r < rows; r++) {
        const char *id = pfi_csv_field(c, r, cj);
        long line = pfi_csv_line(c, r);
        if (!*id || strlen(id) >= sizeof s[r].job) {
            rc = pfi_error_set(err, PFI_EINVAL, path, line, "a job id of 1-128 characters");
            break;
        }
        snprintf(s[r].job, sizeof s[r].job, "%s", id);
        if ((rc = pfi_csv_number(c, r, cs, 0, 0, &s[r].frac, err)) != PFI_OK) break;
        if (!(s[r].frac >= 0 && s[r].frac <= 1))
            rc = pfi_error_set(err, PFI_EINVAL, path, line, "sla must be a fraction in [0, 1]");
        for (size_t k = 0; rc == PFI_OK && k < r; k++)
            if (strcmp(s[k].job, s[r].job) == 0)
                rc = pfi_error_set(err, PFI_EINVAL, path, line, "job %s listed twice", id);
    }
    pfi_csv_destroy(c);
    if (rc != PFI_OK) {
        free(s);
        return rc;
    }
    *out = s;
    *n = rows;
    return PFI_OK;
}

double pfi_sla_of(const pfi_sla *s, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s[i].job, id) == 0) return s[i].frac;
    return 0;
}
