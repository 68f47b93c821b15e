/* The store's job rows, each job's basis, throughput reports and curve
 * points (see include/io/pfi/store.h; shared parts in store_int.h). */
#include "pfi/store.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "pfi/telemetry.h"
#include "store_int.h"

static void gpus_to_text(const pfi_store_job *j, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < j->n_gpus && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%u", i ? "," : "", j->gpus[i]);
}

static int gpus_from_text(const char *txt, pfi_store_job *j)
{
    j->n_gpus = 0;
    const char *p = txt;
    while (*p) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || j->n_gpus == PFI_STORE_MAX_JOB_GPUS) return PFI_EPARSE;
        j->gpus[j->n_gpus++] = (unsigned)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return PFI_EPARSE;
    }
    return PFI_OK;
}

int pfi_store_job_add(pfi_store *s, const pfi_store_job *job, pfi_error *err)
{
    if (s->readonly) return store_refuse_write(s, err);
    if (!(job->sla_floor >= 0 && job->sla_floor <= 1))
        return pfi_error_set(err, PFI_EINVAL, s->path, 0,
                             "job '%s': sla_floor %g is outside [0, 1]", job->id, job->sla_floor);
    if (job->exempt != 0 && job->exempt != 1)
        return pfi_error_set(err, PFI_EINVAL, s->path, 0, "job '%s': exempt must be 0 or 1",
                             job->id);
    char gpus[PFI_STORE_MAX_JOB_GPUS * 12];
    gpus_to_text(job, gpus, sizeof gpus);
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_JOB_ADD];
    sqlite3_bind_text(st, 1, job->id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, gpus, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, job->arch, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, job->task, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 5, job->registered_at);
    if (job->sla_floor > 0)
        sqlite3_bind_double(st, 6, job->sla_floor);
    else
        sqlite3_bind_null(st, 6); /* no floor */
    sqlite3_bind_int(st, 7, job->exempt);
    if (job->job_class[0])
        sqlite3_bind_text(st, 8, job->job_class, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 8);
    int rc = sqlite3_step(st);
    int out = PFI_OK;
    if (rc == SQLITE_CONSTRAINT)
        out = pfi_error_set(err, PFI_ESTATE, s->path, 0, "job '%s' is already running", job->id);
    else if (rc != SQLITE_DONE)
        out = store_db_error(s, err, "adding a job");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    pthread_mutex_unlock(&s->mu);
    return out;
}

int pfi_store_job_end(pfi_store *s, const char *id, double t, pfi_error *err)
{
    if (s->readonly) return store_refuse_write(s, err);
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_JOB_END];
    sqlite3_bind_double(st, 1, t);
    sqlite3_bind_text(st, 2, id, -1, SQLITE_TRANSIENT);
    int rc = store_step_done(s, ST_JOB_END, err);
    if (rc == PFI_OK && sqlite3_changes(s->db) == 0)
        rc = pfi_error_set(err, PFI_ENOTFOUND, s->path, 0, "no running job '%s'", id);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static int job_row(pfi_store *s, sqlite3_stmt *st, void *item, pfi_error *err)
{
    (void)err;
    pfi_store_job *j = item;
    char gpus[PFI_STORE_MAX_JOB_GPUS * 12];
    const char *why = NULL;
    if (store_text_col(st, 0, j->id, sizeof j->id, 0) != 0 || !j->id[0])
        why = "no usable id";
    else if (store_text_col(st, 1, gpus, sizeof gpus, 0) != 0 ||
             gpus_from_text(gpus, j) != PFI_OK || j->n_gpus == 0)
        why = "bad GPU list";
    else if (store_text_col(st, 2, j->arch, sizeof j->arch, 1) != 0 ||
             store_text_col(st, 3, j->task, sizeof j->task, 1) != 0)
        why = "bad arch or task";
    else if (isnan(j->registered_at = store_num_col(st, 4)))
        why = "bad registered_at";
    else if (sqlite3_column_type(st, 5) != SQLITE_NULL &&
             !((j->sla_floor = store_num_col(st, 5)) > 0 && j->sla_floor <= 1))
        why = "bad sla_floor";
    else if (sqlite3_column_type(st, 6) != SQLITE_INTEGER ||
             (j->exempt = sqlite3_column_int(st, 6)) < 0 || j->exempt > 1)
        why = "bad exempt";
    else if (store_text_col(st, 8, j->job_class, sizeof j->job_class, 1) != 0)
        why = "bad class";
    if (!why) {
        if (sqlite3_column_type(st, 5) == SQLITE_NULL) j->sla_floor = 0;
        /* ST_JOBS_ALL has ended_at; a running job's is NULL (0) */
        j->ended_at = sqlite3_column_double(st, 7); /* NULL (0) in ST_JOBS_RUNNING */
        return PFI_OK;
    }
    store_bad_row(s, "jobs", j->id[0] ? j->id : NULL, why);
    return PFI_EPARSE;
}

int pfi_store_jobs_running(pfi_store *s, pfi_store_job **out, size_t *n, pfi_error *err)
{
    return store_collect(s, ST_JOBS_RUNNING, NULL, sizeof **out, job_row, "reading jobs",
                         (void **)out, n, err);
}

int pfi_store_jobs(pfi_store *s, pfi_store_job **out, size_t *n, pfi_error *err)
{
    return store_collect(s, ST_JOBS_ALL, NULL, sizeof **out, job_row, "reading jobs", (void **)out,
                         n, err);
}

int pfi_store_job_basis_put(pfi_store *s, const char *id, double t, const double *tm,
                            pfi_error *err)
{
    if (s->readonly) return store_refuse_write(s, err);
    /* By field name, so that a change of the field list cannot misread it. */
    json_t *o = json_object();
    for (int f = 0; o && f < PFI_TM_NFIELDS; f++)
        if (isfinite(tm[f])) json_object_set_new(o, pfi_tm_field_name(f), json_real(tm[f]));
    char *txt = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(o);
    if (!txt) return pfi_error_set(err, PFI_ENOMEM, s->path, 0, "out of memory");
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_BASIS_PUT];
    sqlite3_bind_double(st, 1, t);
    sqlite3_bind_text(st, 2, txt, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, id, -1, SQLITE_TRANSIENT);
    int rc = store_step_done(s, ST_BASIS_PUT, err);
    if (rc == PFI_OK && sqlite3_changes(s->db) == 0)
        rc = pfi_error_set(err, PFI_ENOTFOUND, s->path, 0, "no running job '%s'", id);
    pthread_mutex_unlock(&s->mu);
    free(txt);
    return rc;
}

int pfi_store_job_basis_get(pfi_store *s, const char *id, double *t, double *tm, pfi_error *err)
{
    for (int f = 0; f < PFI_TM_NFIELDS; f++)
        tm[f] = NAN;
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_BASIS_GET];
    sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
    int step = sqlite3_step(st), rc = PFI_ENODATA;
    json_t *o = NULL;
    if (step == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_FLOAT &&
        sqlite3_column_text(st, 1)) {
        *t = sqlite3_column_double(st, 0);
        o = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
    } else if (step != SQLITE_ROW && step != SQLITE_DONE) {
        rc = store_db_error(s, err, "reading a job's basis");
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    pthread_mutex_unlock(&s->mu);
    if (json_is_object(o) && isfinite(*t)) {
        rc = PFI_OK;
        for (int f = 0; f < PFI_TM_NFIELDS; f++) {
            json_t *v = json_object_get(o, pfi_tm_field_name(f));
            if (json_is_number(v)) tm[f] = json_number_value(v);
        }
    }
    json_decref(o);
    if (rc == PFI_ENODATA)
        pfi_error_set(err, PFI_ENODATA, s->path, 0, "no basis stored for job '%s'", id);
    return rc;
}

int pfi_store_add_throughput(pfi_store *s, const char *job, double t, double tokens_per_s,
                             pfi_error *err)
{
    if (s->readonly) return store_refuse_write(s, err);
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_TPUT_ADD];
    sqlite3_bind_text(st, 1, job, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 2, t);
    sqlite3_bind_double(st, 3, tokens_per_s);
    int rc = store_step_done(s, ST_TPUT_ADD, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_store_throughput_count(pfi_store *s, const char *job, long long *n, pfi_error *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_TPUT_COUNT];
    sqlite3_bind_text(st, 1, job, -1, SQLITE_TRANSIENT);
    int rc = PFI_OK;
    if (sqlite3_step(st) == SQLITE_ROW)
        *n = sqlite3_column_int64(st, 0);
    else
        rc = store_db_error(s, err, "counting throughput reports");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_store_throughput_since(pfi_store *s, const char *job, double t0,
                               int (*fn)(double t, double tokens_per_s, void *ctx), void *ctx,
                               pfi_error *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_TPUT_SINCE];
    sqlite3_bind_text(st, 1, job, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 2, t0);
    int step, rc = PFI_OK;
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        if (fn(sqlite3_column_double(st, 0), sqlite3_column_double(st, 1), ctx)) break;
    if (step != SQLITE_ROW && step != SQLITE_DONE) rc = store_db_error(s, err, "reading reports");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_store_point_put(pfi_store *s, const pfi_store_point *p, pfi_error *err)
{
    if (s->readonly) return store_refuse_write(s, err);
    size_t len = strnlen(p->job, sizeof p->job);
    if (len == 0 || len > PFI_STORE_JOB_ID_MAX)
        return pfi_error_set(err, PFI_EINVAL, s->path, 0,
                             "curve point: job id empty or longer than %d bytes",
                             PFI_STORE_JOB_ID_MAX);
    const double v[] = {p->cap_w, p->power_w, p->tokens_per_s, p->tokens_sd, p->t_first, p->t_last};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]))
            return pfi_error_set(err, PFI_EINVAL, s->path, 0,
                                 "curve point of job '%s': a value is not finite", p->job);
    if (p->n < 0)
        return pfi_error_set(err, PFI_EINVAL, s->path, 0, "curve point of job '%s': n < 0", p->job);
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_POINT_PUT];
    sqlite3_bind_text(st, 1, p->job, (int)len, SQLITE_TRANSIENT);
    for (size_t i = 0; i < 4; i++)
        sqlite3_bind_double(st, (int)i + 2, v[i]);
    sqlite3_bind_int64(st, 6, p->n);
    sqlite3_bind_double(st, 7, p->t_first);
    sqlite3_bind_double(st, 8, p->t_last);
    int rc = store_step_done(s, ST_POINT_PUT, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static int point_row(pfi_store *s, sqlite3_stmt *st, void *item, pfi_error *err)
{
    (void)s;
    (void)err;
    pfi_store_point *p = item;
    snprintf(p->job, sizeof p->job, "%s", (const char *)sqlite3_column_text(st, 0));
    p->cap_w = sqlite3_column_double(st, 1);
    p->power_w = sqlite3_column_double(st, 2);
    p->tokens_per_s = sqlite3_column_double(st, 3);
    p->tokens_sd = sqlite3_column_double(st, 4);
    p->n = (long)sqlite3_column_int64(st, 5);
    p->t_first = sqlite3_column_double(st, 6);
    p->t_last = sqlite3_column_double(st, 7);
    return PFI_OK;
}

int pfi_store_points(pfi_store *s, const char *job, pfi_store_point **out, size_t *n,
                     pfi_error *err)
{
    return store_collect(s, job ? ST_POINTS_JOB : ST_POINTS_ALL, job, sizeof **out, point_row,
                         "reading curve points", (void **)out, n, err);
}
