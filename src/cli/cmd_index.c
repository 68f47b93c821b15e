/* pfi index: each sweep group's PFI (ratio, area, constant elasticity) with a
 * Monte Carlo CI. Everything is computed before anything is printed, so a bad
 * group never leaves half a table behind. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pfi/ci.h"
#include "pfi/index.h"
#include "pfi/json.h"
#include "pfi/sweeps_csv.h"

static const char *help =
    "Usage: pfi index [OPTIONS] SWEEPS.csv\n"
    "\n"
    "Prints the Power Flexibility Index of every sweep group in SWEEPS.csv\n"
    "(\"-\" reads standard input). PFI (ratio, the paper's Eq. 1) is the mean over\n"
    "capped runs of (1 - P/Pmax) / (1 - T/Tmax): above 1 a job loses throughput\n"
    "more slowly than power.\n"
    "\n"
    "Options:\n"
    "  --method M     ratio (default), area (Eq. 4-5), ce (constant elasticity,\n"
    "                 1 - alpha of log T = alpha log P + c), or all\n"
    "  --grid W,W,..  use only the runs at these per-GPU caps (must include the\n"
    "                 uncapped one): PFI on a sub-grid, as in the paper's Table 9\n"
    "  --ci DRAWS     95% Monte Carlo CI of the ratio PFI from DRAWS draws\n"
    "                 (default 0 = none; the paper uses 10000; at most 10^6).\n"
    "                 Each run's power and throughput are resampled from\n"
    "                 power_sem_w and throughput_sem_tok_s (normal noise); a run\n"
    "                 without them adds no noise. Intervals depend only on a\n"
    "                 group's runs and --seed, not on file order or --threads\n"
    "  --level L      confidence level of the CI (default 0.95)\n"
    "  --seed N       random seed of the CI (default 1)\n"
    "  --tdp W        the uncapped cap; default from the platform column\n"
    "                 (H200/H100 700 W, B200 1000 W, A100 400 W); a group whose\n"
    "                 largest cap is below it has no uncapped run and is an error\n"
    "  --threads N    worker threads for the CI (default: CPUs, at most 8)\n"
    "  --allow-implausible\n"
    "                 accept runs no GPU job can have (power above cap x GPUs, a\n"
    "                 capped run above the uncapped one, > 10 kW a GPU), which\n"
    "                 are otherwise errors naming the file and line\n"
    "  --json         print one JSON object instead of a table\n"
    "  -h, --help     show this help\n"
    "\n"
    "A capped run whose throughput is at or above the uncapped run's has no\n"
    "defined ratio: it is left out and listed as excluded.\n"
    "\n"
    "Exit status: 0 on success, 1 on bad input data, 2 on bad usage.\n";

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

int pfi_cmd_index(int argc, char **argv)
{
    static const struct option opts[] = {
        {"method", required_argument, 0, 'm'},
        {"grid", required_argument, 0, 'g'},
        {"ci", required_argument, 0, 'c'},
        {"seed", required_argument, 0, 's'},
        {"level", required_argument, 0, 'l'},
        {"tdp", required_argument, 0, 'T'},
        {"threads", required_argument, 0, 't'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {"allow-implausible", no_argument, 0, 'A'},
        {0, 0, 0, 0},
    };
    unsigned methods = PFI_METHOD_RATIO;
    double *grid = NULL, level = 0.95, tdp = 0;
    size_t n_grid = 0;
    unsigned long long draws = 0, seed = 1, threads = 0;
    int json = 0, c;
    unsigned rflags = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (!(methods = parse_method(optarg)))
                return pfi_cli_usage_error("index", "unknown --method '%s'", optarg);
            break;
        case 'g':
            free(grid);
            if (pfi_cli_parse_doubles(optarg, &grid, &n_grid))
                return pfi_cli_usage_error("index", "bad --grid '%s' (want W,W,...)", optarg);
            break;
        case 'c':
            if (pfi_cli_parse_ulong(optarg, &draws) || draws > 1000000ULL)
                return pfi_cli_usage_error("index", "bad --ci '%s'", optarg);
            break;
        case 's':
            if (pfi_cli_parse_ulong(optarg, &seed))
                return pfi_cli_usage_error("index", "bad --seed '%s'", optarg);
            break;
        case 't':
            if (pfi_cli_parse_ulong(optarg, &threads) || threads == 0 || threads > 256)
                return pfi_cli_usage_error("index", "bad --threads '%s'", optarg);
            break;
        case 'l':
        case 'T':
            if (pfi_cli_parse_double(optarg, c == 'l' ? &level : &tdp))
                return pfi_cli_usage_error("index", "bad --%s '%s'", c == 'l' ? "level" : "tdp",
                                           optarg);
            if (c == 'l' && !(level > 0 && level < 1))
                return pfi_cli_usage_error("index", "--level must be in (0, 1)");
            if (c == 'T' && !(tdp > 0)) return pfi_cli_usage_error("index", "--tdp must be > 0");
            break;
        case 'j':
            json = 1;
            break;
        case 'A':
            rflags |= PFI_SWEEPS_ALLOW_IMPLAUSIBLE;
            break;
        case 'h':
            fputs(help, stdout);
            free(grid);
            return PFI_EXIT_OK;
        default:
            free(grid);
            return pfi_cli_usage_error("index", "bad option");
        }
    }
    if (optind != argc - 1) {
        free(grid);
        return pfi_cli_usage_error("index", "expected one SWEEPS.csv argument");
    }
    const char *path = argv[optind];

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
