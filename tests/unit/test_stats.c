/* Rank statistics against hand-computed values (arithmetic in the comments)
 * and against the paper's Tables 8, 10 and 11. Reference p-values use
 * erfc() from libm, independent of the GSL cdfs the code calls. */
#include "test_util.h"

#include <string.h>

#include "pfi/csv.h"
#include "pfi/stats.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* two-sided normal p = erfc(|z| / sqrt 2); for df = 1, chi2 Q(H) = erfc(sqrt(H / 2)) */
static double p_norm2(double z)
{
    return erfc(fabs(z) / sqrt(2.0));
}

/* Ranks with ties: 10, 20, 20, 30 -> 1, 2.5, 2.5, 4; tie sum = 2^3 - 2 = 6. */
static void ranks_with_ties(void **state)
{
    double x[] = {20, 10, 30, 20}, r[4], t;
    assert_int_equal(pfi_stats_rank(x, 4, r, &t), PFI_OK);
    assert_near(r[0], 2.5, 0);
    assert_near(r[1], 1, 0);
    assert_near(r[2], 4, 0);
    assert_near(r[3], 2.5, 0);
    assert_near(t, 6, 0);
}

/* scipy.stats.spearmanr docs: x = 1..5, y = 5,6,7,8,7 -> rho 0.8207826816681233,
 * p 0.08858700531354381. By hand: ranks y = 1,2,3.5,5,3.5 (tie of 7s);
 * deviations from 3: dx = -2,-1,0,1,2, dy = -2,-1,.5,2,.5; sum dx dy = 8,
 * sum dx^2 = 10, sum dy^2 = 9.5; rho = 8 / sqrt(95). t = rho sqrt(3/(1-rho^2))
 * = 2.48868, t(3 df) two-sided p = 0.088587. */
static void spearman_scipy_example_ties(void **state)
{
    double x[] = {1, 2, 3, 4, 5}, y[] = {5, 6, 7, 8, 7}, rho, p;
    assert_int_equal(pfi_stats_spearman(x, y, 5, &rho, &p), PFI_OK);
    assert_near(rho, 8 / sqrt(95.0), 1e-12);
    assert_near(p, 0.08858700531354381, 1e-9);
}

/* Table 8: H200 PFI ranks 1..6, H100 ranks 2,1,3,4,5,6: sum d^2 = 2,
 * rho = 1 - 6*2/(6*35) = 33/35 = 0.942857 (paper: 0.943). */
static void spearman_table8(void **state)
{
    char path[512];
    pfi_csv *c = NULL;
    pfi_error err;
    test_path(path, sizeof path, PFI_SHARED_DIR, "data/paper-tables/table8_h100_vs_h200.csv");
    assert_int_equal(pfi_csv_read_file(path, &c, &err), PFI_OK);
    size_t n = pfi_csv_rows(c);
    assert_int_equal(n, 6);
    double a[6], b[6], rho, p;
    int ca = pfi_csv_col(c, "pfi_h200"), cb = pfi_csv_col(c, "pfi_h100");
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pfi_csv_number(c, i, (size_t)ca, 0, 0, &a[i], &err), PFI_OK);
        assert_int_equal(pfi_csv_number(c, i, (size_t)cb, 0, 0, &b[i], &err), PFI_OK);
    }
    pfi_csv_destroy(c);
    assert_int_equal(pfi_stats_spearman(a, b, n, &rho, &p), PFI_OK);
    assert_near(rho, 33.0 / 35.0, 1e-12);
    assert_near(rho, 0.943, 0.0005);
}

static void spearman_perfect_and_bad(void **state)
{
    double x[] = {1, 2, 3, 4}, y[] = {10, 9, 8, 1}, k[] = {2, 2, 2, 2}, rho = 7, p = 7;
    assert_int_equal(pfi_stats_spearman(x, y, 4, &rho, &p), PFI_OK);
    assert_near(rho, -1, 1e-12);
    assert_near(p, 0, 1e-12);
    rho = 7;
    assert_int_equal(pfi_stats_spearman(x, k, 4, &rho, &p), PFI_EUNDEFINED);
    assert_near(rho, 7, 0); /* untouched: no NaN escapes */
    assert_int_equal(pfi_stats_spearman(x, y, 2, &rho, &p), PFI_ENODATA);
    double bad[] = {1, NAN, 3, 4};
    assert_int_equal(pfi_stats_spearman(bad, y, 4, &rho, &p), PFI_EINVAL);
}

/* BH by hand: p = .04, .041, .2 (m = 3): m p/j = .12, .0615, .2; running
 * minimum from the top: q = .0615, .0615, .2. Second case, unsorted input:
 * p = .01, .04, .03, .005 -> sorted .005,.01,.03,.04; 4p/j = .02,.02,.04,.04. */
static void bh_by_hand(void **state)
{
    double p1[] = {0.04, 0.041, 0.2}, q1[3];
    assert_int_equal(pfi_stats_bh(p1, 3, q1), PFI_OK);
    assert_near(q1[0], 0.0615, 1e-12);
    assert_near(q1[1], 0.0615, 1e-12);
    assert_near(q1[2], 0.2, 1e-12);
    double p2[] = {0.01, 0.04, 0.03, 0.005}, q2[4];
    assert_int_equal(pfi_stats_bh(p2, 4, q2), PFI_OK);
    assert_near(q2[0], 0.02, 1e-12);
    assert_near(q2[1], 0.04, 1e-12);
    assert_near(q2[2], 0.04, 1e-12);
    assert_near(q2[3], 0.02, 1e-12);
    double bad[] = {0.5, 1.5};
    assert_int_equal(pfi_stats_bh(bad, 2, q2), PFI_EINVAL);
}

/* Holm by hand: p = .01, .04, .03: sorted .01*3 = .03, .03*2 = .06,
 * .04*1 = .04 -> running max .03, .06, .06; capped at 1. */
static void holm_by_hand(void **state)
{
    double p[] = {0.01, 0.04, 0.03}, a[3];
    assert_int_equal(pfi_stats_holm(p, 3, a), PFI_OK);
    assert_near(a[0], 0.03, 1e-12);
    assert_near(a[1], 0.06, 1e-12);
    assert_near(a[2], 0.06, 1e-12);
    double p2[] = {0.6, 0.7}, a2[2];
    assert_int_equal(pfi_stats_holm(p2, 2, a2), PFI_OK);
    assert_near(a2[0], 1, 0);
    assert_near(a2[1], 1, 0);
}

/* scipy.stats.kruskal docs: [1,3,5,7,9] vs [2,4,6,8,10] -> H 0.2727..., p 0.6015...
 * By hand: rank sums 25 and 30, H = 12/110 (625/5 + 900/5) - 33 = 0.272727. */
static void kruskal_scipy_example(void **state)
{
    double x[] = {1, 3, 5, 7, 9, 2, 4, 6, 8, 10};
    size_t g[] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
    pfi_kruskal k;
    assert_int_equal(pfi_stats_kruskal(x, g, 10, 2, &k), PFI_OK);
    assert_near(k.H, 12.0 / 110.0 * 305.0 - 33.0, 1e-12);
    assert_int_equal(k.df, 1);
    assert_near(k.p, 0.6015081344405895, 1e-9);
}

/* Ties by hand: A = 1,2,2, B = 2,3,3. Pooled ranks: 1 -> 1, the three 2s ->
 * 3, the two 3s -> 5.5. R_A = 7, R_B = 14, N = 6:
 * H0 = 12/42 (49/3 + 196/3) - 21 = 2.33333; ties 24 + 6 = 30;
 * H = 2.33333 / (1 - 30/210) = 2.72222; p = erfc(sqrt(H/2)) = 0.09896.
 * Dunn on the same data: var = 42/12 - 30/(12*5) = 3; SE = sqrt(3 (2/3)) = sqrt 2;
 * z = (7/3 - 14/3) / sqrt 2 = -1.64992; with two groups z^2 = H. */
static void kruskal_dunn_ties_by_hand(void **state)
{
    double x[] = {1, 2, 2, 2, 3, 3};
    size_t g[] = {0, 0, 0, 1, 1, 1};
    pfi_kruskal k;
    assert_int_equal(pfi_stats_kruskal(x, g, 6, 2, &k), PFI_OK);
    double H = (12.0 / 42.0 * (245.0 / 3.0) - 21.0) / (1.0 - 30.0 / 210.0);
    assert_near(k.H, H, 1e-12);
    assert_near(k.H, 2.722222, 1e-6);
    assert_near(k.p, erfc(sqrt(H / 2)), 1e-10);
    pfi_dunn_pair d;
    assert_int_equal(pfi_stats_dunn(x, g, 6, 2, &d), PFI_OK);
    assert_near(d.z, (7.0 / 3 - 14.0 / 3) / sqrt(2.0), 1e-12);
    assert_near(d.z * d.z, H, 1e-10);
    assert_near(d.p_raw, p_norm2(d.z), 1e-10);
    assert_near(d.p_holm, d.p_raw, 0);
}

/* Dunn, three groups, no ties: A = 1,2, B = 3,4, C = 5,6. var = 6*7/12 = 3.5,
 * SE = sqrt(3.5 (1/2 + 1/2)) = 1.870829; mean ranks 1.5, 3.5, 5.5:
 * z_AB = z_BC = -2/1.870829 = -1.069045, z_AC = -2.138090;
 * p_raw .285049, .032509, .285049; Holm: .032509*3 = .097527,
 * .285049*2 = .570098, then max(.570098, .285049) = .570098. */
static void dunn_three_groups(void **state)
{
    double x[] = {1, 2, 3, 4, 5, 6};
    size_t g[] = {0, 0, 1, 1, 2, 2};
    pfi_dunn_pair d[3];
    assert_int_equal(pfi_stats_dunn(x, g, 6, 3, d), PFI_OK);
    double se = sqrt(3.5);
    assert_true(d[0].a == 0 && d[0].b == 1 && d[1].a == 0 && d[1].b == 2 && d[2].a == 1);
    assert_near(d[0].z, -2 / se, 1e-12);
    assert_near(d[1].z, -4 / se, 1e-12);
    assert_near(d[2].z, -2 / se, 1e-12);
    assert_near(d[0].p_raw, p_norm2(2 / se), 1e-10);
    assert_near(d[1].p_holm, 3 * p_norm2(4 / se), 1e-10);
    assert_near(d[0].p_holm, 2 * p_norm2(2 / se), 1e-10);
    assert_near(d[2].p_holm, 2 * p_norm2(2 / se), 1e-10);
    assert_near(d[0].p_holm, 0.570098, 1e-5);
}

static void group_tests_bad_input(void **state)
{
    double x[] = {1, 2, 3};
    size_t g1[] = {0, 0, 0}, g2[] = {0, 1, 5};
    pfi_kruskal k = {.H = 7};
    pfi_dunn_pair d[3];
    /* a group without observations */
    assert_int_equal(pfi_stats_kruskal(x, g1, 3, 2, &k), PFI_ENODATA);
    assert_int_equal(pfi_stats_dunn(x, g1, 3, 2, d), PFI_ENODATA);
    /* one group only */
    assert_int_equal(pfi_stats_kruskal(x, g1, 3, 1, &k), PFI_ENODATA);
    /* group index out of range */
    assert_int_equal(pfi_stats_kruskal(x, g2, 3, 2, &k), PFI_EINVAL);
    /* every value tied: H is 0/0 */
    double c[] = {2, 2, 2, 2};
    size_t gc[] = {0, 0, 1, 1};
    assert_int_equal(pfi_stats_kruskal(c, gc, 4, 2, &k), PFI_EUNDEFINED);
    assert_near(k.H, 7, 0);
}

/* Table 6's 25 headline PFIs pooled into dense / MoE PT / MoE FT reproduce
 * Table 10 (medians, means to 2 decimals) and Table 11 (Dunn, Holm m = 3);
 * H within 0.2 of the paper's 12.37 (the paper used unrounded PFI, so the
 * tolerances here are the paper's rounding; scipy_reference_p_values below
 * checks the same statistics on these inputs to 1e-6). */
static void paper_tables_10_11(void **state)
{
    char path[512];
    pfi_csv *c = NULL;
    pfi_error err;
    test_path(path, sizeof path, PFI_SHARED_DIR, "data/paper-tables/table6_headline_pfi.csv");
    assert_int_equal(pfi_csv_read_file(path, &c, &err), PFI_OK);
    size_t n = pfi_csv_rows(c);
    assert_int_equal(n, 25);
    double x[25], by[3][25];
    size_t g[25], cnt[3] = {0};
    int ca = pfi_csv_col(c, "arch"), ct = pfi_csv_col(c, "task"), cp = pfi_csv_col(c, "pfi");
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pfi_csv_number(c, i, (size_t)cp, 0, 0, &x[i], &err), PFI_OK);
        int moe = strcmp(pfi_csv_field(c, i, (size_t)ca), "moe") == 0;
        int ft = strcmp(pfi_csv_field(c, i, (size_t)ct), "ft") == 0;
        g[i] = !moe ? 0 : ft ? 2 : 1; /* 0 dense, 1 moe-pt, 2 moe-ft */
        by[g[i]][cnt[g[i]]++] = x[i];
    }
    pfi_csv_destroy(c);
    assert_int_equal(cnt[0], 14);
    assert_int_equal(cnt[1], 7);
    assert_int_equal(cnt[2], 4);
    const double med[] = {1.27, 1.43, 2.10}, mean[] = {1.30, 1.42, 2.17};
    for (int j = 0; j < 3; j++) {
        double m, a;
        assert_int_equal(pfi_stats_median_mean(by[j], cnt[j], &m, &a), PFI_OK);
        assert_near(m, med[j], 0.005);
        assert_near(a, mean[j], 0.005);
    }
    pfi_kruskal k;
    assert_int_equal(pfi_stats_kruskal(x, g, n, 3, &k), PFI_OK);
    assert_near(k.H, 12.37, 0.2);
    assert_int_equal(k.df, 2);
    assert_near(k.p, 0.0021, 0.0005);
    pfi_dunn_pair d[3]; /* (dense, moe-pt), (dense, moe-ft), (moe-pt, moe-ft) */
    assert_int_equal(pfi_stats_dunn(x, g, n, 3, d), PFI_OK);
    assert_near(d[0].z, -1.64, 0.05);
    assert_near(d[0].p_raw, 0.1020, 0.05);
    assert_near(d[0].p_holm, 0.1137, 0.05);
    assert_near(d[1].z, -3.44, 0.05);
    assert_near(d[1].p_raw, 0.0006, 0.05);
    assert_near(d[1].p_holm, 0.0017, 0.05);
    assert_near(d[2].z, -1.90, 0.05);
    assert_near(d[2].p_raw, 0.0568, 0.05);
    assert_near(d[2].p_holm, 0.1137, 0.05);
    /* only dense vs MoE FT survives the correction, as in the paper */
    assert_true(d[1].p_holm < 0.05 && d[0].p_holm > 0.05 && d[2].p_holm > 0.05);
}

/* The same 25 PFIs (and Table 8's pairs) against scipy to 1e-6, with the
 * values below printed by `python3 tests/ref/stats_ref.py ../shared` (scipy
 * 1.10.1: scipy.stats.kruskal, spearmanr; Dunn from rankdata and norm.sf;
 * Holm and BH by hand there, so pfi_stats_holm/_bh are checked too):
 *   kruskal 12.484845150998417 0.0019451375677371273
 *   dunn (0, 1) -1.667735323086886 0.0953682800501648 0.11747249640290862 0.0953682800501648
 *   dunn (0, 2) -3.451353309715183 0.0005577828723329689 0.0016733486169989067
 * 0.0016733486169989067 dunn (1, 2) -1.8901623662094345 0.05873624820145431 0.11747249640290862
 * 0.08810437230218146 spearman8 0.942857142857143 0.004804664723032055 spearman6_gpus
 * -0.23087598491397257 0.26684178484919285 (columns: z, p_raw, p_holm, p_bh; rho, p). */
static void scipy_reference_p_values(void **state)
{
    char path[512];
    pfi_csv *c = NULL;
    pfi_error err;
    test_path(path, sizeof path, PFI_SHARED_DIR, "data/paper-tables/table6_headline_pfi.csv");
    assert_int_equal(pfi_csv_read_file(path, &c, &err), PFI_OK);
    size_t n = pfi_csv_rows(c);
    assert_int_equal(n, 25);
    double x[25], gpus[25];
    size_t g[25];
    int ca = pfi_csv_col(c, "arch"), ct = pfi_csv_col(c, "task"), cp = pfi_csv_col(c, "pfi"),
        cg = pfi_csv_col(c, "gpus");
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pfi_csv_number(c, i, (size_t)cp, 0, 0, &x[i], &err), PFI_OK);
        assert_int_equal(pfi_csv_number(c, i, (size_t)cg, 0, 0, &gpus[i], &err), PFI_OK);
        int moe = strcmp(pfi_csv_field(c, i, (size_t)ca), "moe") == 0;
        int ft = strcmp(pfi_csv_field(c, i, (size_t)ct), "ft") == 0;
        g[i] = !moe ? 0 : ft ? 2 : 1;
    }
    pfi_csv_destroy(c);
    pfi_kruskal k;
    assert_int_equal(pfi_stats_kruskal(x, g, n, 3, &k), PFI_OK);
    assert_near(k.H, 12.484845150998417, 1e-6);
    assert_near(k.p, 0.0019451375677371273, 1e-6);
    pfi_dunn_pair d[3];
    assert_int_equal(pfi_stats_dunn(x, g, n, 3, d), PFI_OK);
    const double z[] = {-1.667735323086886, -3.451353309715183, -1.8901623662094345};
    const double praw[] = {0.0953682800501648, 0.0005577828723329689, 0.05873624820145431};
    const double holm[] = {0.11747249640290862, 0.0016733486169989067, 0.11747249640290862};
    const double bh[] = {0.0953682800501648, 0.0016733486169989067, 0.08810437230218146};
    double pr[3], q[3];
    for (int i = 0; i < 3; i++) {
        assert_near(d[i].z, z[i], 1e-6);
        assert_near(d[i].p_raw, praw[i], 1e-6);
        assert_near(d[i].p_holm, holm[i], 1e-6);
        pr[i] = d[i].p_raw;
    }
    assert_int_equal(pfi_stats_bh(pr, 3, q), PFI_OK);
    for (int i = 0; i < 3; i++)
        assert_near(q[i], bh[i], 1e-6);
    double rho, p;
    assert_int_equal(pfi_stats_spearman(x, gpus, n, &rho, &p), PFI_OK);
    assert_near(rho, -0.23087598491397257, 1e-6);
    assert_near(p, 0.26684178484919285, 1e-6);

    test_path(path, sizeof path, PFI_SHARED_DIR, "data/paper-tables/table8_h100_vs_h200.csv");
    assert_int_equal(pfi_csv_read_file(path, &c, &err), PFI_OK);
    double a[6], b[6];
    int c200 = pfi_csv_col(c, "pfi_h200"), c100 = pfi_csv_col(c, "pfi_h100");
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(pfi_csv_number(c, i, (size_t)c200, 0, 0, &a[i], &err), PFI_OK);
        assert_int_equal(pfi_csv_number(c, i, (size_t)c100, 0, 0, &b[i], &err), PFI_OK);
    }
    pfi_csv_destroy(c);
    assert_int_equal(pfi_stats_spearman(a, b, 6, &rho, &p), PFI_OK);
    assert_near(rho, 0.942857142857143, 1e-6);
    assert_near(p, 0.004804664723032055, 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranks_with_ties),
        cmocka_unit_test(spearman_scipy_example_ties),
        cmocka_unit_test(spearman_table8),
        cmocka_unit_test(spearman_perfect_and_bad),
        cmocka_unit_test(bh_by_hand),
        cmocka_unit_test(holm_by_hand),
        cmocka_unit_test(kruskal_scipy_example),
        cmocka_unit_test(kruskal_dunn_ties_by_hand),
        cmocka_unit_test(dunn_three_groups),
        cmocka_unit_test(group_tests_bad_input),
        cmocka_unit_test(paper_tables_10_11),
        cmocka_unit_test(scipy_reference_p_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
