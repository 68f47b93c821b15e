/* pfi simulate: the paper's Sec. 6 curtailment experiment (Fig. 8). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc_cli.h"
#include "cli.h"
#include "pfi/json.h"
#include "pfi/sim.h"
#include "pfi/sim_groups.h"

static const char *help =
    "Usage: pfi simulate [OPTIONS] SWEEPS.csv TELEMETRY.csv\n"
    "\n"
    "The paper's Sec. 6 experiment: workloads of jobs sampled with replacement\n"
    "from the sweep groups, a cluster power reduction, every allocation policy\n"
    "(equal, pfi, moe-ft, dram-copy, learn) and the throughput each loses against\n"
    "the exact oracle, in tokens/s per job, with the share of the equal-weight\n"
    "policy's gap it recovers. The pfi policy uses the PFI predicted from the\n"
    "uncapped runs' telemetry by an OLS model fitted on the groups (as the paper).\n"
    "\n"
    "Options:\n"
    "  --mix M          random (groups drawn uniformly, default) or production\n"
    "                   (many small fine-tuning jobs, few large pretraining ones)\n"
    "  --ft-share F     production: probability that a job is fine-tuning\n"
    "                   (default 0.8); FT groups are drawn with weight 1/GPUs, PT\n"
    "                   groups with weight GPUs\n"
    "  --workloads W    workloads (default 500)\n"
    "  --jobs J         jobs per workload (default 100)\n"
    "  --reductions L   power reductions, each a fraction of the cluster's\n"
    "                   uncapped power in [0, 1) or a percent with its sign, as\n"
    "                   in allocate --reduction (default 5%,10%,20%,30%,40%)\n"
    "  --seed N         random seed (default 1)\n"
    "  --predictor S    features of the PFI model (default dram_copy_product;\n"
    "                   names as in pfi fit, joined by ',')\n"
    "  --holdout FILE   CSV whose `group` column names validation groups: left\n"
    "                   out of the model fit and of the workloads\n"
    "  --rounds K       learn: measured rounds before it keeps the best (default 8)\n"
    "  --round-s S      learn: seconds per round (default 30)\n"
    "  --event-s S      learn: length of the curtailment, seconds (default 3600);\n"
    "                   learn's throughput is averaged over it, rounds included\n"
    "  --noise SD       learn reads throughput with this relative Gaussian error\n"
    "                   (default 0; e.g. 0.01); it is scored on the true values\n"
    "  --no-learn       leave the learn policy out (it costs most of the time)\n"
    "  --threads N      worker threads (default: CPUs, at most 8)\n"
    "  --progress       progress on stderr even when it is not a terminal\n"
    "  --json           print one JSON object instead of a table\n"
    "  -h, --help       show this help\n"
    "\n"
    "Exit status: 0 on success, 1 on bad input data, 2 on bad usage.\n";

static void progress(void *ctx, size_t done, size_t total)
{
    (void)ctx;
    if (done == total || done % 10 == 0)
        fprintf(stderr, "\rpfi simulate: %zu/%zu workloads%s", done, total,
                done == total ? "\n" : "");
}

static json_t *to_json(const pfi_sim_opts *o, const pfi_feature_set *set, const pfi_ols *m,
                       const pfi_sim_result *r)
{
    json_t *root = json_object(), *res = json_array(), *pred = json_object();
    pfi_json_set(root, "mix", json_string(pfi_sim_mix_name(o->mix)));
    pfi_json_set(root, "workloads", json_integer((json_int_t)o->workloads));
    pfi_json_set(root, "jobs", json_integer((json_int_t)o->jobs));
    pfi_json_set(root, "seed", json_integer((json_int_t)o->seed));
    if (o->mix == PFI_SIM_PRODUCTION) pfi_json_set(root, "ft_share", pfi_json_num(o->ft_share));
    pfi_json_set(pred, "features", json_string(set->name));
    pfi_json_set(pred, "intercept", pfi_json_num(m->coef[0]));
    json_t *coef = json_array();
    for (size_t j = 0; j < m->p; j++)
        json_array_append_new(coef, pfi_json_num(m->coef[1 + j]));
    pfi_json_set(pred, "coefficients", coef);
    pfi_json_set(pred, "r2_in", pfi_json_num(m->r2));
    pfi_json_set(root, "predictor", pred);
    json_t *learn = json_object();
    pfi_json_set(learn, "rounds", json_integer((json_int_t)o->learn.rounds));
    pfi_json_set(learn, "round_s", pfi_json_num(o->learn.round_s));
    pfi_json_set(learn, "event_s", pfi_json_num(o->learn.event_s));
    pfi_json_set(learn, "noise_rel", pfi_json_num(o->noise_rel));
    pfi_json_set(root, "learn", learn);
    for (size_t k = 0; k < r->n_reductions; k++)
        for (int p = 0; p < PFI_SIM_NPOLICIES; p++) {
            const pfi_sim_cell *c = &r->cells[k * PFI_SIM_NPOLICIES + p];
            if (!c->ran) continue;
            json_t *e = json_object();
            pfi_json_set(e, "reduction", pfi_json_num(r->reductions[k]));
            pfi_json_set(e, "policy", json_string(pfi_sim_policy_name(p)));
            pfi_json_set(e, "tput_tok_s_per_job", pfi_json_num(c->tput_per_job));
            pfi_json_set(e, "gap_tok_s_per_job", pfi_json_num(c->gap_per_job));
            pfi_json_set(e, "recovered_tok_s_per_job",
                         c->has_recovered ? pfi_json_num(c->recovered_per_job) : json_null());
            pfi_json_set(e, "gap_recovered",
                         c->has_recovered ? pfi_json_num(c->gap_recovered) : json_null());
            json_array_append_new(res, e);
        }
    pfi_json_set(root, "results", res);
    return root;
}

static void print_table(const pfi_sim_opts *o, const pfi_feature_set *set, const pfi_ols *m,
                        const pfi_sim_result *r)
{
    printf("mix %s, %zu workloads x %zu jobs, seed %lu", pfi_sim_mix_name(o->mix), o->workloads,
           o->jobs, o->seed);
    if (o->mix == PFI_SIM_PRODUCTION) printf(", FT share %.2f", o->ft_share);
    printf("\npredicted PFI = %.4f", m->coef[0]);
    for (size_t j = 0; j < m->p; j++)
        printf(" %+.4g x %s", m->coef[1 + j], pfi_feature_name(set->ids[j]));
    printf(" (in-sample R2 %.3f)\n", m->r2);
    printf("gap to the oracle, tok/s per job (share of equal's gap recovered)\n");
    printf("%9s %12s", "reduction", "oracle");
    static const int order[] = {PFI_POLICY_EQUAL, PFI_POLICY_PFI, PFI_POLICY_MOE_FT,
                                PFI_POLICY_DRAM_COPY, PFI_SIM_LEARN};
    size_t npol = o->no_learn ? 4 : 5;
    for (size_t k = 0; k < npol; k++)
        printf(" %17s", pfi_sim_policy_name(order[k]));
    printf("\n");
    for (size_t k = 0; k < r->n_reductions; k++) {
        const pfi_sim_cell *c = &r->cells[k * PFI_SIM_NPOLICIES];
        printf("%8.4g%% %12.1f", 100 * r->reductions[k], c[PFI_POLICY_ORACLE].tput_per_job);
        for (size_t q = 0; q < npol; q++) {
            const pfi_sim_cell *x = &c[order[q]];
            char buf[32];
            if (x->has_recovered)
                snprintf(buf, sizeof buf, "%.1f (%.0f%%)", x->gap_per_job, 100 * x->gap_recovered);
            else
                snprintf(buf, sizeof buf, "%.1f", x->gap_per_job);
            printf(" %17s", buf);
        }
        printf("\n");
    }
    printf("oracle column: its throughput, tok/s per job.");
    if (!o->no_learn)
        printf(" learn: %zu rounds x %g s in a %g s event, reading noise %g.", o->learn.rounds,
               o->learn.round_s, o->learn.event_s, o->noise_rel);
    printf("\n");
}

static int parse_num(const char *s, double lo, double hi, double *out)
{
    return pfi_cli_parse_double(s, out) == 0 && *out >= lo && *out <= hi ? 0 : -1;
}

int pfi_cmd_simulate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"mix", required_argument, 0, 'm'},
        {"ft-share", required_argument, 0, 'f'},
        {"workloads", required_argument, 0, 'W'},
        {"jobs", required_argument, 0, 'J'},
        {"reductions", required_argument, 0, 'r'},
        {"seed", required_argument, 0, 's'},
        {"predictor", required_argument, 0, 'P'},
        {"holdout", required_argument, 0, 'H'},
        {"rounds", required_argument, 0, 'K'},
        {"round-s", required_argument, 0, 'R'},
        {"event-s", required_argument, 0, 'E'},
        {"threads", required_argument, 0, 't'},
        {"progress", no_argument, 0, 'p'},
        {"json", no_argument, 0, 'j'},
        {"no-learn", no_argument, 0, 'N'},
        {"noise", required_argument, 0, 'n'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    pfi_sim_opts o = pfi_sim_defaults();
    o.threads = pfi_cli_threads();
    double defred[] = {0.05, 0.10, 0.20, 0.30, 0.40}, *red = NULL;
    size_t nred = 0;
    const char *predictor = "dram_copy_product", *holdout = NULL;
    int json = 0, force_progress = 0, c;
    unsigned long long u;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (pfi_sim_mix_parse(optarg, &o.mix)) {
                free(red);
                return pfi_cli_usage_error("simulate", "unknown --mix '%s' (random, production)",
                                           optarg);
            }
            break;
        case 'f':
            if (parse_num(optarg, 0, 1, &o.ft_share)) {
                free(red);
                return pfi_cli_usage_error("simulate", "--ft-share must be in [0, 1]");
            }
            break;
        case 'W':
        case 'J':
        case 's':
        case 'K':
        case 't':
            if (pfi_cli_parse_ulong(optarg, &u) || (c != 's' && u == 0) ||
                (c != 's' && u > 10000000ULL) || (c == 'K' && u > 64) || (c == 't' && u > 64)) {
                free(red);
                return pfi_cli_usage_error("simulate", "bad value '%s' for --%s", optarg,
                                           c == 'W'   ? "workloads"
                                           : c == 'J' ? "jobs"
                                           : c == 's' ? "seed"
                                           : c == 'K' ? "rounds"
                                                      : "threads");
            }
            if (c == 'W')
                o.workloads = (size_t)u;
            else if (c == 'J')
                o.jobs = (size_t)u;
            else if (c == 's')
                o.seed = (unsigned long)u;
            else if (c == 'K')
                o.learn.rounds = (size_t)u;
            else
                o.threads = (int)u;
            break;
        case 'r':
            free(red);
            if (pfi_cli_parse_reductions(optarg, &red, &nred))
                return pfi_cli_usage_error("simulate",
                                           "bad --reductions '%s': each a fraction in [0, 1) "
                                           "(0.3) or a percent (30%%), joined by ','",
                                           optarg);
            break;
        case 'R':
        case 'E':
            if (parse_num(optarg, 1e-9, 1e9, c == 'R' ? &o.learn.round_s : &o.learn.event_s)) {
                free(red);
                return pfi_cli_usage_error("simulate", "--%s must be a positive number of seconds",
                                           c == 'R' ? "round-s" : "event-s");
            }
            break;
        case 'P':
            predictor = optarg;
            break;
        case 'H':
            holdout = optarg;
            break;
        case 'p':
            force_progress = 1;
            break;
        case 'N':
            o.no_learn = 1;
            break;
        case 'n':
            if (parse_num(optarg, 0, 0.5, &o.noise_rel)) {
                free(red);
                return pfi_cli_usage_error("simulate", "--noise must be in [0, 0.5]");
            }
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            free(red);
            fputs(help, stdout);
            return PFI_EXIT_OK;
        default:
            free(red);
            return pfi_cli_usage_error("simulate", "bad option");
        }
    }
    if (optind != argc - 2) {
        free(red);
        return pfi_cli_usage_error("simulate", "expected SWEEPS.csv and TELEMETRY.csv");
    }
    if ((double)o.learn.rounds * o.learn.round_s > o.learn.event_s) {
        free(red);
        return pfi_cli_usage_error("simulate", "--rounds x --round-s must fit in --event-s");
    }
    o.reductions = red ? red : defred;
    o.n_reductions = red ? nred : sizeof defred / sizeof *defred;
    pfi_error err = {0};
    pfi_feature_set set;
    if (pfi_analysis_parse_set(predictor, &set, &err) != PFI_OK) {
        free(red);
        return pfi_cli_usage_error("simulate", "bad --predictor: %s", err.msg);
    }

    pfi_cli_dataset d;
    int ec = pfi_cli_alloc_dataset_load("simulate", argv[optind], argv[optind + 1], holdout, &d);
    if (ec != PFI_EXIT_OK) {
        free(red);
        return ec;
    }
    pfi_ols m;
    pfi_sim_groups sg = {0};
    pfi_sim_result res = {0};
    if (pfi_sim_groups_build(d.sweeps, d.obs, d.n, &set, &m, &sg, &err) != PFI_OK) {
        ec = pfi_cli_fail("simulate", &err);
        goto done;
    }
    if (force_progress || isatty(STDERR_FILENO)) o.progress = progress;
    if (pfi_sim_run(sg.g, sg.n, &o, &res, &err) != PFI_OK) {
        ec = pfi_cli_fail("simulate", &err);
        goto done;
    }
    if (json) {
        json_t *root = to_json(&o, &set, &m, &res);
        if (!root || pfi_json_print(stdout, root) != 0) ec = PFI_EXIT_DATA;
        json_decref(root);
    } else {
        print_table(&o, &set, &m, &res);
    }
done:
    pfi_sim_result_free(&res);
    pfi_sim_groups_free(&sg);
    pfi_cli_dataset_free(&d);
    free(red);
    return ec;
}
