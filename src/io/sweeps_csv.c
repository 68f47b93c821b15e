/* sweeps.csv reader and writer. */
#include "pfi/sweeps_csv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const pfi_sweeps_csv_columns[] = {
    "group",   "platform",         "model", "arch", "task", "gpus", "config", "cap_w",
    "power_w", "throughput_tok_s", NULL,
};

static int col(const pfi_csv *c, const char *name)
{
    return pfi_csv_col(c, name);
}

/* Plausibility limits (sweeps_csv.h): no GPU has a 10 kW cap or draw, and
 * 1e12 tokens/s is a thousand times today's largest clusters. */
#define MAX_W_PER_GPU 1e4
#define MAX_TPUT 1e12
#define SLACK 1.01

static int plausible(const pfi_sweeps *s, const char *file, pfi_error *err)
{
    for (size_t i = 0; i < pfi_sweeps_count(s); i++) {
        const pfi_group *g = pfi_sweeps_group(s, i);
        const pfi_run *top = &g->runs[g->n_runs - 1]; /* the uncapped run (finalize) */
        double n = g->meta.gpus;
        /* magnitudes first (pass 0): an absurd cap would pose as the uncapped run */
        for (size_t k = 0; k < 2 * g->n_runs; k++) {
            const pfi_run *r = &g->runs[k % g->n_runs];
            const char *why = NULL;
            char msg[200];
            if (k < g->n_runs) {
                if (r->cap_w > MAX_W_PER_GPU || r->power_w > MAX_W_PER_GPU * n ||
                    r->tput > MAX_TPUT) {
                    snprintf(msg, sizeof msg,
                             "implausible magnitude (cap_w %g W, power_w %g W over %g GPUs, "
                             "throughput_tok_s %g; limits 10 kW a GPU, 1e12 tokens/s)",
                             r->cap_w, r->power_w, n, r->tput);
                    why = msg;
                }
            } else if (r->power_w > SLACK * r->cap_w * n) {
                snprintf(msg, sizeof msg,
                         "power_w %g W is above what the cap allows: %g W x %g GPUs = %g W",
                         r->power_w, r->cap_w, n, r->cap_w * n);
                why = msg;
            } else if (r != top && r->power_w > SLACK * top->power_w) {
                snprintf(msg, sizeof msg,
                         "capped run (%g W) draws %g W, more than the uncapped run's %g W "
                         "(line %ld)",
                         r->cap_w, r->power_w, top->power_w, top->line);
                why = msg;
            }
            if (why)
                return pfi_error_set(err, PFI_ERANGE, file, r->line,
                                     "group \"%.80s\": %s; pass --allow-implausible if the data "
                                     "really is so",
                                     g->name, why);
        }
    }
    return PFI_OK;
}

int pfi_sweeps_from_csv(const pfi_csv *c, double tdp_w, pfi_sweeps **out, pfi_error *err)
{
    return pfi_sweeps_from_csv_opts(c, tdp_w, 0, out, err);
}

int pfi_sweeps_from_csv_opts(const pfi_csv *c, double tdp_w, unsigned flags, pfi_sweeps **out,
                             pfi_error *err)
{
    *out = NULL;
    const char *file = pfi_csv_name(c);
    int rc = pfi_csv_require(c, pfi_sweeps_csv_columns, err);
    if (rc != PFI_OK) return rc;
    if (pfi_csv_rows(c) == 0) return pfi_error_set(err, PFI_ENODATA, file, 0, "no data rows");
    int cg = col(c, "group"), cpl = col(c, "platform"), cm = col(c, "model"), ca = col(c, "arch"),
        ct = col(c, "task"), cgp = col(c, "gpus"), ccf = col(c, "config"), ccap = col(c, "cap_w"),
        cp = col(c, "power_w"), cth = col(c, "throughput_tok_s"), csp = col(c, "power_sem_w"),
        cst = col(c, "throughput_sem_tok_s");

    pfi_sweeps *s = pfi_sweeps_create();
    if (!s) return pfi_error_set(err, PFI_ENOMEM, file, 0, "out of memory");
    for (size_t r = 0; r < pfi_csv_rows(c); r++) {
        long ln = pfi_csv_line(c, r);
        pfi_run run = {.line = ln};
        double gpus;
        if ((rc = pfi_csv_number(c, r, (size_t)cgp, 0, 0, &gpus, err)) ||
            (rc = pfi_csv_number(c, r, (size_t)ccap, 0, 0, &run.cap_w, err)) ||
            (rc = pfi_csv_number(c, r, (size_t)cp, 0, 0, &run.power_w, err)) ||
            (rc = pfi_csv_number(c, r, (size_t)cth, 0, 0, &run.tput, err)) ||
            (csp >= 0 && (rc = pfi_csv_number(c, r, (size_t)csp, 1, 0, &run.power_sem_w, err))) ||
            (cst >= 0 && (rc = pfi_csv_number(c, r, (size_t)cst, 1, 0, &run.tput_sem, err))))
            goto fail;
        if (gpus != floor(gpus) || gpus < 1 || gpus > 1e6) {
            rc = pfi_error_set(err, PFI_ERANGE, file, ln, "gpus must be a positive integer");
            goto fail;
        }
        pfi_group_meta m = {
            .platform = pfi_csv_field(c, r, (size_t)cpl),
            .model = pfi_csv_field(c, r, (size_t)cm),
            .arch = pfi_csv_field(c, r, (size_t)ca),
            .task = pfi_csv_field(c, r, (size_t)ct),
            .config = pfi_csv_field(c, r, (size_t)ccf),
            .gpus = (int)gpus,
        };
        if (strcmp(m.arch, "dense") != 0 && strcmp(m.arch, "moe") != 0) {
            rc = pfi_error_set(err, PFI_EPARSE, file, ln,
                               "arch must be dense or moe, got \"%.40s\"", m.arch);
            goto fail;
        }
        if (strcmp(m.task, "pt") != 0 && strcmp(m.task, "ft") != 0) {
            rc = pfi_error_set(err, PFI_EPARSE, file, ln, "task must be pt or ft, got \"%.40s\"",
                               m.task);
            goto fail;
        }
        rc = pfi_sweeps_add_run(s, pfi_csv_field(c, r, (size_t)cg), &m, &run, file, err);
        if (rc != PFI_OK) goto fail;
    }
    rc = pfi_sweeps_finalize(s, tdp_w, file, err);
    if (rc == PFI_OK && !(flags & PFI_SWEEPS_ALLOW_IMPLAUSIBLE)) rc = plausible(s, file, err);
    if (rc != PFI_OK) goto fail;
    *out = s;
    return PFI_OK;
fail:
    pfi_sweeps_destroy(s);
    return rc;
}

int pfi_sweeps_read(const char *path, double tdp_w, pfi_sweeps **out, pfi_error *err)
{
    return pfi_sweeps_read_opts(path, tdp_w, 0, out, err);
}

int pfi_sweeps_read_opts(const char *path, double tdp_w, unsigned flags, pfi_sweeps **out,
                         pfi_error *err)
{
    pfi_csv *c;
    *out = NULL;
    int rc = pfi_csv_read_file(path, &c, err);
    if (rc != PFI_OK) return rc;
    rc = pfi_sweeps_from_csv_opts(c, tdp_w, flags, out, err);
    pfi_csv_destroy(c);
    return rc;
}

void pfi_sweeps_write_header(FILE *f)
{
    fputs("group,platform,model,arch,task,gpus,config,cap_w,power_w,throughput_tok_s,"
          "power_sem_w,throughput_sem_tok_s\n",
          f);
}

/* A number, or an empty field for one not known (never "nan"). */
static void put_num(FILE *f, const char *fmt, double v)
{
    fputc(',', f);
    if (isfinite(v)) fprintf(f, fmt, v);
}

void pfi_sweeps_write_row(FILE *f, const char *group, const pfi_group_meta *m, const pfi_run *r)
{
    pfi_csv_put_field(f, group);
    fputc(',', f);
    pfi_csv_put_field(f, m->platform);
    fputc(',', f);
    pfi_csv_put_field(f, m->model);
    fprintf(f, ",%s,%s,%d,", m->arch, m->task, m->gpus);
    pfi_csv_put_field(f, m->config);
    put_num(f, "%.10g", r->cap_w);
    put_num(f, "%.10g", r->power_w);
    put_num(f, "%.10g", r->tput);
    put_num(f, "%.6g", r->power_sem_w);
    put_num(f, "%.6g", r->tput_sem);
    fputc('\n', f);
}

int pfi_sweeps_write(FILE *f, const pfi_sweeps *s)
{
    pfi_sweeps_write_header(f);
    for (size_t i = 0; i < pfi_sweeps_count(s); i++) {
        const pfi_group *g = pfi_sweeps_group(s, i);
        for (size_t k = 0; k < g->n_runs; k++)
            pfi_sweeps_write_row(f, g->name, &g->meta, &g->runs[k]);
    }
    return ferror(f) ? PFI_EIO : PFI_OK;
}
