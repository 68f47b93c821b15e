/* pfi report: the paper's analysis end to end as a folder with report.html
 * (src/report does the work; this file finds the inputs and shows progress). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pfi/json.h"
#include "pfi/report.h"

static const char *about =
    "Runs the paper's analysis end to end and writes it as a folder: report.html\n"
    "(self-contained), summary.json, tables/*.csv (with the paper's values beside\n"
    "ours) and figures. With no files it uses the embedded dataset and reproduces\n"
    "the paper; without TELEMETRY.csv the sections that need it are skipped.\n";

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

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The inputs: the files given, or the embedded dataset; the paper's tables
 * and the probe from ../shared. Paths are written into P's buffers. */
typedef struct {
    char tree[PATH_MAX], shared[PATH_MAX + 16], s_path[PATH_MAX + 64], t_path[PATH_MAX + 64],
        h_path[PATH_MAX + 64], m_path[PATH_MAX + 64], pt[PATH_MAX + 64], pr[PATH_MAX + 64];
} paths_buf;

static void find_inputs(pfi_report_opts *op, char **files, int nfiles, const char *data,
                        const char **paperp, const char **probep, paths_buf *P)
{
    pfi_report_opts o = *op;
    const char *paper = *paperp, *probe = *probep;
    char *tree = P->tree, *shared = P->shared, *s_path = P->s_path, *t_path = P->t_path,
         *h_path = P->h_path, *m_path = P->m_path, *pt = P->pt, *pr = P->pr;
    const size_t tree_sz = sizeof P->tree, shared_sz = sizeof P->shared, s_sz = sizeof P->s_path;
    tree[0] = 0;
    int have_tree = pfi_cli_source_tree(tree, tree_sz) == 0;
    const char *env_shared = getenv("PFI_SHARED_DIR");
    if (env_shared && *env_shared)
        snprintf(shared, shared_sz, "%s", env_shared);
    else if (have_tree)
        snprintf(shared, shared_sz, "%s/../shared", tree);
    else
        shared[0] = 0;
    if (nfiles == 0) {
        char dd[PATH_MAX + 32];
        if (pfi_cli_data_dir(data, dd, sizeof dd)) snprintf(dd, sizeof dd, "data/paper-h200");
        snprintf(s_path, s_sz, "%s/sweeps.csv", dd);
        snprintf(t_path, s_sz, "%s/telemetry.csv", dd);
        snprintf(h_path, s_sz, "%s/heldout-sweeps.csv", dd);
        o.sweeps = s_path;
        o.telemetry = t_path;
        o.heldout = h_path;
        /* the H100 sweeps sit beside the H200 folder (data/paper-h100) */
        struct stat st;
        snprintf(m_path, s_sz, "%s/../paper-h100/sweeps.csv", dd);
        if (!o.matched && stat(m_path, &st) == 0) o.matched = m_path;
        o.title = "pfi report: the paper's analysis on the embedded H200 dataset";
    } else {
        o.sweeps = files[0];
        o.telemetry = nfiles > 1 ? files[1] : NULL;
        o.heldout = nfiles > 2 ? files[2] : NULL;
    }
    if (!paper && shared[0]) {
        snprintf(pt, s_sz, "%s/data/paper-tables", shared);
        if (is_dir(pt)) paper = pt;
    }
    if (!probe && shared[0]) {
        snprintf(pr, s_sz, "%s/data/h200-probe", shared);
        if (is_dir(pr)) probe = pr;
    }
    *op = o;
    *paperp = paper;
    *probep = probe;
}

static int set_count(const pfi_cli_opt *o, const char *arg)
{
    unsigned long long u;
    if (pfi_cli_parse_ulong(arg, &u) || u < o->lo || u > o->hi) return -1;
    *(size_t *)o->dst = (size_t)u;
    return 0;
}

static int set_threads(const pfi_cli_opt *o, const char *arg)
{
    unsigned long long u;
    if (pfi_cli_parse_ulong(arg, &u) || u == 0 || u > 64) return -1;
    *(int *)o->dst = (int)u;
    return 0;
}

int pfi_cmd_report(int argc, char **argv)
{
    pfi_report_opts o = pfi_report_defaults();
    o.threads = pfi_cli_threads();
    o.out_dir = "pfi-report";
    const char *paper = NULL, *probe = NULL, *data = NULL;
    int json = 0;
    const pfi_cli_opt opts[] = {
        PFI_OPT_S("out", 'o', "DIR", pfi_cli_set_str, &o.out_dir, NULL,
                  "the report folder (pfi-report), replaced whole"),
        PFI_OPT_R("workloads", "N", set_count, &o.workloads, "bad value '%s' for --workloads",
                  "simulation workloads per mix (500, as the paper)", 1, 1e6),
        PFI_OPT_R("ci", "DRAWS", set_count, &o.ci_draws, "bad value '%s' for --ci",
                  "Monte Carlo CI draws (10000; 0 = no CIs)", 0, 1e6),
        PFI_OPT("paper-tables", "DIR", pfi_cli_set_str, &paper, NULL,
                "the paper's tables as CSV (default: ../shared's data/paper-tables)"),
        PFI_OPT("probe", "DIR", pfi_cli_set_str, &probe, NULL,
                "the real H200 probe for Fig. 6 (default: data/h200-probe there)"),
        PFI_OPT("trace", "FILE", pfi_cli_set_str, &o.trace, NULL,
                "Fig. 2's run: a trace in pfi trace's formats (default: the probe's "
                "run_trace.csv)"),
        PFI_OPT("steps", "FILE", pfi_cli_set_str, &o.steps, NULL,
                "the trace's step log, time_s[,run],step,tokens (Fig. 2's throughput)"),
        PFI_OPT("data", "DIR", pfi_cli_set_str, &data, NULL,
                "the embedded dataset's folder (data/paper-h200, or $PFI_DATA_DIR)"),
        PFI_OPT("matched", "SWEEPS", pfi_cli_set_str, &o.matched, NULL,
                "the same jobs swept on another GPU, for Table 8"),
        PFI_OPT_R("tdp", "W", pfi_cli_set_num, &o.tdp_w, "bad value '%s' for --tdp (watts)",
                  "per-GPU TDP of groups on a platform pfi does not know", 1, 10000),
        PFI_OPT("threads", "N", set_threads, &o.threads, "bad value '%s' for --threads",
                "worker threads (default: CPUs, at most 8)"),
        PFI_OPT("json", NULL, pfi_cli_set_flag, &json, NULL,
                "print {report, url, summary} on stdout at the end"),
    };
    const pfi_cli_spec spec = {.cmd = "report",
                               .usage = "[OPTIONS] [SWEEPS.csv [TELEMETRY.csv [HELDOUT.csv]]]",
                               .about = about,
                               .opts = opts,
                               .n_opts = PFI_CLI_N(opts)};
    int first, ec = pfi_cli_parse(&spec, argc, argv, &first);
    if (ec >= 0) return ec;
    int nfiles = argc - first;
    if (nfiles > 3) return pfi_cli_usage_error("report", "at most SWEEPS, TELEMETRY and HELDOUT");
    if (data && strlen(data) >= PATH_MAX)
        return pfi_cli_usage_error("report", "--data: path too long");
    paths_buf *P = malloc(sizeof *P);
    if (!P) return PFI_EXIT_DATA;
    find_inputs(&o, argv + first, nfiles, data, &paper, &probe, P);
    o.paper_dir = paper;
    o.probe_dir = probe;
    is_tty = isatty(STDERR_FILENO);
    o.progress = progress;

    pfi_error err = {0};
    if (pfi_report_run(&o, &err) != PFI_OK) {
        if (is_tty) fputc('\n', stderr);
        free(P);
        return pfi_cli_fail("report", &err);
    }
    free(P);
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
        ec = pfi_json_print(stdout, root) == 0 ? PFI_EXIT_OK : PFI_EXIT_DATA;
        json_decref(root);
        return ec;
    }
    printf("report: %s/report.html\n", abs);
    printf("open:   file://%s/report.html\n", abs);
    return PFI_EXIT_OK;
}
