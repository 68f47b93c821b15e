/* Concatenated dcgm-exporter pages as a trace (see trace_read.h). Each page
 * is parsed on its own (HELP and TYPE repeat from page to page). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/prom.h"
#include "pfi/trace_read.h"
#include "trace_build.h"
#include "trace_formats.h"

static const char *const limit_series[] = {"DCGM_FI_DEV_ENFORCED_POWER_LIMIT",
                                           "DCGM_FI_DEV_POWER_MGMT_LIMIT", NULL};

/* A `# time SECONDS` line: 1 and *t when line[0..len) is one. */
static int time_line(const char *line, size_t len, double *t)
{
    if (len < 8 || strncmp(line, "# time ", 7) != 0) return 0;
    char buf[64];
    if (len - 7 >= sizeof buf) return 0;
    memcpy(buf, line + 7, len - 7);
    buf[len - 7] = '\0';
    char *end;
    *t = strtod(buf, &end);
    while (*end == ' ' || *end == '\r')
        end++;
    return *end == '\0' && end != buf;
}

typedef struct {
    long gpu;
    double t;
    double v[PFI_TM_NFIELDS];
    uint32_t valid;
    double limit_w;
    long line;
} gpu_rec;

/* One page (buf[0..len), starting at source line line0) at time t_page. */
static int page(const char *buf, size_t len, long line0, double t_page, const char *name,
                const char *run, trace_build *b, pfi_error *err)
{
    pfi_prom_doc *d = NULL;
    int rc = pfi_prom_parse(buf, len, name, &d, err);
    if (rc != PFI_OK) {
        if (err && err->line > 0) err->line += line0 - 1;
        return rc;
    }
    size_t ns = pfi_prom_doc_series_count(d), nr = 0;
    gpu_rec *recs = calloc(ns ? ns : 1, sizeof *recs);
    if (!recs) {
        pfi_prom_doc_destroy(d);
        return pfi_error_set(err, PFI_ENOMEM, name, 0, "out of memory");
    }
    for (size_t i = 0; i < ns; i++) {
        const pfi_prom_series *s = pfi_prom_doc_series(d, i);
        int f = -1, is_limit = 0;
        for (int k = 0; k < PFI_TM_NFIELDS && f < 0; k++)
            if (strcmp(s->name, pfi_tm_field_name(k)) == 0) f = k;
        for (int k = 0; limit_series[k] && f < 0 && !is_limit; k++)
            is_limit = strcmp(s->name, limit_series[k]) == 0;
        if (f < 0 && !is_limit) continue;
        if (pfi_prom_series_label(s, "GPU_I_ID")) continue; /* a MIG instance */
        if (!isfinite(s->value) || pfi_prom_dcgm_blank(s->value)) continue;
        const char *gl = pfi_prom_series_label(s, "gpu");
        char *end = NULL;
        long g = gl ? strtol(gl, &end, 10) : -1;
        if (!gl || end == gl || *end || g < 0) {
            rc = pfi_error_set(err, PFI_EPARSE, name, s->line + line0 - 1,
                               "%s has no numeric gpu label", s->name);
            goto done;
        }
        double t = s->has_timestamp ? (double)s->timestamp_ms / 1000.0 : t_page;
        if (isnan(t)) {
            rc = pfi_error_set(err, PFI_EPARSE, name, s->line + line0 - 1,
                               "a sample without a time: no '# time SECONDS' line before it "
                               "and no timestamp");
            goto done;
        }
        size_t k = 0;
        while (k < nr && !(recs[k].gpu == g && recs[k].t == t))
            k++;
        if (k == nr) {
            recs[nr] = (gpu_rec){.gpu = g, .t = t, .limit_w = NAN, .line = s->line + line0 - 1};
            for (int q = 0; q < PFI_TM_NFIELDS; q++)
                recs[nr].v[q] = NAN;
            nr++;
        }
        if (is_limit) {
            if (isnan(recs[k].limit_w)) recs[k].limit_w = s->value;
        } else {
            recs[k].v[f] = s->value;
            recs[k].valid |= 1u << f;
        }
    }
    for (size_t k = 0; k < nr && rc == PFI_OK; k++)
        rc = trace_build_add(b, run, -1, recs[k].t, recs[k].gpu, recs[k].v, recs[k].valid,
                             recs[k].limit_w, recs[k].line, err);
done:
    free(recs);
    pfi_prom_doc_destroy(d);
    return rc;
}

int pfi_trace_prom_parse(const char *buf, size_t len, const char *name, pfi_trace_set *set,
                         pfi_error *err)
{
    char run[256];
    trace_build_stem(name, run, sizeof run);
    trace_build *b = trace_build_create(name);
    if (!b) return pfi_error_set(err, PFI_ENOMEM, name, 0, "out of memory");
    int rc = PFI_OK;
    double t_page = NAN;
    size_t start = 0, pos = 0;
    long line = 1, page_line = 1;
    while (rc == PFI_OK && pos <= len) {
        size_t eol = pos;
        while (eol < len && buf[eol] != '\n')
            eol++;
        double t;
        int is_time = eol > pos && time_line(buf + pos, eol - pos, &t);
        if (is_time || eol >= len) {
            size_t end = is_time ? pos : len;
            if (end > start)
                rc = page(buf + start, end - start, page_line, t_page, name, run, b, err);
            if (is_time) {
                t_page = t;
                start = eol < len ? eol + 1 : len;
                page_line = line + 1;
            }
        }
        if (eol >= len) break;
        pos = eol + 1;
        line++;
    }
    if (rc == PFI_OK) rc = trace_build_finish(b, set, err);
    trace_build_destroy(b);
    return rc;
}
