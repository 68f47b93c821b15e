/* Telemetry features from a hand-made telemetry row (values by hand below). */
#include "test_util.h"

#include <string.h>

#include "pfi/features.h"

static pfi_tm_row row_all(void)
{
    pfi_tm_row r;
    memset(&r, 0, sizeof r);
    r.group = "g";
    r.v[PFI_TM_SM_ACTIVE] = 0.8;
    r.v[PFI_TM_TENSOR_ACTIVE] = 0.4;
    r.v[PFI_TM_DRAM_ACTIVE] = 0.25;
    r.v[PFI_TM_MEM_COPY_UTIL] = 50;
    r.v[PFI_TM_GPU_UTIL] = 100;
    r.v[PFI_TM_POWER] = 600;
    r.v[PFI_TM_SM_CLOCK] = 1485;
    r.v[PFI_TM_MEM_CLOCK] = 3201;
    r.v[PFI_TM_FB_USED] = 81920;
    r.v[PFI_TM_GPU_TEMP] = 60;
    r.v[PFI_TM_NVLINK_TX] = 30e9;
    r.v[PFI_TM_NVLINK_RX] = 10e9;
    r.v[PFI_TM_PCIE_TX] = 2e9;
    r.v[PFI_TM_PCIE_RX] = 1e9;
    r.valid = (1u << PFI_TM_NFIELDS) - 1;
    return r;
}

/* DRAM copy product 0.25 x 50 = 12.5 (25% x 50% / 100); arithmetic intensity
 * 0.4/0.25 = 1.6; tensor/SM 0.5; DRAM/SM 0.3125; power per SM 600/0.8 = 750;
 * clock fraction 1485/1980 = 0.75; NVLink 40 GB/s: per SM 50, per DRAM 160;
 * copy/util 0.5; FB 81920 MiB = 80 GiB. */
static void composites_by_hand(void **state)
{
    pfi_tm_row r = row_all();
    pfi_features f;
    assert_int_equal(pfi_features_compute(&r, PFI_FEAT_H200_BOOST_MHZ, &f), PFI_OK);
    assert_int_equal(f.valid, (1u << PFI_FEAT_N_TELEMETRY) - 1);
    assert_int_equal(f.undefined, 0);
    assert_near(f.v[PFI_FEAT_DRAM_COPY_PRODUCT], 12.5, 1e-12);
    assert_near(f.v[PFI_FEAT_ARITH_INTENSITY], 1.6, 1e-12);
    assert_near(f.v[PFI_FEAT_TENSOR_SM_RATIO], 0.5, 1e-12);
    assert_near(f.v[PFI_FEAT_DRAM_SM_RATIO], 0.3125, 1e-12);
    assert_near(f.v[PFI_FEAT_POWER_PER_SM], 750, 1e-9);
    assert_near(f.v[PFI_FEAT_CLOCK_FRAC_BOOST], 0.75, 1e-12);
    assert_near(f.v[PFI_FEAT_NVLINK_PER_SM], 50, 1e-9);
    assert_near(f.v[PFI_FEAT_NVLINK_PER_DRAM], 160, 1e-9);
    assert_near(f.v[PFI_FEAT_COPY_UTIL_FRAC], 0.5, 1e-12);
    assert_near(f.v[PFI_FEAT_FB_USED], 80, 1e-12);
    assert_near(f.v[PFI_FEAT_NVLINK_TX], 30, 1e-12);
    assert_false(f.valid & (1u << PFI_FEAT_ARCH_MOE));
}

/* Zero DRAM activity: the ratios over DRAM are undefined (reported), never
 * inf; the product is a plain 0. */
static void zero_activity_is_undefined(void **state)
{
    pfi_tm_row r = row_all();
    r.v[PFI_TM_DRAM_ACTIVE] = 0;
    pfi_features f;
    assert_int_equal(pfi_features_compute(&r, PFI_FEAT_H200_BOOST_MHZ, &f), PFI_OK);
    assert_true(f.undefined & (1u << PFI_FEAT_ARITH_INTENSITY));
    assert_true(f.undefined & (1u << PFI_FEAT_NVLINK_PER_DRAM));
    assert_false(f.valid & (1u << PFI_FEAT_ARITH_INTENSITY));
    assert_near(f.v[PFI_FEAT_ARITH_INTENSITY], 0, 0);
    assert_true(f.valid & (1u << PFI_FEAT_DRAM_COPY_PRODUCT));
    assert_near(f.v[PFI_FEAT_DRAM_COPY_PRODUCT], 0, 0);
    for (int i = 0; i < PFI_FEAT_COUNT; i++)
        assert_true(isfinite(f.v[i]));
}

/* A missing field makes its features invalid but not undefined. */
static void missing_field(void **state)
{
    pfi_tm_row r = row_all();
    r.valid &= ~(1u << PFI_TM_MEM_COPY_UTIL);
    pfi_features f;
    assert_int_equal(pfi_features_compute(&r, PFI_FEAT_H200_BOOST_MHZ, &f), PFI_OK);
    assert_false(f.valid & (1u << PFI_FEAT_DRAM_COPY_PRODUCT));
    assert_false(f.valid & (1u << PFI_FEAT_COPY_UTIL_FRAC));
    assert_false(f.undefined & (1u << PFI_FEAT_COPY_UTIL_FRAC));
    assert_true(f.valid & (1u << PFI_FEAT_ARITH_INTENSITY));
    assert_int_equal(pfi_features_compute(&r, 0, &f), PFI_EINVAL);
}

static void metadata_and_names(void **state)
{
    pfi_features f;
    memset(&f, 0, sizeof f);
    pfi_error err;
    assert_int_equal(pfi_features_set_meta(&f, "moe", "ft", 16, &err), PFI_OK);
    assert_near(f.v[PFI_FEAT_ARCH_MOE], 1, 0);
    assert_near(f.v[PFI_FEAT_TASK_FT], 1, 0);
    assert_near(f.v[PFI_FEAT_LOG2_GPUS], 4, 0);
    assert_int_equal(pfi_features_set_meta(&f, "hybrid", "ft", 8, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "hybrid"));
    assert_int_equal(pfi_features_set_meta(&f, "dense", "sft", 8, &err), PFI_EINVAL);
    assert_int_equal(pfi_features_set_meta(&f, "dense", "pt", 0, &err), PFI_EINVAL);
    for (int i = 0; i < PFI_FEAT_COUNT; i++) {
        const char *n = pfi_feature_name((pfi_feature)i);
        assert_non_null(n);
        assert_non_null(pfi_feature_label((pfi_feature)i));
        assert_int_equal(pfi_feature_lookup(n), i);
    }
    assert_int_equal(pfi_feature_lookup("nope"), -1);
    assert_null(pfi_feature_name(PFI_FEAT_COUNT));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(composites_by_hand),
        cmocka_unit_test(zero_activity_is_undefined),
        cmocka_unit_test(missing_field),
        cmocka_unit_test(metadata_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
