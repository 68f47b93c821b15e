/* pfi export: the jobs pfid has seen, from its store, as the analysis's
 * inputs: each job's steady-state points (job_points) as a sweeps.csv group
 * and its uncapped telemetry (the samples of its GPUs while it ran at its
 * largest cap, top 10% by power) as a telemetry.csv row. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "pfi/fileio.h"
#include "pfi/json.h"
#include "pfi/store.h"
#include "pfi/sweeps_csv.h"
#include "pfi/telemetry_csv.h"
#include "pfi/tm_aggregate.h"

static const char *about =
    "Writes DIR/sweeps.csv and DIR/telemetry.csv (each all or nothing) from a pfid\n"
    "store: every job with two or more steady-state points is a group, one run per\n"
    "point; its telemetry row is the top 10% by power of its GPUs' samples at its\n"
    "largest cap. Jobs left out are listed on standard error.\n";

typedef struct {
    const char *db, *out, *job, *platform, *model, *arch, *task;
    double since;
    int json;
} opts_t;

/* One exported job. */
typedef struct {
    const pfi_store_job *job;
    const pfi_store_point *pts; /* into the store's array */
    size_t n_pts;
    const char *note;
    pfi_tm_row tm;
    int has_tm;
} exp_job;

typedef struct {
    const exp_job *jobs;
    size_t n;
    const opts_t *o;
} out_ctx;

static const char *arch_of(const exp_job *j, const opts_t *o)
{
    return j->job->arch[0] ? j->job->arch : o->arch;
}
static const char *task_of(const exp_job *j, const opts_t *o)
{
    return j->job->task[0] ? j->job->task : o->task;
}

static int put_sweeps(FILE *f, void *ctx)
{
    const out_ctx *c = ctx;
    pfi_sweeps_write_header(f);
    for (size_t i = 0; i < c->n; i++) {
        const exp_job *j = &c->jobs[i];
        if (j->note) continue;
        pfi_group_meta m = {c->o->platform,   c->o->model, arch_of(j, c->o),
                            task_of(j, c->o), "",          (int)j->job->n_gpus};
        for (size_t k = 0; k < j->n_pts; k++) {
            const pfi_store_point *p = &j->pts[k];
            pfi_run r = {.cap_w = p->cap_w,
                         .power_w = p->power_w,
                         .tput = p->tokens_per_s,
                         .tput_sem = p->n > 0 ? p->tokens_sd / sqrt((double)p->n) : 0};
            pfi_sweeps_write_row(f, j->job->id, &m, &r);
        }
    }
    return ferror(f) ? PFI_EIO : PFI_OK;
}

static int put_telemetry(FILE *f, void *ctx)
{
    const out_ctx *c = ctx;
    pfi_telemetry t = {calloc(c->n ? c->n : 1, sizeof *t.rows), 0};
    if (!t.rows) return PFI_ENOMEM;
    for (size_t i = 0; i < c->n; i++)
        if (!c->jobs[i].note && c->jobs[i].has_tm) {
            t.rows[t.n] = c->jobs[i].tm;
            t.rows[t.n++].group = (char *)c->jobs[i].job->id; /* borrowed */
        }
    int rc = pfi_telemetry_write(f, &t);
    free(t.rows);
    return rc;
}

/* Samples of one job's GPUs from t_first to t_last, one row per time. */
typedef struct {
    const pfi_store_job *job;
    double t_last, cur_t;
    const pfi_gpu_sample *by_slot[PFI_STORE_MAX_JOB_GPUS];
    pfi_gpu_sample held[PFI_STORE_MAX_JOB_GPUS];
    pfi_tm_row *rows;
    size_t n, cap;
    int oom;
} walk_ctx;

static void flush(walk_ctx *w)
{
    int any = 0;
    for (size_t k = 0; k < w->job->n_gpus; k++)
        any |= w->by_slot[k] != NULL;
    if (!any) return;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        pfi_tm_row *r = realloc(w->rows, cap * sizeof *r);
        if (!r) {
            w->oom = 1;
            return;
        }
        w->rows = r;
        w->cap = cap;
    }
    pfi_tm_from_gpu_samples(w->by_slot, w->job->n_gpus, &w->rows[w->n++], NULL);
    memset(w->by_slot, 0, sizeof w->by_slot);
}

static int on_sample(double t, unsigned gpu, const pfi_gpu_sample *x, void *ctx)
{
    walk_ctx *w = ctx;
    if (t != w->cur_t) {
        flush(w);
        w->cur_t = t;
    }
    if (t > w->t_last || w->oom) return 1;
    for (size_t k = 0; k < w->job->n_gpus; k++)
        if (w->job->gpus[k] == gpu) {
            w->held[k] = *x;
            w->by_slot[k] = &w->held[k];
        }
    return 0;
}

static int job_telemetry(pfi_store *s, exp_job *j, pfi_error *err)
{
    const pfi_store_point *top = &j->pts[0];
    for (size_t k = 1; k < j->n_pts; k++)
        if (j->pts[k].cap_w > top->cap_w) top = &j->pts[k];
    walk_ctx w = {.job = j->job, .t_last = top->t_last, .cur_t = NAN};
    int rc = pfi_store_samples_since(s, top->t_first, on_sample, &w, err);
    if (rc == PFI_OK && !w.oom && !(w.cur_t > w.t_last)) flush(&w);
    if (rc == PFI_OK && w.oom) rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    if (rc == PFI_OK && w.n > 0)
        j->has_tm = pfi_tm_aggregate(w.rows, w.n, 0.1, &j->tm, NULL) == PFI_OK;
    free(w.rows);
    return rc;
}

static int set_arch(const pfi_cli_opt *o, const char *arg)
{
    if (strcmp(arg, "dense") && strcmp(arg, "moe")) return -1;
    *(const char **)o->dst = arg;
    return 0;
}

static int set_task(const pfi_cli_opt *o, const char *arg)
{
    if (strcmp(arg, "pt") && strcmp(arg, "ft")) return -1;
    *(const char **)o->dst = arg;
    return 0;
}

/* -1: go on; else the exit status. */
static int parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){.platform = "", .model = "", .arch = "", .task = "", .since = -INFINITY};
    const pfi_cli_opt opts[] = {
        PFI_OPT("db", "FILE", pfi_cli_set_str, &o->db, NULL,
                "pfid's SQLite store (must exist; opened read-only)"),
        PFI_OPT("out", "DIR", pfi_cli_set_str, &o->out, NULL,
                "where sweeps.csv and telemetry.csv go"),
        PFI_OPT("job", "ID", pfi_cli_set_str, &o->job, NULL, "only this job"),
        PFI_OPT("since", "T", pfi_cli_set_num, &o->since, NULL,
                "only points seen at or after T (Unix seconds)"),
        PFI_OPT("platform", "P", pfi_cli_set_str, &o->platform, NULL,
                "sweeps.csv platform (default '')"),
        PFI_OPT("model", "M", pfi_cli_set_str, &o->model, NULL, "sweeps.csv model (default '')"),
        PFI_OPT("arch", "A", set_arch, &o->arch, "--arch must be dense or moe",
                "arch of jobs registered without one"),
        PFI_OPT("task", "T", set_task, &o->task, "--task must be pt or ft",
                "task of jobs registered without one"),
        PFI_OPT("json", NULL, pfi_cli_set_flag, &o->json, NULL, "print one JSON object"),
    };
    const pfi_cli_spec spec = {.cmd = "export",
                               .usage = "--db PFID.db --out DIR [OPTIONS]",
                               .about = about,
                               .opts = opts,
                               .n_opts = PFI_CLI_N(opts)};
    int first, ec = pfi_cli_parse(&spec, argc, argv, &first);
    if (ec >= 0) return ec;
    if (first != argc)
        return pfi_cli_usage_error("export", "unexpected argument '%s'", argv[first]);
    if (!o->db) return pfi_cli_usage_error("export", "--db is required");
    if (!o->out) return pfi_cli_usage_error("export", "--out is required");
    return -1;
}

/* The jobs to export, each with its points and (when it can be) its telemetry. */
static int gather(pfi_store *s, const opts_t *op, pfi_store_job *jobs, size_t nj,
                  pfi_store_point *pts, size_t np, exp_job *ex, size_t *ne_out)
{
    const opts_t o = *op;
    pfi_error err;
    size_t ne = 0;
    /* Points come by job then cap; keep those seen since --since in place. */
    size_t kept = 0;
    for (size_t i = 0; i < np; i++)
        if (pts[i].t_last >= o.since) pts[kept++] = pts[i];
    np = kept;
    for (size_t i = 0; i < nj; i++) {
        if (o.job && strcmp(jobs[i].id, o.job) != 0) continue;
        exp_job *j = &ex[ne];
        *j = (exp_job){.job = &jobs[i]};
        for (size_t k = 0; k < np; k++)
            if (strcmp(pts[k].job, jobs[i].id) == 0) {
                if (!j->pts) j->pts = &pts[k];
                j->n_pts++;
            }
        /* the same id registered twice (a rerun) shares its points: export once */
        int dup = 0;
        for (size_t q = 0; q < ne; q++)
            dup |= strcmp(ex[q].job->id, jobs[i].id) == 0;
        if (dup) continue;
        ne++;
        if (j->n_pts < 2)
            j->note = "fewer than two steady-state points";
        else if (!arch_of(j, &o)[0] || !task_of(j, &o)[0])
            j->note = "registered without arch/task (pass --arch and --task)";
        else if (job_telemetry(s, j, &err) != PFI_OK)
            return pfi_cli_fail("export", &err);
        if (j->note) fprintf(stderr, "pfi export: %s left out: %s\n", j->job->id, j->note);
    }
    *ne_out = ne;
    return PFI_EXIT_OK;
}

static int print(const opts_t *o, const exp_job *ex, size_t ne)
{
    int ec = PFI_EXIT_OK;
    if (o->json) {
        json_t *root = json_object(), *arr = json_array();
        pfi_json_set(root, "out", json_string(o->out));
        for (size_t i = 0; i < ne; i++) {
            json_t *j = json_object();
            pfi_json_set(j, "job", json_string(ex[i].job->id));
            pfi_json_set(j, "points", json_integer((json_int_t)ex[i].n_pts));
            pfi_json_set(j, "exported", json_boolean(!ex[i].note));
            pfi_json_set(j, "note", ex[i].note ? json_string(ex[i].note) : json_null());
            json_array_append_new(arr, j);
        }
        pfi_json_set(root, "jobs", arr);
        if (pfi_json_print(stdout, root) != 0) ec = PFI_EXIT_DATA;
        json_decref(root);
    } else {
        size_t n_ok = 0;
        for (size_t i = 0; i < ne; i++)
            n_ok += !ex[i].note;
        printf("pfi export: %zu of %zu jobs to %s/sweeps.csv and %s/telemetry.csv\n", n_ok, ne,
               o->out, o->out);
    }
    return ec;
}

int pfi_cmd_export(int argc, char **argv)
{
    opts_t o;
    int ec = parse(argc, argv, &o);
    if (ec >= 0) return ec;
    ec = PFI_EXIT_OK;
    pfi_error err;
    pfi_store *s = NULL;
    pfi_store_job *jobs = NULL;
    pfi_store_point *pts = NULL;
    exp_job *ex = NULL;
    size_t nj = 0, np = 0, ne = 0;
    /* Read-only: never creates a missing store (an empty export would hide a
     * typo), never migrates one, and reads beside a running pfid; jobs,
     * points and samples from one moment (a snapshot) */
    if (pfi_store_open_readonly(o.db, &s, &err) != PFI_OK ||
        pfi_store_snapshot_begin(s, &err) != PFI_OK ||
        pfi_store_jobs(s, &jobs, &nj, &err) != PFI_OK ||
        pfi_store_points(s, o.job, &pts, &np, &err) != PFI_OK) {
        ec = pfi_cli_fail("export", &err);
        goto done;
    }
    ex = calloc(nj ? nj : 1, sizeof *ex);
    if (!ex) {
        fprintf(stderr, "pfi export: out of memory\n");
        ec = PFI_EXIT_DATA;
        goto done;
    }
    ec = gather(s, &o, jobs, nj, pts, np, ex, &ne);
    if (ec != PFI_EXIT_OK) goto done;
    if (o.job && ne == 0) {
        fprintf(stderr, "pfi export: no job '%s' in %s\n", o.job, o.db);
        ec = PFI_EXIT_DATA;
        goto done;
    }
    /* only now: a store that cannot be read or a wrong --job leaves no folder behind */
    if (mkdir(o.out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "pfi export: %s: %s\n", o.out, strerror(errno));
        ec = PFI_EXIT_DATA;
        goto done;
    }
    out_ctx c = {ex, ne, &o};
    char path[4096];
    snprintf(path, sizeof path, "%s/sweeps.csv", o.out);
    if (pfi_file_write_atomic(path, put_sweeps, &c, &err) != PFI_OK) {
        ec = pfi_cli_fail("export", &err);
        goto done;
    }
    snprintf(path, sizeof path, "%s/telemetry.csv", o.out);
    if (pfi_file_write_atomic(path, put_telemetry, &c, &err) != PFI_OK) {
        ec = pfi_cli_fail("export", &err);
        goto done;
    }
    ec = print(&o, ex, ne);
done:
    free(ex);
    free(pts);
    free(jobs);
    pfi_store_close(s);
    return ec;
}
