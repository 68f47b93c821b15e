/* pfi index: each sweep group's PFI (ratio, area, constant elasticity) with a
 * Monte Carlo CI. Everything is computed before anything is printed, so a bad
 * group never leaves half a table behind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pfi/ci.h"
#include "pfi/index.h"
#include "pfi/json.h"
#include "pfi/sweeps_csv.h"

static const char *about =
    "Prints the Power Flexibility Index of every sweep group in SWEEPS.csv (\"-\"\n"
    "reads standard input): the mean over capped runs of (1 - P/Pmax) / (1 - T/Tmax)\n"
    "(the paper's Eq. 1). A capped run at or above the uncapped throughput has no\n"
    "defined ratio: it is left out and listed as excluded.\n";

typedef struct {
    const pfi_group *g;
    pfi_index_result res;
    int *excl;
    pfi_ci ci;
} row;

static unsigned parse_method(const char *s)
{
    if (strcmp(s, "ratio") == 0) return PFI_METHOD_RATIO;
    if (strcmp(s, "area") == 0) return PFI_METHOD_RATIO | PFI_METHOD_AREA;
    if (strcmp(s, "ce") == 0) return PFI_METHOD_RATIO | PFI_METHOD_CE;
    if (strcmp(s, "all") == 0) return PFI_METHOD_ALL;
    return 0;
}

static json_t *to_json(const row *rows, size_t n, unsigned methods, int with_ci)
{
    json_t *groups = json_array();
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        json_t *o = json_object();
        pfi_json_set(o, "group", json_string(r->g->name));
        pfi_json_set(o, "arch", json_string(r->g->meta.arch));
        pfi_json_set(o, "task", json_string(r->g->meta.task));
        pfi_json_set(o, "gpus", json_integer(r->g->meta.gpus));
        pfi_json_set(o, "n_runs", json_integer((json_int_t)r->g->n_runs));
        pfi_json_set(o, "pfi", r->res.has_pfi ? pfi_json_num(r->res.pfi) : json_null());
        if (methods & PFI_METHOD_AREA)
            pfi_json_set(o, "pfi_area",
                         r->res.has_area ? pfi_json_num(r->res.pfi_area) : json_null());
        if (methods & PFI_METHOD_CE)
            pfi_json_set(o, "pfi_ce", r->res.has_ce ? pfi_json_num(r->res.pfi_ce) : json_null());
        if (with_ci) {
            pfi_json_set(o, "ci_low", r->ci.has ? pfi_json_num(r->ci.low) : json_null());
            pfi_json_set(o, "ci_high", r->ci.has ? pfi_json_num(r->ci.high) : json_null());
        }
        json_t *ex = json_array();
        for (size_t k = 0; k < r->g->n_runs; k++) {
            if (r->excl[k] == PFI_EXCL_NONE) continue;
            json_t *e = json_object();
            pfi_json_set(e, "cap_w", pfi_json_num(r->g->runs[k].cap_w));
            pfi_json_set(e, "reason", json_string(pfi_index_exclusion_reason(r->excl[k])));
            json_array_append_new(ex, e);
        }
        pfi_json_set(o, "excluded", ex);
        if (!r->res.has_pfi)
            pfi_json_set(o, "note", json_string("no capped run lost throughput: PFI undefined"));
        json_array_append_new(groups, o);
    }
    json_t *root = json_object();
    pfi_json_set(root, "groups", groups);
    return root;
}

static void fmt_val(char *buf, size_t len, int has, double v)
{
    if (has)
        snprintf(buf, len, "%.3f", v);
    else
        snprintf(buf, len, "undefined");
}

static void print_table(const row *rows, size_t n, unsigned methods, int with_ci, double level)
{
    int w = (int)strlen("group");
    for (size_t i = 0; i < n; i++) {
        int l = (int)strlen(rows[i].g->name);
        if (l > w) w = l;
    }
    printf("%-*s  %-5s %-4s %4s %4s %9s", w, "group", "arch", "task", "gpus", "runs", "pfi");
    if (methods & PFI_METHOD_AREA) printf(" %9s", "pfi_area");
    if (methods & PFI_METHOD_CE) printf(" %9s", "pfi_ce");
    if (with_ci) printf("  %2.0f%% CI", level * 100);
    printf("\n");
    char a[32], b[32];
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        fmt_val(a, sizeof a, r->res.has_pfi, r->res.pfi);
        printf("%-*s  %-5s %-4s %4d %4zu %9s", w, r->g->name, r->g->meta.arch, r->g->meta.task,
               r->g->meta.gpus, r->g->n_runs, a);
        if (methods & PFI_METHOD_AREA) {
            fmt_val(a, sizeof a, r->res.has_area, r->res.pfi_area);
            printf(" %9s", a);
        }
        if (methods & PFI_METHOD_CE) {
            fmt_val(a, sizeof a, r->res.has_ce, r->res.pfi_ce);
            printf(" %9s", a);
        }
        if (with_ci) {
            if (r->ci.has) {
                fmt_val(a, sizeof a, 1, r->ci.low);
                fmt_val(b, sizeof b, 1, r->ci.high);
                printf("  [%s, %s]", a, b);
            } else {
                printf("  undefined");
            }
        }
        printf("\n");
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < rows[i].g->n_runs; k++)
            if (rows[i].excl[k] != PFI_EXCL_NONE)
                printf("note: %s: run at %g W excluded: %s\n", rows[i].g->name,
                       rows[i].g->runs[k].cap_w, pfi_index_exclusion_reason(rows[i].excl[k]));
}

/* Reads, computes every group, then prints (nothing printed on a failure). */
static int run(const char *path, unsigned methods, unsigned rflags, double level, double tdp,
               pfi_cli_list *gl, unsigned long long draws, unsigned long long seed,
               unsigned long long threads, int json)
{
    double *grid = gl->v;
    size_t n_grid = gl->n;
    pfi_error err = {0};
    pfi_sweeps *s = NULL, *sub = NULL;
    int rc = pfi_sweeps_read_opts(path, tdp, rflags, &s, &err);
    if (rc == PFI_OK && grid) {
        rc = pfi_sweeps_subgrid(s, grid, n_grid, &sub, &err);
        if (rc == PFI_OK) {
            pfi_sweeps_destroy(s);
            s = sub;
        } else {
            snprintf(err.file, sizeof err.file, "%s", path);
        }
    }
    free(grid);
    if (rc != PFI_OK) {
        pfi_sweeps_destroy(s);
        return pfi_cli_fail("index", &err);
    }

    size_t n = pfi_sweeps_count(s);
    row *rows = calloc(n, sizeof *rows);
    const pfi_group **gs = calloc(n, sizeof *gs);
    pfi_ci *cis = calloc(n, sizeof *cis);
    int exit_code = PFI_EXIT_OK;
    if (!rows || !gs || !cis) {
        fprintf(stderr, "pfi index: out of memory\n");
        exit_code = PFI_EXIT_DATA;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        rows[i].g = gs[i] = pfi_sweeps_group(s, i);
        rows[i].excl = calloc(rows[i].g->n_runs, sizeof(int));
        if (!rows[i].excl || pfi_index_group(rows[i].g, methods, rows[i].excl, &rows[i].res)) {
            fprintf(stderr, "pfi index: %s: computation failed\n", rows[i].g->name);
            exit_code = PFI_EXIT_DATA;
            goto done;
        }
    }
    if (draws > 0) {
        pfi_ci_opts o = {.draws = draws, .seed = seed, .level = level, .method = PFI_METHOD_RATIO};
        int nt = threads ? (int)threads : pfi_cli_threads();
        if (pfi_ci_batch(gs, n, &o, nt, cis) != PFI_OK) {
            fprintf(stderr, "pfi index: confidence interval computation failed\n");
            exit_code = PFI_EXIT_DATA;
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            rows[i].ci = cis[i];
    }
    if (json) {
        json_t *root = to_json(rows, n, methods, draws > 0);
        if (!root || pfi_json_print(stdout, root) != 0) exit_code = PFI_EXIT_DATA;
        json_decref(root);
    } else {
        print_table(rows, n, methods, draws > 0, level);
    }
done:
    if (rows)
        for (size_t i = 0; i < n; i++)
            free(rows[i].excl);
    free(rows);
    free(gs);
    free(cis);
    pfi_sweeps_destroy(s);
    return exit_code;
}
static int set_method(const pfi_cli_opt *o, const char *arg)
{
    unsigned m = parse_method(arg);
    if (!m) return -1;
    *(unsigned *)o->dst = m;
    return 0;
}

static int set_level(const pfi_cli_opt *o, const char *arg)
{
    double v;
    if (pfi_cli_parse_double(arg, &v)) return -1;
    if (!(v > 0 && v < 1)) {
        pfi_cli_usage_error("index", "--level must be in (0, 1)");
        return -2;
    }
    *(double *)o->dst = v;
    return 0;
}

static int set_tdp(const pfi_cli_opt *o, const char *arg)
{
    double v;
    if (pfi_cli_parse_double(arg, &v)) return -1;
    if (!(v > 0)) {
        pfi_cli_usage_error("index", "--tdp must be > 0");
        return -2;
    }
    *(double *)o->dst = v;
    return 0;
}

int pfi_cmd_index(int argc, char **argv)
{
    unsigned methods = PFI_METHOD_RATIO, rflags = 0;
    double level = 0.95, tdp = 0;
    pfi_cli_list grid = {0};
    unsigned long long draws = 0, seed = 1, threads = 0;
    int json = 0;
    const pfi_cli_opt opts[] = {
        PFI_OPT("method", "M", set_method, &methods, "unknown --method '%s'",
                "ratio (default), area (Eq. 4-5), ce (constant elasticity) or all"),
        PFI_OPT("grid", "W,W,..", pfi_cli_set_doubles, &grid, "bad --grid '%s' (want W,W,...)",
                "only the runs at these per-GPU caps (with the uncapped one): Table 9"),
        PFI_OPT_R("ci", "DRAWS", pfi_cli_set_ull, &draws, NULL,
                  "95% Monte Carlo CI of the ratio PFI from DRAWS draws (0: none)", 0, 1e6),
        PFI_OPT("level", "L", set_level, &level, NULL, "confidence level of the CI (0.95)"),
        PFI_OPT("seed", "N", pfi_cli_set_ull, &seed, NULL, "random seed of the CI (1)"),
        PFI_OPT("tdp", "W", set_tdp, &tdp, NULL, "the uncapped cap (default: by platform)"),
        PFI_OPT_R("threads", "N", pfi_cli_set_ull, &threads, NULL,
                  "worker threads for the CI (default: CPUs, at most 8)", 1, 256),
        PFI_OPT_R("allow-implausible", NULL, pfi_cli_set_bits, &rflags, NULL,
                  "accept runs no GPU job can have", PFI_SWEEPS_ALLOW_IMPLAUSIBLE, 0),
        PFI_OPT("json", NULL, pfi_cli_set_flag, &json, NULL, "print one JSON object"),
    };
    const pfi_cli_spec spec = {.cmd = "index",
                               .usage = "[OPTIONS] SWEEPS.csv",
                               .about = about,
                               .opts = opts,
                               .n_opts = PFI_CLI_N(opts)};
    int first, ec = pfi_cli_parse(&spec, argc, argv, &first);
    if (ec >= 0) return ec;
    if (first != argc - 1) {
        free(grid.v);
        return pfi_cli_usage_error("index", "expected one SWEEPS.csv argument");
    }
    const char *path = argv[first];
    return run(path, methods, rflags, level, tdp, &grid, draws, seed, threads, json);
}
