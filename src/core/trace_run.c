/* A run's trace to its steady-state point (see include/core/pfi/trace_run.h). */
#include "pfi/trace_run.h"

#include <math.h>
#include <stdlib.h>

#include "pfi/tm_aggregate.h"

void pfi_trace_run_free(pfi_trace_run *r)
{
    if (!r) return;
    free(r->name);
    free(r->t);
    free(r->tm);
    free(r->label);
    free(r->tput_t);
    free(r->tput);
    *r = (pfi_trace_run){.cap_w = NAN};
}

/* Room for one more element in arrays holding n: capacity doubles at powers of two. */
static int grow(void **a, size_t n, size_t elem)
{
    if (n != 0 && (n & (n - 1)) != 0) return PFI_OK;
    void *p = realloc(*a, (n ? 2 * n : 1) * elem);
    if (!p) return PFI_ENOMEM;
    *a = p;
    return PFI_OK;
}

int pfi_trace_run_add_sample(pfi_trace_run *r, double t, const pfi_tm_row *row)
{
    if (r->label || !isfinite(t) || (r->n && !(t > r->t[r->n - 1]))) return PFI_EINVAL;
    if (grow((void **)&r->t, r->n, sizeof *r->t) != PFI_OK ||
        grow((void **)&r->tm, r->n, sizeof *r->tm) != PFI_OK)
        return PFI_ENOMEM;
    r->t[r->n] = t;
    r->tm[r->n] = *row;
    r->tm[r->n].group = NULL;
    r->n++;
    return PFI_OK;
}

int pfi_trace_run_add_tput(pfi_trace_run *r, double t, double tok_s)
{
    size_t n = r->n_tput;
    if (grow((void **)&r->tput_t, n, sizeof *r->tput_t) != PFI_OK ||
        grow((void **)&r->tput, n, sizeof *r->tput) != PFI_OK)
        return PFI_ENOMEM;
    r->tput_t[n] = t;
    r->tput[n] = tok_s;
    r->n_tput = n + 1;
    return PFI_OK;
}

int pfi_trace_run_add_steps(pfi_trace_run *r, const double *t, const double *tokens, size_t n,
                            pfi_error *err)
{
    for (size_t i = 1; i < n; i++) {
        double dt = t[i] - t[i - 1], dk = tokens[i] - tokens[i - 1];
        if (!(dt > 0))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "step %zu of run %s: time %g is not after %g", i + 1,
                                 r->name ? r->name : "", t[i], t[i - 1]);
        if (!(dk >= 0))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "step %zu of run %s: cumulative tokens go down (%g after %g)",
                                 i + 1, r->name ? r->name : "", tokens[i], tokens[i - 1]);
        if (pfi_trace_run_add_tput(r, t[i], dk / dt) != PFI_OK)
            return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    return PFI_OK;
}

static int by_value_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* Mean and standard error of the largest ceil(frac * m) of v[0..m) (sorts
 * v). The count rule is pfi_trace_top_mean's (10% of 20 is 2). */
static void top_stats(double *v, size_t m, double frac, double *mean, double *sem, size_t *k_out)
{
    qsort(v, m, sizeof *v, by_value_desc);
    size_t k = (size_t)ceil(frac * (double)m - 1e-9);
    if (k < 1) k = 1;
    if (k > m) k = m;
    double sum = 0;
    for (size_t i = 0; i < k; i++)
        sum += v[i];
    double mu = sum / (double)k, ss = 0;
    for (size_t i = 0; i < k; i++)
        ss += (v[i] - mu) * (v[i] - mu);
    *mean = mu;
    *sem = k > 1 ? sqrt(ss / (double)(k - 1) / (double)k) : 0;
    *k_out = k;
}

/* Phase starts from labels: the first sample of each labelled phase; a
 * skipped phase starts with the next one (trace.h's rule). */
static void label_starts(const pfi_trace_run *r, double start[PFI_PHASE_COUNT])
{
    for (int k = 0; k < PFI_PHASE_COUNT; k++)
        start[k] = NAN;
    for (size_t i = 0; i < r->n; i++) {
        int ph = r->label[i];
        if (ph >= 0 && ph < PFI_PHASE_COUNT && isnan(start[ph])) start[ph] = r->t[i];
    }
    for (int k = PFI_PHASE_COUNT - 2; k >= 0; k--)
        if (isnan(start[k])) start[k] = start[k + 1];
}

int pfi_trace_run_summarize(const pfi_trace_run *r, const pfi_trace_params *p, double top_frac,
                            pfi_trace_summary *out, pfi_error *err)
{
    const char *name = r->name ? r->name : "";
    if (!(top_frac > 0 && top_frac <= 1))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "top fraction %g is not in (0, 1]",
                             top_frac);
    *out = (pfi_trace_summary){.samples = r->n, .tput = NAN, .tput_sem = NAN};
    if (r->n == 0) return pfi_error_set(err, PFI_ENODATA, NULL, 0, "run %s has no samples", name);
    double *fb = malloc(r->n * sizeof *fb), *util = malloc(r->n * sizeof *util);
    double *v = malloc((r->n > r->n_tput ? r->n : r->n_tput) * sizeof *v);
    pfi_tm_row *train = malloc(r->n * sizeof *train);
    int rc = PFI_OK;
    if (!fb || !util || !v || !train) {
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        goto done;
    }
    if (r->label) {
        label_starts(r, out->start);
    } else {
        for (size_t i = 0; i < r->n; i++) {
            const pfi_tm_row *s = &r->tm[i];
            fb[i] = (s->valid >> PFI_TM_FB_USED & 1u) ? s->v[PFI_TM_FB_USED] : NAN;
            util[i] = (s->valid >> PFI_TM_GPU_UTIL & 1u) ? s->v[PFI_TM_GPU_UTIL] : NAN;
        }
        rc = pfi_trace_segment(r->t, fb, util, r->n, p, NULL, out->start, err);
        if (rc != PFI_OK) goto done;
    }
    double t0 = out->start[PFI_PHASE_TRAINING];
    if (isnan(t0)) {
        rc = pfi_error_set(err, PFI_ENODATA, NULL, 0,
                           "run %s never reaches training (GPU utilisation >= 50%% held, "
                           "frame buffer loaded)",
                           name);
        goto done;
    }
    /* Training samples: with labels those labelled so (an idle stretch
     * labelled otherwise is left out), else every sample from its start. */
    size_t m = 0, mp = 0;
    for (size_t i = 0; i < r->n; i++) {
        int in = r->label ? r->label[i] == PFI_PHASE_TRAINING : r->t[i] >= t0;
        if (!in) continue;
        train[m++] = r->tm[i];
        if (r->tm[i].valid >> PFI_TM_POWER & 1u) v[mp++] = r->tm[i].v[PFI_TM_POWER] * r->gpus;
    }
    out->training_samples = m;
    if (mp == 0) {
        rc = pfi_error_set(err, PFI_ENODATA, NULL, 0, "run %s: no training sample has power", name);
        goto done;
    }
    top_stats(v, mp, top_frac, &out->power_w, &out->power_sem_w, &out->top_samples);
    rc = pfi_tm_aggregate(train, m, top_frac, &out->telemetry, err);
    if (rc != PFI_OK) goto done;
    out->telemetry.group = NULL;
    out->telemetry.line = 0;
    /* Throughput reports from the start of training to the run's last sample. */
    double t_end = r->t[r->n - 1];
    size_t mt = 0;
    for (size_t i = 0; i < r->n_tput; i++)
        if (r->tput_t[i] >= t0 && r->tput_t[i] <= t_end && isfinite(r->tput[i]))
            v[mt++] = r->tput[i];
    out->tput_samples = mt;
    if (mt > 0) {
        size_t k;
        top_stats(v, mt, top_frac, &out->tput, &out->tput_sem, &k);
    }
done:
    free(fb);
    free(util);
    free(v);
    free(train);
    return rc;
}
