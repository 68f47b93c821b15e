/* Per-GPU trace records into runs (see trace_build.h). */
#include "trace_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t run;
    int label;
    double t;
    long gpu;
    double v[PFI_TM_NFIELDS];
    uint32_t valid;
    double limit_w;
    long line;
} record;

struct trace_build {
    char file[256];
    record *rec;
    size_t n_rec, cap_rec;
    char **names;
    int *labelled; /* per run: some record carries a label */
    size_t n_runs, cap_runs;
};

trace_build *trace_build_create(const char *file)
{
    trace_build *b = calloc(1, sizeof *b);
    if (b) snprintf(b->file, sizeof b->file, "%s", file ? file : "");
    return b;
}

void trace_build_destroy(trace_build *b)
{
    if (!b) return;
    for (size_t i = 0; i < b->n_runs; i++)
        free(b->names[i]);
    free(b->names);
    free(b->labelled);
    free(b->rec);
    free(b);
}

void trace_build_stem(const char *path, char *buf, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(buf, len, "%s", base);
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf) *dot = '\0';
}

static int run_index(trace_build *b, const char *run, size_t *out)
{
    for (size_t i = b->n_runs; i-- > 0;) /* records of one run usually come together */
        if (strcmp(b->names[i], run) == 0) {
            *out = i;
            return PFI_OK;
        }
    if (b->n_runs == b->cap_runs) {
        size_t cap = b->cap_runs ? 2 * b->cap_runs : 8;
        char **nn = realloc(b->names, cap * sizeof *nn);
        if (!nn) return PFI_ENOMEM;
        b->names = nn;
        int *nl = realloc(b->labelled, cap * sizeof *nl);
        if (!nl) return PFI_ENOMEM;
        b->labelled = nl;
        b->cap_runs = cap;
    }
    if (!(b->names[b->n_runs] = strdup(run))) return PFI_ENOMEM;
    b->labelled[b->n_runs] = 0;
    *out = b->n_runs++;
    return PFI_OK;
}

int trace_build_add(trace_build *b, const char *run, int label, double t, long gpu, const double *v,
                    uint32_t valid, double limit_w, long line, pfi_error *err)
{
    if (!isfinite(t))
        return pfi_error_set(err, PFI_EPARSE, b->file, line, "time is not a finite number");
    size_t ri;
    if (run_index(b, run, &ri) != PFI_OK ||
        (b->n_rec == b->cap_rec && !(b->cap_rec = b->cap_rec ? 2 * b->cap_rec : 256,
                                     b->rec = realloc(b->rec, b->cap_rec * sizeof *b->rec))))
        return pfi_error_set(err, PFI_ENOMEM, b->file, line, "out of memory");
    record *r = &b->rec[b->n_rec++];
    r->run = ri;
    r->label = label;
    r->t = t;
    r->gpu = gpu;
    memcpy(r->v, v, sizeof r->v);
    r->valid = valid;
    r->limit_w = limit_w;
    r->line = line;
    if (label >= 0) b->labelled[ri] = 1;
    return PFI_OK;
}

static int by_run_time_gpu(const void *a, const void *b)
{
    const record *x = a, *y = b;
    if (x->run != y->run) return x->run < y->run ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->gpu != y->gpu) return x->gpu < y->gpu ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

/* Builds run ri from its sorted records rec[0..m). */
static int build_run(trace_build *b, size_t ri, const record *rec, size_t m, pfi_trace_run *out,
                     pfi_error *err)
{
    *out = (pfi_trace_run){.cap_w = NAN};
    out->name = strdup(b->names[ri]);
    out->t = malloc(m * sizeof *out->t);
    out->tm = calloc(m, sizeof *out->tm);
    if (b->labelled[ri]) out->label = malloc(m);
    long *gpus = malloc(m * sizeof *gpus);
    if (!out->name || !out->t || !out->tm || (b->labelled[ri] && !out->label) || !gpus) {
        free(gpus);
        return pfi_error_set(err, PFI_ENOMEM, b->file, 0, "out of memory");
    }
    size_t n_gpus = 0, n_lim = 0;
    double lim_sum = 0;
    for (size_t i = 0; i < m;) {
        size_t j = i;
        double sum[PFI_TM_NFIELDS] = {0};
        unsigned cnt[PFI_TM_NFIELDS] = {0};
        for (; j < m && rec[j].t == rec[i].t; j++) {
            if (j > i && rec[j].gpu == rec[j - 1].gpu) {
                free(gpus);
                return pfi_error_set(err, PFI_EPARSE, b->file, rec[j].line,
                                     "a second sample of GPU %ld at time %g (line %ld has one)",
                                     rec[j].gpu, rec[j].t, rec[j - 1].line);
            }
            size_t g = 0;
            while (g < n_gpus && gpus[g] != rec[j].gpu)
                g++;
            if (g == n_gpus) gpus[n_gpus++] = rec[j].gpu;
            for (int f = 0; f < PFI_TM_NFIELDS; f++)
                if (rec[j].valid >> f & 1u) sum[f] += rec[j].v[f], cnt[f]++;
            if (isfinite(rec[j].limit_w)) lim_sum += rec[j].limit_w, n_lim++;
        }
        pfi_tm_row *s = &out->tm[out->n];
        for (int f = 0; f < PFI_TM_NFIELDS; f++) {
            s->v[f] = cnt[f] ? sum[f] / cnt[f] : NAN;
            if (cnt[f]) s->valid |= 1u << f;
        }
        s->line = rec[i].line;
        out->t[out->n] = rec[i].t;
        if (out->label) out->label[out->n] = (signed char)rec[i].label;
        out->n++;
        i = j;
    }
    free(gpus);
    out->gpus = (int)n_gpus;
    if (n_lim) out->cap_w = lim_sum / (double)n_lim;
    return PFI_OK;
}

int trace_build_finish(trace_build *b, pfi_trace_set *set, pfi_error *err)
{
    for (size_t ri = 0; ri < b->n_runs; ri++)
        for (size_t k = 0; k < set->n; k++)
            if (strcmp(set->runs[k].name, b->names[ri]) == 0)
                return pfi_error_set(err, PFI_EINVAL, b->file, 0,
                                     "run %s is already in another trace", b->names[ri]);
    if (b->n_rec == 0)
        return pfi_error_set(err, PFI_ENODATA, b->file, 0, "no samples (only idle ones?)");
    pfi_trace_run *runs = realloc(set->runs, (set->n + b->n_runs) * sizeof *runs);
    if (!runs) return pfi_error_set(err, PFI_ENOMEM, b->file, 0, "out of memory");
    set->runs = runs;
    qsort(b->rec, b->n_rec, sizeof *b->rec, by_run_time_gpu);
    size_t i = 0;
    for (size_t ri = 0; ri < b->n_runs; ri++) {
        size_t j = i;
        while (j < b->n_rec && b->rec[j].run == ri)
            j++;
        pfi_trace_run *r = &set->runs[set->n];
        int rc = build_run(b, ri, b->rec + i, j - i, r, err);
        if (rc != PFI_OK) {
            pfi_trace_run_free(r);
            return rc;
        }
        set->n++;
        i = j;
    }
    return PFI_OK;
}

void pfi_trace_set_free(pfi_trace_set *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++)
        pfi_trace_run_free(&s->runs[i]);
    free(s->runs);
    s->runs = NULL;
    s->n = 0;
}
