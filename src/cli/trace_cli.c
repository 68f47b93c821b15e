/* Measured runs as sweeps.csv, telemetry.csv and JSON (see trace_cli.h). */
#include "trace_cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/fileio.h"
#include "pfi/json.h"
#include "pfi/sweeps_csv.h"
#include "pfi/telemetry_csv.h"

json_t *pfi_cli_measured_json(const pfi_cli_measured *m)
{
    const pfi_trace_summary *s = &m->sum;
    json_t *o = json_object(), *ph = json_object(), *tm = json_object();
    pfi_json_set(o, "run", json_string(m->run->name));
    pfi_json_set(o, "gpus", json_integer(m->run->gpus));
    pfi_json_set(o, "cap_w", pfi_json_num(m->cap_w));
    for (int k = 0; k < PFI_PHASE_COUNT; k++)
        pfi_json_set(ph, pfi_trace_phase_name(k), m->ok ? pfi_json_num(s->start[k]) : json_null());
    pfi_json_set(o, "phases", ph);
    pfi_json_set(o, "samples", json_integer((json_int_t)m->run->n));
    pfi_json_set(o, "training_samples", json_integer((json_int_t)s->training_samples));
    pfi_json_set(o, "power_w", m->ok ? pfi_json_num(s->power_w) : json_null());
    pfi_json_set(o, "power_sem_w", m->ok ? pfi_json_num(s->power_sem_w) : json_null());
    pfi_json_set(o, "throughput_tok_s", m->ok ? pfi_json_num(s->tput) : json_null());
    pfi_json_set(o, "throughput_sem_tok_s", m->ok ? pfi_json_num(s->tput_sem) : json_null());
    for (int f = 0; f < PFI_TM_NFIELDS; f++)
        pfi_json_set(tm, pfi_tm_field_name(f),
                     m->ok && (s->telemetry.valid >> f & 1u) ? pfi_json_num(s->telemetry.v[f])
                                                             : json_null());
    pfi_json_set(o, "telemetry", tm);
    if (!m->ok && m->why) pfi_json_set(o, "error", json_string(m->why));
    return o;
}

static const char *group_of(const pfi_cli_meta *meta, const pfi_cli_measured *m)
{
    return meta->group ? meta->group : m->run->name;
}

int pfi_cli_write_sweeps(FILE *f, const pfi_cli_meta *meta, const pfi_cli_measured *m, size_t n)
{
    pfi_sweeps_write_header(f);
    for (size_t i = 0; i < n; i++) {
        if (!m[i].ok) continue;
        pfi_group_meta gm = {meta->platform, meta->model,  meta->arch,
                             meta->task,     meta->config, m[i].run->gpus};
        pfi_run r = {.cap_w = m[i].cap_w,
                     .power_w = m[i].sum.power_w,
                     .tput = m[i].sum.tput,
                     .power_sem_w = m[i].sum.power_sem_w,
                     .tput_sem = m[i].sum.tput_sem};
        pfi_sweeps_write_row(f, group_of(meta, &m[i]), &gm, &r);
    }
    return ferror(f) ? PFI_EIO : PFI_OK;
}

int pfi_cli_write_telemetry(FILE *f, const pfi_cli_meta *meta, const pfi_cli_measured *m, size_t n)
{
    pfi_telemetry t = {calloc(n ? n : 1, sizeof *t.rows), 0};
    size_t *best = calloc(n ? n : 1, sizeof *best);
    if (!t.rows || !best) {
        free(t.rows);
        free(best);
        return PFI_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (!m[i].ok) continue;
        const char *g = group_of(meta, &m[i]);
        size_t k = 0;
        while (k < t.n && strcmp(t.rows[k].group, g) != 0)
            k++;
        if (k == t.n)
            t.n++;
        else if (!(m[i].cap_w > m[best[k]].cap_w))
            continue;
        best[k] = i;
        t.rows[k] = m[i].sum.telemetry;
        t.rows[k].group = (char *)g; /* borrowed: t is not destroyed */
    }
    int rc = pfi_telemetry_write(f, &t);
    free(t.rows);
    free(best);
    return rc;
}

typedef struct {
    const pfi_cli_meta *meta;
    const pfi_cli_measured *m;
    size_t n;
} out_ctx;

static int put_sweeps(FILE *f, void *ctx)
{
    out_ctx *c = ctx;
    return pfi_cli_write_sweeps(f, c->meta, c->m, c->n);
}

static int put_telemetry(FILE *f, void *ctx)
{
    out_ctx *c = ctx;
    return pfi_cli_write_telemetry(f, c->meta, c->m, c->n);
}

int pfi_cli_write_telemetry_file(const char *path, const pfi_cli_meta *meta,
                                 const pfi_cli_measured *m, size_t n, pfi_error *err)
{
    out_ctx c = {meta, m, n};
    return pfi_file_write_atomic(path, put_telemetry, &c, err);
}

int pfi_cli_write_outputs(const char *dir, const pfi_cli_meta *meta, const pfi_cli_measured *m,
                          size_t n, pfi_error *err)
{
    out_ctx c = {meta, m, n};
    char path[4096];
    snprintf(path, sizeof path, "%s/sweeps.csv", dir);
    int rc = pfi_file_write_atomic(path, put_sweeps, &c, err);
    if (rc != PFI_OK) return rc;
    snprintf(path, sizeof path, "%s/telemetry.csv", dir);
    return pfi_cli_write_telemetry_file(path, meta, m, n, err);
}
