/* pfi stats: PFI by task/architecture regime with Kruskal-Wallis and Dunn's
 * post-hoc test (paper Appendix D.4, Tables 10 and 11). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pfi/csv.h"
#include "pfi/index.h"
#include "pfi/json.h"
#include "pfi/regime.h"
#include "pfi/stats.h"
#include "pfi/sweeps_csv.h"

static const char *about =
    "PFI by job regime, and whether the regimes differ (paper Appendix D.4): each\n"
    "regime's n, median and mean, Kruskal-Wallis H and Dunn's test for every pair\n"
    "(Holm-Bonferroni). FILE is a sweeps.csv (PFI computed) or a CSV with columns\n"
    "group,arch,task,pfi (the paper's Table 6); \"-\" reads stdin.\n";

typedef struct {
    double *x; /* PFI per observation */
    int *moe, *ft;
    size_t n;
    char notes[8][256];
    size_t n_notes;
} sample;

static void note(sample *s, const char *fmt, const char *name)
{
    if (s->n_notes < 8) snprintf(s->notes[s->n_notes++], sizeof s->notes[0], fmt, name);
}

static int parse_arch_task(const pfi_csv *c, size_t r, int *moe, int *ft, pfi_error *err)
{
    const char *a = pfi_csv_field(c, r, (size_t)pfi_csv_col(c, "arch"));
    const char *t = pfi_csv_field(c, r, (size_t)pfi_csv_col(c, "task"));
    *moe = strcmp(a, "moe") == 0;
    *ft = strcmp(t, "ft") == 0;
    if (!*moe && strcmp(a, "dense") != 0)
        return pfi_error_set(err, PFI_EPARSE, pfi_csv_name(c), pfi_csv_line(c, r),
                             "arch '%s' is neither dense nor moe", a);
    if (!*ft && strcmp(t, "pt") != 0)
        return pfi_error_set(err, PFI_EPARSE, pfi_csv_name(c), pfi_csv_line(c, r),
                             "task '%s' is neither pt nor ft", t);
    return PFI_OK;
}

/* Reads either file kind into (PFI, group) pairs. */
static int load(const char *path, unsigned rflags, sample *s, pfi_error *err)
{
    pfi_csv *c = NULL;
    int rc = pfi_csv_read_file(path, &c, err);
    if (rc != PFI_OK) return rc;
    size_t rows = pfi_csv_rows(c);
    s->x = calloc(rows ? rows : 1, sizeof *s->x);
    s->moe = calloc(rows ? rows : 1, sizeof *s->moe);
    s->ft = calloc(rows ? rows : 1, sizeof *s->ft);
    if (!s->x || !s->moe || !s->ft) {
        pfi_csv_destroy(c);
        return pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    }
    if (pfi_csv_col(c, "pfi") >= 0 && pfi_csv_col(c, "cap_w") < 0) {
        static const char *const need[] = {"group", "arch", "task", "pfi", NULL};
        rc = pfi_csv_require(c, need, err);
        for (size_t r = 0; rc == PFI_OK && r < rows; r++) {
            rc = pfi_csv_number(c, r, (size_t)pfi_csv_col(c, "pfi"), 0, 0, &s->x[s->n], err);
            if (rc == PFI_OK) rc = parse_arch_task(c, r, &s->moe[s->n], &s->ft[s->n], err);
            if (rc == PFI_OK) s->n++;
        }
    } else {
        pfi_sweeps *sw = NULL;
        rc = pfi_sweeps_from_csv_opts(c, 0, rflags, &sw, err);
        for (size_t i = 0; rc == PFI_OK && i < pfi_sweeps_count(sw); i++) {
            const pfi_group *gr = pfi_sweeps_group(sw, i);
            pfi_index_result res;
            int moe = strcmp(gr->meta.arch, "moe") == 0, ft = strcmp(gr->meta.task, "ft") == 0;
            if ((!moe && strcmp(gr->meta.arch, "dense") != 0) ||
                (!ft && strcmp(gr->meta.task, "pt") != 0)) {
                rc = pfi_error_set(err, PFI_EPARSE, path, gr->line,
                                   "group '%s': arch/task '%s/%s' is not dense|moe / pt|ft",
                                   gr->name, gr->meta.arch, gr->meta.task);
                break;
            }
            if (pfi_index_group(gr, PFI_METHOD_RATIO, NULL, &res) != PFI_OK || !res.has_pfi) {
                note(s, "group '%s': PFI undefined, left out", gr->name);
                continue;
            }
            s->x[s->n] = res.pfi;
            s->moe[s->n] = moe;
            s->ft[s->n++] = ft;
        }
        pfi_sweeps_destroy(sw);
    }
    pfi_csv_destroy(c);
    return rc;
}

static int set_by(const pfi_cli_opt *o, const char *arg)
{
    pfi_regime_by *by = o->dst;
    if (strcmp(arg, "regime") == 0)
        *by = PFI_REGIME_BY_REGIME;
    else if (strcmp(arg, "arch,task") == 0 || strcmp(arg, "task,arch") == 0)
        *by = PFI_REGIME_BY_ARCH_TASK;
    else if (strcmp(arg, "arch") == 0)
        *by = PFI_REGIME_BY_ARCH;
    else if (strcmp(arg, "task") == 0)
        *by = PFI_REGIME_BY_TASK;
    else
        return -1;
    return 0;
}

static int print(const sample *sp, const pfi_regime_stats *rsp, int json)
{
    const sample s = *sp;
    const pfi_regime_stats rs = *rsp;
    int exit_code = PFI_EXIT_OK;
    size_t k = rs.k, npairs = rs.npairs;
    int trc = rs.test_rc;
    const char *const *name = rs.name;
    const size_t *gn = rs.n;
    const double *med = rs.median, *mean = rs.mean;
    const pfi_kruskal kw = rs.kw;
    const pfi_dunn_pair *dunn = rs.dunn;
    char why[160] = "";
    if (trc == PFI_ENODATA)
        snprintf(why, sizeof why, "tests undefined: %zu non-empty group(s), need at least 2", k);
    else if (trc == PFI_EUNDEFINED)
        snprintf(why, sizeof why, "tests undefined: every PFI is equal");
    else if (trc != PFI_OK)
        snprintf(why, sizeof why, "tests failed: %s", pfi_strerror(trc));

    if (json) {
        json_t *root = json_object(), *groups = json_array(), *dj = json_array();
        for (size_t j = 0; j < k; j++) {
            json_t *o = json_object();
            pfi_json_set(o, "name", json_string(name[j]));
            pfi_json_set(o, "n", json_integer((json_int_t)gn[j]));
            pfi_json_set(o, "median", pfi_json_num(med[j]));
            pfi_json_set(o, "mean", pfi_json_num(mean[j]));
            json_array_append_new(groups, o);
        }
        pfi_json_set(root, "groups", groups);
        if (trc == PFI_OK) {
            json_t *o = json_object();
            pfi_json_set(o, "H", pfi_json_num(kw.H));
            pfi_json_set(o, "df", json_integer(kw.df));
            pfi_json_set(o, "p", pfi_json_num(kw.p));
            pfi_json_set(root, "kruskal", o);
        } else {
            pfi_json_set(root, "kruskal", json_null());
        }
        for (size_t e = 0; e < npairs; e++) {
            json_t *o = json_object();
            pfi_json_set(o, "a", json_string(name[dunn[e].a]));
            pfi_json_set(o, "b", json_string(name[dunn[e].b]));
            pfi_json_set(o, "z", pfi_json_num(dunn[e].z));
            pfi_json_set(o, "p_raw", pfi_json_num(dunn[e].p_raw));
            pfi_json_set(o, "p_holm", pfi_json_num(dunn[e].p_holm));
            json_array_append_new(dj, o);
        }
        pfi_json_set(root, "dunn", dj);
        json_t *notes = json_array();
        for (size_t i = 0; i < s.n_notes; i++)
            json_array_append_new(notes, json_string(s.notes[i]));
        if (*why) json_array_append_new(notes, json_string(why));
        pfi_json_set(root, "notes", notes);
        if (pfi_json_print(stdout, root) != 0) exit_code = PFI_EXIT_DATA;
        json_decref(root);
    } else {
        printf("%-9s %4s %8s %8s\n", "group", "n", "median", "mean");
        for (size_t j = 0; j < k; j++)
            printf("%-9s %4zu %8.3f %8.3f\n", name[j], gn[j], med[j], mean[j]);
        if (trc == PFI_OK) {
            printf("\nKruskal-Wallis: H = %.3f, df = %d, p = %.4g\n", kw.H, kw.df, kw.p);
            printf("Dunn (tie-corrected; Holm-Bonferroni, m = %zu):\n", npairs);
            for (size_t e = 0; e < npairs; e++)
                printf("  %-8s vs %-8s  z = %6.3f  p_raw = %.4f  p_holm = %.4f%s\n",
                       name[dunn[e].a], name[dunn[e].b], dunn[e].z, dunn[e].p_raw, dunn[e].p_holm,
                       dunn[e].p_holm < 0.05 ? "  *" : "");
        } else {
            printf("\n%s\n", why);
        }
        for (size_t i = 0; i < s.n_notes; i++)
            printf("note: %s\n", s.notes[i]);
    }
    return exit_code;
}

int pfi_cmd_stats(int argc, char **argv)
{
    pfi_regime_by by = PFI_REGIME_BY_REGIME;
    int json = 0;
    unsigned rflags = 0;
    const pfi_cli_opt opts[] = {
        PFI_OPT("by", "KEYS", set_by, &by, "unknown --by '%s'",
                "regime (default: dense, moe-pt, moe-ft), arch,task, arch or task"),
        PFI_OPT("json", NULL, pfi_cli_set_flag, &json, NULL,
                "print one JSON object (groups, kruskal, dunn, notes)"),
        PFI_OPT_R("allow-implausible", NULL, pfi_cli_set_bits, &rflags, NULL,
                  "accept sweep runs no GPU job can have", PFI_SWEEPS_ALLOW_IMPLAUSIBLE, 0),
    };
    const pfi_cli_spec spec = {.cmd = "stats",
                               .usage = "[--by KEYS] [--json] FILE",
                               .about = about,
                               .opts = opts,
                               .n_opts = PFI_CLI_N(opts)};
    int first, ec = pfi_cli_parse(&spec, argc, argv, &first);
    if (ec >= 0) return ec;
    if (first != argc - 1) return pfi_cli_usage_error("stats", "expected one FILE argument");
    sample s = {0};
    pfi_error err = {0};
    int exit_code = PFI_EXIT_OK;
    if (load(argv[first], rflags, &s, &err) != PFI_OK) {
        exit_code = pfi_cli_fail("stats", &err);
        goto done;
    }
    pfi_regime_stats rs;
    int src = s.n ? pfi_regime_stats_compute(s.x, s.moe, s.ft, s.n, by, &rs) : PFI_ENODATA;
    if (src == PFI_ENODATA) {
        memset(&rs, 0, sizeof rs);
        rs.test_rc = PFI_ENODATA;
    } else if (src != PFI_OK) {
        fprintf(stderr, "pfi stats: %s\n", pfi_strerror(src));
        exit_code = PFI_EXIT_DATA;
        goto done;
    }
    exit_code = print(&s, &rs, json);
done:
    free(s.x);
    free(s.moe);
    free(s.ft);
    return exit_code;
}
