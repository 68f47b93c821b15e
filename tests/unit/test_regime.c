/* pfi/regime.h: grouping jobs by regime, the medians and means, and the
 * Kruskal-Wallis / Dunn tests on those groups, against hand-computed cases
 * and against values computed independently with scipy by
 * tests/unit/ref_regime.py (command and output quoted where used), and the
 * paper's Table 10 medians. */
#include "test_util.h"

#include <string.h>

#include "pfi/csv.h"
#include "pfi/regime.h"

/* By hand, dense {1,2,3} against moe {4,5} (pt/ft mixed so that BY_ARCH pools
 * them): medians 2 and 4.5, means 2 and 4.5. Ranks 1..5, rank sums 6 and 9,
 * N = 5: H = 12/(5*6) (36/3 + 81/2) - 3*6 = 0.4 * 52.5 - 18 = 3; df 1,
 * p = erfc(sqrt(3/2)) = 0.0832645. Dunn: mean ranks 2 and 4.5, SE =
 * sqrt(5*6/12 (1/3 + 1/2)) = sqrt(2.0833), z = -2.5 / 1.4434 = -sqrt(3);
 * one pair, so Holm p = raw p = the KW p. (ref_regime.py: "hand 1,2,3 | 4,5"
 * gives H 3.0, p 0.08326451666355042, z -1.7320508075688774.) */
static void by_arch_by_hand(void **state)
{
    double pfi[] = {3, 4, 1, 5, 2};
    int moe[] = {0, 1, 0, 1, 0}, ft[] = {1, 0, 0, 1, 0};
    pfi_regime_stats s;
    assert_int_equal(pfi_regime_stats_compute(pfi, moe, ft, 5, PFI_REGIME_BY_ARCH, &s), PFI_OK);
    assert_int_equal(s.k, 2);
    assert_string_equal(s.name[0], "dense");
    assert_string_equal(s.name[1], "moe");
    assert_int_equal(s.n[0], 3);
    assert_int_equal(s.n[1], 2);
    assert_near(s.median[0], 2, 1e-15);
    assert_near(s.median[1], 4.5, 1e-15);
    assert_near(s.mean[0], 2, 1e-15);
    assert_near(s.mean[1], 4.5, 1e-15);
    assert_int_equal(s.test_rc, PFI_OK);
    assert_near(s.kw.H, 3, 1e-12);
    assert_int_equal(s.kw.df, 1);
    assert_near(s.kw.p, erfc(sqrt(1.5)), 1e-12);
    assert_int_equal(s.npairs, 1);
    assert_int_equal(s.dunn[0].a, 0);
    assert_int_equal(s.dunn[0].b, 1);
    assert_near(s.dunn[0].z, -sqrt(3.0), 1e-12);
    assert_near(s.dunn[0].p_raw, 0.0832645166635504, 1e-12);
    assert_near(s.dunn[0].p_holm, 0.0832645166635504, 1e-12);
}

/* Which job goes where: each grouping's names in its fixed order, members
 * counted by hand, and empty groups left out (no MoE FT job here). */
static void groupings_and_empty_groups(void **state)
{
    /* dense-pt 1.1, dense-ft 1.2 and 1.3, moe-pt 1.5 */
    double pfi[] = {1.1, 1.2, 1.5, 1.3};
    int moe[] = {0, 0, 1, 0}, ft[] = {0, 1, 0, 1};
    pfi_regime_stats s;
    assert_int_equal(pfi_regime_stats_compute(pfi, moe, ft, 4, PFI_REGIME_BY_REGIME, &s), PFI_OK);
    assert_int_equal(s.k, 2); /* dense, moe-pt; moe-ft is empty */
    assert_string_equal(s.name[0], "dense");
    assert_string_equal(s.name[1], "moe-pt");
    assert_int_equal(s.n[0], 3);
    assert_int_equal(s.n[1], 1);
    assert_near(s.median[0], 1.2, 1e-15);
    assert_near(s.mean[0], 1.2, 1e-15);

    assert_int_equal(pfi_regime_stats_compute(pfi, moe, ft, 4, PFI_REGIME_BY_ARCH_TASK, &s),
                     PFI_OK);
    assert_int_equal(s.k, 3);
    assert_string_equal(s.name[0], "dense-pt");
    assert_string_equal(s.name[1], "dense-ft");
    assert_string_equal(s.name[2], "moe-pt");
    assert_int_equal(s.n[1], 2);
    assert_near(s.median[1], 1.25, 1e-15);
    assert_near(s.median[2], 1.5, 1e-15);

    assert_int_equal(pfi_regime_stats_compute(pfi, moe, ft, 4, PFI_REGIME_BY_TASK, &s), PFI_OK);
    assert_int_equal(s.k, 2);
    assert_string_equal(s.name[0], "pt");
    assert_string_equal(s.name[1], "ft");
    assert_near(s.median[0], 1.3, 1e-15); /* pt: 1.1, 1.5 */
    assert_near(s.median[1], 1.25, 1e-15);

    /* flags are booleans: 2 counts as MoE */
    int moe2[] = {0, 0, 2, 0};
    assert_int_equal(pfi_regime_stats_compute(pfi, moe2, ft, 4, PFI_REGIME_BY_REGIME, &s), PFI_OK);
    assert_string_equal(s.name[1], "moe-pt");
}

/* Three groups with ties across them, against scipy (ref_regime.py,
 * "ties 1,2,2 | 2,3,4 | 5,5"): kruskal H 5.7004219409282655,
 * p 0.05783211871880857; Dunn z -1.203020109543579 (0-1),
 * -2.3826022011542642 (0-2), -1.3065883038587902 (1-2), Holm p
 * 0.38270514207601947, 0.0515722783546981, 0.38270514207601947. */
static void three_groups_with_ties_scipy(void **state)
{
    /* dense {1,2,2}, moe-pt {2,3,4}, moe-ft {5,5}, interleaved */
    double pfi[] = {2, 5, 1, 3, 2, 5, 4, 2};
    int moe[] = {0, 1, 0, 1, 1, 1, 1, 0}, ft[] = {1, 1, 0, 0, 0, 1, 0, 0};
    pfi_regime_stats s;
    assert_int_equal(pfi_regime_stats_compute(pfi, moe, ft, 8, PFI_REGIME_BY_REGIME, &s), PFI_OK);
    assert_int_equal(s.k, 3);
    assert_int_equal(s.n[0], 3);
    assert_int_equal(s.n[1], 3);
    assert_int_equal(s.n[2], 2);
    assert_near(s.mean[0], 5.0 / 3.0, 1e-15);
    assert_int_equal(s.test_rc, PFI_OK);
    assert_near(s.kw.H, 5.7004219409282655, 1e-10);
    assert_int_equal(s.kw.df, 2);
    assert_near(s.kw.p, 0.05783211871880857, 1e-10);
    assert_int_equal(s.npairs, 3);
    static const double z[] = {-1.203020109543579, -2.3826022011542642, -1.3065883038587902};
    static const double ph[] = {0.38270514207601947, 0.0515722783546981, 0.38270514207601947};
    static const double pr[] = {0.22896853876016132, 0.017190759451566034, 0.19135257103800973};
    static const size_t a[] = {0, 0, 1}, b[] = {1, 2, 2};
    for (size_t e = 0; e < 3; e++) {
        assert_int_equal(s.dunn[e].a, a[e]);
        assert_int_equal(s.dunn[e].b, b[e]);
        assert_near(s.dunn[e].z, z[e], 1e-10);
        assert_near(s.dunn[e].p_raw, pr[e], 1e-10);
        assert_near(s.dunn[e].p_holm, ph[e], 1e-10);
    }
}

/* The paper's Table 6 PFI by regime: Table 10's n and medians exactly (the
 * medians of the printed values are the printed medians), its means within
 * rounding; the tests against scipy on the same (rounded) values
 * (ref_regime.py "table6 by regime": H 12.484845150998417,
 * p 0.0019451375677371273; Dunn z dense-moe pt -1.667735323086886, dense-moe
 * ft -3.451353309715183, moe pt-moe ft -1.8901623662094345; Holm p
 * 0.11747249640290862, 0.0016733486169989067, 0.11747249640290862), and
 * the paper's Table 11 z within 0.05 (it used unrounded PFI: H 12.37). */
static void paper_table10_11(void **state)
{
    char path[512];
    pfi_csv *c = NULL;
    pfi_error err;
    test_path(path, sizeof path, PFI_SHARED_DIR, "data/paper-tables/table6_headline_pfi.csv");
    assert_int_equal(pfi_csv_read_file(path, &c, &err), PFI_OK);
    size_t n = pfi_csv_rows(c);
    assert_int_equal(n, 25);
    double pfi[25];
    int moe[25], ft[25];
    int ca = pfi_csv_col(c, "arch"), ct = pfi_csv_col(c, "task"), cp = pfi_csv_col(c, "pfi");
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pfi_csv_number(c, i, (size_t)cp, 0, 0, &pfi[i], &err), PFI_OK);
        moe[i] = strcmp(pfi_csv_field(c, i, (size_t)ca), "moe") == 0;
        ft[i] = strcmp(pfi_csv_field(c, i, (size_t)ct), "ft") == 0;
    }
    pfi_csv_destroy(c);
    pfi_regime_stats s;
    assert_int_equal(pfi_regime_stats_compute(pfi, moe, ft, n, PFI_REGIME_BY_REGIME, &s), PFI_OK);
    assert_int_equal(s.k, 3);
    /* Table 10 */
    static const size_t tn[] = {14, 7, 4};
    static const double med[] = {1.27, 1.43, 2.10}, mean[] = {1.30, 1.42, 2.17};
    for (size_t j = 0; j < 3; j++) {
        assert_int_equal(s.n[j], tn[j]);
        assert_near(s.median[j], med[j], 1e-12);
        assert_near(s.mean[j], mean[j], 0.005 + 1e-12);
    }
    assert_near(s.kw.H, 12.484845150998417, 1e-9);
    assert_near(s.kw.p, 0.0019451375677371273, 1e-12);
    assert_near(s.kw.H, 12.37, 0.2); /* the paper, on unrounded PFI */
    static const double z[] = {-1.667735323086886, -3.451353309715183, -1.8901623662094345};
    static const double ph[] = {0.11747249640290862, 0.0016733486169989067, 0.11747249640290862};
    static const double paper_z[] = {-1.64, -3.44, -1.90}; /* Table 11 */
    for (size_t e = 0; e < 3; e++) {
        assert_near(s.dunn[e].z, z[e], 1e-9);
        assert_near(s.dunn[e].p_holm, ph[e], 1e-10);
        assert_near(s.dunn[e].z, paper_z[e], 0.05);
    }
}

/* Undefined tests are not errors; bad input is. */
static void edge_cases(void **state)
{
    double pfi[] = {1.2, 1.4, 1.3};
    int moe[] = {0, 0, 0}, ft[] = {0, 1, 0};
    pfi_regime_stats s;
    /* one group: nothing to compare */
    assert_int_equal(pfi_regime_stats_compute(pfi, moe, ft, 3, PFI_REGIME_BY_ARCH, &s), PFI_OK);
    assert_int_equal(s.k, 1);
    assert_int_equal(s.test_rc, PFI_ENODATA);
    assert_int_equal(s.npairs, 0);
    assert_near(s.median[0], 1.3, 1e-15);
    /* all values equal: no ranks to compare */
    double same[] = {1.5, 1.5, 1.5};
    assert_int_equal(pfi_regime_stats_compute(same, moe, ft, 3, PFI_REGIME_BY_TASK, &s), PFI_OK);
    assert_int_equal(s.k, 2);
    assert_int_equal(s.test_rc, PFI_EUNDEFINED);
    assert_int_equal(s.npairs, 0);
    /* bad input */
    assert_int_equal(pfi_regime_stats_compute(pfi, moe, ft, 0, PFI_REGIME_BY_ARCH, &s),
                     PFI_ENODATA);
    assert_int_equal(pfi_regime_stats_compute(NULL, moe, ft, 3, PFI_REGIME_BY_ARCH, &s),
                     PFI_EINVAL);
    assert_int_equal(pfi_regime_stats_compute(pfi, moe, ft, 3, PFI_REGIME_BY_ARCH, NULL),
                     PFI_EINVAL);
    assert_int_equal(pfi_regime_stats_compute(pfi, moe, ft, 3, (pfi_regime_by)7, &s), PFI_EINVAL);
    double nan_pfi[] = {1.2, NAN, 1.3};
    assert_int_equal(pfi_regime_stats_compute(nan_pfi, moe, ft, 3, PFI_REGIME_BY_ARCH, &s),
                     PFI_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(by_arch_by_hand),
        cmocka_unit_test(groupings_and_empty_groups),
        cmocka_unit_test(three_groups_with_ties_scipy),
        cmocka_unit_test(paper_table10_11),
        cmocka_unit_test(edge_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
