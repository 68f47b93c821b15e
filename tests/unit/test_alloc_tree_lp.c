/* The nested oracle proved on random trees (issue 28's Done-when): 80
 * problems from tests/unit/alloc_tree_ref.py (2-3 levels, 3-8 jobs with
 * concave curves, some spread over two domains, some standing for two
 * jobs; 20 tiny ones) with their optimum from scipy's linprog, stored in
 * tests/data/alloc-tree-lp.json with the command that made it. For each:
 * the oracle's total throughput equals the LP's, no domain is over its limit
 * (summed here from the powers, not taken from the library), the flat
 * oracle (tree ignored) passes some limit in many of them, the proportional
 * policies hold every limit and never beat the oracle, and on the tiny ones
 * a brute force over a 1 W grid never beats the oracle (and matches it when
 * no job is spread: every vertex is then on the grid). */
#include "test_util.h"

#include <jansson.h>
#include <string.h>

#include "pfi/alloc.h"

#define MAXJ 8
#define MAXD 16
#define MAXP 8

typedef struct {
    size_t nd, nj, ns;
    pfi_alloc_domain d[MAXD];
    pfi_alloc_job j[MAXJ];
    double P[MAXJ][MAXP], T[MAXJ][MAXP];
    pfi_alloc_span s[2 * MAXJ];
    double budget, lp;
    int spread;
} tcase;

static double num(const json_t *v)
{
    return json_is_null(v) ? INFINITY : json_number_value(v);
}

static void load(const json_t *c, tcase *t)
{
    memset(t, 0, sizeof *t);
    const json_t *ds = json_object_get(c, "domains"), *js = json_object_get(c, "jobs");
    t->nd = json_array_size(ds);
    t->nj = json_array_size(js);
    assert_true(t->nd <= MAXD && t->nj <= MAXJ);
    for (size_t a = 0; a < t->nd; a++) {
        const json_t *d = json_array_get(ds, a), *par = json_object_get(d, "parent");
        t->d[a] = (pfi_alloc_domain){
            NULL, json_is_null(par) ? PFI_ALLOC_NO_PARENT : (size_t)json_integer_value(par),
            num(json_object_get(d, "limit_w")), num(json_object_get(d, "fixed_w"))};
    }
    for (size_t i = 0; i < t->nj; i++) {
        const json_t *j = json_array_get(js, i), *P = json_object_get(j, "P"),
                     *T = json_object_get(j, "T"), *sp = json_object_get(j, "spans");
        size_t n = json_array_size(P);
        assert_true(n <= MAXP);
        for (size_t k = 0; k < n; k++) {
            t->P[i][k] = json_number_value(json_array_get(P, k));
            t->T[i][k] = json_number_value(json_array_get(T, k));
        }
        t->j[i] = (pfi_alloc_job){.P = t->P[i],
                                  .T = t->T[i],
                                  .n = n,
                                  .pfi = NAN,
                                  .dram_copy = NAN,
                                  .count = (size_t)json_integer_value(json_object_get(j, "count"))};
        t->spread |= json_array_size(sp) > 1;
        for (size_t k = 0; k < json_array_size(sp); k++) {
            const json_t *x = json_array_get(sp, k);
            t->s[t->ns++] = (pfi_alloc_span){i, (size_t)json_integer_value(json_array_get(x, 0)),
                                             json_number_value(json_array_get(x, 1))};
        }
    }
    t->budget = json_number_value(json_object_get(c, "budget_w"));
    t->lp = json_number_value(json_object_get(c, "lp_tput"));
}

/* Job i's throughput at power p on its (concave) curve. */
static double tput(const tcase *t, size_t i, double p)
{
    const double *P = t->P[i], *T = t->T[i];
    size_t n = t->j[i].n;
    for (size_t k = 0; k + 1 < n; k++)
        if (p <= P[k + 1]) return T[k] + (p - P[k]) / (P[k + 1] - P[k]) * (T[k + 1] - T[k]);
    return T[n - 1];
}

/* Domain a's power (jobs by their shares in a's subtree, and fixed), walking
 * each span's parents. */
static double domain_power(const tcase *t, const double *pw, size_t a)
{
    double s = 0;
    for (size_t k = 0; k < t->ns; k++)
        for (size_t d = t->s[k].domain; d != PFI_ALLOC_NO_PARENT; d = t->d[d].parent)
            if (d == a) s += t->s[k].share * (double)t->j[t->s[k].job].count * pw[t->s[k].job];
    for (size_t d = 0; d < t->nd; d++)
        for (size_t e = d; e != PFI_ALLOC_NO_PARENT; e = t->d[e].parent)
            if (e == a) s += t->d[d].fixed_w;
    return s;
}

/* The first domain over its limit (or nd), and the jobs over the budget. */
static size_t over(const tcase *t, const double *pw, double tol)
{
    double jobs = 0;
    for (size_t i = 0; i < t->nj; i++)
        jobs += (double)t->j[i].count * pw[i];
    for (size_t a = 0; a < t->nd; a++)
        if (domain_power(t, pw, a) > t->d[a].limit_w + tol) return a;
    return jobs > t->budget + tol ? MAXD : t->nd;
}

static double brute(const tcase *t, size_t i, double *pw)
{
    if (i == t->nj) {
        if (over(t, pw, 1e-9) != t->nd) return -INFINITY;
        double s = 0;
        for (size_t k = 0; k < t->nj; k++)
            s += (double)t->j[k].count * tput(t, k, pw[k]);
        return s;
    }
    double best = -INFINITY;
    for (double p = t->P[i][0]; p <= t->P[i][t->j[i].n - 1] + 1e-9; p += 1) {
        pw[i] = p;
        best = fmax(best, brute(t, i + 1, pw));
    }
    return best;
}

static void lp_reference(void **state)
{
    (void)state;
    char path[512];
    json_error_t je;
    json_t *root = json_load_file(
        test_path(path, sizeof path, PFI_SOURCE_DIR, "tests/data/alloc-tree-lp.json"), 0, &je);
    if (!root) fail_msg("%s:%d: %s", path, je.line, je.text);
    const json_t *cases = json_object_get(root, "cases");
    assert_int_equal(json_array_size(cases), 80);
    size_t flat_over = 0, tiny = 0, spread = 0;
    double worst = 0;
    for (size_t c = 0; c < json_array_size(cases); c++) {
        tcase t;
        load(json_array_get(cases, c), &t);
        spread += t.spread;
        pfi_alloc_problem *p = NULL;
        pfi_error err;
        if (pfi_alloc_problem_create(t.j, t.nj, &p, &err)) fail_msg("case %zu: %s", c, err.msg);
        pfi_alloc_out o[MAXJ];
        pfi_alloc_result r;
        double pw[MAXJ], tol = 1e-6 * fmax(1.0, t.budget);
        /* the tree ignored: the flat oracle */
        if (pfi_alloc_run(p, PFI_POLICY_ORACLE, t.budget, o, &r, &err))
            fail_msg("case %zu flat: %s", c, err.msg);
        for (size_t i = 0; i < t.nj; i++)
            pw[i] = o[i].power_w;
        flat_over += over(&t, pw, tol) != t.nd;
        if (pfi_alloc_problem_set_tree(p, t.d, t.nd, t.s, t.ns, &err))
            fail_msg("case %zu: %s", c, err.msg);
        if (pfi_alloc_run(p, PFI_POLICY_ORACLE, t.budget, o, &r, &err))
            fail_msg("case %zu: %s", c, err.msg);
        double sum = 0;
        for (size_t i = 0; i < t.nj; i++) {
            pw[i] = o[i].power_w;
            sum += (double)t.j[i].count * tput(&t, i, pw[i]);
        }
        size_t bad = over(&t, pw, 1e-9 * fmax(1.0, t.budget));
        if (bad != t.nd) fail_msg("case %zu: the oracle passes domain %zu's limit", c, bad);
        double gap = fabs(r.total_tput - t.lp) / fmax(1.0, t.lp);
        worst = fmax(worst, gap);
        if (gap > 1e-7 || fabs(sum - r.total_tput) > 1e-7 * fmax(1.0, sum))
            fail_msg("case %zu (%s): oracle %.10g (curves %.10g), LP %.10g", c,
                     t.spread ? "spread" : "one domain each", r.total_tput, sum, t.lp);
        for (size_t a = 0; a < t.nd; a++)
            assert_near(pfi_alloc_problem_domain_power(p, a), domain_power(&t, pw, a), 1e-6);
        /* the proportional policies hold every limit and never beat the oracle */
        static const pfi_alloc_policy props[] = {PFI_POLICY_EQUAL, PFI_POLICY_MOE_FT};
        for (size_t k = 0; k < 2; k++) {
            pfi_alloc_out q[MAXJ];
            pfi_alloc_result rq;
            if (pfi_alloc_run(p, props[k], t.budget, q, &rq, &err))
                fail_msg("case %zu %s: %s", c, pfi_alloc_policy_name(props[k]), err.msg);
            for (size_t i = 0; i < t.nj; i++)
                pw[i] = q[i].power_w;
            bad = over(&t, pw, 1e-9 * fmax(1.0, t.budget));
            if (bad != t.nd)
                fail_msg("case %zu %s: passes domain %zu's limit", c,
                         pfi_alloc_policy_name(props[k]), bad);
            assert_true(rq.total_tput <= r.total_tput + 1e-7 * fmax(1.0, r.total_tput));
        }
        if (c >= 60) { /* the tiny ones */
            tiny++;
            double b = brute(&t, 0, pw);
            if (b > r.total_tput + 1e-9 || (!t.spread && b < r.total_tput - 1e-9))
                fail_msg("case %zu: brute force %.10g, oracle %.10g", c, b, r.total_tput);
        }
        pfi_alloc_problem_destroy(p);
    }
    print_message("80 cases (%zu with a spread job, %zu tiny): largest gap to the LP %.2g; the "
                  "flat oracle passes a limit in %zu\n",
                  spread, tiny, worst, flat_over);
    assert_true(flat_over >= 40); /* the test would see a tree ignored */
    json_decref(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lp_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
