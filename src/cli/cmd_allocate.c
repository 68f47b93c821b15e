/* pfi allocate: per-job power and cap under a cluster budget, by policy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_cli.h"
#include "alloc_topo.h"
#include "cli.h"
#include "pfi/alloc.h"
#include "pfi/csv.h"
#include "pfi/json.h"
#include "pfi/learn.h"
#include "pfi/model_json.h"
#include "pfi/sweeps_csv.h"

static const char *about =
    "Gives every job a power and a per-GPU cap so that the jobs together draw at\n"
    "most the budget: each sweep group is one job (or see --jobs), its curve its\n"
    "sweep interpolated between caps. Policies: equal, pfi, moe-ft, dram-copy,\n"
    "oracle (the exact maximum of total throughput), learn (the closed loop,\n"
    "replayed against the sweeps). With --topology every domain of the power\n"
    "tree stays under its limit too.\n";

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
    const char *policy_s, *tm_path, *model_path, *jobs_path, *topo_path, *path;
    double reduction, budget, sla_all;
    pfi_learn_opts lo;
    int json, learn;
    unsigned rflags;
    pfi_alloc_policy policy;
} args;

static int set_reduction(const pfi_cli_opt *o, const char *arg)
{
    double *v = NULL;
    size_t nv = 0;
    int bad = pfi_cli_parse_reductions(arg, &v, &nv) || nv != 1;
    if (!bad) *(double *)o->dst = v[0];
    free(v);
    return bad ? -1 : 0;
}

static int parse(int argc, char **argv, args *a)
{
    *a = (args){.reduction = NAN, .budget = NAN, .lo = pfi_learn_defaults()};
    const pfi_cli_opt opts[] = {
        PFI_OPT("policy", "P", pfi_cli_set_str, &a->policy_s, NULL,
                "equal, pfi, moe-ft, dram-copy, oracle or learn (required)"),
        PFI_OPT("reduction", "R", set_reduction, &a->reduction,
                "--reduction must be a fraction in [0, 1) (0.3) or a percent (30%%), got '%s'",
                "shed the fraction R of the jobs' uncapped power (0.3 or 30%)"),
        PFI_OPT("budget-w", "W", pfi_cli_set_nonneg, &a->budget,
                "--budget-w must be >= 0 W, got '%s'", "or fit under W watts"),
        PFI_OPT("telemetry", "T", pfi_cli_set_str, &a->tm_path, NULL,
                "telemetry.csv of the groups (dram-copy, --model)"),
        PFI_OPT("model", "M", pfi_cli_set_str, &a->model_path, NULL,
                "a PFI model from 'pfi fit --out': pfi and learn use its predictions"),
        PFI_OPT("jobs", "FILE", pfi_cli_set_str, &a->jobs_path, NULL,
                "CSV of jobs: a group column, an optional sla column"),
        PFI_OPT("topology", "FILE", pfi_cli_set_str, &a->topo_path, NULL,
                "power tree (JSON, leaves list \"jobs\"): every domain under its limit"),
        PFI_OPT_R("sla", "F", pfi_cli_set_num, &a->sla_all, "--sla must be a fraction in [0, 1]",
                  "SLA floor (fraction of uncapped throughput) of every other job", 0, 1),
        PFI_OPT_R("rounds", "K", pfi_cli_set_size, &a->lo.rounds, "--rounds must be 1-64",
                  "learn's measured rounds (8)", 1, 64),
        PFI_OPT("round-s", "S", pfi_cli_set_pos, &a->lo.round_s, "--round-s must be > 0 s",
                "learn's round length (30 s)"),
        PFI_OPT("event-s", "S", pfi_cli_set_pos, &a->lo.event_s, "--event-s must be > 0 s",
                "learn's event length (3600 s)"),
        PFI_OPT_R("allow-implausible", NULL, pfi_cli_set_bits, &a->rflags, NULL,
                  "accept runs no GPU job can have", PFI_SWEEPS_ALLOW_IMPLAUSIBLE, 0),
        PFI_OPT("json", NULL, pfi_cli_set_flag, &a->json, NULL, "print one JSON object"),
    };
    const pfi_cli_spec spec = {.cmd = "allocate",
                               .usage =
                                   "--policy P (--reduction R | --budget-w W | --topology FILE) "
                                   "[OPTIONS] SWEEPS.csv",
                               .about = about,
                               .opts = opts,
                               .n_opts = PFI_CLI_N(opts)};
    int first, ec = pfi_cli_parse(&spec, argc, argv, &first);
    if (ec >= 0) return ec;
    if (!a->policy_s) return pfi_cli_usage_error("allocate", "--policy is required");
    a->learn = strcmp(a->policy_s, "learn") == 0;
    a->policy = PFI_POLICY_EQUAL;
    if (!a->learn && pfi_alloc_policy_parse(a->policy_s, &a->policy) != PFI_OK)
        return pfi_cli_usage_error("allocate",
                                   "unknown --policy '%s' (equal, pfi, moe-ft, dram-copy, "
                                   "oracle, learn)",
                                   a->policy_s);
    if (!isnan(a->reduction) && !isnan(a->budget))
        return pfi_cli_usage_error("allocate", "give one of --reduction and --budget-w");
    if (isnan(a->reduction) && isnan(a->budget) && !a->topo_path)
        return pfi_cli_usage_error("allocate",
                                   "give one of --reduction and --budget-w (or --topology)");
    if (a->model_path && !a->tm_path)
        return pfi_cli_usage_error("allocate", "--model needs --telemetry");
    if (a->policy == PFI_POLICY_DRAM_COPY && !a->learn && !a->tm_path)
        return pfi_cli_usage_error("allocate", "the dram-copy policy needs --telemetry");
    if ((double)a->lo.rounds * a->lo.round_s > a->lo.event_s)
        return pfi_cli_usage_error("allocate", "--rounds x --round-s must fit in --event-s");
    if (first != argc - 1) return pfi_cli_usage_error("allocate", "expected one SWEEPS.csv");
    a->path = argv[first];
    return -1;
}

/* The sweeps (with telemetry and predictions when asked) as curves. */
static int load(const args *a, pfi_cli_dataset *d, pfi_cli_curves *cv)
{
    pfi_error err = {0};
    int ec;
    if (a->tm_path) {
        ec = pfi_cli_alloc_dataset_load("allocate", a->path, a->tm_path, NULL, d);
        if (ec != PFI_EXIT_OK) return ec;
    } else if (pfi_sweeps_read_opts(a->path, 0, a->rflags, &d->sweeps, &err) != PFI_OK) {
        return pfi_cli_fail("allocate", &err);
    }
    ec = pfi_cli_curves_build("allocate", d->sweeps, cv);
    if (ec == PFI_EXIT_OK && a->tm_path) ec = pfi_cli_curves_telemetry("allocate", d, cv);
    if (ec == PFI_EXIT_OK && a->model_path) {
        pfi_model_file mf;
        if (pfi_model_load(a->model_path, &mf, &err) != PFI_OK)
            ec = pfi_cli_fail("allocate", &err);
        else
            ec = pfi_cli_curves_predict("allocate", d, &mf.set, &mf.ols, cv);
    }
    return ec;
}

/* One allocation job per entry of jl (default: one per group). */
static int make_jobs(const args *a, const pfi_cli_curves *cv, job_list *jl, pfi_alloc_job **out)
{
    if (a->jobs_path) {
        int ec = read_jobs(a->jobs_path, cv, a->sla_all, jl);
        if (ec != PFI_EXIT_OK) return ec;
    } else {
        jl->n = cv->n;
        jl->group = calloc(cv->n, sizeof *jl->group);
        jl->sla = calloc(cv->n, sizeof *jl->sla);
        if (!jl->group || !jl->sla) goto oom;
        for (size_t i = 0; i < cv->n; i++) {
            jl->group[i] = i;
            jl->sla[i] = a->sla_all;
        }
    }
    pfi_alloc_job *jobs = *out = calloc(jl->n, sizeof *jobs);
    if (!jobs) goto oom;
    for (size_t k = 0; k < jl->n; k++) {
        size_t i = jl->group[k];
        const pfi_group *g = cv->g[i];
        jobs[k] = (pfi_alloc_job){.name = g->name,
                                  .cap = cv->C + cv->off[i],
                                  .P = cv->P + cv->off[i],
                                  .T = cv->T + cv->off[i],
                                  .n = cv->off[i + 1] - cv->off[i],
                                  .pfi = a->model_path ? cv->pfi_hat[i] : cv->pfi[i],
                                  .dram_copy = cv->dram[i],
                                  .moe_ft = strcmp(g->meta.arch, "moe") == 0 &&
                                            strcmp(g->meta.task, "ft") == 0,
                                  .sla_frac = jl->sla[k]};
    }
    return PFI_EXIT_OK;
oom:
    fprintf(stderr, "pfi allocate: out of memory\n");
    return PFI_EXIT_DATA;
}

static int print_json(const args *a, const pfi_alloc_job *jobs, const pfi_alloc_out *out, size_t n,
                      const pfi_alloc_result *res, const pfi_learn_result *lr, const pfi_topo *topo,
                      const pfi_alloc_problem *prob)
{
    json_t *root = json_object(), *arr = json_array();
    pfi_json_set(root, "policy",
                 json_string(a->learn ? "learn" : pfi_alloc_policy_name(a->policy)));
    pfi_json_set(root, "budget_w", pfi_json_num(res->budget_w));
    pfi_json_set(root, "total_power_w", pfi_json_num(res->total_power_w));
    pfi_json_set(root, "total_throughput_tok_s", pfi_json_num(res->total_tput));
    if (a->learn) {
        json_t *l = json_object();
        pfi_json_set(l, "rounds", json_integer((json_int_t)a->lo.rounds));
        pfi_json_set(l, "round_s", pfi_json_num(a->lo.round_s));
        pfi_json_set(l, "event_s", pfi_json_num(a->lo.event_s));
        pfi_json_set(l, "periods", json_integer((json_int_t)lr->periods));
        pfi_json_set(l, "avg_throughput_tok_s", pfi_json_num(lr->avg_tput));
        pfi_json_set(root, "learn", l);
    }
    for (size_t k = 0; k < n; k++) {
        json_t *o = json_object();
        pfi_json_set(o, "group", json_string(jobs[k].name));
        pfi_json_set(o, "power_w", pfi_json_num(out[k].power_w));
        pfi_json_set(o, "cap_w", pfi_json_num(out[k].cap_w));
        pfi_json_set(o, "throughput_tok_s", pfi_json_num(out[k].tput));
        pfi_json_set(o, "at_floor", json_boolean(out[k].at_floor));
        if (topo)
            pfi_json_set(
                o, "domain",
                json_string(pfi_topo_domain_at(topo, pfi_topo_leaf_of(topo, jobs[k].name))->name));
        if (out[k].alternates) {
            json_t *alt = json_object();
            pfi_json_set(alt, "low_cap_w", pfi_json_num(out[k].alt_low_cap_w));
            pfi_json_set(alt, "high_cap_w", pfi_json_num(out[k].alt_high_cap_w));
            pfi_json_set(alt, "high_share", pfi_json_num(out[k].alt_high_share));
            pfi_json_set(o, "alternate", alt);
        }
        json_array_append_new(arr, o);
    }
    pfi_json_set(root, "jobs", arr);
    if (topo) pfi_json_set(root, "domains", pfi_cli_alloc_topo_json(topo, prob));
    int ec = pfi_json_print(stdout, root) != 0 ? PFI_EXIT_DATA : PFI_EXIT_OK;
    json_decref(root);
    return ec;
}

static void print_table(const args *a, const pfi_alloc_job *jobs, const pfi_alloc_out *out,
                        size_t n, const pfi_alloc_result *res, const pfi_learn_result *lr,
                        double pmax_total, const pfi_topo *topo, const pfi_alloc_problem *prob)
{
    int w = 5;
    for (size_t k = 0; k < n; k++) {
        int l = (int)strlen(jobs[k].name);
        if (l > w) w = l;
    }
    printf("policy %s, budget %.1f W (the jobs' uncapped power is %.1f W)\n",
           a->learn ? "learn" : pfi_alloc_policy_name(a->policy), res->budget_w, pmax_total);
    printf("%-*s  %10s %7s %12s\n", w, "group", "power_w", "cap_w", "tput_tok_s");
    for (size_t k = 0; k < n; k++) {
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
    printf("%-*s  %10.1f %7s %12.1f\n", w, "total", res->total_power_w, "", res->total_tput);
    if (a->learn)
        printf("learn: %zu rounds x %g s in a %g s event; average over the event %.1f "
               "tok/s\n",
               a->lo.rounds, a->lo.round_s, a->lo.event_s, lr->avg_tput);
    if (topo) pfi_cli_alloc_topo_print(topo, prob);
}

int pfi_cmd_allocate(int argc, char **argv)
{
    args a;
    int ec = parse(argc, argv, &a);
    if (ec >= 0) return ec;
    pfi_error err = {0};
    pfi_cli_dataset d = {0};
    pfi_cli_curves cv = {0};
    job_list jl = {0};
    pfi_alloc_job *jobs = NULL;
    pfi_alloc_out *out = NULL;
    pfi_alloc_problem *prob = NULL;
    pfi_topo *topo = NULL;
    double *pfi_hat = NULL;
    ec = load(&a, &d, &cv);
    if (ec == PFI_EXIT_OK) ec = make_jobs(&a, &cv, &jl, &jobs);
    if (ec != PFI_EXIT_OK) goto done;
    out = calloc(jl.n, sizeof *out);
    pfi_hat = calloc(jl.n, sizeof *pfi_hat);
    if (!out || !pfi_hat) {
        fprintf(stderr, "pfi allocate: out of memory\n");
        ec = PFI_EXIT_DATA;
        goto done;
    }
    for (size_t k = 0; k < jl.n; k++)
        pfi_hat[k] = jobs[k].pfi;
    if (a.topo_path && (ec = pfi_cli_alloc_topo_load(a.topo_path, &cv, jobs, jl.n, &topo)))
        goto done;
    double budget = a.budget, jobs_limit = INFINITY;
    int rc = pfi_alloc_problem_create(jobs, jl.n, &prob, &err);
    if (rc == PFI_OK && isnan(budget) && !isnan(a.reduction))
        rc = pfi_alloc_budget_for_reduction(prob, a.reduction, &budget, &err);
    if (rc == PFI_OK && topo) {
        rc = pfi_cli_alloc_topo_set(topo, jobs, jl.n, prob, &jobs_limit, &err);
        /* the root's limit is the budget, or the tighter of it and the one given */
        if (rc == PFI_OK && isnan(budget) && !isfinite(jobs_limit))
            rc = pfi_error_set(&err, PFI_EINVAL, a.topo_path, 0,
                               "the root domain has no limit_w: give --budget-w or --reduction");
        if (rc == PFI_OK) budget = fmax(0.0, isnan(budget) ? jobs_limit : fmin(budget, jobs_limit));
        if (rc != PFI_OK) snprintf(err.file, sizeof err.file, "%s", a.topo_path);
    }
    pfi_alloc_result res = {0};
    pfi_learn_result lr = {0};
    if (rc == PFI_OK)
        rc = a.learn ? pfi_learn_replay(prob, pfi_hat, budget, &a.lo, out, &res, &lr, &err)
                     : pfi_alloc_run(prob, a.policy, budget, out, &res, &err);
    if (rc != PFI_OK) {
        if (topo && strncmp(err.msg, "domain ", 7) == 0) /* a domain infeasible */
            snprintf(err.file, sizeof err.file, "%s", a.topo_path);
        if (!err.file[0]) snprintf(err.file, sizeof err.file, "%s", a.path);
        ec = pfi_cli_fail("allocate", &err);
        goto done;
    }
    if (a.json)
        ec = print_json(&a, jobs, out, jl.n, &res, &lr, topo, prob);
    else
        print_table(&a, jobs, out, jl.n, &res, &lr, pfi_alloc_problem_pmax_total(prob), topo, prob);
done:
    pfi_alloc_problem_destroy(prob);
    pfi_topo_destroy(topo);
    free(jobs);
    free(out);
    free(pfi_hat);
    free(jl.group);
    free(jl.sla);
    pfi_cli_curves_free(&cv);
    pfi_cli_dataset_free(&d);
    return ec;
}
