/* pfi sweep's results and plan (see sweep_report.h). */
#include "sweep_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "pfi/ci.h"
#include "pfi/index.h"
#include "pfi/json.h"
#include "trace_cli.h"

void sweep_fmt_time(double s, char *buf, size_t len)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

int sweep_report(const sweep_opts *o, const sweep_state *st, int *complete)
{
    pfi_cli_measured m[SWEEP_MAX_CAPS];
    pfi_trace_run stub[SWEEP_MAX_CAPS];
    char names[SWEEP_MAX_CAPS][32];
    size_t n = 0;
    *complete = 1;
    for (size_t i = 0; i < o->n_caps; i++) {
        const sweep_result *r = sweep_state_find((sweep_state *)st, o->caps[i]);
        if (!r || !r->ok) *complete = 0;
        if (!r) continue;
        snprintf(names[n], sizeof names[n], "cap-%.0f", r->cap_w);
        stub[n] = (pfi_trace_run){.name = names[n], .gpus = r->gpus, .n = r->samples};
        m[n] = (pfi_cli_measured){
            .run = &stub[n], .ok = r->ok, .cap_w = r->cap_w, .why = r->ok ? NULL : r->why};
        pfi_trace_summary *s = &m[n].sum;
        memcpy(s->start, r->start, sizeof s->start);
        s->samples = r->samples;
        s->training_samples = r->training_samples;
        s->power_w = r->power_w;
        s->power_sem_w = r->power_sem_w;
        s->tput = r->tput;
        s->tput_sem = r->tput_sem;
        s->telemetry = r->telemetry;
        n++;
    }
    pfi_error err;
    if (pfi_cli_write_outputs(o->out, &o->meta, m, n, &err) != PFI_OK)
        return pfi_cli_fail("sweep", &err);
    /* PFI with its CI over the runs that worked */
    pfi_sweeps *sw = pfi_sweeps_create();
    pfi_group_meta gm = {o->meta.platform, o->meta.model, o->meta.arch, o->meta.task, "",
                         (int)o->n_gpus};
    int have = sw != NULL;
    for (size_t i = 0; have && i < n; i++) {
        if (!m[i].ok) continue;
        pfi_run r = {.cap_w = m[i].cap_w,
                     .power_w = m[i].sum.power_w,
                     .tput = m[i].sum.tput,
                     .power_sem_w = m[i].sum.power_sem_w,
                     .tput_sem = m[i].sum.tput_sem};
        have = pfi_sweeps_add_run(sw, o->meta.group, &gm, &r, NULL, &err) == PFI_OK;
    }
    char why[600] = "fewer than two measured caps";
    if (have && pfi_sweeps_finalize(sw, 0, NULL, &err) != PFI_OK) {
        pfi_error_format(&err, why, sizeof why);
        have = 0;
    }
    pfi_index_result ir = {0};
    pfi_ci ci = {0};
    if (have) {
        const pfi_group *grp = pfi_sweeps_group(sw, 0);
        pfi_index_group(grp, PFI_METHOD_RATIO, NULL, &ir);
        pfi_ci_opts co = {.draws = 10000, .seed = 1, .level = 0.95, .method = PFI_METHOD_RATIO};
        pfi_ci_group(grp, &co, &ci);
    }
    if (o->json) {
        json_t *root = json_object(), *runs = json_array();
        pfi_json_set(root, "group", json_string(o->meta.group));
        pfi_json_set(root, "out", json_string(o->out));
        for (size_t i = 0; i < n; i++)
            json_array_append_new(runs, pfi_cli_measured_json(&m[i]));
        pfi_json_set(root, "runs", runs);
        pfi_json_set(root, "pfi", ir.has_pfi ? pfi_json_num(ir.pfi) : json_null());
        json_t *c = json_null();
        if (ci.has) {
            c = json_array();
            json_array_append_new(c, pfi_json_num(ci.low));
            json_array_append_new(c, pfi_json_num(ci.high));
        }
        pfi_json_set(root, "ci95", c);
        pfi_json_print(stdout, root);
        json_decref(root);
    } else {
        printf("%8s %10s %14s  %s\n", "cap_w", "power_w", "tokens/s", "run");
        for (size_t i = 0; i < n; i++)
            if (m[i].ok)
                printf("%8.0f %10.1f %14.1f  ok\n", m[i].cap_w, m[i].sum.power_w, m[i].sum.tput);
            else
                printf("%8.0f %10s %14s  failed: %s\n", m[i].cap_w, "-", "-", m[i].why);
        if (ir.has_pfi && ci.has)
            printf("PFI %.4f (95%% CI %.4f to %.4f) over %zu capped runs\n", ir.pfi, ci.low,
                   ci.high, ir.n_terms);
        else if (ir.has_pfi)
            printf("PFI %.4f over %zu capped runs (no CI)\n", ir.pfi, ir.n_terms);
        else
            printf("PFI undefined: %s\n",
                   have ? "no capped run below the uncapped run's throughput" : why);
    }
    pfi_sweeps_destroy(sw);
    return PFI_EXIT_OK;
}

/* Runs still to do and their total time: caps x duration + (caps - 1) x
 * cooldown (no cooldown after the last); kept[i] marks a cap --resume keeps. */
static double plan(const sweep_opts *o, const sweep_state *st, int *kept, size_t *todo)
{
    *todo = 0;
    for (size_t i = 0; i < o->n_caps; i++) {
        const sweep_result *r = sweep_state_find((sweep_state *)st, o->caps[i]);
        kept[i] = o->resume && r && r->ok;
        *todo += !kept[i];
    }
    return (double)*todo * o->duration + (*todo > 1 ? (double)(*todo - 1) * o->cooldown : 0);
}

static int dry_run_json(const sweep_opts *o, const sweep_state *st, int pending)
{
    int kept[SWEEP_MAX_CAPS];
    size_t todo;
    double total = plan(o, st, kept, &todo);
    json_t *root = json_object(), *caps = json_array(), *gpus = json_array();
    pfi_json_set(root, "group", json_string(o->meta.group));
    pfi_json_set(root, "out", json_string(o->out));
    pfi_json_set(root, "backend", o->via_pfid ? json_null() : json_string(o->backend));
    pfi_json_set(root, "via_pfid", o->via_pfid ? json_string(o->via_pfid) : json_null());
    pfi_json_set(root, "interval_s", pfi_json_num(o->interval));
    pfi_json_set(root, "duration_s", pfi_json_num(o->duration));
    pfi_json_set(root, "cooldown_s", pfi_json_num(o->cooldown));
    pfi_json_set(root, "release_timeout_s", pfi_json_num(o->release_timeout));
    for (size_t i = 0; i < o->n_caps; i++) {
        json_t *c = json_object();
        pfi_json_set(c, "cap_w", pfi_json_num(o->caps[i]));
        pfi_json_set(c, "kept", json_boolean(kept[i]));
        json_array_append_new(caps, c);
    }
    pfi_json_set(root, "caps", caps);
    pfi_json_set(root, "runs", json_integer((json_int_t)todo));
    pfi_json_set(root, "total_s", pfi_json_num(total));
    for (size_t k = 0; k < st->n_gpus; k++) {
        json_t *g = json_object();
        pfi_json_set(g, "gpu", json_integer(st->gpus[k]));
        pfi_json_set(g, "limit_in_force_w", pfi_json_num(st->prior_w[k]));
        json_array_append_new(gpus, g);
    }
    pfi_json_set(root, "gpus", gpus);
    pfi_json_set(root, "unfinished_sweep", json_boolean(pending));
    int rc = pfi_json_print(stdout, root) == 0 ? PFI_EXIT_OK : PFI_EXIT_DATA;
    json_decref(root);
    return rc;
}

int sweep_dry_run(const sweep_opts *o, const sweep_state *st, int pending)
{
    if (o->json) return dry_run_json(o, st, pending);
    int kept[SWEEP_MAX_CAPS];
    size_t todo;
    double total = plan(o, st, kept, &todo);
    printf("pfi sweep plan: %zu GPU%s, every %g s, %s\n", o->n_gpus, o->n_gpus == 1 ? "" : "s",
           o->interval, o->via_pfid ? o->via_pfid : o->backend);
    char d[32], t[32];
    sweep_fmt_time(o->duration, d, sizeof d);
    for (size_t i = 0; i < o->n_caps; i++)
        printf("  cap %4.0f W  %s%s\n", o->caps[i], kept[i] ? "measured earlier, kept" : d,
               kept[i] ? "" : " + cooldown");
    sweep_fmt_time(total, t, sizeof t);
    printf("total: %s (%zu runs; plus up to %g s per run for GPU memory release)\n", t, todo,
           o->release_timeout);
    for (size_t k = 0; k < st->n_gpus; k++)
        printf("  GPU %u: limit in force %.0f W, restored at the end\n", st->gpus[k],
               st->prior_w[k]);
    if (pending)
        printf("note: an earlier sweep in %s did not finish: the next run restores its GPUs "
               "first (the limits above may be its caps)\n",
               o->out);
    return PFI_EXIT_OK;
}
