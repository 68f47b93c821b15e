/* Phase segmentation and rolling top-10% aggregates (see include/pfi/trace.h). */
#include "pfi/trace.h"

#include "pfi/quantile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *pfi_trace_phase_name(pfi_phase ph)
{
    switch (ph) {
    case PFI_PHASE_WARMUP:
        return "warmup";
    case PFI_PHASE_STARTUP:
        return "startup";
    case PFI_PHASE_TRAINING:
        return "training";
    default:
        return "unknown";
    }
}

void pfi_trace_params_default(pfi_trace_params *p)
{
    p->loaded_fb_mib = 10240.0; /* 10 GiB */
    p->train_util_pct = 50.0;
    p->sustain_s = 10.0;
}

typedef struct {
    double t, util;
} pending_pt;

struct pfi_trace_seg {
    pfi_trace_params p;
    pfi_phase phase;
    double start[PFI_PHASE_COUNT];
    double last_t;
    int any;
    /* Samples from the current training candidate on (only in startup). */
    pending_pt *pend;
    size_t n_pend, cap_pend;
    double pend_sum;
};

int pfi_trace_seg_create(const pfi_trace_params *p, pfi_trace_seg **out)
{
    *out = NULL;
    pfi_trace_seg *s = calloc(1, sizeof *s);
    if (!s) return PFI_ENOMEM;
    if (p)
        s->p = *p;
    else
        pfi_trace_params_default(&s->p);
    if (!(s->p.sustain_s >= 0) || !isfinite(s->p.train_util_pct)) {
        free(s);
        return PFI_EINVAL;
    }
    s->phase = PFI_PHASE_WARMUP;
    for (int i = 0; i < PFI_PHASE_COUNT; i++)
        s->start[i] = NAN;
    *out = s;
    return PFI_OK;
}

void pfi_trace_seg_destroy(pfi_trace_seg *s)
{
    if (!s) return;
    free(s->pend);
    free(s);
}

static void pend_drop_front(pfi_trace_seg *s)
{
    s->pend_sum -= s->pend[0].util;
    memmove(s->pend, s->pend + 1, (s->n_pend - 1) * sizeof *s->pend);
    s->n_pend--;
    if (s->n_pend == 0) s->pend_sum = 0; /* no drift from repeated subtraction */
}

/* The startup -> training test, one sample at a time. The candidate is the
 * oldest pending sample; it is dropped while it is idle itself or the mean
 * from it on has fallen below the threshold, so the window always starts at a
 * busy sample from which utilisation has held so far. */
static void startup_step(pfi_trace_seg *s, double t, double util)
{
    const double thr = s->p.train_util_pct;
    if (s->n_pend == 0 && !(util >= thr)) return;
    if (s->n_pend == s->cap_pend) {
        size_t cap = s->cap_pend ? 2 * s->cap_pend : 16;
        pending_pt *p = realloc(s->pend, cap * sizeof *p);
        if (!p) return; /* out of memory: the candidate waits for the next sample */
        s->pend = p;
        s->cap_pend = cap;
    }
    s->pend[s->n_pend++] = (pending_pt){t, util};
    s->pend_sum += util;
    while (s->n_pend > 0 && (!(s->pend[0].util >= thr) || s->pend_sum / (double)s->n_pend < thr))
        pend_drop_front(s);
    if (s->n_pend > 0 && s->pend[s->n_pend - 1].t - s->pend[0].t >= s->p.sustain_s) {
        s->phase = PFI_PHASE_TRAINING;
        s->start[PFI_PHASE_TRAINING] = s->pend[0].t;
        s->n_pend = 0;
        s->pend_sum = 0;
    }
}

pfi_phase pfi_trace_seg_push(pfi_trace_seg *s, double t, double fb_mib, double util_pct)
{
    if (!isfinite(t) || (s->any && !(t > s->last_t))) return s->phase;
    if (!s->any) s->start[PFI_PHASE_WARMUP] = t;
    s->any = 1;
    s->last_t = t;
    double util = isfinite(util_pct) ? util_pct : 0.0;
    if (s->phase == PFI_PHASE_WARMUP) {
        if (isnan(fb_mib) || fb_mib >= s->p.loaded_fb_mib) {
            s->phase = PFI_PHASE_STARTUP;
            s->start[PFI_PHASE_STARTUP] = t;
        }
    }
    if (s->phase == PFI_PHASE_STARTUP) startup_step(s, t, util);
    return s->phase;
}

pfi_phase pfi_trace_seg_phase(const pfi_trace_seg *s)
{
    return s->phase;
}

double pfi_trace_seg_start(const pfi_trace_seg *s, pfi_phase ph)
{
    if ((int)ph < 0 || ph >= PFI_PHASE_COUNT) return NAN;
    return s->start[ph];
}

int pfi_trace_segment(const double *t, const double *fb_mib, const double *util_pct, size_t n,
                      const pfi_trace_params *p, pfi_phase *phase, double start[PFI_PHASE_COUNT],
                      pfi_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(t[i]))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "sample %zu: time is not finite", i + 1);
        if (i > 0 && !(t[i] > t[i - 1]))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "sample %zu: time %g is not after the previous %g", i + 1, t[i],
                                 t[i - 1]);
    }
    pfi_trace_seg *s;
    int rc = pfi_trace_seg_create(p, &s);
    if (rc != PFI_OK) return pfi_error_set(err, rc, NULL, 0, "bad segmentation parameters");
    for (size_t i = 0; i < n; i++)
        pfi_trace_seg_push(s, t[i], fb_mib[i], util_pct[i]);
    for (int k = 0; k < PFI_PHASE_COUNT; k++)
        start[k] = s->start[k];
    pfi_trace_seg_destroy(s);
    if (phase) {
        /* Label each sample by the latest phase that had begun at its time;
         * a phase never reached has a NaN start and claims nothing. */
        for (size_t i = 0; i < n; i++) {
            pfi_phase ph = PFI_PHASE_WARMUP;
            for (int k = PFI_PHASE_COUNT - 1; k > 0; k--)
                if (!isnan(start[k]) && t[i] >= start[k]) {
                    ph = (pfi_phase)k;
                    break;
                }
            phase[i] = ph;
        }
    }
    return PFI_OK;
}

int pfi_trace_top_mean(const double *v, size_t n, double frac, double *scratch, double *out)
{
    if (!(frac > 0 && frac <= 1)) return PFI_EINVAL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) scratch[m++] = v[i];
    if (m == 0) return PFI_ENODATA;
    size_t k = (size_t)ceil(frac * (double)m - 1e-9); /* 10% of 20 is 2, not 3 */
    if (k < 1) k = 1;
    if (k > m) k = m;
    /* O(m) selection, not a sort: the agent takes this over every job's
     * window for every /metrics rendering. */
    pfi_quantile_partition(scratch, m, m - k);
    double sum = 0;
    for (size_t i = m - k; i < m; i++)
        sum += scratch[i];
    *out = sum / (double)k;
    return PFI_OK;
}

/* The ring starts small and doubles up to max_samples as samples come: a
 * job that ends after a few ticks holds a few hundred bytes, not the whole
 * window's worth (pfid registers and ends thousands of jobs). */
#define ROLL_FIRST_CAP 16

struct pfi_trace_roll {
    size_t n_fields, max, cap, head, n; /* ring of cap <= max slots: oldest at head */
    double window_s;
    double *t;       /* cap */
    double *vals;    /* cap * n_fields */
    double *scratch; /* 2 * scratch_cap, allocated by the first top mean */
    size_t scratch_cap;
};

int pfi_trace_roll_create(size_t n_fields, double window_s, size_t max_samples,
                          pfi_trace_roll **out)
{
    *out = NULL;
    if (n_fields == 0 || max_samples == 0 || !(window_s > 0)) return PFI_EINVAL;
    pfi_trace_roll *r = calloc(1, sizeof *r);
    if (!r) return PFI_ENOMEM;
    r->n_fields = n_fields;
    r->max = max_samples;
    r->cap = max_samples < ROLL_FIRST_CAP ? max_samples : ROLL_FIRST_CAP;
    r->window_s = window_s;
    r->t = malloc(r->cap * sizeof *r->t);
    r->vals = malloc(r->cap * n_fields * sizeof *r->vals);
    if (!r->t || !r->vals) {
        pfi_trace_roll_destroy(r);
        return PFI_ENOMEM;
    }
    *out = r;
    return PFI_OK;
}

void pfi_trace_roll_destroy(pfi_trace_roll *r)
{
    if (!r) return;
    free(r->t);
    free(r->vals);
    free(r->scratch);
    free(r);
}

/* Doubles the ring (at most to max), oldest sample first in the new one;
 * -1 when memory runs out (the ring then stays full and drops its oldest). */
static int roll_grow(pfi_trace_roll *r)
{
    size_t cap = r->cap * 2 < r->max ? r->cap * 2 : r->max;
    double *t = malloc(cap * sizeof *t);
    double *v = malloc(cap * r->n_fields * sizeof *v);
    if (!t || !v) {
        free(t);
        free(v);
        return -1;
    }
    for (size_t i = 0; i < r->n; i++) {
        size_t slot = (r->head + i) % r->cap;
        t[i] = r->t[slot];
        memcpy(v + i * r->n_fields, r->vals + slot * r->n_fields, r->n_fields * sizeof *v);
    }
    free(r->t);
    free(r->vals);
    r->t = t;
    r->vals = v;
    r->cap = cap;
    r->head = 0;
    return 0;
}

void pfi_trace_roll_push(pfi_trace_roll *r, double t, const double *vals)
{
    if (r->n == r->cap && (r->cap == r->max || roll_grow(r) != 0)) {
        r->head = (r->head + 1) % r->cap;
        r->n--;
    }
    size_t slot = (r->head + r->n) % r->cap;
    r->t[slot] = t;
    memcpy(r->vals + slot * r->n_fields, vals, r->n_fields * sizeof *vals);
    r->n++;
    while (r->n > 0 && r->t[r->head] < t - r->window_s) {
        r->head = (r->head + 1) % r->cap;
        r->n--;
    }
}

size_t pfi_trace_roll_count(const pfi_trace_roll *r)
{
    return r->n;
}

/* Copies one field of the samples at or after since into buf; returns the count. */
static size_t gather(const pfi_trace_roll *r, size_t field, double since, double *buf)
{
    size_t m = 0;
    for (size_t i = 0; i < r->n; i++) {
        size_t slot = (r->head + i) % r->cap;
        if (r->t[slot] >= since) buf[m++] = r->vals[slot * r->n_fields + field];
    }
    return m;
}

int pfi_trace_roll_top_mean(pfi_trace_roll *r, size_t field, double since, double frac, double *out,
                            size_t *used)
{
    if (field >= r->n_fields) return PFI_EINVAL;
    if (r->scratch_cap < r->cap) {
        double *s = realloc(r->scratch, 2 * r->cap * sizeof *s);
        if (!s) return PFI_ENOMEM;
        r->scratch = s;
        r->scratch_cap = r->cap;
    }
    size_t m = gather(r, field, since, r->scratch);
    size_t finite = 0;
    for (size_t i = 0; i < m; i++)
        finite += isfinite(r->scratch[i]) != 0;
    if (used) *used = finite;
    return pfi_trace_top_mean(r->scratch, m, frac, r->scratch + r->scratch_cap, out);
}

int pfi_trace_roll_mean(const pfi_trace_roll *r, size_t field, double since, double *out,
                        size_t *used)
{
    if (field >= r->n_fields) return PFI_EINVAL;
    double sum = 0;
    size_t m = 0;
    for (size_t i = 0; i < r->n; i++) {
        size_t slot = (r->head + i) % r->cap;
        double v = r->vals[slot * r->n_fields + field];
        if (r->t[slot] >= since && isfinite(v)) {
            sum += v;
            m++;
        }
    }
    if (used) *used = m;
    if (m == 0) return PFI_ENODATA;
    *out = sum / (double)m;
    return PFI_OK;
}
