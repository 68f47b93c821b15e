/* Telemetry features (see features.h for units). The composites follow the
 * paper's Fig. 14 panels; their scales only matter for reading coefficients,
 * since Spearman is scale-free and the OLS standardises its columns. */
#include "pfi/features.h"

#include <math.h>
#include <string.h>

static const struct {
    const char *name, *label;
} feats[PFI_FEAT_COUNT] = {
    [PFI_FEAT_SM_ACTIVE] = {"sm_active", "Mean SM active (ratio)"},
    [PFI_FEAT_TENSOR_ACTIVE] = {"tensor_active", "Mean tensor active (ratio)"},
    [PFI_FEAT_DRAM_ACTIVE] = {"dram_active", "Mean DRAM active (ratio)"},
    [PFI_FEAT_MEM_COPY_UTIL] = {"mem_copy_util", "Mean mem-copy util (%)"},
    [PFI_FEAT_GPU_UTIL] = {"gpu_util", "Mean GPU util (%)"},
    [PFI_FEAT_POWER] = {"power", "Mean power (W)"},
    [PFI_FEAT_SM_CLOCK] = {"sm_clock", "SM clock (MHz)"},
    [PFI_FEAT_FB_USED] = {"fb_used", "VRAM used (GiB)"},
    [PFI_FEAT_GPU_TEMP] = {"gpu_temp", "GPU temp (C)"},
    [PFI_FEAT_NVLINK_TX] = {"nvlink_tx", "NVLink TX (GB/s)"},
    [PFI_FEAT_NVLINK_RX] = {"nvlink_rx", "NVLink RX (GB/s)"},
    [PFI_FEAT_PCIE_TX] = {"pcie_tx", "PCIe TX (GB/s)"},
    [PFI_FEAT_PCIE_RX] = {"pcie_rx", "PCIe RX (GB/s)"},
    [PFI_FEAT_DRAM_COPY_PRODUCT] = {"dram_copy_product", "DRAM copy product (ratio x %)"},
    [PFI_FEAT_ARITH_INTENSITY] = {"arithmetic_intensity", "Arith. intensity (tensor/DRAM)"},
    [PFI_FEAT_TENSOR_SM_RATIO] = {"tensor_sm_ratio", "Tensor/SM ratio"},
    [PFI_FEAT_DRAM_SM_RATIO] = {"dram_sm_ratio", "DRAM/SM ratio"},
    [PFI_FEAT_POWER_PER_SM] = {"power_per_sm", "Power per SM (W per SM-active ratio)"},
    [PFI_FEAT_CLOCK_FRAC_BOOST] = {"clock_frac_boost", "Clock fraction of boost"},
    [PFI_FEAT_NVLINK_PER_SM] = {"nvlink_per_sm", "NVLink per SM (GB/s per SM-active ratio)"},
    [PFI_FEAT_NVLINK_PER_DRAM] = {"nvlink_per_dram",
                                  "NVLink per DRAM (GB/s per DRAM-active ratio)"},
    [PFI_FEAT_COPY_UTIL_FRAC] = {"copy_util_frac", "Copy/util fraction"},
    [PFI_FEAT_ARCH_MOE] = {"arch_moe", "Architecture (1 = MoE)"},
    [PFI_FEAT_TASK_FT] = {"task_ft", "Task (1 = fine-tuning)"},
    [PFI_FEAT_LOG2_GPUS] = {"log2_gpus", "log2 GPU count"},
};

const char *pfi_feature_name(pfi_feature f)
{
    return (unsigned)f < PFI_FEAT_COUNT ? feats[f].name : NULL;
}

const char *pfi_feature_label(pfi_feature f)
{
    return (unsigned)f < PFI_FEAT_COUNT ? feats[f].label : NULL;
}

int pfi_feature_lookup(const char *name)
{
    if (!name) return -1;
    for (int f = 0; f < PFI_FEAT_COUNT; f++)
        if (strcmp(name, feats[f].name) == 0) return f;
    return -1;
}

typedef struct {
    const pfi_tm_row *row;
    pfi_features *out;
} ctx;

static int has(const ctx *c, pfi_tm_field f)
{
    return (c->row->valid >> f) & 1u;
}

static void put(ctx *c, pfi_feature f, double v)
{
    if (!isfinite(v)) return; /* a value that overflowed stays invalid */
    c->out->v[f] = v;
    c->out->valid |= 1u << f;
}

/* A raw field scaled to our unit. */
static void raw(ctx *c, pfi_feature f, pfi_tm_field src, double scale)
{
    if (has(c, src)) put(c, f, c->row->v[src] * scale);
}

/* num / den of two computed features; a zero denominator marks undefined. */
static void ratio(ctx *c, pfi_feature f, double num, int num_ok, pfi_feature den)
{
    if (!num_ok || !((c->out->valid >> den) & 1u)) return;
    double d = c->out->v[den];
    if (d == 0) {
        c->out->undefined |= 1u << f;
        return;
    }
    put(c, f, num / d);
}

static int ok(const ctx *c, pfi_feature f)
{
    return (c->out->valid >> f) & 1u;
}

int pfi_features_compute(const pfi_tm_row *row, double boost_mhz, pfi_features *out)
{
    if (!row || !out || !(boost_mhz > 0)) return PFI_EINVAL;
    memset(out, 0, sizeof *out);
    ctx c = {row, out};
    raw(&c, PFI_FEAT_SM_ACTIVE, PFI_TM_SM_ACTIVE, 1);
    raw(&c, PFI_FEAT_TENSOR_ACTIVE, PFI_TM_TENSOR_ACTIVE, 1);
    raw(&c, PFI_FEAT_DRAM_ACTIVE, PFI_TM_DRAM_ACTIVE, 1);
    raw(&c, PFI_FEAT_MEM_COPY_UTIL, PFI_TM_MEM_COPY_UTIL, 1);
    raw(&c, PFI_FEAT_GPU_UTIL, PFI_TM_GPU_UTIL, 1);
    raw(&c, PFI_FEAT_POWER, PFI_TM_POWER, 1);
    raw(&c, PFI_FEAT_SM_CLOCK, PFI_TM_SM_CLOCK, 1);
    raw(&c, PFI_FEAT_FB_USED, PFI_TM_FB_USED, 1.0 / 1024);
    raw(&c, PFI_FEAT_GPU_TEMP, PFI_TM_GPU_TEMP, 1);
    raw(&c, PFI_FEAT_NVLINK_TX, PFI_TM_NVLINK_TX, 1e-9);
    raw(&c, PFI_FEAT_NVLINK_RX, PFI_TM_NVLINK_RX, 1e-9);
    raw(&c, PFI_FEAT_PCIE_TX, PFI_TM_PCIE_TX, 1e-9);
    raw(&c, PFI_FEAT_PCIE_RX, PFI_TM_PCIE_RX, 1e-9);

    /* DRAM active as a percent times copy util as a percent, over 100: the
     * paper's axis (10-30 for DRAM ~0.3-0.4 and copy util ~40-60%). */
    if (ok(&c, PFI_FEAT_DRAM_ACTIVE) && ok(&c, PFI_FEAT_MEM_COPY_UTIL))
        put(&c, PFI_FEAT_DRAM_COPY_PRODUCT,
            out->v[PFI_FEAT_DRAM_ACTIVE] * out->v[PFI_FEAT_MEM_COPY_UTIL]);
    ratio(&c, PFI_FEAT_ARITH_INTENSITY, out->v[PFI_FEAT_TENSOR_ACTIVE],
          ok(&c, PFI_FEAT_TENSOR_ACTIVE), PFI_FEAT_DRAM_ACTIVE);
    ratio(&c, PFI_FEAT_TENSOR_SM_RATIO, out->v[PFI_FEAT_TENSOR_ACTIVE],
          ok(&c, PFI_FEAT_TENSOR_ACTIVE), PFI_FEAT_SM_ACTIVE);
    ratio(&c, PFI_FEAT_DRAM_SM_RATIO, out->v[PFI_FEAT_DRAM_ACTIVE], ok(&c, PFI_FEAT_DRAM_ACTIVE),
          PFI_FEAT_SM_ACTIVE);
    ratio(&c, PFI_FEAT_POWER_PER_SM, out->v[PFI_FEAT_POWER], ok(&c, PFI_FEAT_POWER),
          PFI_FEAT_SM_ACTIVE);
    if (ok(&c, PFI_FEAT_SM_CLOCK))
        put(&c, PFI_FEAT_CLOCK_FRAC_BOOST, out->v[PFI_FEAT_SM_CLOCK] / boost_mhz);
    int nvl_ok = ok(&c, PFI_FEAT_NVLINK_TX) && ok(&c, PFI_FEAT_NVLINK_RX);
    double nvl = out->v[PFI_FEAT_NVLINK_TX] + out->v[PFI_FEAT_NVLINK_RX];
    ratio(&c, PFI_FEAT_NVLINK_PER_SM, nvl, nvl_ok, PFI_FEAT_SM_ACTIVE);
    ratio(&c, PFI_FEAT_NVLINK_PER_DRAM, nvl, nvl_ok, PFI_FEAT_DRAM_ACTIVE);
    ratio(&c, PFI_FEAT_COPY_UTIL_FRAC, out->v[PFI_FEAT_MEM_COPY_UTIL],
          ok(&c, PFI_FEAT_MEM_COPY_UTIL), PFI_FEAT_GPU_UTIL);
    return PFI_OK;
}

int pfi_features_set_meta(pfi_features *f, const char *arch, const char *task, int gpus,
                          pfi_error *err)
{
    if (!f || !arch || !task) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "NULL argument");
    int moe = strcmp(arch, "moe") == 0, dense = strcmp(arch, "dense") == 0;
    int ft = strcmp(task, "ft") == 0, pt = strcmp(task, "pt") == 0;
    if (!moe && !dense)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "arch '%s' is neither dense nor moe", arch);
    if (!ft && !pt)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "task '%s' is neither pt nor ft", task);
    if (gpus <= 0)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "GPU count %d is not positive", gpus);
    f->v[PFI_FEAT_ARCH_MOE] = moe;
    f->v[PFI_FEAT_TASK_FT] = ft;
    f->v[PFI_FEAT_LOG2_GPUS] = log2((double)gpus);
    f->valid |= (1u << PFI_FEAT_ARCH_MOE) | (1u << PFI_FEAT_TASK_FT) | (1u << PFI_FEAT_LOG2_GPUS);
    return PFI_OK;
}
