/* pfi simulate: the paper's Sec. 6 curtailment experiment (Fig. 8). */
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

static const char *about =
    "The paper's Sec. 6 experiment: workloads of jobs sampled with replacement from\n"
    "the sweep groups, a cluster power reduction, every allocation policy (equal,\n"
    "pfi, moe-ft, dram-copy, learn) and the throughput each loses against the exact\n"
    "oracle, with the share of the equal policy's gap it recovers.\n";

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

static int set_mix(const pfi_cli_opt *o, const char *arg)
{
    return pfi_sim_mix_parse(arg, o->dst) ? -1 : 0;
}

static int set_reductions(const pfi_cli_opt *o, const char *arg)
{
    pfi_cli_list *l = o->dst;
    free(l->v);
    l->v = NULL;
    return pfi_cli_parse_reductions(arg, &l->v, &l->n) ? -1 : 0;
}

/* -1: go on, with *first the first argument; else the exit status. */
static int parse(int argc, char **argv, pfi_sim_opts *o, pfi_cli_list *red, const char **predictor,
                 const char **holdout, int *json, int *force_progress, int *first)
{
    unsigned long long workloads = o->workloads, jobs = o->jobs, seed = o->seed,
                       rounds = o->learn.rounds, threads = (unsigned long long)o->threads;
    const pfi_cli_opt opts[] = {
        PFI_OPT("mix", "M", set_mix, &o->mix, "unknown --mix '%s' (random, production)",
                "random (default) or production (many small FT jobs, few large PT)"),
        PFI_OPT_R("ft-share", "F", pfi_cli_set_num, &o->ft_share, "--ft-share must be in [0, 1]",
                  "production: probability that a job is fine-tuning (0.8)", 0, 1),
        PFI_OPT_R("workloads", "W", pfi_cli_set_ull, &workloads, "bad value '%s' for --workloads",
                  "workloads (500)", 1, 1e7),
        PFI_OPT_R("jobs", "J", pfi_cli_set_ull, &jobs, "bad value '%s' for --jobs",
                  "jobs per workload (100)", 1, 1e7),
        PFI_OPT("reductions", "L", set_reductions, red,
                "bad --reductions '%s': each a fraction in [0, 1) (0.3) or a percent (30%%), "
                "joined by ','",
                "power reductions, fractions or percents (5%,10%,20%,30%,40%)"),
        PFI_OPT("seed", "N", pfi_cli_set_ull, &seed, "bad value '%s' for --seed",
                "random seed (1)"),
        PFI_OPT("predictor", "S", pfi_cli_set_str, predictor, NULL,
                "features of the PFI model (dram_copy_product; names as in pfi fit)"),
        PFI_OPT("holdout", "FILE", pfi_cli_set_str, holdout, NULL,
                "validation groups, out of the model fit and of the workloads"),
        PFI_OPT_R("rounds", "K", pfi_cli_set_ull, &rounds, "bad value '%s' for --rounds",
                  "learn: measured rounds before it keeps the best (8)", 1, 64),
        PFI_OPT_R("round-s", "S", pfi_cli_set_num, &o->learn.round_s,
                  "--round-s must be a positive number of seconds", "learn: seconds per round (30)",
                  1e-9, 1e9),
        PFI_OPT_R("event-s", "S", pfi_cli_set_num, &o->learn.event_s,
                  "--event-s must be a positive number of seconds",
                  "learn: the curtailment's length, s (3600)", 1e-9, 1e9),
        PFI_OPT_R("noise", "SD", pfi_cli_set_num, &o->noise_rel, "--noise must be in [0, 0.5]",
                  "learn reads throughput with this relative Gaussian error (0)", 0, 0.5),
        PFI_OPT("no-learn", NULL, pfi_cli_set_flag, &o->no_learn, NULL,
                "leave the learn policy out"),
        PFI_OPT_R("threads", "N", pfi_cli_set_ull, &threads, "bad value '%s' for --threads",
                  "worker threads (default: CPUs, at most 8)", 1, 64),
        PFI_OPT("progress", NULL, pfi_cli_set_flag, force_progress, NULL,
                "progress on stderr even when it is not a terminal"),
        PFI_OPT("json", NULL, pfi_cli_set_flag, json, NULL, "print one JSON object"),
    };
    const pfi_cli_spec spec = {.cmd = "simulate",
                               .usage = "[OPTIONS] SWEEPS.csv TELEMETRY.csv",
                               .about = about,
                               .opts = opts,
                               .n_opts = PFI_CLI_N(opts)};
    int ec = pfi_cli_parse(&spec, argc, argv, first);
    if (ec >= 0) {
        free(red->v);
        return ec;
    }
    o->workloads = (size_t)workloads;
    o->jobs = (size_t)jobs;
    o->seed = (unsigned long)seed;
    o->learn.rounds = (size_t)rounds;
    o->threads = (int)threads;
    if (*first != argc - 2) {
        free(red->v);
        return pfi_cli_usage_error("simulate", "expected SWEEPS.csv and TELEMETRY.csv");
    }
    if ((double)o->learn.rounds * o->learn.round_s > o->learn.event_s) {
        free(red->v);
        return pfi_cli_usage_error("simulate", "--rounds x --round-s must fit in --event-s");
    }
    return -1;
}

int pfi_cmd_simulate(int argc, char **argv)
{
    pfi_sim_opts o = pfi_sim_defaults();
    o.threads = pfi_cli_threads();
    double defred[] = {0.05, 0.10, 0.20, 0.30, 0.40};
    pfi_cli_list rl = {0};
    const char *predictor = "dram_copy_product", *holdout = NULL;
    int json = 0, force_progress = 0, optind_;
    int pec = parse(argc, argv, &o, &rl, &predictor, &holdout, &json, &force_progress, &optind_);
    if (pec >= 0) return pec;
    double *red = rl.v;
    size_t nred = rl.n;
    o.reductions = red ? red : defred;
    o.n_reductions = red ? nred : sizeof defred / sizeof *defred;
    pfi_error err = {0};
    pfi_feature_set set;
    if (pfi_analysis_parse_set(predictor, &set, &err) != PFI_OK) {
        free(red);
        return pfi_cli_usage_error("simulate", "bad --predictor: %s", err.msg);
    }

    pfi_cli_dataset d;
    int ec = pfi_cli_alloc_dataset_load("simulate", argv[optind_], argv[optind_ + 1], holdout, &d);
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
