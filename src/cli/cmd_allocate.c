/* pfi allocate: per-job power and cap under a cluster budget, by policy. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_cli.h"
#include "cli.h"
#include "pfi/alloc.h"
#include "pfi/csv.h"
#include "pfi/json.h"
#include "pfi/learn.h"
#include "pfi/model_json.h"
#include "pfi/sweeps_csv.h"

static const char *help =
    "Usage: pfi allocate --policy P (--reduction R | --budget-w W) [OPTIONS] SWEEPS.csv\n"
    "\n"
    "Gives every job a power and a per-GPU cap so that the jobs together draw at\n"
    "most the budget. Each sweep group is one job (or see --jobs); its curve is\n"
    "its sweep, linearly interpolated between caps, from its lowest cap's power\n"
    "to its uncapped power.\n"
    "\n"
    "Policies:\n"
    "  equal       shed in proportion to uncapped power Pmax\n"
    "  pfi         shed in proportion to Pmax x PFI / Tmax (paper Eq. 2); PFI is\n"
    "              each group's measured PFI, or predicted with --model\n"
    "  moe-ft      equal, with a double share for MoE fine-tuning jobs\n"
    "  dram-copy   shed in proportion to the DRAM copy product (needs --telemetry)\n"
    "  oracle      the exact maximum of total throughput (upper concave envelopes;\n"
    "              a job between two envelope caps alternates between them)\n"
    "  learn       the closed loop of the README, replayed against the sweeps:\n"
    "              measured rounds (first equal, then the oracle on learned curves)\n"
    "  A job that would pass its floor (lowest cap, or SLA) is held there and the\n"
    "  rest of its share goes to the others.\n"
    "\n"
    "Options:\n"
    "  --policy P        one of the policies above (required)\n"
    "  --reduction R     shed the fraction R in [0, 1) of the jobs' uncapped power\n"
    "                    (0.3), or a percent with its sign (30%)\n"
    "  --budget-w W      or fit under W watts (W >= 0)\n"
    "  --telemetry T     telemetry.csv of the groups (DRAM copy product, --model)\n"
    "  --model M         a PFI model from 'pfi fit --out' (needs --telemetry): the\n"
    "                    pfi and learn policies use its predictions\n"
    "  --jobs FILE       CSV with a `group` column, one row per job (groups may\n"
    "                    repeat) and an optional `sla` column (minimum throughput as\n"
    "                    a fraction of the uncapped throughput)\n"
    "  --sla F           SLA fraction in [0, 1] for every job without its own\n"
    "  --rounds K, --round-s S, --event-s S\n"
    "                    learn's rounds (8), round length (30 s), event (3600 s)\n"
    "  --allow-implausible\n"
    "                    accept runs no GPU job can have (power above cap x GPUs,\n"
    "                    a capped run above the uncapped one, > 10 kW a GPU)\n"
    "  --json            print one JSON object instead of a table\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 on success, 1 on bad input data or an infeasible budget,\n"
    "2 on bad usage.\n";

typedef struct {
    size_t *group; /* job -> index into the curves */
    double *sla;
    size_t n;
} job_list;

static int read_jobs(const char *path, const pfi_cli_curves *cv, double sla_all, job_list *jl)
{
    pfi_error err = {0};
    pfi_csv *c = NULL;
    static const char *const need[] = {"group", NULL};
    int rc = pfi_csv_read_file(path, &c, &err);
    if (rc == PFI_OK) rc = pfi_csv_require(c, need, &err);
    if (rc == PFI_OK && pfi_csv_rows(c) == 0)
        rc = pfi_error_set(&err, PFI_ENODATA, path, 0, "no jobs");
    if (rc != PFI_OK) {
        pfi_csv_destroy(c);
        return pfi_cli_fail("allocate", &err);
    }
    size_t rows = pfi_csv_rows(c), gcol = (size_t)pfi_csv_col(c, "group");
    int scol = pfi_csv_col(c, "sla");
    jl->group = calloc(rows, sizeof *jl->group);
    jl->sla = calloc(rows, sizeof *jl->sla);
    jl->n = rows;
    if (!jl->group || !jl->sla) rc = pfi_error_set(&err, PFI_ENOMEM, path, 0, "out of memory");
    for (size_t r = 0; rc == PFI_OK && r < rows; r++) {
        const char *name = pfi_csv_field(c, r, gcol);
        size_t i = 0;
        while (i < cv->n && strcmp(cv->g[i]->name, name) != 0)
            i++;
        if (i == cv->n) {
            rc = pfi_error_set(&err, PFI_ENOTFOUND, path, pfi_csv_line(c, r),
                               "group '%s' is not in the sweeps", name);
            break;
        }
        jl->group[r] = i;
        jl->sla[r] = sla_all;
        if (scol >= 0) {
            rc = pfi_csv_number(c, r, (size_t)scol, 1, sla_all, &jl->sla[r], &err);
            if (rc == PFI_OK && !(jl->sla[r] >= 0 && jl->sla[r] <= 1))
                rc = pfi_error_set(&err, PFI_ERANGE, path, pfi_csv_line(c, r),
                                   "sla %g outside [0, 1]", jl->sla[r]);
        }
    }
    pfi_csv_destroy(c);
    if (rc != PFI_OK) return pfi_cli_fail("allocate", &err);
    return PFI_EXIT_OK;
}

typedef struct {
    pfi_alloc_problem *prob;
} replay;

static int replay_observe(void *ctx, size_t job, double power_w, size_t jobs, double secs,
                          double *tput)
{
    (void)jobs;
    (void)secs;
    *tput = pfi_alloc_problem_tput_at(((replay *)ctx)->prob, job, power_w);
    return PFI_OK;
}

int pfi_cmd_allocate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"policy", required_argument, 0, 'p'},
        {"reduction", required_argument, 0, 'r'},
        {"budget-w", required_argument, 0, 'b'},
        {"telemetry", required_argument, 0, 'T'},
        {"model", required_argument, 0, 'M'},
        {"jobs", required_argument, 0, 'J'},
        {"sla", required_argument, 0, 'S'},
        {"rounds", required_argument, 0, 'K'},
        {"round-s", required_argument, 0, 'R'},
        {"event-s", required_argument, 0, 'E'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {"allow-implausible", no_argument, 0, 'A'},
        {0, 0, 0, 0},
    };
    const char *policy_s = NULL, *tm_path = NULL, *model_path = NULL, *jobs_path = NULL;
    double reduction = NAN, budget = NAN, sla_all = 0;
    pfi_learn_opts lo = pfi_learn_defaults();
    int json = 0, c;
    unsigned rflags = 0;
    unsigned long long u;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            policy_s = optarg;
            break;
        case 'A':
            rflags |= PFI_SWEEPS_ALLOW_IMPLAUSIBLE;
            break;
        case 'r': {
            double *v = NULL;
            size_t nv = 0;
            int bad = pfi_cli_parse_reductions(optarg, &v, &nv) || nv != 1;
            if (!bad) reduction = v[0];
            free(v);
            if (bad)
                return pfi_cli_usage_error("allocate",
                                           "--reduction must be a fraction in [0, 1) (0.3) or a "
                                           "percent (30%%), got '%s'",
                                           optarg);
            break;
        }
        case 'b':
            if (pfi_cli_parse_double(optarg, &budget) || !(budget >= 0))
                return pfi_cli_usage_error("allocate", "--budget-w must be >= 0 W, got '%s'",
                                           optarg);
            break;
        case 'S':
            if (pfi_cli_parse_double(optarg, &sla_all) || !(sla_all >= 0 && sla_all <= 1))
                return pfi_cli_usage_error("allocate", "--sla must be a fraction in [0, 1]");
            break;
        case 'K':
            if (pfi_cli_parse_ulong(optarg, &u) || u < 1 || u > 64)
                return pfi_cli_usage_error("allocate", "--rounds must be 1-64");
            lo.rounds = (size_t)u;
            break;
        case 'R':
        case 'E': {
            double v;
            if (pfi_cli_parse_double(optarg, &v) || !(v > 0))
                return pfi_cli_usage_error("allocate", "--%s must be > 0 s",
                                           c == 'R' ? "round-s" : "event-s");
            if (c == 'R')
                lo.round_s = v;
            else
                lo.event_s = v;
            break;
        }
        case 'T':
            tm_path = optarg;
            break;
        case 'M':
            model_path = optarg;
            break;
        case 'J':
            jobs_path = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            fputs(help, stdout);
            return PFI_EXIT_OK;
        default:
            return pfi_cli_usage_error("allocate", "bad option");
        }
    }
    if (!policy_s) return pfi_cli_usage_error("allocate", "--policy is required");
    pfi_alloc_policy policy = PFI_POLICY_EQUAL;
    int learn = strcmp(policy_s, "learn") == 0;
    if (!learn && pfi_alloc_policy_parse(policy_s, &policy) != PFI_OK)
        return pfi_cli_usage_error("allocate",
                                   "unknown --policy '%s' (equal, pfi, moe-ft, dram-copy, "
                                   "oracle, learn)",
                                   policy_s);
    if (isnan(reduction) == isnan(budget))
        return pfi_cli_usage_error("allocate", "give exactly one of --reduction and --budget-w");
    if (model_path && !tm_path) return pfi_cli_usage_error("allocate", "--model needs --telemetry");
    if (policy == PFI_POLICY_DRAM_COPY && !learn && !tm_path)
        return pfi_cli_usage_error("allocate", "the dram-copy policy needs --telemetry");
    if ((double)lo.rounds * lo.round_s > lo.event_s)
        return pfi_cli_usage_error("allocate", "--rounds x --round-s must fit in --event-s");
    if (optind != argc - 1) return pfi_cli_usage_error("allocate", "expected one SWEEPS.csv");
    const char *path = argv[optind];

    pfi_error err = {0};
    pfi_cli_dataset d = {0};
    pfi_cli_curves cv = {0};
    job_list jl = {0};
    pfi_alloc_job *jobs = NULL;
    pfi_alloc_out *out = NULL;
    pfi_alloc_problem *prob = NULL;
    int ec;
    if (tm_path) {
        ec = pfi_cli_alloc_dataset_load("allocate", path, tm_path, NULL, &d);
        if (ec != PFI_EXIT_OK) return ec;
    } else {
        if (pfi_sweeps_read_opts(path, 0, rflags, &d.sweeps, &err) != PFI_OK)
            return pfi_cli_fail("allocate", &err);
    }
    ec = pfi_cli_curves_build("allocate", d.sweeps, &cv);
    if (ec == PFI_EXIT_OK && tm_path) ec = pfi_cli_curves_telemetry("allocate", &d, &cv);
    if (ec == PFI_EXIT_OK && model_path) {
        pfi_model_file mf;
        if (pfi_model_load(model_path, &mf, &err) != PFI_OK)
            ec = pfi_cli_fail("allocate", &err);
        else
            ec = pfi_cli_curves_predict("allocate", &d, &mf.set, &mf.ols, &cv);
    }
    if (ec != PFI_EXIT_OK) goto done;
    if (jobs_path) {
        ec = read_jobs(jobs_path, &cv, sla_all, &jl);
        if (ec != PFI_EXIT_OK) goto done;
    } else {
        jl.n = cv.n;
        jl.group = calloc(cv.n, sizeof *jl.group);
        jl.sla = calloc(cv.n, sizeof *jl.sla);
        if (!jl.group || !jl.sla) {
            fprintf(stderr, "pfi allocate: out of memory\n");
            ec = PFI_EXIT_DATA;
            goto done;
        }
        for (size_t i = 0; i < cv.n; i++) {
            jl.group[i] = i;
            jl.sla[i] = sla_all;
        }
    }
    jobs = calloc(jl.n, sizeof *jobs);
    out = calloc(jl.n, sizeof *out);
    if (!jobs || !out) {
        fprintf(stderr, "pfi allocate: out of memory\n");
        ec = PFI_EXIT_DATA;
        goto done;
    }
    for (size_t k = 0; k < jl.n; k++) {
        size_t i = jl.group[k];
        const pfi_group *g = cv.g[i];
        jobs[k] = (pfi_alloc_job){.name = g->name,
                                  .cap = cv.C + cv.off[i],
                                  .P = cv.P + cv.off[i],
                                  .T = cv.T + cv.off[i],
                                  .n = cv.off[i + 1] - cv.off[i],
                                  .pfi = model_path ? cv.pfi_hat[i] : cv.pfi[i],
                                  .dram_copy = cv.dram[i],
                                  .moe_ft = strcmp(g->meta.arch, "moe") == 0 &&
                                            strcmp(g->meta.task, "ft") == 0,
                                  .sla_frac = jl.sla[k]};
    }
    int rc = pfi_alloc_problem_create(jobs, jl.n, &prob, &err);
    if (rc == PFI_OK && isnan(budget))
        rc = pfi_alloc_budget_for_reduction(prob, reduction, &budget, &err);
    pfi_alloc_result res = {0};
    pfi_learn_result lr = {0};
    if (rc == PFI_OK && !learn) rc = pfi_alloc_run(prob, policy, budget, out, &res, &err);
    if (rc == PFI_OK && learn) {
        /* replay: the sweeps answer for the jobs; SLA floors are the floors */
        pfi_learn_job *lj = calloc(jl.n, sizeof *lj);
        double *pw = calloc(jl.n, sizeof *pw);
        replay rp = {prob};
        if (!lj || !pw) rc = pfi_error_set(&err, PFI_ENOMEM, NULL, 0, "out of memory");
        for (size_t k = 0; rc == PFI_OK && k < jl.n; k++) {
            pfi_alloc_problem_job_range(prob, k, &lj[k].pmax_w, &lj[k].tmax, &lj[k].floor_w);
            lj[k].pfi_hat = jobs[k].pfi;
            if (isnan(lj[k].pfi_hat))
                rc = pfi_error_set(&err, PFI_EINVAL, NULL, 0,
                                   "job %s has no PFI: learn's prior needs one", jobs[k].name);
        }
        if (rc == PFI_OK)
            rc = pfi_learn_run(lj, jl.n, budget, &lo, replay_observe, &rp, pw, &lr, &err);
        res.budget_w = budget;
        for (size_t k = 0; rc == PFI_OK && k < jl.n; k++) {
            double fl;
            pfi_alloc_problem_job_range(prob, k, NULL, NULL, &fl);
            out[k] = (pfi_alloc_out){.power_w = pw[k],
                                     .cap_w = pfi_alloc_problem_cap_at(prob, k, pw[k]),
                                     .tput = pfi_alloc_problem_tput_at(prob, k, pw[k]),
                                     .at_floor = pw[k] <= fl * (1 + 1e-12)};
            res.total_power_w += out[k].power_w;
            res.total_tput += out[k].tput;
            res.n_at_floor += (size_t)out[k].at_floor;
        }
        free(lj);
        free(pw);
    }
    if (rc != PFI_OK) {
        if (!err.file[0]) snprintf(err.file, sizeof err.file, "%s", path);
        ec = pfi_cli_fail("allocate", &err);
        goto done;
    }
    const char *pname = learn ? "learn" : pfi_alloc_policy_name(policy);
    if (json) {
        json_t *root = json_object(), *arr = json_array();
        pfi_json_set(root, "policy", json_string(pname));
        pfi_json_set(root, "budget_w", pfi_json_num(res.budget_w));
        pfi_json_set(root, "total_power_w", pfi_json_num(res.total_power_w));
        pfi_json_set(root, "total_throughput_tok_s", pfi_json_num(res.total_tput));
        if (learn) {
            json_t *l = json_object();
            pfi_json_set(l, "rounds", json_integer((json_int_t)lo.rounds));
            pfi_json_set(l, "round_s", pfi_json_num(lo.round_s));
            pfi_json_set(l, "event_s", pfi_json_num(lo.event_s));
            pfi_json_set(l, "periods", json_integer((json_int_t)lr.periods));
            pfi_json_set(l, "avg_throughput_tok_s", pfi_json_num(lr.avg_tput));
            pfi_json_set(root, "learn", l);
        }
        for (size_t k = 0; k < jl.n; k++) {
            json_t *o = json_object();
            pfi_json_set(o, "group", json_string(jobs[k].name));
            pfi_json_set(o, "power_w", pfi_json_num(out[k].power_w));
            pfi_json_set(o, "cap_w", pfi_json_num(out[k].cap_w));
            pfi_json_set(o, "throughput_tok_s", pfi_json_num(out[k].tput));
            pfi_json_set(o, "at_floor", json_boolean(out[k].at_floor));
            if (out[k].alternates) {
                json_t *a = json_object();
                pfi_json_set(a, "low_cap_w", pfi_json_num(out[k].alt_low_cap_w));
                pfi_json_set(a, "high_cap_w", pfi_json_num(out[k].alt_high_cap_w));
                pfi_json_set(a, "high_share", pfi_json_num(out[k].alt_high_share));
                pfi_json_set(o, "alternate", a);
            }
            json_array_append_new(arr, o);
        }
        pfi_json_set(root, "jobs", arr);
        if (pfi_json_print(stdout, root) != 0) ec = PFI_EXIT_DATA;
        json_decref(root);
    } else {
        int w = 5;
        for (size_t k = 0; k < jl.n; k++) {
            int l = (int)strlen(jobs[k].name);
            if (l > w) w = l;
        }
        printf("policy %s, budget %.1f W (the jobs' uncapped power is %.1f W)\n", pname,
               res.budget_w, pfi_alloc_problem_pmax_total(prob));
        printf("%-*s  %10s %7s %12s\n", w, "group", "power_w", "cap_w", "tput_tok_s");
        for (size_t k = 0; k < jl.n; k++) {
            printf("%-*s  %10.1f %7.1f %12.1f", w, jobs[k].name, out[k].power_w, out[k].cap_w,
                   out[k].tput);
            if (out[k].alternates)
                printf("  alternate %.0f W / %.0f W caps, %.0f%% of the time at %.0f W",
                       out[k].alt_low_cap_w, out[k].alt_high_cap_w, 100 * out[k].alt_high_share,
                       out[k].alt_high_cap_w);
            else if (out[k].at_floor)
                printf("  at floor");
            printf("\n");
        }
        printf("%-*s  %10.1f %7s %12.1f\n", w, "total", res.total_power_w, "", res.total_tput);
        if (learn)
            printf("learn: %zu rounds x %g s in a %g s event; average over the event %.1f "
                   "tok/s\n",
                   lo.rounds, lo.round_s, lo.event_s, lr.avg_tput);
    }
done:
    pfi_alloc_problem_destroy(prob);
    free(jobs);
    free(out);
    free(jl.group);
    free(jl.sla);
    pfi_cli_curves_free(&cv);
    pfi_cli_dataset_free(&d);
    return ec;
}
