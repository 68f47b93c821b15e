/* pfi report: the paper's analysis end to end as a folder with report.html
 * (src/report does the work; this file finds the inputs and shows progress). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pfi/json.h"
#include "pfi/report.h"

static const char *help =
    "Usage: pfi report [OPTIONS] [SWEEPS.csv [TELEMETRY.csv [HELDOUT.csv]]]\n"
    "\n"
    "Runs the paper's analysis end to end and writes it as a folder (default\n"
    "pfi-report/): report.html (one self-contained page, readable offline),\n"
    "summary.json (the headline numbers), tables/*.csv (every table, with the\n"
    "paper's value and the difference beside ours where the paper has one) and\n"
    "figures/*.svg, *.png, *.pdf (Figs. 3-13, drawn with PLplot).\n"
    "\n"
    "With no files it uses the embedded dataset (data/paper-h200: a\n"
    "reconstruction of the paper's groups) and reproduces the paper. With your\n"
    "own SWEEPS.csv it draws the same analysis of your jobs; without TELEMETRY.csv\n"
    "the sections that need telemetry (correlations, predictor, simulation) are\n"
    "skipped with a note. HELDOUT.csv: a sweeps.csv of validation groups whose\n"
    "telemetry rows are in TELEMETRY.csv.\n"
    "\n"
    "Steps: index with 95% CIs, grid sensitivity, group tests, correlations\n"
    "with FDR, the predictor ablation and validation, the allocation simulation\n"
    "(random and production mixes, every policy including learn).\n"
    "\n"
    "Options:\n"
    "  -o, --out DIR      the report folder (default pfi-report); an existing one\n"
    "                     is replaced whole, never left half-written\n"
    "  --workloads N      simulation workloads per mix (default 500, as the paper)\n"
    "  --ci DRAWS         Monte Carlo CI draws (default 10000; 0 = no CIs)\n"
    "  --paper-tables DIR the paper's tables as CSV (default: $PFI_SHARED_DIR or\n"
    "                     the folder ../shared beside the source tree, data/paper-tables)\n"
    "  --probe DIR        the real H200 probe for Fig. 6 (default: data/h200-probe there)\n"
    "  --data DIR         the embedded dataset's folder (default: data/paper-h200 of\n"
    "                     the source tree pfi was built in, or $PFI_DATA_DIR)\n"
    "  --matched SWEEPS   the same jobs swept on another GPU, named as ours with the\n"
    "                     platform changed (\"Dense PT H100x8 (M)\" for \"Dense PT\n"
    "                     H200x8 (M)\"): Table 8 (default with the embedded dataset:\n"
    "                     its paper-h100/sweeps.csv)\n"
    "  --tdp W            the per-GPU TDP (default power limit) of groups on a\n"
    "                     platform pfi does not know (H200, H100, B200, A100 and\n"
    "                     GH200 it knows): their largest cap must reach it\n"
    "  --threads N        worker threads (default: CPUs, at most 8)\n"
    "  --json             print {\"report\",\"url\",\"summary\"} on stdout at the end\n"
    "  -h, --help         show this help\n"
    "\n"
    "Progress goes to stderr. At the end it prints the report's path and its\n"
    "file:// URL.\n"
    "\n"
    "Exit status: 0 on success, 1 on bad input data (a missing file, telemetry\n"
    "whose groups do not match, an unwritable output folder), 2 on bad usage.\n";

static int is_tty;

static void progress(void *ctx, int k, int n, const char *stage, double frac, double eta)
{
    static int last_k = 0;
    (void)ctx;
    if (k != last_k) {
        if (is_tty && last_k) fputc('\n', stderr);
        last_k = k;
        fprintf(stderr, "pfi report: [%d/%d] %s", k, n, stage);
        if (!is_tty) fputc('\n', stderr);
        if (frac <= 0) return;
    }
    if (frac <= 0) return;
    if (is_tty) {
        fprintf(stderr, "\rpfi report: [%d/%d] %s %3.0f%%", k, n, stage, 100 * frac);
        if (eta >= 0) fprintf(stderr, ", about %.0f s left  ", eta);
    } else if ((int)(100 * frac) % 25 == 0 || frac >= 1) {
        fprintf(stderr, "pfi report: [%d/%d] %s %3.0f%%", k, n, stage, 100 * frac);
        if (eta >= 0 && frac < 1) fprintf(stderr, ", about %.0f s left", eta);
        fputc('\n', stderr);
    }
}

/* The source tree pfi was built in: the executable is <tree>/<build>/pfi. */
static int source_tree(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = 0;
    for (int up = 0; up < 2; up++) {
        char *s = strrchr(exe, '/');
        if (!s) return -1;
        *s = 0;
    }
    return snprintf(out, len, "%s", exe) < (int)len ? 0 : -1;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int pfi_cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'},     {"workloads", required_argument, 0, 'W'},
        {"ci", required_argument, 0, 'c'},      {"paper-tables", required_argument, 0, 'P'},
        {"probe", required_argument, 0, 'p'},   {"data", required_argument, 0, 'd'},
        {"threads", required_argument, 0, 't'}, {"json", no_argument, 0, 'j'},
        {"matched", required_argument, 0, 'm'}, {"tdp", required_argument, 0, 'T'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0},
    };
    pfi_report_opts o = pfi_report_defaults();
    o.threads = pfi_cli_threads();
    o.out_dir = "pfi-report";
    const char *paper = NULL, *probe = NULL, *data = NULL;
    int json = 0, c;
    unsigned long long u;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o.out_dir = optarg;
            break;
        case 'W':
        case 'c':
        case 't':
            if (pfi_cli_parse_ulong(optarg, &u) || (c != 'c' && u == 0) ||
                (c == 'W' && u > 1000000ULL) || (c == 'c' && u > 1000000ULL) ||
                (c == 't' && u > 64))
                return pfi_cli_usage_error("report", "bad value '%s' for --%s", optarg,
                                           c == 'W'   ? "workloads"
                                           : c == 'c' ? "ci"
                                                      : "threads");
            if (c == 'W')
                o.workloads = (size_t)u;
            else if (c == 'c')
                o.ci_draws = (size_t)u;
            else
                o.threads = (int)u;
            break;
        case 'P':
            paper = optarg;
            break;
        case 'p':
            probe = optarg;
            break;
        case 'd':
            data = optarg;
            break;
        case 'm':
            o.matched = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'T':
            if (pfi_cli_parse_double(optarg, &o.tdp_w) || !(o.tdp_w > 0 && o.tdp_w <= 10000))
                return pfi_cli_usage_error("report", "bad value '%s' for --tdp (watts)", optarg);
            break;
        case 'h':
            fputs(help, stdout);
            return PFI_EXIT_OK;
        default:
            return pfi_cli_usage_error("report", "bad option");
        }
    }
    int nfiles = argc - optind;
    if (nfiles > 3) return pfi_cli_usage_error("report", "at most SWEEPS, TELEMETRY and HELDOUT");

    char tree[PATH_MAX] = "", shared[PATH_MAX + 16], s_path[PATH_MAX + 64], t_path[PATH_MAX + 64],
         h_path[PATH_MAX + 64], m_path[PATH_MAX + 64], pt[PATH_MAX + 64], pr[PATH_MAX + 64];
    int have_tree = source_tree(tree, sizeof tree) == 0;
    const char *env_shared = getenv("PFI_SHARED_DIR");
    if (env_shared && *env_shared)
        snprintf(shared, sizeof shared, "%s", env_shared);
    else if (have_tree)
        snprintf(shared, sizeof shared, "%s/../shared", tree);
    else
        shared[0] = 0;
    if (nfiles == 0) {
        const char *env = getenv("PFI_DATA_DIR");
        char dd[PATH_MAX + 32];
        if (data)
            snprintf(dd, sizeof dd, "%s", data);
        else if (env && *env)
            snprintf(dd, sizeof dd, "%s", env);
        else if (have_tree)
            snprintf(dd, sizeof dd, "%s/data/paper-h200", tree);
        else
            snprintf(dd, sizeof dd, "data/paper-h200");
        if (!is_dir(dd) && !data && is_dir("data/paper-h200"))
            snprintf(dd, sizeof dd, "data/paper-h200");
        snprintf(s_path, sizeof s_path, "%s/sweeps.csv", dd);
        snprintf(t_path, sizeof t_path, "%s/telemetry.csv", dd);
        snprintf(h_path, sizeof h_path, "%s/heldout-sweeps.csv", dd);
        o.sweeps = s_path;
        o.telemetry = t_path;
        o.heldout = h_path;
        /* the H100 sweeps sit beside the H200 folder (data/paper-h100) */
        struct stat st;
        snprintf(m_path, sizeof m_path, "%s/../paper-h100/sweeps.csv", dd);
        if (!o.matched && stat(m_path, &st) == 0) o.matched = m_path;
        o.title = "pfi report: the paper's analysis on the embedded H200 dataset";
    } else {
        o.sweeps = argv[optind];
        o.telemetry = nfiles > 1 ? argv[optind + 1] : NULL;
        o.heldout = nfiles > 2 ? argv[optind + 2] : NULL;
    }
    if (!paper && shared[0]) {
        snprintf(pt, sizeof pt, "%s/data/paper-tables", shared);
        if (is_dir(pt)) paper = pt;
    }
    if (!probe && shared[0]) {
        snprintf(pr, sizeof pr, "%s/data/h200-probe", shared);
        if (is_dir(pr)) probe = pr;
    }
    o.paper_dir = paper;
    o.probe_dir = probe;
    is_tty = isatty(STDERR_FILENO);
    o.progress = progress;

    pfi_error err = {0};
    if (pfi_report_run(&o, &err) != PFI_OK) {
        if (is_tty) fputc('\n', stderr);
        return pfi_cli_fail("report", &err);
    }
    if (is_tty) fputc('\n', stderr);
    char abs[PATH_MAX];
    if (!realpath(o.out_dir, abs)) snprintf(abs, sizeof abs, "%s", o.out_dir);
    if (json) {
        json_t *root = json_object();
        char p[PATH_MAX + 32], url[PATH_MAX + 48];
        snprintf(p, sizeof p, "%s/report.html", abs);
        snprintf(url, sizeof url, "file://%s", p);
        pfi_json_set(root, "report", json_string(p));
        pfi_json_set(root, "url", json_string(url));
        snprintf(p, sizeof p, "%s/summary.json", abs);
        pfi_json_set(root, "summary", json_string(p));
        int ec = pfi_json_print(stdout, root) == 0 ? PFI_EXIT_OK : PFI_EXIT_DATA;
        json_decref(root);
        return ec;
    }
    printf("report: %s/report.html\n", abs);
    printf("open:   file://%s/report.html\n", abs);
    return PFI_EXIT_OK;
}
