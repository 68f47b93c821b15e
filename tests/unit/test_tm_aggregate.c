/* Trace aggregation by hand: five samples, power 100..500 W. */
#include "test_util.h"

#include <string.h>

#include "pfi/tm_aggregate.h"

static void fill(pfi_tm_row *s)
{
    memset(s, 0, 5 * sizeof *s);
    const double power[] = {300, 500, 100, 400, 200}, dram[] = {0.3, 0.5, 0.1, 0.4, 0.2};
    for (int i = 0; i < 5; i++) {
        s[i].v[PFI_TM_POWER] = power[i];
        s[i].v[PFI_TM_DRAM_ACTIVE] = dram[i];
        s[i].valid = (1u << PFI_TM_POWER) | (1u << PFI_TM_DRAM_ACTIVE);
    }
    /* copy util read only on the 100 W and 500 W samples */
    s[1].v[PFI_TM_MEM_COPY_UTIL] = 60;
    s[2].v[PFI_TM_MEM_COPY_UTIL] = 20;
    s[1].valid |= 1u << PFI_TM_MEM_COPY_UTIL;
    s[2].valid |= 1u << PFI_TM_MEM_COPY_UTIL;
}

/* top 1: mean of everything: power 300, DRAM 0.3, copy (60+20)/2 = 40.
 * top 0.4: ceil(0.4*5) = 2 samples, the 500 and 400 W ones: power 450,
 * DRAM 0.45, copy only from the 500 W sample: 60.
 * top 0.1: ceil(0.5) = 1 sample (500 W). */
static void top_share_by_power(void **state)
{
    pfi_tm_row s[5], out;
    pfi_error err;
    fill(s);
    memset(&out, 0, sizeof out);
    assert_int_equal(pfi_tm_aggregate(s, 5, 1.0, &out, &err), PFI_OK);
    assert_near(out.v[PFI_TM_POWER], 300, 1e-12);
    assert_near(out.v[PFI_TM_DRAM_ACTIVE], 0.3, 1e-12);
    assert_near(out.v[PFI_TM_MEM_COPY_UTIL], 40, 1e-12);
    assert_false(out.valid & (1u << PFI_TM_GPU_UTIL));
    assert_int_equal(pfi_tm_aggregate(s, 5, 0.4, &out, &err), PFI_OK);
    assert_near(out.v[PFI_TM_POWER], 450, 1e-12);
    assert_near(out.v[PFI_TM_DRAM_ACTIVE], 0.45, 1e-12);
    assert_near(out.v[PFI_TM_MEM_COPY_UTIL], 60, 1e-12);
    assert_int_equal(pfi_tm_aggregate(s, 5, 0.1, &out, &err), PFI_OK);
    assert_near(out.v[PFI_TM_POWER], 500, 1e-12);
}

static void bad_input(void **state)
{
    pfi_tm_row s[5], out;
    pfi_error err;
    fill(s);
    assert_int_equal(pfi_tm_aggregate(s, 0, 1.0, &out, &err), PFI_ENODATA);
    assert_int_equal(pfi_tm_aggregate(s, 5, 0, &out, &err), PFI_EINVAL);
    assert_int_equal(pfi_tm_aggregate(s, 5, 1.5, &out, &err), PFI_EINVAL);
    for (int i = 0; i < 5; i++)
        s[i].valid &= ~(1u << PFI_TM_POWER);
    assert_int_equal(pfi_tm_aggregate(s, 5, 0.1, &out, &err), PFI_ENODATA);
    assert_int_equal(pfi_tm_aggregate(s, 5, 1.0, &out, &err), PFI_OK);
}

/* Probe units pass through: ratios stay ratios, NaN copy util stays invalid. */
static void from_probe_sample(void **state)
{
    pfi_gpumodel_sample g = {.power_w = 681,
                             .sm_clock_mhz = 1759,
                             .sm_active = 0.948,
                             .tensor_active = 0.498,
                             .dram_active = 0.288,
                             .mem_copy_util = NAN,
                             .gpu_util = 99.8};
    pfi_tm_row r;
    pfi_tm_from_probe_sample(&g, &r);
    assert_near(r.v[PFI_TM_DRAM_ACTIVE], 0.288, 0);
    assert_near(r.v[PFI_TM_POWER], 681, 0);
    assert_true(r.valid & (1u << PFI_TM_SM_CLOCK));
    assert_false(r.valid & (1u << PFI_TM_MEM_COPY_UTIL));
    assert_false(r.valid & (1u << PFI_TM_NVLINK_TX));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(top_share_by_power),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(from_probe_sample),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
