/* Targets as JSON and CSV (include/control/pfi/target_io.h). */
#include "pfi/target_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/agent_api.h"
#include "pfi/csv.h"
#include "pfi/ctl_time.h"
#include "pfi/json.h"

int pfi_target_id_valid(const char *id)
{
    /* pfid's job ids have the same alphabet and length (safe in a URL path
     * and a label): one rule for both. */
    return pfi_api_job_id_valid(id);
}

int pfi_target_domain_valid(const char *d)
{
    /* pfi/topology.h's names: 1-64 of [A-Za-z0-9._:@-] */
    size_t n = strlen(d);
    if (n == 0 || n > PFI_TARGET_DOMAIN_MAX) return 0;
    for (; *d; d++)
        if (!(('a' <= *d && *d <= 'z') || ('A' <= *d && *d <= 'Z') || ('0' <= *d && *d <= '9') ||
              strchr("._:@-", *d)))
            return 0;
    return 1;
}

static int number_key(json_t *root, const char *key, double *out, int *have, pfi_error *err)
{
    json_t *v = json_object_get(root, key);
    *have = v != NULL;
    if (!v) return PFI_OK;
    if (!json_is_number(v))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"%s\" must be a number", key);
    *out = json_number_value(v);
    if (!isfinite(*out))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"%s\" must be finite", key);
    return PFI_OK;
}

static int parse_obj(json_t *root, pfi_target *out, int *has_id, pfi_error *err)
{
    memset(out, 0, sizeof *out);
    out->source = PFI_TARGET_API;
    out->priority = PFI_TARGET_NO_PRIORITY;
    *has_id = 0;
    json_t *id = json_object_get(root, "id");
    if (id) {
        if (!json_is_string(id) || strlen(json_string_value(id)) != json_string_length(id) ||
            !pfi_target_id_valid(json_string_value(id)))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "\"id\" must be 1-128 characters of A-Z a-z 0-9 . _ : @ + -");
        snprintf(out->id, sizeof out->id, "%s", json_string_value(id));
        *has_id = 1;
    }
    json_t *dom = json_object_get(root, "domain");
    if (dom && !json_is_null(dom)) {
        if (!json_is_string(dom) || strlen(json_string_value(dom)) != json_string_length(dom) ||
            !pfi_target_domain_valid(json_string_value(dom)))
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "\"domain\" must be a topology domain's name: 1-64 characters "
                                 "of A-Z a-z 0-9 . _ : @ -");
        snprintf(out->domain, sizeof out->domain, "%s", json_string_value(dom));
    }
    double site = 0, gpu = 0, dur = 0, ramp = 0;
    int hs, hg, hd, hr, rc;
    if ((rc = number_key(root, "site_power_w", &site, &hs, err)) ||
        (rc = number_key(root, "gpu_power_w", &gpu, &hg, err)) ||
        (rc = number_key(root, "duration_s", &dur, &hd, err)) ||
        (rc = number_key(root, "ramp_w_per_s", &ramp, &hr, err)))
        return rc;
    if (hs == hg)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "give exactly one of \"site_power_w\" and \"gpu_power_w\"");
    out->kind = hs ? PFI_TARGET_SITE : PFI_TARGET_GPU;
    out->limit_w = hs ? site : gpu;
    if (!(out->limit_w >= 0 && out->limit_w <= PFI_TARGET_MAX_W))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "the power must be in [0, 1e12] W");
    if (!hd || !(dur > 0))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"duration_s\" must be a number > 0");
    if (dur > PFI_TARGET_MAX_DURATION_S)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "\"duration_s\" %.6g is over 31 days (%.0f s): refused", dur,
                             PFI_TARGET_MAX_DURATION_S);
    if (hr && !(ramp >= 0))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"ramp_w_per_s\" must be >= 0");
    out->ramp_w_per_s = ramp;
    json_t *st = json_object_get(root, "start");
    if (!st) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "missing \"start\"");
    if (json_is_number(st)) {
        out->start = json_number_value(st);
        if (!isfinite(out->start) || fabs(out->start) > 1e11)
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"start\" out of range");
    } else if (json_is_string(st)) {
        unsigned fl = 0;
        pfi_error e2;
        pfi_error_clear(&e2);
        if (pfi_time_parse(json_string_value(st), NAN, &out->start, &fl, &e2) != PFI_OK)
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"start\": %s", e2.msg);
        if (fl & PFI_TIME_NOW)
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"start\": year 1 is not a start");
    } else {
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "\"start\" must be an RFC 3339 string or Unix seconds");
    }
    out->end = out->start + dur;
    if (!(out->end > out->start))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "\"duration_s\" too small for the start");
    return PFI_OK;
}

int pfi_target_parse_json(const char *body, size_t len, pfi_target *out, int *has_id,
                          pfi_error *err)
{
    static const char *const allowed[] = {"id",         "site_power_w", "gpu_power_w", "start",
                                          "duration_s", "ramp_w_per_s", "domain",      NULL};
    json_t *root;
    int rc = pfi_json_load_strict(body, len, PFI_TARGET_MAX_BODY, allowed, &root, err);
    if (rc != PFI_OK) return rc;
    rc = parse_obj(root, out, has_id, err);
    json_decref(root);
    return rc;
}

json_t *pfi_target_to_json(const pfi_target *t)
{
    json_t *o = json_object();
    pfi_json_set(o, "id", json_string(t->id));
    pfi_json_set(o, "source", json_string(pfi_target_source_name(t->source)));
    pfi_json_set(o, "kind", json_string(t->kind == PFI_TARGET_SITE ? "site" : "gpu"));
    pfi_json_set(o, "limit_w", pfi_json_num(t->limit_w));
    pfi_json_set(o, "start", pfi_json_num(t->start));
    pfi_json_set(o, "end", pfi_json_num(t->end));
    pfi_json_set(o, "duration_s", pfi_json_num(t->end - t->start));
    pfi_json_set(o, "ramp_w_per_s", pfi_json_num(t->ramp_w_per_s));
    pfi_json_set(o, "priority",
                 t->priority == PFI_TARGET_NO_PRIORITY ? json_null()
                                                       : json_integer((json_int_t)t->priority));
    pfi_json_set(o, "default", json_boolean(t->is_default));
    pfi_json_set(o, "domain", t->domain[0] ? json_string(t->domain) : json_null());
    return o;
}

const char *pfi_target_state(const pfi_target *t, double now)
{
    if (now < t->start) return "scheduled";
    return now < t->end ? "active" : "ended";
}

/* A field as an RFC 3339 time or Unix seconds. */
static int csv_time(const pfi_csv *c, size_t row, size_t col, double *out, pfi_error *err)
{
    const char *f = pfi_csv_field(c, row, col);
    char *end;
    double v = strtod(f, &end);
    if (*f && !*end && isfinite(v)) {
        *out = v;
        return PFI_OK;
    }
    unsigned fl = 0;
    pfi_error e2;
    pfi_error_clear(&e2);
    if (pfi_time_parse(f, NAN, out, &fl, &e2) != PFI_OK || (fl & PFI_TIME_NOW))
        return pfi_error_set(err, PFI_EINVAL, pfi_csv_name(c), pfi_csv_line(c, row), "start: %s",
                             e2.msg[0] ? e2.msg : "year 1 is not a start");
    return PFI_OK;
}

int pfi_schedule_read(const char *path, pfi_target **out, size_t *n, pfi_error *err)
{
    *out = NULL;
    *n = 0;
    pfi_csv *c = NULL;
    static const char *const need[] = {"start", "duration_s", NULL};
    int rc = pfi_csv_read_file(path, &c, err);
    if (rc == PFI_OK) rc = pfi_csv_require(c, need, err);
    if (rc != PFI_OK) goto done;
    int cs = pfi_csv_col(c, "site_power_w"), cg = pfi_csv_col(c, "gpu_power_w");
    int ci = pfi_csv_col(c, "id"), cr = pfi_csv_col(c, "ramp_w_per_s");
    int cstart = pfi_csv_col(c, "start"), cdur = pfi_csv_col(c, "duration_s");
    int cd = pfi_csv_col(c, "domain");
    if (cs < 0 && cg < 0) {
        rc = pfi_error_set(err, PFI_EINVAL, path, 1, "needs a site_power_w or gpu_power_w column");
        goto done;
    }
    size_t rows = pfi_csv_rows(c);
    pfi_target *ts = calloc(rows ? rows : 1, sizeof *ts);
    if (!ts) {
        rc = pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
        goto done;
    }
    for (size_t r = 0; r < rows && rc == PFI_OK; r++) {
        pfi_target *t = &ts[r];
        long line = pfi_csv_line(c, r);
        t->source = PFI_TARGET_SCHEDULE;
        t->priority = PFI_TARGET_NO_PRIORITY;
        int hs = cs >= 0 && *pfi_csv_field(c, r, (size_t)cs);
        int hg = cg >= 0 && *pfi_csv_field(c, r, (size_t)cg);
        if (hs == hg) {
            rc = pfi_error_set(err, PFI_EINVAL, path, line,
                               "set exactly one of site_power_w and gpu_power_w");
            break;
        }
        double dur = 0;
        t->kind = hs ? PFI_TARGET_SITE : PFI_TARGET_GPU;
        if ((rc = pfi_csv_number(c, r, (size_t)(hs ? cs : cg), 0, 0, &t->limit_w, err)) ||
            (rc = pfi_csv_number(c, r, (size_t)cdur, 0, 0, &dur, err)) ||
            (rc = csv_time(c, r, (size_t)cstart, &t->start, err)))
            break;
        if (cr >= 0 && (rc = pfi_csv_number(c, r, (size_t)cr, 1, 0, &t->ramp_w_per_s, err))) break;
        if (ci >= 0 && *pfi_csv_field(c, r, (size_t)ci)) {
            if (!pfi_target_id_valid(pfi_csv_field(c, r, (size_t)ci))) {
                rc = pfi_error_set(err, PFI_EINVAL, path, line,
                                   "id must be 1-128 characters of A-Z a-z 0-9 . _ : @ + -");
                break;
            }
            snprintf(t->id, sizeof t->id, "%s", pfi_csv_field(c, r, (size_t)ci));
        } else {
            snprintf(t->id, sizeof t->id, "line-%ld", line);
        }
        if (cd >= 0 && *pfi_csv_field(c, r, (size_t)cd)) {
            if (!pfi_target_domain_valid(pfi_csv_field(c, r, (size_t)cd))) {
                rc = pfi_error_set(err, PFI_EINVAL, path, line,
                                   "domain must be 1-64 characters of A-Z a-z 0-9 . _ : @ -");
                break;
            }
            snprintf(t->domain, sizeof t->domain, "%s", pfi_csv_field(c, r, (size_t)cd));
        }
        if (!(dur > 0) || dur > PFI_TARGET_MAX_DURATION_S) {
            rc = pfi_error_set(err, PFI_EINVAL, path, line,
                               "duration_s must be > 0 and at most 31 days (%.0f s)",
                               PFI_TARGET_MAX_DURATION_S);
            break;
        }
        t->end = t->start + dur;
        for (size_t k = 0; k < r && rc == PFI_OK; k++)
            if (strcmp(ts[k].id, t->id) == 0)
                rc = pfi_error_set(err, PFI_EINVAL, path, line, "id %s used twice", t->id);
        if (rc == PFI_OK && (rc = pfi_target_validate(t, err)) != PFI_OK && err) {
            err->file[0] = '\0';
            snprintf(err->file, sizeof err->file, "%s", path);
            err->line = line;
        }
    }
    if (rc != PFI_OK) {
        free(ts);
        goto done;
    }
    *out = ts;
    *n = rows;
done:
    pfi_csv_destroy(c);
    return rc;
}
