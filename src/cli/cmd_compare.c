/* pfi compare: rank agreement of PFI between two platforms (paper Table 8,
 * Appendix D.2) or two grids (Table 9). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pfi/csv.h"
#include "pfi/group_key.h"
#include "pfi/index.h"
#include "pfi/json.h"
#include "pfi/quantile.h"
#include "pfi/stats.h"
#include "pfi/sweeps_csv.h"

static const char *about =
    "How well two sets of PFI values agree in rank: Spearman rho and the absolute\n"
    "and relative differences. Each file is a sweeps.csv (PFI computed) or a CSV\n"
    "with group and pfi columns; groups match by name with the platform blanked.\n"
    "With --columns, one CSV holds both values per row. Usage also:\n"
    "  pfi compare --columns COL_A,COL_B [OPTIONS] FILE.csv\n";

typedef struct {
    char **key;
    double *pfi;
    size_t n;
} pfi_list;

static void list_free(pfi_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->key[i]);
    free(l->key);
    free(l->pfi);
}

static int load(const char *path, const char *col_a, pfi_list *l, pfi_error *err)
{
    memset(l, 0, sizeof *l);
    pfi_csv *c = NULL;
    int rc = pfi_csv_read_file(path, &c, err);
    if (rc != PFI_OK) return rc;
    size_t rows = pfi_csv_rows(c);
    l->key = calloc(rows ? rows : 1, sizeof *l->key);
    l->pfi = calloc(rows ? rows : 1, sizeof *l->pfi);
    if (!l->key || !l->pfi) rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    if (rc == PFI_OK && pfi_csv_col(c, "cap_w") >= 0) {
        pfi_sweeps *s = NULL;
        rc = pfi_sweeps_from_csv(c, 0, &s, err);
        for (size_t i = 0; rc == PFI_OK && i < pfi_sweeps_count(s); i++) {
            const pfi_group *g = pfi_sweeps_group(s, i);
            pfi_index_result res;
            if (pfi_index_group(g, PFI_METHOD_RATIO, NULL, &res) != PFI_OK || !res.has_pfi) {
                rc = pfi_error_set(err, PFI_EUNDEFINED, path, g->line, "group '%s': PFI undefined",
                                   g->name);
                break;
            }
            l->key[l->n] = pfi_group_key(g->name, g->meta.platform);
            l->pfi[l->n++] = res.pfi;
        }
        pfi_sweeps_destroy(s);
    } else if (rc == PFI_OK) {
        const char *need[] = {"group", col_a, NULL};
        rc = pfi_csv_require(c, need, err);
        for (size_t r = 0; rc == PFI_OK && r < rows; r++) {
            rc = pfi_csv_number(c, r, (size_t)pfi_csv_col(c, col_a), 0, 0, &l->pfi[l->n], err);
            if (rc == PFI_OK) {
                const char *pc = pfi_csv_col(c, "platform") >= 0
                                     ? pfi_csv_field(c, r, (size_t)pfi_csv_col(c, "platform"))
                                     : NULL;
                l->key[l->n++] =
                    pfi_group_key(pfi_csv_field(c, r, (size_t)pfi_csv_col(c, "group")), pc);
            }
        }
    }
    for (size_t i = 0; rc == PFI_OK && i < l->n; i++)
        if (!l->key[i]) rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    pfi_csv_destroy(c);
    if (rc != PFI_OK) list_free(l);
    return rc;
}

static int load_columns(const char *path, const char *ca, const char *cb, pfi_list *a, pfi_list *b,
                        pfi_error *err)
{
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    pfi_csv *c = NULL;
    int rc = pfi_csv_read_file(path, &c, err);
    if (rc != PFI_OK) return rc;
    const char *need[] = {ca, cb, NULL};
    rc = pfi_csv_require(c, need, err);
    size_t rows = pfi_csv_rows(c);
    a->key = calloc(rows ? rows : 1, sizeof *a->key);
    a->pfi = calloc(rows ? rows : 1, sizeof *a->pfi);
    b->pfi = calloc(rows ? rows : 1, sizeof *b->pfi);
    if (rc == PFI_OK && (!a->key || !a->pfi || !b->pfi))
        rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    int gcol = pfi_csv_col(c, "group"), mcol = pfi_csv_col(c, "model");
    for (size_t r = 0; rc == PFI_OK && r < rows; r++) {
        rc = pfi_csv_number(c, r, (size_t)pfi_csv_col(c, ca), 0, 0, &a->pfi[r], err);
        if (rc == PFI_OK)
            rc = pfi_csv_number(c, r, (size_t)pfi_csv_col(c, cb), 0, 0, &b->pfi[r], err);
        if (rc != PFI_OK) break;
        char label[256];
        if (gcol >= 0)
            snprintf(label, sizeof label, "%s", pfi_csv_field(c, r, (size_t)gcol));
        else if (mcol >= 0)
            snprintf(label, sizeof label, "line %ld (%s)", pfi_csv_line(c, r),
                     pfi_csv_field(c, r, (size_t)mcol));
        else
            snprintf(label, sizeof label, "line %ld", pfi_csv_line(c, r));
        a->key[r] = strdup(label);
        a->n = b->n = r + 1;
        if (!a->key[r]) rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    }
    pfi_csv_destroy(c);
    if (rc != PFI_OK) {
        list_free(a);
        free(b->pfi);
        memset(b, 0, sizeof *b);
    }
    return rc;
}

typedef struct {
    char *a, *b; /* --columns A,B split in place */
} cols_arg;

static int set_columns(const pfi_cli_opt *o, const char *arg)
{
    cols_arg *c = o->dst;
    char *cb = strchr(arg, ',');
    if (!cb || cb == arg || !cb[1] || strchr(cb + 1, ',')) return -1;
    *cb++ = 0;
    c->a = (char *)arg;
    c->b = cb;
    return 0;
}

/* The matched pairs of a and b (with --columns, rows pair with themselves). */
typedef struct {
    double *xa, *xb, *ad, *rd;
    size_t *ia, m;
    char *b_used;
} pair_set;

static int pair_up(const pfi_list *a, const pfi_list *b, int cols, pair_set *P)
{
    size_t cap = a->n ? a->n : 1, m = 0;
    P->xa = malloc(cap * sizeof *P->xa), P->xb = malloc(cap * sizeof *P->xb);
    P->ad = malloc(cap * sizeof *P->ad), P->rd = malloc(cap * sizeof *P->rd);
    P->ia = malloc(cap * sizeof *P->ia);
    P->b_used = calloc(b->n ? b->n : 1, 1);
    if (!P->xa || !P->xb || !P->ad || !P->rd || !P->ia || !P->b_used) {
        fprintf(stderr, "pfi compare: out of memory\n");
        return PFI_EXIT_DATA;
    }
    for (size_t i = 0; i < a->n; i++) {
        size_t j = cols ? i : 0;
        if (!cols)
            while (j < b->n && (P->b_used[j] || strcmp(a->key[i], b->key[j]) != 0))
                j++;
        if (j >= b->n) continue;
        P->b_used[j] = 1;
        P->ia[m] = i;
        P->xa[m] = a->pfi[i];
        P->xb[m] = b->pfi[j];
        P->ad[m] = fabs(P->xa[m] - P->xb[m]);
        P->rd[m] = P->ad[m] / fabs(P->xa[m]);
        m++;
    }
    P->m = m;
    return PFI_EXIT_OK;
}

static int report(const pfi_list *a, const pfi_list *b, int cols, const pair_set *P, int json)
{
    const double *xa = P->xa, *xb = P->xb;
    double *ad = P->ad, *rd = P->rd;
    const size_t *ia = P->ia, m = P->m;
    const char *b_used = P->b_used;
    int ec = PFI_EXIT_OK;
    double rho = 0, p = 0, mx = 0;
    int has = pfi_stats_spearman(xa, xb, m, &rho, &p) == PFI_OK;
    for (size_t k = 0; k < m; k++)
        if (ad[k] > mx) mx = ad[k];
    double med_abs = m ? pfi_quantile_select(ad, m, 0.5) : 0;
    double med_rel = m ? pfi_quantile_select(rd, m, 0.5) : 0;
    if (json) {
        json_t *root = json_object(), *pairs = json_array(), *um = json_array();
        pfi_json_set(root, "n", json_integer((json_int_t)m));
        pfi_json_set(root, "rho", has ? pfi_json_num(rho) : json_null());
        pfi_json_set(root, "p", has ? pfi_json_num(p) : json_null());
        pfi_json_set(root, "max_abs_diff", m ? pfi_json_num(mx) : json_null());
        pfi_json_set(root, "median_abs_diff", m ? pfi_json_num(med_abs) : json_null());
        pfi_json_set(root, "median_rel_diff", m ? pfi_json_num(med_rel) : json_null());
        for (size_t k = 0; k < m; k++) {
            json_t *o = json_object();
            pfi_json_set(o, "group", json_string(a->key[ia[k]]));
            pfi_json_set(o, "a", pfi_json_num(xa[k]));
            pfi_json_set(o, "b", pfi_json_num(xb[k]));
            json_array_append_new(pairs, o);
        }
        pfi_json_set(root, "pairs", pairs);
        for (size_t i = 0, k = 0; i < a->n; i++) {
            if (k < m && ia[k] == i) {
                k++;
                continue;
            }
            json_array_append_new(um, json_string(a->key[i]));
        }
        for (size_t j = 0; !cols && j < b->n; j++)
            if (!b_used[j]) json_array_append_new(um, json_string(b->key[j]));
        pfi_json_set(root, "unmatched", um);
        if (pfi_json_print(stdout, root) != 0) ec = PFI_EXIT_DATA;
        json_decref(root);
    } else {
        printf("%zu matched groups\n", m);
        if (has)
            printf("Spearman rho = %.3f (p = %.3g)\n", rho, p);
        else
            printf("Spearman rho undefined (fewer than 3 pairs or constant values)\n");
        if (m)
            printf("|A - B|: max %.3f, median %.3f; median relative difference %.1f%%\n", mx,
                   med_abs, 100 * med_rel);
        for (size_t i = 0, k = 0; i < a->n; i++) {
            if (k < m && ia[k] == i) {
                k++;
                continue;
            }
            printf("note: unmatched in A: %s\n", a->key[i]);
        }
        for (size_t j = 0; !cols && j < b->n; j++)
            if (!b_used[j]) printf("note: unmatched in B: %s\n", b->key[j]);
    }
    return ec;
}

int pfi_cmd_compare(int argc, char **argv)
{
    cols_arg ca = {0};
    int json = 0;
    const pfi_cli_opt opts[] = {
        PFI_OPT("columns", "A,B", set_columns, &ca, "bad --columns '%s' (want A,B)",
                "compare two numeric columns of one file"),
        PFI_OPT("json", NULL, pfi_cli_set_flag, &json, NULL,
                "print one JSON object (n, rho, p, differences, pairs, unmatched)"),
    };
    const pfi_cli_spec spec = {.cmd = "compare",
                               .usage = "[OPTIONS] A.csv B.csv",
                               .about = about,
                               .opts = opts,
                               .n_opts = PFI_CLI_N(opts)};
    int optind_, ec = pfi_cli_parse(&spec, argc, argv, &optind_);
    if (ec >= 0) return ec;
    char *cols = ca.a, *cb = ca.b;
    int want = cols ? 1 : 2;
    if (argc - optind_ != want)
        return pfi_cli_usage_error("compare", cols ? "expected one FILE with --columns"
                                                   : "expected A.csv and B.csv");
    pfi_error err = {0};
    pfi_list a, b;
    int rc;
    if (cols) {
        rc = load_columns(argv[optind_], cols, cb, &a, &b, &err);
    } else {
        rc = load(argv[optind_], "pfi", &a, &err);
        if (rc == PFI_OK) {
            rc = load(argv[optind_ + 1], "pfi", &b, &err);
            if (rc != PFI_OK) list_free(&a);
        }
    }
    if (rc != PFI_OK) return pfi_cli_fail("compare", &err);
    pair_set P = {0};
    ec = pair_up(&a, &b, cols != NULL, &P);
    if (ec == PFI_EXIT_OK) ec = report(&a, &b, cols != NULL, &P, json);
    free(P.xa), free(P.xb), free(P.ad), free(P.rd), free(P.ia), free(P.b_used);
    list_free(&a);
    if (cols)
        free(b.pfi);
    else
        list_free(&b);
    return ec;
}
