/* The oracle under nested budgets when some job is spread over domains: a
 * linear program, solved by GLPK's simplex (alloc_tree_oracle.c says why the
 * greedy does not do here).
 *
 * Columns are envelope segments, each filled by a fraction x in [0, 1] of
 * its width W, worth slope x W. A spread job's segments are columns of their
 * own, with coefficient alpha_a W in the row of every domain a that holds a
 * share alpha_a of the job. Jobs in one domain h enter every row on h's path
 * with coefficient 1, so among them only the watts per slope matter: their
 * segments of one home and one slope are one column, and its fraction goes
 * to each of them (equal jobs get equal watts). A job's segments fill in
 * order at any optimum, since its slopes strictly decrease (the envelope)
 * and its segments cost the same rows. Rows are the domains with a limit,
 * each holding the watts above the floors under its room.
 *
 * The program is solved on a window of its columns (column generation in
 * its simplest form): the greedy with the spread jobs at their floors says
 * roughly where each home's threshold slope lies; the home's segments well
 * above it are fixed full, those well below empty, and only the K on each
 * side of it are columns, with the spread jobs' segments. The fixed ones
 * are then priced with the window's duals y (a home's segments cost the sum
 * of y on its path per watt): a fixed-full segment flatter than that price,
 * or a fixed-empty one steeper, means the window was too narrow on that
 * side, which is widened and the program solved again. When none is
 * mispriced the window's solution with the fixed columns is optimal for the
 * whole program (primal feasible, dual feasible, complementary). Spread
 * jobs move thresholds only by their own shares' watts, so one window is
 * mostly enough (bench_alloc: 10^4 jobs with 100 spread, 0.11 s of CPU for
 * the whole program, 13 ms on the window).
 *
 * The simplex is exact up to its tolerances (1e-7 relative); what it leaves
 * over a room is taken back by alloc_tree_fit, so no limit is passed. */
#define _GNU_SOURCE /* qsort_r */
#include "alloc_problem.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_home(const void *a, const void *b, void *ctx)
{
    const struct alloc_tree *t = ctx;
    const struct tseg *x = a, *y = b;
    size_t hx = t->home[x->job], hy = t->home[y->job];
    if (hx != hy) return hx < hy ? -1 : 1; /* spread jobs (ALLOC_SPREAD) last */
    if (x->slope != y->slope) return x->slope < y->slope ? 1 : -1;
    return (x->job > y->job) - (x->job < y->job);
}

/* Growable 1-based triplets for glp_load_matrix. */
typedef struct {
    int *ia, *ja;
    double *ar;
    size_t n, cap;
} triplets;

static int add(triplets *m, int row, int col, double v)
{
    if (m->n + 2 > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 1024;
        int *ia = realloc(m->ia, cap * sizeof *ia);
        if (ia) m->ia = ia;
        int *ja = realloc(m->ja, cap * sizeof *ja);
        if (ja) m->ja = ja;
        double *ar = realloc(m->ar, cap * sizeof *ar);
        if (ar) m->ar = ar;
        if (!ia || !ja || !ar) return -1;
        m->cap = cap;
    }
    m->n++;
    m->ia[m->n] = row;
    m->ja[m->n] = col;
    m->ar[m->n] = v;
    return 0;
}

/* The window's state per home h: its segments in ts are [hs[h], hs[h+1])
 * (steepest first), columns [lo[h], hi[h]); those before lo are full. */
typedef struct {
    size_t *hs, *lo, *hi;
    double *y, *mu; /* rows' duals; each domain's path sum */
} window;

/* Solves the program on the window: columns are the window's (home, slope)
 * groups and every spread segment (from ts[ns1..ns)); the rows' rooms less
 * the fixed-full segments. x of each column into xs (per segment), the
 * rows' duals into w->y. */
static int solve(pfi_alloc_problem *p, const double *room, size_t ns1, size_t ns, double smax,
                 window *w, double *xs, pfi_error *err)
{
    struct alloc_tree *t = p->tree;
    size_t nd = t->nd;
    size_t *row = t->touched;
    double *rb = t->dem; /* each row's bound: the room less the fixed-full segments */
    int nrows = 0;
    for (size_t a = 0; a < nd; a++) {
        row[a] = isinf(room[a]) ? 0 : (size_t)++nrows;
        rb[a] = 0;
    }
    for (size_t h = 0; h < nd; h++)
        for (size_t j = w->hs[h]; j < w->lo[h]; j++)
            rb[h] += t->ts[j].width;
    for (size_t a = nd; a-- > 1;)
        rb[t->parent[a]] += rb[a];
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    if (nrows) glp_add_rows(lp, nrows);
    for (size_t a = 0; a < nd; a++)
        if (row[a]) glp_set_row_bnds(lp, (int)row[a], GLP_UP, 0.0, fmax(0.0, room[a] - rb[a]));
    triplets m = {0};
    int ncols = 0, oom = 0, rc = PFI_OK;
    /* column c's segments are ts[g[2c] .. g[2c + 1]) */
    size_t cap = 64, *g = malloc(2 * cap * sizeof *g);
    oom = !g;
    for (size_t h = 0; h <= nd && !oom; h++) { /* h == nd: the spread segments */
        size_t j = h < nd ? w->lo[h] : ns1, e = h < nd ? w->hi[h] : ns;
        while (j < e && !oom) {
            size_t i = t->ts[j].job, k = 1;
            double W = t->ts[j].width;
            if (h < nd)
                while (j + k < e && t->ts[j + k].slope == t->ts[j].slope)
                    W += t->ts[j + k++].width;
            if ((size_t)ncols + 2 > cap) {
                size_t *g2 = realloc(g, 4 * cap * sizeof *g2);
                if (!g2) {
                    oom = 1;
                    break;
                }
                g = g2;
                cap *= 2;
            }
            int c = glp_add_cols(lp, 1);
            g[2 * c] = j;
            g[2 * c + 1] = j + k;
            ncols = c;
            glp_set_col_bnds(lp, c, GLP_DB, 0.0, 1.0);
            glp_set_obj_coef(lp, c, t->ts[j].slope / smax * W);
            if (h < nd) {
                for (size_t a = h;; a = t->parent[a]) {
                    if (row[a] && add(&m, (int)row[a], c, W)) oom = 1;
                    if (a == 0) break;
                }
            } else {
                for (size_t a = 0; a < nd; a++) {
                    if (!row[a]) continue;
                    double al = alloc_tree_alpha(t, i, a);
                    if (al > 0 && add(&m, (int)row[a], c, al * W)) oom = 1;
                }
            }
            j += k;
        }
    }
    if (oom) {
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory for the linear program");
    } else {
        if (m.n) glp_load_matrix(lp, (int)m.n, m.ia, m.ja, m.ar);
        int term = glp_term_out(GLP_OFF); /* GLPK prints its scaling otherwise */
        glp_scale_prob(lp, GLP_SF_AUTO);
        /* Start from every segment full (columns at their upper bound, the
         * rows' slacks basic): dual feasible, every objective coefficient
         * being positive, so the dual simplex with the long-step ratio test
         * only takes back what the rows cannot hold, flipping many columns
         * a pivot. From the empty start the primal simplex brings columns
         * in one pivot each (10^4 jobs, every column: 7.9 s). */
        for (int c = 1; c <= ncols; c++)
            glp_set_col_stat(lp, c, GLP_NU);
        glp_smcp parm;
        glp_init_smcp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        parm.meth = GLP_DUALP;
        parm.r_test = GLP_RT_FLIP;
        int r = glp_simplex(lp, &parm);
        glp_term_out(term);
        if (r != 0 || glp_get_status(lp) != GLP_OPT)
            rc = pfi_error_set(err, PFI_EINFEASIBLE, NULL, 0,
                               "the nested oracle's linear program failed (GLPK status %d, %d)", r,
                               glp_get_status(lp));
        for (int c = 1; c <= ncols && rc == PFI_OK; c++) {
            double x = fmin(1.0, fmax(0.0, glp_get_col_prim(lp, c)));
            for (size_t j = g[2 * c]; j < g[2 * c + 1]; j++)
                xs[j] = x;
        }
        for (size_t a = 0; a < nd && rc == PFI_OK; a++)
            w->y[a] = row[a] ? glp_get_row_dual(lp, (int)row[a]) : 0;
    }
    free(g);
    free(m.ia);
    free(m.ja);
    free(m.ar);
    glp_delete_prob(lp);
    return rc;
}

enum { WINDOW = 16 }; /* segments on each side of a home's threshold at first */

int alloc_tree_lp(pfi_alloc_problem *p, const double *room, double *power_w, pfi_error *err)
{
    struct alloc_tree *t = p->tree;
    size_t n = p->n, nd = t->nd, ns;
    uint64_t kmin, kmax;
    int rc = alloc_tree_segments(p, &ns, &kmin, &kmax, err);
    if (rc != PFI_OK) return rc;
    double smax = 0;
    for (size_t j = 0; j < ns; j++)
        smax = fmax(smax, t->ts[j].slope);
    double *added = p->shed;
    for (size_t i = 0; i < n; i++)
        added[i] = 0;
    if (ns == 0) goto done;
    qsort_r(t->ts, ns, sizeof *t->ts, cmp_home, t);
    size_t ns1 = 0; /* the single-domain segments: ts[0..ns1) */
    while (ns1 < ns && t->ts[ns1].home != UINT32_MAX)
        ns1++;
    window w = {0};
    double *xs = malloc(ns * sizeof *xs), *r2 = malloc(nd * sizeof *r2);
    w.hs = malloc((nd + 1) * sizeof *w.hs);
    w.lo = malloc(nd * sizeof *w.lo);
    w.hi = malloc(nd * sizeof *w.hi);
    w.y = malloc(nd * sizeof *w.y);
    w.mu = malloc(nd * sizeof *w.mu);
    if (!xs || !r2 || !w.hs || !w.lo || !w.hi || !w.y || !w.mu) {
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory for the linear program");
        goto out;
    }
    /* the greedy with the spread jobs at their floors: its threshold in each
     * home (the first segment it did not fill) is where the window starts */
    memcpy(r2, room, nd * sizeof *r2);
    memcpy(t->ts2, t->ts, ns1 * sizeof *t->ts);
    alloc_tree_greedy(p, t->ts2, t->ts2 + ns1, ns1, r2, added);
    for (size_t h = 0, j = 0; h <= nd; h++) {
        while (j < ns1 && t->ts[j].home < h)
            j++;
        w.hs[h] = j;
    }
    for (size_t h = 0; h < nd; h++) {
        size_t j = w.hs[h], e = w.hs[h + 1];
        for (; j < e; j++) { /* a job's segments come steepest first, in its order */
            double *left = &added[t->ts[j].job], wd = t->ts[j].width;
            if (!(*left >= wd * (1 - 1e-12))) break;
            *left -= wd;
        }
        w.lo[h] = j > w.hs[h] + WINDOW ? j - WINDOW : w.hs[h];
        w.hi[h] = j + WINDOW < e ? j + WINDOW : e;
        /* a window's edge never splits equal slopes */
        while (w.lo[h] > w.hs[h] && t->ts[w.lo[h] - 1].slope == t->ts[w.lo[h]].slope)
            w.lo[h]--;
        while (w.hi[h] < e && w.hi[h] > w.hs[h] && t->ts[w.hi[h]].slope == t->ts[w.hi[h] - 1].slope)
            w.hi[h]++;
    }
    for (;;) {
        if ((rc = solve(p, room, ns1, ns, smax, &w, xs, err)) != PFI_OK) goto out;
        /* price the fixed segments: a home's costs mu per watt (normalized) */
        int wider = 0;
        for (size_t a = 0; a < nd; a++)
            w.mu[a] = (a ? w.mu[t->parent[a]] : 0) + w.y[a];
        for (size_t h = 0; h < nd; h++) {
            size_t hs = w.hs[h], he = w.hs[h + 1];
            double tol = 1e-7 * fmax(1.0, w.mu[h]);
            if (w.lo[h] > hs && t->ts[w.lo[h] - 1].slope / smax < w.mu[h] - tol) {
                size_t d = 2 * (w.hi[h] - w.lo[h]) + WINDOW; /* too cheap to be full */
                w.lo[h] = w.lo[h] - hs > d ? w.lo[h] - d : hs;
                while (w.lo[h] > hs && t->ts[w.lo[h] - 1].slope == t->ts[w.lo[h]].slope)
                    w.lo[h]--;
                wider = 1;
            }
            if (w.hi[h] < he && t->ts[w.hi[h]].slope / smax > w.mu[h] + tol) {
                size_t d = 2 * (w.hi[h] - w.lo[h]) + WINDOW; /* worth more than empty */
                w.hi[h] = he - w.hi[h] > d ? w.hi[h] + d : he;
                while (w.hi[h] < he && t->ts[w.hi[h]].slope == t->ts[w.hi[h] - 1].slope)
                    w.hi[h]++;
                wider = 1;
            }
        }
        if (!wider) break;
    }
    for (size_t i = 0; i < n; i++)
        added[i] = 0;
    for (size_t h = 0; h < nd; h++) {
        for (size_t j = w.hs[h]; j < w.lo[h]; j++)
            added[t->ts[j].job] += t->ts[j].width;
        for (size_t j = w.lo[h]; j < w.hi[h]; j++)
            added[t->ts[j].job] += xs[j] * t->ts[j].width;
    }
    for (size_t j = ns1; j < ns; j++)
        added[t->ts[j].job] += xs[j] * t->ts[j].width;
out:
    free(xs);
    free(r2);
    free(w.hs);
    free(w.lo);
    free(w.hi);
    free(w.y);
    free(w.mu);
    if (rc != PFI_OK) return rc;
done:
    for (size_t i = 0; i < n; i++)
        power_w[i] = fmin(p->pmax[i], p->floor_w[i] + added[i] / p->cnt[i]);
    alloc_tree_fit(p, room, power_w);
    return PFI_OK;
}
