/* See tm_aggregate.h. */
#include "pfi/tm_aggregate.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include <gsl/gsl_sort.h>

#include "pfi/gpu_field.h"

int pfi_tm_aggregate(const pfi_tm_row *samples, size_t n, double top_frac, pfi_tm_row *out,
                     pfi_error *err)
{
    if (!samples || !out) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "NULL argument");
    if (!(top_frac > 0 && top_frac <= 1))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "top fraction %g is not in (0, 1]",
                             top_frac);
    if (n == 0) return pfi_error_set(err, PFI_ENODATA, NULL, 0, "no samples to aggregate");
    size_t *pick = malloc(n * sizeof *pick);
    double *key = malloc(n * sizeof *key);
    if (!pick || !key) {
        free(pick), free(key);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    size_t m = 0;
    const uint32_t power_bit = 1u << PFI_TM_POWER;
    for (size_t i = 0; i < n; i++)
        if (top_frac >= 1 || (samples[i].valid & power_bit)) {
            pick[m] = i;
            /* negated power: an ascending sort puts the highest power first */
            key[m++] = (samples[i].valid & power_bit) ? -samples[i].v[PFI_TM_POWER] : 0;
        }
    size_t take = m;
    if (top_frac < 1 && m > 0) {
        size_t *order = malloc(m * sizeof *order);
        if (!order) {
            free(pick), free(key);
            return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        }
        gsl_sort_index(order, key, 1, m);
        take = (size_t)ceil(top_frac * (double)m);
        if (take > m) take = m;
        /* order[] indexes pick[]; keep the first `take` in power order */
        for (size_t k = 0; k < take; k++)
            order[k] = pick[order[k]];
        for (size_t k = 0; k < take; k++)
            pick[k] = order[k];
        free(order);
    }
    free(key);
    if (take == 0) {
        free(pick);
        return pfi_error_set(err, PFI_ENODATA, NULL, 0, "no sample has power to rank by");
    }
    for (int f = 0; f < PFI_TM_NFIELDS; f++) {
        double sum = 0;
        size_t cnt = 0;
        for (size_t k = 0; k < take; k++) {
            const pfi_tm_row *s = &samples[pick[k]];
            if (s->valid & (1u << f)) {
                sum += s->v[f];
                cnt++;
            }
        }
        if (cnt) {
            out->v[f] = sum / (double)cnt;
            out->valid |= 1u << f;
        } else {
            out->v[f] = NAN; /* as telemetry_csv.h: a missing field is NaN, bit clear */
            out->valid &= ~(1u << f);
        }
    }
    free(pick);
    return PFI_OK;
}

void pfi_tm_from_probe_sample(const pfi_gpumodel_sample *s, pfi_tm_row *out)
{
    out->valid = 0;
    for (int f = 0; f < PFI_TM_NFIELDS; f++)
        out->v[f] = NAN;
    const struct {
        pfi_tm_field f;
        double v;
    } map[] = {
        {PFI_TM_SM_ACTIVE, s->sm_active},     {PFI_TM_TENSOR_ACTIVE, s->tensor_active},
        {PFI_TM_DRAM_ACTIVE, s->dram_active}, {PFI_TM_MEM_COPY_UTIL, s->mem_copy_util},
        {PFI_TM_GPU_UTIL, s->gpu_util},       {PFI_TM_POWER, s->power_w},
        {PFI_TM_SM_CLOCK, s->sm_clock_mhz},
    };
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (isfinite(map[k].v)) {
            out->v[map[k].f] = map[k].v;
            out->valid |= 1u << map[k].f;
        }
}

void pfi_tm_from_gpu_sample(const pfi_gpu_sample *s, pfi_tm_row *out)
{
    out->valid = 0;
    for (int k = 0; k < PFI_TM_NFIELDS; k++)
        out->v[k] = NAN;
    for (int f = 0; f < PFI_GF_COUNT; f++) {
        const pfi_gpu_field_desc *d = &pfi_gpu_fields[f];
        if (d->tm_field < 0 || !pfi_gpu_sample_has(s, d->field)) continue;
        out->v[d->tm_field] = s->v[f] * d->si_to_tm;
        out->valid |= 1u << d->tm_field;
    }
}

void pfi_tm_from_gpu_samples(const pfi_gpu_sample *const *x, size_t n, pfi_tm_row *out,
                             double *total_w)
{
    double sum[PFI_TM_NFIELDS] = {0};
    size_t cnt[PFI_TM_NFIELDS] = {0};
    for (size_t k = 0; k < n; k++) {
        if (!x[k]) continue;
        pfi_tm_row one;
        pfi_tm_from_gpu_sample(x[k], &one);
        for (int f = 0; f < PFI_TM_NFIELDS; f++)
            if (one.valid >> f & 1u) sum[f] += one.v[f], cnt[f]++;
    }
    out->valid = 0;
    for (int f = 0; f < PFI_TM_NFIELDS; f++) {
        out->v[f] = cnt[f] ? sum[f] / (double)cnt[f] : NAN;
        if (cnt[f]) out->valid |= 1u << f;
    }
    if (total_w) {
        double t = 0;
        for (size_t k = 0; k < n && !isnan(t); k++)
            t = x[k] && pfi_gpu_sample_has(x[k], PFI_GF_POWER) ? t + x[k]->v[PFI_GF_POWER] : NAN;
        *total_w = n ? t : NAN;
    }
}
