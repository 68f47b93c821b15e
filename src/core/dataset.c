/* Builds the embedded paper dataset (see include/core/pfi/dataset.h).
 *
 * Per group, in this order (each group has its own RNG stream, so a group's
 * numbers do not depend on the others):
 *  1. Activities at max clock by regime (dense / MoE pretraining / MoE LoRA
 *     fine-tuning), with job-to-job scatter. Dense training is tensor-heavy
 *     (the probe's dense_train: tensor/SM 0.5), MoE training moves more bytes
 *     per FLOP (the probe's moe_train: DRAM 0.54, tensor near 0), and the
 *     paper's Fig. 5 shows MoE higher on every memory signal. The scatter is
 *     wide on purpose: within a regime the paper finds no correlation between
 *     the DRAM copy product and PFI (Table 13), so the synthetic telemetry
 *     must not know more about PFI than the real one did.
 *  2. Per-run noise: each run's standard error of the mean is drawn lognormal
 *     around the paper's medians (0.04% power, 0.05% throughput, Appendix C),
 *     and the run's value is the model's steady state times (1 + N(0, SEM)).
 *  3. Calibration of the job's shape to the published PFI (calib.h), on the
 *     noisy realization, so the file's PFI is the table's.
 *  4. Scale: per-GPU tokens/s from the usual training FLOP count (6 N per
 *     token for pretraining, 4 N for LoRA fine-tuning, which skips weight
 *     gradients), N the active parameters, at a model-FLOP utilization of
 *     40% (dense) or 10% (MoE, whose small experts run far from peak) of the
 *     H200's 989 TFLOP/s dense BF16, times 0.6 for LoRA fine-tuning (small
 *     adapter matmuls, unfused), 0.92 (16 GPUs) or 0.85 (32 GPUs) for
 *     inter-node communication, and a +-5% configuration scatter.
 *  5. Uncapped telemetry: the model's DCGM-like outputs at the TDP plus
 *     sensor noise, and the remaining fields (FB used, temperature, NVLink,
 *     PCIe) drawn from ranges typical of such jobs.
 */
#include "pfi/dataset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "pfi/telemetry.h"

typedef struct {
    double sm, tensor_ratio, dram; /* regime means at max clock */
} regime;

static regime regime_of(const pfi_paper_group *g)
{
    if (strcmp(g->arch, "dense") == 0) return (regime){0.93, 0.55, 0.26};
    if (strcmp(g->task, "pt") == 0) return (regime){0.88, 0.22, 0.36};
    return (regime){0.86, 0.18, 0.65};
}

/* Sensor and job scatter sizes (documented in data/README.md). */
#define DRAM_SCATTER 0.35 /* lognormal sigma of a job's DRAM activity around its regime */
#define POWER_SEM_MEDIAN 0.0004
#define TPUT_SEM_MEDIAN 0.0005
#define SEM_SIGMA 0.5 /* lognormal sigma of per-run SEMs around the medians */
#define H200_PEAK_FLOPS 989e12

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static double flops_per_token(const pfi_paper_group *g)
{
    return (strcmp(g->task, "pt") == 0 ? 6.0 : 4.0) * g->active_params_b * 1e9;
}

static int build_group(const pfi_paper_group *pg, size_t index, unsigned long seed,
                       pfi_dataset_group *out, pfi_error *err)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return pfi_error_set(err, PFI_ENOMEM, "", 0, "dataset: out of memory");
    gsl_rng_set(r, seed * 1000003UL + index);

    memset(out, 0, sizeof *out);
    out->paper = pg;
    out->gpu = strcmp(pg->platform, "H100") == 0 ? pfi_gpumodel_h100() : pfi_gpumodel_h200();
    out->n_runs = pfi_paper_group_caps(pg, out->cap_w);
    size_t n = out->n_runs;

    /* 1. activities */
    regime rg = regime_of(pg);
    pfi_job_model base = {0};
    base.sm_activity = clamp(rg.sm + gsl_ran_gaussian(r, 0.02), 0.5, 0.99);
    base.tensor_ratio = clamp(rg.tensor_ratio * exp(gsl_ran_gaussian(r, 0.15)), 0.01, 0.95);
    base.dram_activity = clamp(rg.dram * exp(gsl_ran_gaussian(r, DRAM_SCATTER)), 0.05, 0.85);
    base.tput_per_gpu = 1.0;
    /* Every capped run of the paper lost throughput, so each job's uncapped
     * demand reaches past the 600 W cap: raise SM activity until it does. */
    for (int k = 0; k < 50 && pfi_gpumodel_power_at(out->gpu, &base, 1.0) < 625; k++)
        base.sm_activity = clamp(base.sm_activity + 0.01, 0, 0.99);

    /* 2. noise */
    double np[6], nt[6];
    for (size_t i = 0; i < n; i++) {
        out->power_sem_w[i] = POWER_SEM_MEDIAN * exp(gsl_ran_gaussian(r, SEM_SIGMA));
        out->tput_sem[i] = TPUT_SEM_MEDIAN * exp(gsl_ran_gaussian(r, SEM_SIGMA));
        np[i] = gsl_ran_gaussian(r, out->power_sem_w[i]);
        nt[i] = gsl_ran_gaussian(r, out->tput_sem[i]);
    }

    /* 3. calibration */
    int rc = pfi_calib_fit(out->gpu, &base, out->cap_w, n, np, nt, pg->pfi, pg->pfi_4cap, &out->job,
                           &out->calib, err);
    if (rc != PFI_OK) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        gsl_rng_free(r);
        return pfi_error_set(err, rc, "", 0, "dataset: %s: %s", pg->name, msg);
    }

    /* 4. scale */
    double eff = pg->gpus >= 32 ? 0.85 : pg->gpus >= 16 ? 0.92 : 1.0;
    double mfu =
        (strcmp(pg->arch, "dense") == 0 ? 0.40 : 0.10) * (strcmp(pg->task, "ft") == 0 ? 0.6 : 1.0);
    double per_gpu = mfu * H200_PEAK_FLOPS / flops_per_token(pg) * eff *
                     (1.0 + 0.05 * (2.0 * gsl_rng_uniform(r) - 1.0));
    pfi_gpumodel_point top;
    pfi_gpumodel_eval(out->gpu, &out->job, out->cap_w[n - 1], &top);
    out->job.tput_per_gpu = per_gpu / top.tput;
    double P[6], T[6];
    pfi_calib_sweep(out->gpu, &out->job, out->cap_w, n, np, nt, P, T);
    for (size_t i = 0; i < n; i++) {
        out->power_w[i] = P[i] * pg->gpus;
        out->tput[i] = T[i] * pg->gpus;
        out->power_sem_w[i] *= out->power_w[i];
        out->tput_sem[i] *= out->tput[i];
    }

    /* 5. uncapped telemetry (per GPU, averaged over the job's GPUs) */
    pfi_gpumodel_eval(out->gpu, &out->job, out->cap_w[n - 1], &top);
    double *tm = out->tm;
    tm[PFI_TM_SM_ACTIVE] = clamp(top.sm_active + gsl_ran_gaussian(r, 0.01), 0, 1);
    tm[PFI_TM_TENSOR_ACTIVE] = clamp(top.tensor_active + gsl_ran_gaussian(r, 0.01), 0, 1);
    tm[PFI_TM_DRAM_ACTIVE] = clamp(top.dram_active + gsl_ran_gaussian(r, 0.01), 0, 1);
    tm[PFI_TM_MEM_COPY_UTIL] = clamp(top.mem_copy_util_pct + gsl_ran_gaussian(r, 1.0), 0, 100);
    tm[PFI_TM_GPU_UTIL] = clamp(top.gpu_util_pct + gsl_ran_gaussian(r, 1.0), 0, 100);
    tm[PFI_TM_POWER] = P[n - 1];
    tm[PFI_TM_SM_CLOCK] = round(top.sm_clock_mhz / 15.0) * 15.0; /* NVML reports 15 MHz steps */
    tm[PFI_TM_MEM_CLOCK] = top.mem_clock_mhz;
    double fb_total = out->gpu == pfi_gpumodel_h100() ? 81559 : 143771; /* MiB */
    tm[PFI_TM_FB_USED] = round(fb_total * (0.55 + 0.4 * gsl_rng_uniform(r)));
    tm[PFI_TM_GPU_TEMP] = round(35 + 0.045 * P[n - 1] + gsl_ran_gaussian(r, 2.0));
    double nv = (strcmp(pg->arch, "dense") == 0 ? 60e9 : 90e9) * exp(gsl_ran_gaussian(r, 0.4));
    tm[PFI_TM_NVLINK_TX] = round(nv);
    tm[PFI_TM_NVLINK_RX] = round(nv * (1.0 + gsl_ran_gaussian(r, 0.02)));
    double pc = 2e9 * exp(gsl_ran_gaussian(r, 0.5));
    tm[PFI_TM_PCIE_TX] = round(pc);
    tm[PFI_TM_PCIE_RX] = round(pc * 1.3 * exp(gsl_ran_gaussian(r, 0.2)));
    gsl_rng_free(r);
    return PFI_OK;
}

int pfi_dataset_build(unsigned long seed, pfi_dataset **out, pfi_error *err)
{
    size_t n;
    const pfi_paper_group *pg = pfi_paper_groups(&n);
    pfi_dataset *d = calloc(1, sizeof *d);
    if (d) d->groups = calloc(n, sizeof *d->groups);
    if (!d || !d->groups) {
        pfi_dataset_destroy(d);
        return pfi_error_set(err, PFI_ENOMEM, "", 0, "dataset: out of memory");
    }
    d->n = n;
    for (size_t i = 0; i < n; i++) {
        int rc = build_group(&pg[i], i, seed, &d->groups[i], err);
        if (rc != PFI_OK) {
            pfi_dataset_destroy(d);
            return rc;
        }
    }
    *out = d;
    return PFI_OK;
}

void pfi_dataset_destroy(pfi_dataset *d)
{
    if (!d) return;
    free(d->groups);
    free(d);
}
