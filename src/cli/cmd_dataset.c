/* pfi dataset: rebuilds the embedded paper dataset (data/paper-h200,
 * data/paper-h100) from the GPU model calibrated to the paper's tables, or
 * prints the calibration summary. The computation is src/core/dataset.c;
 * this file turns it into sweeps.csv / telemetry.csv files. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "pfi/curve.h"
#include "pfi/dataset.h"
#include "pfi/fileio.h"
#include "pfi/json.h"
#include "pfi/sweeps_csv.h"
#include "pfi/telemetry_csv.h"

static const char *help =
    "Usage: pfi dataset [--rebuild] [--out DIR] [--seed N] [--json]\n"
    "\n"
    "The embedded dataset is a reconstruction of the paper's sweep groups from\n"
    "its published tables (not measurements): one GPU-model job per group,\n"
    "calibrated so its sweep gives the published PFI (Tables 6-9), with\n"
    "measurement noise and synthesized uncapped DCGM telemetry. See\n"
    "data/README.md.\n"
    "\n"
    "Without --rebuild, prints each group's published and reconstructed PFI.\n"
    "\n"
    "Options:\n"
    "  --rebuild    write the dataset under DIR:\n"
    "                 paper-h200/sweeps.csv          the 25 headline groups (Table 6)\n"
    "                 paper-h200/heldout-sweeps.csv  the 4 held-out groups (Table 7)\n"
    "                 paper-h200/telemetry.csv       uncapped telemetry of all 29\n"
    "                 paper-h100/sweeps.csv          the 6 H100 groups (Table 8)\n"
    "                 paper-h100/telemetry.csv       their uncapped telemetry\n"
    "               each file is replaced whole or not at all\n"
    "  --out DIR    where to write (default: data)\n"
    "  --seed N     random seed (default: the committed dataset's)\n"
    "  --json       print the summary as one JSON object\n"
    "  -h, --help   show this help\n"
    "\n"
    "The same seed gives byte-identical files.\n"
    "\n"
    "Exit status: 0 on success, 1 on a failed calibration or write, 2 on bad usage.\n";

/* Which groups go into a file. */
typedef struct {
    const pfi_dataset *d;
    unsigned sets; /* bit per pfi_paper_set */
} selection;

static int in_sel(const selection *s, const pfi_dataset_group *g)
{
    return (s->sets >> g->paper->set) & 1u;
}

static int write_sweeps(FILE *f, void *ctx)
{
    const selection *s = ctx;
    pfi_sweeps *sw = pfi_sweeps_create();
    if (!sw) return PFI_ENOMEM;
    int rc = PFI_OK;
    for (size_t i = 0; i < s->d->n && rc == PFI_OK; i++) {
        const pfi_dataset_group *g = &s->d->groups[i];
        if (!in_sel(s, g)) continue;
        pfi_group_meta meta = {g->paper->platform, g->paper->model,  g->paper->arch,
                               g->paper->task,     g->paper->config, g->paper->gpus};
        for (size_t k = 0; k < g->n_runs && rc == PFI_OK; k++) {
            pfi_run run = {g->cap_w[k],       g->power_w[k],  g->tput[k],
                           g->power_sem_w[k], g->tput_sem[k], 0};
            rc = pfi_sweeps_add_run(sw, g->paper->name, &meta, &run, "dataset", NULL);
        }
    }
    if (rc == PFI_OK) rc = pfi_sweeps_finalize(sw, 0, "dataset", NULL);
    if (rc == PFI_OK) rc = pfi_sweeps_write(f, sw);
    pfi_sweeps_destroy(sw);
    return rc;
}

static int write_telemetry(FILE *f, void *ctx)
{
    const selection *s = ctx;
    pfi_telemetry t = {calloc(s->d->n, sizeof(pfi_tm_row)), 0};
    if (!t.rows) return PFI_ENOMEM;
    for (size_t i = 0; i < s->d->n; i++) {
        const pfi_dataset_group *g = &s->d->groups[i];
        if (!in_sel(s, g)) continue;
        pfi_tm_row *r = &t.rows[t.n++];
        r->group = (char *)g->paper->name; /* borrowed: t is not destroyed */
        for (int k = 0; k < PFI_TM_NFIELDS; k++)
            r->v[k] = g->tm[k];
        r->valid = (1u << PFI_TM_NFIELDS) - 1;
    }
    int rc = pfi_telemetry_write(f, &t);
    free(t.rows);
    return rc;
}

static int make_dir(const char *path, pfi_error *err)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST) return PFI_OK;
    return pfi_error_set(err, PFI_EIO, path, 0, "cannot create folder: %s", strerror(errno));
}

static int write_all(const pfi_dataset *d, const char *dir, pfi_error *err)
{
    char p[4096];
    struct {
        const char *sub, *file;
        unsigned sets;
        int (*fn)(FILE *, void *);
    } files[] = {
        {"paper-h200", "sweeps.csv", 1u << PFI_PAPER_HEADLINE, write_sweeps},
        {"paper-h200", "heldout-sweeps.csv", 1u << PFI_PAPER_HELDOUT, write_sweeps},
        {"paper-h200", "telemetry.csv", (1u << PFI_PAPER_HEADLINE) | (1u << PFI_PAPER_HELDOUT),
         write_telemetry},
        {"paper-h100", "sweeps.csv", 1u << PFI_PAPER_H100, write_sweeps},
        {"paper-h100", "telemetry.csv", 1u << PFI_PAPER_H100, write_telemetry},
    };
    int rc = make_dir(dir, err);
    for (size_t i = 0; rc == PFI_OK && i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i].sub);
        if ((rc = make_dir(p, err)) != PFI_OK) break;
        snprintf(p, sizeof p, "%s/%s/%s", dir, files[i].sub, files[i].file);
        selection s = {d, files[i].sets};
        rc = pfi_file_write_atomic(p, files[i].fn, &s, err);
    }
    return rc;
}

static const char *set_name(pfi_paper_set s)
{
    return s == PFI_PAPER_HEADLINE ? "headline" : s == PFI_PAPER_HELDOUT ? "heldout" : "h100";
}

int pfi_cmd_dataset(int argc, char **argv)
{
    static const struct option opts[] = {
        {"rebuild", no_argument, 0, 'r'},    {"out", required_argument, 0, 'o'},
        {"seed", required_argument, 0, 's'}, {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},       {0, 0, 0, 0},
    };
    int rebuild = 0, json = 0, c;
    const char *dir = "data";
    unsigned long long seed = PFI_DATASET_SEED;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            rebuild = 1;
            break;
        case 'o':
            dir = optarg;
            break;
        case 's':
            if (pfi_cli_parse_ulong(optarg, &seed) || seed > 0xffffffffULL)
                return pfi_cli_usage_error("dataset", "bad --seed '%s'", optarg);
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            fputs(help, stdout);
            return PFI_EXIT_OK;
        default:
            return pfi_cli_usage_error("dataset", "bad option");
        }
    }
    if (optind != argc)
        return pfi_cli_usage_error("dataset", "unexpected argument '%s'", argv[optind]);

    pfi_error err = {0};
    pfi_dataset *d = NULL;
    int rc = pfi_dataset_build((unsigned long)seed, &d, &err);
    if (rc == PFI_OK && rebuild) rc = write_all(d, dir, &err);
    if (rc != PFI_OK) {
        pfi_dataset_destroy(d);
        return pfi_cli_fail("dataset", &err);
    }
    if (json) {
        json_t *root = json_object(), *arr = json_array();
        for (size_t i = 0; i < d->n; i++) {
            const pfi_dataset_group *g = &d->groups[i];
            json_t *o = json_object();
            pfi_json_set(o, "group", json_string(g->paper->name));
            pfi_json_set(o, "set", json_string(set_name(g->paper->set)));
            pfi_json_set(o, "pfi_paper", pfi_json_num(g->paper->pfi));
            pfi_json_set(o, "pfi", pfi_json_num(g->calib.pfi));
            pfi_json_set(o, "pfi_4cap_paper",
                         g->paper->pfi_4cap > 0 ? pfi_json_num(g->paper->pfi_4cap) : json_null());
            pfi_json_set(o, "pfi_4cap",
                         g->paper->pfi_4cap > 0 ? pfi_json_num(g->calib.pfi_4cap) : json_null());
            pfi_json_set(o, "compute_frac", pfi_json_num(g->job.compute_frac));
            pfi_json_set(o, "floor_mhz", pfi_json_num(g->job.floor_mhz));
            pfi_json_set(o, "clock_spread", pfi_json_num(g->job.clock_spread));
            pfi_json_set(o, "extra_w", pfi_json_num(g->job.extra_w));
            pfi_json_set(o, "power_kw", pfi_json_num(g->power_w[g->n_runs - 1] / 1000));
            pfi_json_set(o, "tput_tok_s", pfi_json_num(g->tput[g->n_runs - 1]));
            json_array_append_new(arr, o);
        }
        pfi_json_set(root, "seed", json_integer((json_int_t)seed));
        if (rebuild) pfi_json_set(root, "written_to", json_string(dir));
        pfi_json_set(root, "groups", arr);
        pfi_json_print(stdout, root);
        json_decref(root);
    } else {
        printf("%-48s %-8s %6s %6s %6s %6s %5s %5s %5s %5s %7s %9s\n", "group", "set", "paper",
               "pfi", "p4cap", "pfi4", "comp", "floor", "sprd", "xtra", "kW", "tok/s");
        for (size_t i = 0; i < d->n; i++) {
            const pfi_dataset_group *g = &d->groups[i];
            char a[16] = "-", b[16] = "-";
            if (g->paper->pfi_4cap > 0) {
                snprintf(a, sizeof a, "%.2f", g->paper->pfi_4cap);
                snprintf(b, sizeof b, "%.3f", g->calib.pfi_4cap);
            }
            printf("%-48s %-8s %6.2f %6.3f %6s %6s %5.2f %5.0f %5.3f %5.0f %7.2f %9.0f\n",
                   g->paper->name, set_name(g->paper->set), g->paper->pfi, g->calib.pfi, a, b,
                   g->job.compute_frac, g->job.floor_mhz, g->job.clock_spread, g->job.extra_w,
                   g->power_w[g->n_runs - 1] / 1000, g->tput[g->n_runs - 1]);
        }
        if (rebuild) printf("written to %s/paper-h200 and %s/paper-h100\n", dir, dir);
    }
    pfi_dataset_destroy(d);
    return PFI_EXIT_OK;
}
