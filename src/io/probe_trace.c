/* The h200-probe trace.csv reader (see include/io/pfi/probe_trace.h). */
#include "pfi/probe_trace.h"

#include <stdlib.h>
#include <string.h>

#include "pfi/csv.h"

static const char *const cols[] = {"phase",        "power_mW", "sm_clock", "sm_util", "tensor_util",
                                   "dram_bw_util", "util_mem", "util_gpu", NULL};

static int from_csv(pfi_csv *c, const char *path, const char *const *phases,
                    pfi_gpumodel_sample **out, size_t **phase_of, size_t *n, pfi_error *err);

int pfi_probe_trace_read(const char *path, const char *const *phases, pfi_gpumodel_sample **out,
                         size_t **phase_of, size_t *n, pfi_error *err)
{
    pfi_csv *c = NULL;
    *out = NULL;
    *n = 0;
    if (phase_of) *phase_of = NULL;
    int rc = pfi_csv_read_file(path, &c, err);
    if (rc != PFI_OK) return rc;
    return from_csv(c, path, phases, out, phase_of, n, err);
}

int pfi_probe_trace_parse(const char *buf, size_t len, const char *name, const char *const *phases,
                          pfi_gpumodel_sample **out, size_t **phase_of, size_t *n, pfi_error *err)
{
    pfi_csv *c = NULL;
    *out = NULL;
    *n = 0;
    if (phase_of) *phase_of = NULL;
    int rc = pfi_csv_parse(buf, len, name, &c, err);
    if (rc != PFI_OK) return rc;
    return from_csv(c, name, phases, out, phase_of, n, err);
}

/* Takes ownership of c. */
static int from_csv(pfi_csv *c, const char *path, const char *const *phases,
                    pfi_gpumodel_sample **out, size_t **phase_of, size_t *n, pfi_error *err)
{
    int rc = pfi_csv_require(c, cols, err);
    if (rc != PFI_OK) {
        pfi_csv_destroy(c);
        return rc;
    }
    size_t rows = pfi_csv_rows(c), m = 0;
    pfi_gpumodel_sample *s = calloc(rows ? rows : 1, sizeof *s);
    size_t *ph = calloc(rows ? rows : 1, sizeof *ph);
    if (!s || !ph) {
        rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
        goto fail;
    }
    int ci[8];
    for (int k = 0; cols[k]; k++)
        ci[k] = pfi_csv_col(c, cols[k]);
    for (size_t r = 0; r < rows; r++) {
        const char *phase = pfi_csv_field(c, r, (size_t)ci[0]);
        size_t which = 0;
        while (phases[which] && strcmp(phases[which], phase) != 0)
            which++;
        if (!phases[which]) continue;
        double v[7];
        for (int k = 0; k < 7; k++)
            if ((rc = pfi_csv_number(c, r, (size_t)ci[k + 1], 0, 0, &v[k], err)) != PFI_OK)
                goto fail;
        s[m] = (pfi_gpumodel_sample){.power_w = v[0] / 1000.0,
                                     .sm_clock_mhz = v[1],
                                     .sm_active = v[2] / 100.0,
                                     .tensor_active = v[3] / 100.0,
                                     .dram_active = v[4] / 100.0,
                                     .mem_copy_util = v[5],
                                     .gpu_util = v[6]};
        ph[m++] = which;
    }
    pfi_csv_destroy(c);
    *out = s;
    *n = m;
    if (phase_of)
        *phase_of = ph;
    else
        free(ph);
    return PFI_OK;
fail:
    pfi_csv_destroy(c);
    free(s);
    free(ph);
    return rc;
}
