/* pfi model: the GPU power-cap model's prediction for one job at one or more
 * caps, and (--fit-probe) the least squares fit of its constants to a probe
 * trace. The model itself lives in src/core/gpumodel.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pfi/dataset.h"
#include "pfi/gpumodel.h"
#include "pfi/gpumodel_fit.h"
#include "pfi/json.h"
#include "pfi/probe_trace.h"

static const char *about =
    "Prints the GPU model's steady state for a training job under per-GPU power\n"
    "caps: SM clock, power, throughput and DCGM-like activity. JOB is a probe load\n"
    "(gemm, stream, dense_train, moe_train), a sweep group of the embedded dataset,\n"
    "or compute=C,sm=A,dram=D,tensor=R,tput=T[,spread=S]. Usage also:\n"
    "  pfi model --fit-probe DIR [--json]\n";

static const char *const probe_phases[] = {"gemm", "stream", "dense_train", "moe_train", NULL};

/* Parses "compute=0.9,sm=0.8,..." into job; -1 with a message on error. */
static int parse_job_params(const char *s, pfi_job_model *job)
{
    char *dup = strdup(s), *save = NULL;
    if (!dup) return -1;
    int seen = 0, rc = 0;
    *job = (pfi_job_model){0};
    for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '='), *end;
        if (!eq) {
            rc = -1;
            break;
        }
        *eq = 0;
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || *end || !isfinite(v)) {
            rc = -1;
            break;
        }
        static const char *keys[] = {"compute", "sm", "dram", "tensor", "tput", "spread"};
        int k = 0;
        while (k < 6 && strcmp(keys[k], tok) != 0)
            k++;
        switch (k) {
        case 0:
            job->compute_frac = v;
            break;
        case 1:
            job->sm_activity = v;
            break;
        case 2:
            job->dram_activity = v;
            break;
        case 3:
            job->tensor_ratio = v;
            break;
        case 4:
            job->tput_per_gpu = v;
            break;
        case 5:
            job->clock_spread = v;
            break;
        default:
            rc = -1;
        }
        if (rc) break;
        seen |= 1 << k;
    }
    free(dup);
    /* spread is optional; the five others are required. */
    return rc == 0 && (seen & 0x1f) == 0x1f ? 0 : -1;
}

static json_t *point_json(const pfi_gpumodel_point *p, int gpus)
{
    json_t *o = json_object();
    pfi_json_set(o, "cap_w", pfi_json_num(p->cap_w));
    pfi_json_set(o, "power_w", pfi_json_num(p->power_w));
    pfi_json_set(o, "sm_clock_mhz", pfi_json_num(p->sm_clock_mhz));
    pfi_json_set(o, "mem_clock_mhz", pfi_json_num(p->mem_clock_mhz));
    pfi_json_set(o, "tput_per_gpu", pfi_json_num(p->tput));
    pfi_json_set(o, "power_total_w", pfi_json_num(p->power_w * gpus));
    pfi_json_set(o, "tput_total", pfi_json_num(p->tput * gpus));
    pfi_json_set(o, "sm_active", pfi_json_num(p->sm_active));
    pfi_json_set(o, "tensor_active", pfi_json_num(p->tensor_active));
    pfi_json_set(o, "dram_active", pfi_json_num(p->dram_active));
    pfi_json_set(o, "mem_copy_util_pct", pfi_json_num(p->mem_copy_util_pct));
    pfi_json_set(o, "gpu_util_pct", pfi_json_num(p->gpu_util_pct));
    return o;
}

static int run_fit(const char *dir, int json)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    pfi_error err = {0};
    pfi_gpumodel_sample *s = NULL, loads[8];
    size_t n = 0, *ph = NULL, which[8];
    pfi_gpumodel_fit fit;
    int rc = pfi_probe_trace_read(path, probe_phases, &s, &ph, &n, &err);
    size_t nl = 0;
    if (rc == PFI_OK)
        rc = pfi_gpumodel_fit_probe(s, ph, n, 4, pfi_gpumodel_h200()->sm_clock_max_mhz, loads,
                                    which, &nl, &fit, &err);
    free(s);
    free(ph);
    if (rc != PFI_OK) {
        if (!err.file[0]) snprintf(err.file, sizeof err.file, "%.255s", path);
        return pfi_cli_fail("model", &err);
    }
    pfi_gpu_spec spec = *pfi_gpumodel_h200();
    pfi_gpumodel_fit_apply(&fit, &spec);
    json_t *jl = json_array();
    if (!json) {
        printf("fit to %zu probe loads (%zu iterations), rmse %.1f W\n", fit.n, fit.iterations,
               fit.rmse_w);
        for (int i = 0; i < PFI_GPUMODEL_FIT_NPARAM; i++)
            printf("  %-15s %10.4f +/- %.4f\n", pfi_gpumodel_fit_names[i], fit.p[i], fit.se[i]);
        printf("  %-15s %10.4f\n  %-15s %10.4f\n", "copy_per_dram", fit.copy_per_dram,
               "gpu_util_exp", fit.gpu_util_exp);
        printf("\n%-12s %9s %9s %9s %9s %9s %9s\n", "load", "P_meas", "P_model", "f_meas",
               "f_model", "dram", "dram_mod");
    }
    for (size_t i = 0; i < nl; i++) {
        const char *name = probe_phases[which[i]];
        pfi_gpumodel_point p;
        pfi_gpumodel_eval(&spec, pfi_gpumodel_preset(name), spec.tdp_w, &p);
        if (json) {
            json_t *o = json_object();
            pfi_json_set(o, "load", json_string(name));
            pfi_json_set(o, "power_w", pfi_json_num(loads[i].power_w));
            pfi_json_set(o, "sm_clock_mhz", pfi_json_num(loads[i].sm_clock_mhz));
            pfi_json_set(o, "dram_active", pfi_json_num(loads[i].dram_active));
            pfi_json_set(o, "model", point_json(&p, 1));
            json_array_append_new(jl, o);
        } else {
            printf("%-12s %9.1f %9.1f %9.0f %9.0f %9.3f %9.3f\n", name, loads[i].power_w, p.power_w,
                   loads[i].sm_clock_mhz, p.sm_clock_mhz, loads[i].dram_active, p.dram_active);
        }
    }
    if (json) {
        json_t *root = json_object(), *pj = json_object(), *sj = json_object();
        for (int i = 0; i < PFI_GPUMODEL_FIT_NPARAM; i++) {
            pfi_json_set(pj, pfi_gpumodel_fit_names[i], pfi_json_num(fit.p[i]));
            pfi_json_set(sj, pfi_gpumodel_fit_names[i], pfi_json_num(fit.se[i]));
        }
        pfi_json_set(pj, "copy_per_dram", pfi_json_num(fit.copy_per_dram));
        pfi_json_set(pj, "gpu_util_exp", pfi_json_num(fit.gpu_util_exp));
        pfi_json_set(root, "loads_fitted", json_integer((json_int_t)fit.n));
        pfi_json_set(root, "rmse_w", pfi_json_num(fit.rmse_w));
        pfi_json_set(root, "params", pj);
        pfi_json_set(root, "se", sj);
        pfi_json_set(root, "loads", jl);
        pfi_json_print(stdout, root);
        json_decref(root);
    } else {
        json_decref(jl);
    }
    return PFI_EXIT_OK;
}

static int set_gpu(const pfi_cli_opt *o, const char *arg)
{
    const pfi_gpu_spec **g = o->dst;
    if (strcmp(arg, "h200") == 0)
        *g = pfi_gpumodel_h200();
    else if (strcmp(arg, "h100") == 0)
        *g = pfi_gpumodel_h100();
    else
        return -1;
    return 0;
}

/* JOB (a probe load, a paper group, or parameters) into job, with the
 * group's GPU and GPU count. */
static int resolve_job(const char *job_arg, pfi_job_model *job, const pfi_gpu_spec **gpu,
                       unsigned long long *gpus)
{
    const pfi_job_model *preset = pfi_gpumodel_preset(job_arg);
    const pfi_paper_group *grp = preset ? NULL : pfi_paper_group_find(job_arg);
    if (preset) {
        *job = *preset;
    } else if (grp) {
        /* The group's calibrated job, as the committed dataset has it. */
        pfi_dataset *d = NULL;
        pfi_error err = {0};
        if (pfi_dataset_build(PFI_DATASET_SEED, &d, &err) != PFI_OK)
            return pfi_cli_fail("model", &err);
        for (size_t i = 0; i < d->n; i++)
            if (d->groups[i].paper == grp) {
                *job = d->groups[i].job;
                *gpu = d->groups[i].gpu;
            }
        pfi_dataset_destroy(d);
        if (!*gpus) *gpus = (unsigned long long)grp->gpus;
    } else if (strchr(job_arg, '=')) {
        if (parse_job_params(job_arg, job))
            return pfi_cli_usage_error("model",
                                       "bad --job '%s' (want compute=C,sm=A,dram=D,"
                                       "tensor=R,tput=T[,spread=S])",
                                       job_arg);
    } else {
        return pfi_cli_usage_error("model",
                                   "unknown --job '%s' (a probe load, a paper group "
                                   "or key=value parameters)",
                                   job_arg);
    }
    return PFI_EXIT_OK;
}

static void print_points(const pfi_gpu_spec *gpu, const pfi_job_model *jp,
                         const pfi_gpumodel_point *pts, size_t ncaps, unsigned long long gpus,
                         int json)
{
    const pfi_job_model job = *jp;
    if (json) {
        json_t *root = json_object(), *arr = json_array();
        pfi_json_set(root, "gpu", json_string(gpu->name));
        pfi_json_set(root, "gpus", json_integer((json_int_t)gpus));
        json_t *jj = json_object();
        pfi_json_set(jj, "compute_frac", pfi_json_num(job.compute_frac));
        pfi_json_set(jj, "sm_activity", pfi_json_num(job.sm_activity));
        pfi_json_set(jj, "dram_activity", pfi_json_num(job.dram_activity));
        pfi_json_set(jj, "tensor_ratio", pfi_json_num(job.tensor_ratio));
        pfi_json_set(jj, "tput_per_gpu", pfi_json_num(job.tput_per_gpu));
        pfi_json_set(jj, "clock_spread", pfi_json_num(job.clock_spread));
        /* the rest of pfi_job_model, so that a sim jobs file made from this
         * runs the same job (its columns of the same names) */
        pfi_json_set(jj, "floor_mhz", pfi_json_num(job.floor_mhz));
        pfi_json_set(jj, "extra_w", pfi_json_num(job.extra_w));
        pfi_json_set(root, "job", jj);
        for (size_t i = 0; i < ncaps; i++)
            json_array_append_new(arr, point_json(&pts[i], (int)gpus));
        pfi_json_set(root, "points", arr);
        pfi_json_print(stdout, root);
        json_decref(root);
        return;
    }
    printf("%s, %llu GPU%s\n", gpu->name, gpus, gpus == 1 ? "" : "s");
    printf("%7s %8s %8s %8s %12s %9s %12s %6s %6s %6s %6s %6s\n", "cap_w", "power_w", "sm_mhz",
           "mem_mhz", "tput/gpu", "power_kw", "tput_total", "sm", "tensor", "dram", "copy%",
           "util%");
    for (size_t i = 0; i < ncaps; i++) {
        const pfi_gpumodel_point *p = &pts[i];
        printf("%7.0f %8.1f %8.0f %8.0f %12.1f %9.3f %12.1f %6.3f %6.3f %6.3f %6.1f %6.1f\n",
               p->cap_w, p->power_w, p->sm_clock_mhz, p->mem_clock_mhz, p->tput,
               p->power_w * (double)gpus / 1000.0, p->tput * (double)gpus, p->sm_active,
               p->tensor_active, p->dram_active, p->mem_copy_util_pct, p->gpu_util_pct);
    }
}

int pfi_cmd_model(int argc, char **argv)
{
    const pfi_gpu_spec *gpu = pfi_gpumodel_h200();
    const char *job_arg = NULL, *fit_dir = NULL;
    pfi_cli_list cl = {0};
    unsigned long long gpus = 0;
    int json = 0;
    const pfi_cli_opt opts[] = {
        PFI_OPT("gpu", "NAME", set_gpu, &gpu, "unknown --gpu '%s'", "h200 (default) or h100"),
        PFI_OPT("job", "JOB", pfi_cli_set_str, &job_arg, NULL, "the job (see above)"),
        PFI_OPT("cap", "W[,W...]", pfi_cli_set_doubles, &cl, "bad --cap '%s' (want W[,W...])",
                "per-GPU power caps in W (default: the TDP)"),
        PFI_OPT_R("gpus", "N", pfi_cli_set_ull, &gpus, NULL,
                  "GPUs of the job, for the totals (1; a paper group: its own)", 1, 100000),
        PFI_OPT("fit-probe", "DIR", pfi_cli_set_str, &fit_dir, NULL,
                "fit the power constants to DIR/trace.csv and compare with each load"),
        PFI_OPT("json", NULL, pfi_cli_set_flag, &json, NULL, "print one JSON object"),
    };
    const pfi_cli_spec spec = {.cmd = "model",
                               .usage = "[--gpu h200|h100] --job JOB [--cap W[,W...]] [--json]",
                               .about = about,
                               .opts = opts,
                               .n_opts = PFI_CLI_N(opts)};
    int first, ec = pfi_cli_parse(&spec, argc, argv, &first);
    if (ec >= 0) return ec;
    double *caps = cl.v;
    size_t ncaps = cl.n;
    if (first != argc) {
        free(caps);
        return pfi_cli_usage_error("model", "unexpected argument '%s'", argv[first]);
    }
    if (fit_dir) {
        free(caps);
        if (job_arg) return pfi_cli_usage_error("model", "--fit-probe takes no --job");
        return run_fit(fit_dir, json);
    }
    if (!job_arg) {
        free(caps);
        return pfi_cli_usage_error("model", "--job is required");
    }
    pfi_job_model job;
    ec = resolve_job(job_arg, &job, &gpu, &gpus);
    if (ec != PFI_EXIT_OK) {
        free(caps);
        return ec;
    }
    if (!gpus) gpus = 1;
    if (!caps) {
        caps = malloc(sizeof *caps);
        if (!caps) return PFI_EXIT_DATA;
        caps[0] = gpu->tdp_w;
        ncaps = 1;
    }
    pfi_gpumodel_point *pts = calloc(ncaps, sizeof *pts);
    if (!pts) {
        free(caps);
        return PFI_EXIT_DATA;
    }
    for (size_t i = 0; i < ncaps; i++) {
        int rc = pfi_gpumodel_eval(gpu, &job, caps[i], &pts[i]);
        if (rc != PFI_OK) {
            pfi_error err = {0};
            if (rc == PFI_ERANGE)
                pfi_error_set(&err, rc, "", 0, "cap %g W is outside %s's limits [%g, %g] W",
                              caps[i], gpu->name, gpu->min_limit_w, gpu->max_limit_w);
            else
                pfi_error_set(&err, rc, "", 0,
                              "job parameters out of range (activities and "
                              "compute share in [0, 1], tput >= 0, spread "
                              "in [0, 0.2])");
            free(pts);
            free(caps);
            return pfi_cli_fail("model", &err);
        }
    }
    print_points(gpu, &job, pts, ncaps, gpus, json);
    free(pts);
    free(caps);
    return PFI_EXIT_OK;
}
