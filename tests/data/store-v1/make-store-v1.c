/* Writes tests/data/store-v1/pfid-v1.db with pfid's schema-v1 store, the one
 * pfid wrote before schema v2 (commit 4edb340, the last with the v1 store and
 * NVML's clocks event reasons in clock_reasons). Built against that commit's
 * sources, not this tree's: see README.md beside it. The values are chosen so
 * that every unit conversion of the v1 -> v2 migration shows (mW stored as W,
 * MHz, percent, MiB, NVML reason bits, a NULL field, an ended job, a cap). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pfi/store.h"

static void check(int rc, const pfi_error *err)
{
    if (rc != PFI_OK) {
        fprintf(stderr, "make-store-v1: %s\n", err->msg);
        _exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make-store-v1 OUT.db\n");
        return 2;
    }
    unlink(argv[1]);
    pfi_store *s;
    pfi_error err;
    check(pfi_store_open(argv[1], &s, &err), &err);
    for (int k = 0; k < 3; k++) {
        pfi_gpu_sample x[2];
        memset(x, 0, sizeof x);
        x[0].valid = (1u << PFI_GF_COUNT) - 1; /* every field */
        x[0].power_mw = 690500 + 1000 * k;
        x[0].energy_mj = 123456789 + 700000 * k;
        x[0].limit_mw = 700000;
        x[0].sm_clock_mhz = 1980 - 15 * k;
        x[0].mem_clock_mhz = 3201;
        x[0].util_gpu_pct = 57 + k; /* 57, 58, 59: 0.57*100 != 57 in binary */
        x[0].util_mem_pct = 29;
        x[0].temp_c = 61 + k;
        x[0].fb_used_mib = 80123;
        /* SW power cap | SW thermal | HW slowdown, then idle, then an unknown bit */
        static const unsigned long long reasons[3] = {0x4 | 0x20 | 0x8, 0x1, 0x4 | 0x400};
        x[0].clock_reasons = reasons[k];
        x[0].sm_active = 0.81;
        x[0].sm_occupancy = 0.33;
        x[0].tensor_active = 0.42;
        x[0].dram_active = 0.57;
        x[0].pcie_tx = 1.5e9;
        x[0].pcie_rx = 2.25e9;
        x[0].nvlink_tx = 3.0e11;
        x[0].nvlink_rx = 2.9e11;
        /* GPU 1: power and clocks only (no GPM, no temperature) */
        x[1].valid = (1u << PFI_GF_POWER) | (1u << PFI_GF_SM_CLOCK) | (1u << PFI_GF_UTIL_GPU) |
                     (1u << PFI_GF_CLOCK_REASONS);
        x[1].power_mw = 450250;
        x[1].sm_clock_mhz = 1410;
        x[1].util_gpu_pct = 100;
        x[1].clock_reasons = 0x80; /* HW power brake */
        check(pfi_store_add_samples(s, 1764579600.25 + k, x, 2, &err), &err);
    }
    pfi_store_job a = {.id = "llama-70b-pt",
                       .gpus = {0, 1},
                       .n_gpus = 2,
                       .arch = "dense",
                       .task = "pt",
                       .registered_at = 1764579500.5};
    pfi_store_job b = {.id = "moe-ft",
                       .gpus = {1},
                       .n_gpus = 1,
                       .arch = "moe",
                       .task = "ft",
                       .registered_at = 1764579000};
    check(pfi_store_job_add(s, &a, &err), &err);
    check(pfi_store_job_add(s, &b, &err), &err);
    check(pfi_store_job_end(s, "moe-ft", 1764579400, &err), &err);
    check(pfi_store_add_throughput(s, "llama-70b-pt", 1764579601, 12000.5, &err), &err);
    check(pfi_store_add_throughput(s, "llama-70b-pt", 1764579602, 11890.25, &err), &err);
    check(pfi_store_add_throughput(s, "moe-ft", 1764579300, 800, &err), &err);
    pfi_store_cap c = {
        .gpu = 1, .watts = 450, .set_at = 1764579550, .expires_at = 1764583150, .default_w = 700};
    check(pfi_store_cap_put(s, &c, &err), &err);
    pfi_store_close(s);
    return 0;
}
