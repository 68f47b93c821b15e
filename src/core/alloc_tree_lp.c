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

    /* rows: the domains with a room (1-based; 0: no row) */
    size_t *row = t->touched;
    int nrows = 0;
    for (size_t a = 0; a < nd; a++)
        row[a] = isinf(room[a]) ? 0 : (size_t)++nrows;
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    if (nrows) glp_add_rows(lp, nrows);
    for (size_t a = 0; a < nd; a++)
        if (row[a]) glp_set_row_bnds(lp, (int)row[a], GLP_UP, 0.0, room[a]);
    triplets m = {0};
    int ncols = 0, oom = 0;
    /* columns: a column per (home, slope) group, then per spread segment;
     * gstart[c] is column c's first segment in ts (c 1-based) */
    size_t *gstart = malloc((ns + 2) * sizeof *gstart);
    oom = !gstart;
    for (size_t j = 0; j < ns && !oom;) {
        size_t i = t->ts[j].job, h = t->home[i], k = 1;
        double W = t->ts[j].width;
        if (h != ALLOC_SPREAD)
            while (j + k < ns && t->home[t->ts[j + k].job] == h &&
                   t->ts[j + k].slope == t->ts[j].slope)
                W += t->ts[j + k++].width;
        int c = glp_add_cols(lp, 1);
        gstart[c] = j;
        ncols = c;
        glp_set_col_bnds(lp, c, GLP_DB, 0.0, 1.0);
        glp_set_obj_coef(lp, c, t->ts[j].slope / smax * W);
        if (h != ALLOC_SPREAD) {
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
    if (oom) {
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory for the linear program");
    } else {
        gstart[ncols + 1] = ns;
        if (m.n) glp_load_matrix(lp, (int)m.n, m.ia, m.ja, m.ar);
        int term = glp_term_out(GLP_OFF); /* GLPK prints its scaling otherwise */
        glp_scale_prob(lp, GLP_SF_AUTO);
        /* Start from every segment full (columns at their upper bound, the
         * rows' slacks basic): dual feasible, every objective coefficient
         * being positive, so the dual simplex with the long-step ratio test
         * only takes back what the rows cannot hold, flipping many columns
         * a pivot. From the empty start the primal simplex brings columns
         * in one pivot each (10^4 jobs: 7.9 s). */
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
            for (size_t j = gstart[c]; j < gstart[c + 1]; j++)
                added[t->ts[j].job] += x * t->ts[j].width;
        }
    }
    free(gstart);
    free(m.ia);
    free(m.ja);
    free(m.ar);
    glp_delete_prob(lp);
    if (rc != PFI_OK) return rc;
done:
    for (size_t i = 0; i < n; i++)
        power_w[i] = fmin(p->pmax[i], p->floor_w[i] + added[i] / p->cnt[i]);
    alloc_tree_fit(p, room, power_w);
    return PFI_OK;
}
