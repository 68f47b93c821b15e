/* learn on the curve families (tests/families, issue 12 item 3), at a
 * small size (24 workloads of 100 jobs, seed 1; bench_families runs 500):
 *   - the synthetic families' telemetry has the paper's rank correlation
 *     with PFI, 0.5 +- 0.1;
 *   - with exact readings learn never keeps less than equal;
 *   - it recovers at least its bar of equal's gap at every reduction from
 *     5 to 40%: the 93% on the embedded dataset, 93% on the
 *     linear and H100 families; the mix (88%) and the families where it
 *     still falls short of the 90% (README "The learn policy":
 *     flat-knee, sigmoid, bumps, dead-zone, noisy sweeps) hold the bars it
 *     meets today, so that a regression fails;
 *   - with 1% reading noise, at least 85% on the embedded dataset.
 * The bars sit 2-3 points under the bench's 500-workload figures (this
 * sample is smaller). */
#include "test_util.h"

#include "families.h"
#include "pfi/sim.h"

static const double RED[] = {0.05, 0.10, 0.20, 0.30, 0.40};
enum { NR = 5 };
static const double BAR[FAM_COUNT] = {
    [FAM_EMBEDDED] = 0.93, [FAM_FLAT_KNEE] = 0.78, [FAM_SIGMOID] = 0.80,
    [FAM_BUMPS] = 0.80,    [FAM_DEAD_ZONE] = 0.68, [FAM_LINEAR] = 0.93,
    [FAM_H100] = 0.93,     [FAM_NOISY] = 0.66,     [FAM_MIX] = 0.88,
};

static void sim(const fam_set *fs, double noise, pfi_sim_result *r)
{
    pfi_sim_opts o = pfi_sim_defaults();
    o.workloads = 24;
    o.reductions = RED;
    o.n_reductions = NR;
    o.noise_rel = noise;
    pfi_error err;
    if (pfi_sim_run(fs->g, fs->n, &o, r, &err) != PFI_OK) fail_msg("sim: %s", err.msg);
}

static void test_bars_exact(void **state)
{
    (void)state;
    for (int k = 0; k < FAM_COUNT; k++) {
        fam_set fs;
        assert_int_equal(fam_build((fam_kind)k, 1, &fs), PFI_OK);
        if (k != FAM_EMBEDDED && k != FAM_H100 && k != FAM_MIX &&
            !(fs.rank_corr >= 0.4 && fs.rank_corr <= 0.6))
            fail_msg("%s: rank correlation %.2f", fam_name((fam_kind)k), fs.rank_corr);
        pfi_sim_result r;
        sim(&fs, 0, &r);
        for (int i = 0; i < NR; i++) {
            const pfi_sim_cell *c = r.cells + i * PFI_SIM_NPOLICIES;
            const pfi_sim_cell *eq = &c[PFI_POLICY_EQUAL], *le = &c[PFI_SIM_LEARN];
            if (!(le->tput_per_job >= eq->tput_per_job * (1 - 1e-12)))
                fail_msg("%s %.0f%%: learn %.2f below equal %.2f tok/s per job",
                         fam_name((fam_kind)k), 100 * RED[i], le->tput_per_job, eq->tput_per_job);
            if (le->has_recovered && !(le->gap_recovered >= BAR[k]))
                fail_msg("%s %.0f%%: learn recovers %.1f%% of equal's gap, bar %.0f%%",
                         fam_name((fam_kind)k), 100 * RED[i], 100 * le->gap_recovered, 100 * BAR[k]);
        }
        pfi_sim_result_free(&r);
        fam_free(&fs);
    }
}

static void test_bars_noisy_embedded(void **state)
{
    (void)state;
    fam_set fs;
    assert_int_equal(fam_build(FAM_EMBEDDED, 1, &fs), PFI_OK);
    pfi_sim_result r;
    sim(&fs, 0.01, &r);
    for (int i = 0; i < NR; i++) {
        const pfi_sim_cell *le = r.cells + i * PFI_SIM_NPOLICIES + PFI_SIM_LEARN;
        if (!(le->gap_recovered >= 0.85))
            fail_msg("embedded, 1%% noise, %.0f%%: learn recovers %.1f%%", 100 * RED[i],
                     100 * le->gap_recovered);
    }
    pfi_sim_result_free(&r);
    fam_free(&fs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bars_exact),
        cmocka_unit_test(test_bars_noisy_embedded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
