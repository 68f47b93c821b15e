/* OpenADR 3 events to limit intervals (include/control/pfi/openadr.h). */
#include "pfi/openadr.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/ctl_time.h"
#include "pfi/json.h"

/* Adds one note unless the same text is there already or there is no room. */
static void note(pfi_oadr_event *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(pfi_oadr_event *e, const char *fmt, ...)
{
    char b[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (strstr(e->notes, b)) return;
    size_t n = strlen(e->notes);
    if (n + strlen(b) + 3 >= sizeof e->notes) return;
    snprintf(e->notes + n, sizeof e->notes - n, "%s%s", n ? "; " : "", b);
}

static int refuse(pfi_oadr_event *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(pfi_oadr_event *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->error, sizeof e->error, fmt, ap);
    va_end(ap);
    e->status = code;
    free(e->iv);
    e->iv = NULL;
    e->n_iv = 0;
    return code;
}

/* A printable copy of a JSON string for messages and ids (controls -> '?'). */
static void copy_str(char *dst, size_t cap, const char *s)
{
    size_t k = 0;
    for (; s[k] && k < cap - 1; k++)
        dst[k] = (s[k] >= 0x20 && s[k] < 0x7f) ? s[k] : '?';
    dst[k] = '\0';
}

/* An id that may be a string or (tolerated) an integer. */
static int read_id(pfi_oadr_event *e, const json_t *v, const char *what, char *dst, size_t cap)
{
    if (json_is_string(v)) {
        copy_str(dst, cap, json_string_value(v));
        return dst[0] ? PFI_OK : refuse(e, PFI_EINVAL, "%s is empty", what);
    }
    if (json_is_integer(v)) {
        snprintf(dst, cap, "%lld", (long long)json_integer_value(v));
        note(e, "%s is an integer, not a string (tolerated)", what);
        return PFI_OK;
    }
    return refuse(e, PFI_EINVAL, "%s must be a string", what);
}

/* An intervalPeriod's start and duration; NaN for each one absent. */
static int read_period(pfi_oadr_event *e, const json_t *p, double now, const char *where,
                       double *start, double *dur)
{
    *start = *dur = NAN;
    if (!p || json_is_null(p)) return PFI_OK;
    if (!json_is_object(p))
        return refuse(e, PFI_EINVAL, "%s intervalPeriod must be an object", where);
    pfi_error err;
    pfi_error_clear(&err);
    const json_t *s = json_object_get(p, "start"), *d = json_object_get(p, "duration");
    unsigned fl = 0;
    if (s && !json_is_null(s)) {
        if (!json_is_string(s) ||
            pfi_time_parse(json_string_value(s), now, start, &fl, &err) != PFI_OK)
            return refuse(e, PFI_EINVAL, "%s start: %s", where,
                          err.msg[0] ? err.msg : "must be a string");
        if (fl & PFI_TIME_NO_SECONDS) note(e, "%s start has no seconds (tolerated)", where);
    }
    if (d && !json_is_null(d)) {
        if (!json_is_string(d) ||
            pfi_duration_parse(json_string_value(d), dur, &fl, &err) != PFI_OK)
            return refuse(e, PFI_EINVAL, "%s duration: %s", where,
                          err.msg[0] ? err.msg : "must be a string");
        if (fl & PFI_TIME_MONTHS) note(e, "%s duration in months (30 days each)", where);
    }
    if (json_object_get(p, "randomizeStart")) note(e, "randomizeStart ignored");
    return PFI_OK;
}

/* The kind of payload type t, or -1 for a type not acted on. */
static int kind_of(pfi_oadr_event *e, const char *t)
{
    if (strcmp(t, "IMPORT_CAPACITY_LIMIT") == 0) return PFI_OADR_LIMIT;
    if (strcmp(t, "IMPORT_CAPACITY_SUBSCRIPTION") == 0) return PFI_OADR_SUBSCRIPTION;
    if (strcmp(t, "CAPACITY_SUBSCRIPTION") == 0) {
        note(e, "payload type CAPACITY_SUBSCRIPTION read as IMPORT_CAPACITY_SUBSCRIPTION "
                "(not enumerated; tolerated)");
        return PFI_OADR_SUBSCRIPTION;
    }
    return -1;
}

/* W per unit of payload type t from payloadDescriptors; refuses the event
 * for a missing or unknown unit. */
static int units_of(pfi_oadr_event *e, const json_t *descs, const char *t, double *w_per_unit)
{
    size_t i;
    const json_t *d;
    json_array_foreach(descs, i, d)
    {
        const json_t *pt = json_object_get(d, "payloadType");
        if (!json_is_string(pt) || strcmp(json_string_value(pt), t) != 0) continue;
        const json_t *u = json_object_get(d, "units");
        if (!json_is_string(u)) break;
        const char *s = json_string_value(u);
        if (strcmp(s, "KW") == 0)
            *w_per_unit = 1000.0;
        else if (strcmp(s, "W") == 0)
            *w_per_unit = 1.0;
        else {
            char shown[32];
            copy_str(shown, sizeof shown, s);
            return refuse(e, PFI_EINVAL, "%s in units '%s': only KW and W are understood", t,
                          shown);
        }
        return PFI_OK;
    }
    return refuse(e, PFI_EINVAL, "%s has no units in the event's payloadDescriptors", t);
}

static int push_iv(pfi_oadr_event *e, const pfi_oadr_interval *iv)
{
    if ((e->n_iv & (e->n_iv + 1)) == 0) { /* grow at 0, 1, 3, 7, ... */
        pfi_oadr_interval *p = realloc(e->iv, (2 * e->n_iv + 1) * sizeof *p);
        if (!p) return refuse(e, PFI_ENOMEM, "out of memory");
        e->iv = p;
    }
    e->iv[e->n_iv++] = *iv;
    return PFI_OK;
}

static int read_descriptors(pfi_oadr_event *e, const json_t *ev, const json_t **descs)
{
    *descs = json_object_get(ev, "payloadDescriptors");
    if (*descs && json_is_null(*descs)) *descs = NULL;
    if (*descs && !json_is_array(*descs))
        return refuse(e, PFI_EINVAL, "payloadDescriptors must be an array");
    size_t i;
    const json_t *d;
    if (*descs) json_array_foreach(*descs, i, d)
        {
            if (!json_is_object(d))
                return refuse(e, PFI_EINVAL, "a payloadDescriptor must be an object");
            if (!json_object_get(d, "objectType"))
                note(e, "payloadDescriptors without objectType (tolerated)");
        }
    /* What report it asks for: a READING of power. */
    const json_t *rds = json_object_get(ev, "reportDescriptors");
    if (rds && json_is_array(rds)) json_array_foreach(rds, i, d)
        {
            const json_t *pt = json_object_get(d, "payloadType"), *u = json_object_get(d, "units");
            if (!json_is_string(pt) || strcmp(json_string_value(pt), "READING") != 0) continue;
            const char *us = json_is_string(u) ? json_string_value(u) : "";
            if (strcmp(us, "KW") == 0 && !e->report_w_per_unit)
                e->report_w_per_unit = 1000.0;
            else if (strcmp(us, "W") == 0 && !e->report_w_per_unit)
                e->report_w_per_unit = 1.0;
            else if (strcmp(us, "KW") != 0 && strcmp(us, "W") != 0) {
                char shown[32];
                copy_str(shown, sizeof shown, us);
                note(e, "a READING report in '%s' is not supported (power in KW or W only)", shown);
            }
        }
    return PFI_OK;
}

/* One interval: its timing from the cursor and the default, then its
 * payloads acted on. */
static int read_interval(pfi_oadr_event *e, const json_t *in, size_t k, const json_t *descs,
                         double now, double def_dur, double *cursor)
{
    char where[48];
    snprintf(where, sizeof where, "interval %zu", k);
    if (!json_is_object(in)) return refuse(e, PFI_EINVAL, "%s must be an object", where);
    long id = (long)k;
    const json_t *jid = json_object_get(in, "id");
    if (json_is_integer(jid))
        id = (long)json_integer_value(jid);
    else
        note(e, "an interval without an integer id (its position used)");
    double s, d;
    int rc = read_period(e, json_object_get(in, "intervalPeriod"), now, where, &s, &d);
    if (rc != PFI_OK) return rc;
    if (isnan(s)) s = *cursor; /* rule: starts where the previous ended */
    if (isnan(d)) d = def_dur; /* rule: the event's default duration */
    *cursor = isnan(s) || isnan(d) ? NAN : s + d;
    const json_t *pls = json_object_get(in, "payloads");
    if (!json_is_array(pls)) return refuse(e, PFI_EINVAL, "%s has no payloads array", where);
    size_t i;
    int acted = 0;
    const json_t *pl;
    json_array_foreach(pls, i, pl)
    {
        const json_t *t = json_object_get(pl, "type");
        if (!json_is_object(pl) || !json_is_string(t))
            return refuse(e, PFI_EINVAL, "%s: a payload needs a string type", where);
        int kind = kind_of(e, json_string_value(t));
        if (kind < 0) {
            char shown[48];
            copy_str(shown, sizeof shown, json_string_value(t));
            note(e, "payload type %s ignored", shown);
            continue;
        }
        double wpu = 0;
        if ((rc = units_of(e, descs, json_string_value(t), &wpu)) != PFI_OK) return rc;
        if (isnan(s) || isnan(d))
            return refuse(e, PFI_EINVAL, "%s has no %s (neither its own nor the event's)", where,
                          isnan(s) ? "start" : "duration");
        const json_t *vals = json_object_get(pl, "values");
        size_t nv;
        if (json_is_number(vals)) {
            note(e, "a scalar \"values\" read as a one-value array (tolerated)");
            nv = 1;
        } else if (json_is_array(vals)) {
            nv = json_array_size(vals);
        } else {
            return refuse(e, PFI_EINVAL, "%s: %s has no values", where, json_string_value(t));
        }
        if (nv == 0 || nv > PFI_OADR_MAX_VALUES)
            return refuse(e, PFI_EINVAL, "%s: %s needs 1 to %d values", where, json_string_value(t),
                          PFI_OADR_MAX_VALUES);
        if (nv > 1 && isinf(d))
            return refuse(e, PFI_EINVAL, "%s: %zu values cannot split an infinite interval", where,
                          nv);
        for (size_t v = 0; v < nv; v++) {
            const json_t *x = json_is_array(vals) ? json_array_get(vals, v) : vals;
            double val = json_is_number(x) ? json_number_value(x) : NAN;
            if (!(val >= 0) || !isfinite(val * wpu) || val * wpu > PFI_TARGET_MAX_W)
                return refuse(e, PFI_EINVAL, "%s: %s value %zu must be a number in [0, 1e12] W",
                              where, json_string_value(t), v);
            /* rule: N values are N equal sub-intervals */
            pfi_oadr_interval iv = {
                .id = id,
                .sub = (int)v,
                .payload = acted,
                .kind = (pfi_oadr_kind)kind,
                .start = v == 0 ? s : s + d * (double)v / (double)nv, /* inf * 0 is NaN */
                .end = v + 1 == nv ? s + d : s + d * (double)(v + 1) / (double)nv,
                .value_w = val * wpu};
            if (!(iv.end > iv.start)) {
                note(e, "%s has a zero duration (nothing to act on)", where);
                continue;
            }
            if ((rc = push_iv(e, &iv)) != PFI_OK) return rc;
        }
        acted++;
    }
    return PFI_OK;
}

static void add_target(pfi_oadr_event *e, const json_t *v)
{
    if (!json_is_string(v) || json_string_length(v) == 0 ||
        json_string_length(v) > PFI_OADR_ID_MAX) {
        note(e, "a target that is not a string of 1-%d characters (ignored)", PFI_OADR_ID_MAX);
        return;
    }
    if (e->n_targets == PFI_OADR_MAX_TARGETS) {
        note(e, "more than %d targets (the rest ignored)", PFI_OADR_MAX_TARGETS);
        return;
    }
    copy_str(e->targets[e->n_targets++], sizeof e->targets[0], json_string_value(v));
}

/* "targets": strings (3.1.0) or valuesMaps {"type", "values": [...]}
 * (3.0.1), whose string values are taken whatever their type. */
static void read_targets(pfi_oadr_event *e, const json_t *ts)
{
    if (!ts || json_is_null(ts)) return;
    if (!json_is_array(ts)) {
        note(e, "targets is not an array (ignored)");
        return;
    }
    size_t i, k;
    const json_t *t, *v;
    json_array_foreach(ts, i, t)
    {
        if (json_is_object(t) && json_is_array(json_object_get(t, "values")))
            json_array_foreach(json_object_get(t, "values"), k, v) add_target(e, v);
        else
            add_target(e, t);
    }
}

int pfi_oadr_event_from_json(const json_t *ev, double now, pfi_oadr_event *out)
{
    memset(out, 0, sizeof *out);
    out->priority = PFI_TARGET_NO_PRIORITY;
    pfi_oadr_event *e = out;
    if (!json_is_object(ev)) return refuse(e, PFI_EINVAL, "an event must be a JSON object");
    const json_t *ot = json_object_get(ev, "objectType");
    if (!ot)
        note(e, "no objectType (tolerated)");
    else if (!json_is_string(ot) || strcmp(json_string_value(ot), "EVENT") != 0)
        return refuse(e, PFI_EINVAL, "objectType is not EVENT");
    int rc;
    const json_t *pid = json_object_get(ev, "programID");
    if (!pid) return refuse(e, PFI_EINVAL, "no programID");
    if ((rc = read_id(e, pid, "programID", e->program_id, sizeof e->program_id)) != PFI_OK)
        return rc;
    const json_t *name = json_object_get(ev, "eventName");
    if (json_is_string(name)) copy_str(e->name, sizeof e->name, json_string_value(name));
    const json_t *id = json_object_get(ev, "id");
    if (id) {
        if ((rc = read_id(e, id, "id", e->id, sizeof e->id)) != PFI_OK) return rc;
    } else if (e->name[0]) {
        snprintf(e->id, sizeof e->id, "%s", e->name);
        note(e, "no id: the eventName is used");
    } else {
        return refuse(e, PFI_EINVAL, "the event has neither id nor eventName");
    }
    const json_t *pr = json_object_get(ev, "priority");
    if (pr && !json_is_null(pr)) {
        if (!json_is_integer(pr) || json_integer_value(pr) < 0)
            return refuse(e, PFI_EINVAL, "priority must be an integer >= 0");
        e->priority = (long)json_integer_value(pr);
        if (e->priority == PFI_TARGET_NO_PRIORITY) e->priority--;
    }
    const json_t *cdt = json_object_get(ev, "createdDateTime");
    if (cdt) {
        double t;
        if (!json_is_string(cdt) ||
            pfi_time_parse(json_string_value(cdt), now, &t, NULL, NULL) != PFI_OK)
            note(e, "createdDateTime is not RFC 3339 (ignored)");
    }
    if (json_object_get(ev, "duration")) note(e, "the event's duration (looping) is ignored");
    read_targets(e, json_object_get(ev, "targets"));
    const json_t *descs;
    if ((rc = read_descriptors(e, ev, &descs)) != PFI_OK) return rc;
    double def_start, def_dur;
    if ((rc = read_period(e, json_object_get(ev, "intervalPeriod"), now, "the event's", &def_start,
                          &def_dur)) != PFI_OK)
        return rc;
    const json_t *ivs = json_object_get(ev, "intervals");
    if (!ivs || json_is_null(ivs)) {
        note(e, "no intervals (no limit)");
        return PFI_OK;
    }
    if (!json_is_array(ivs)) return refuse(e, PFI_EINVAL, "intervals must be an array");
    double cursor = def_start;
    for (size_t k = 0; k < json_array_size(ivs); k++)
        if ((rc = read_interval(e, json_array_get(ivs, k), k, descs, now, def_dur, &cursor)) !=
            PFI_OK)
            return rc;
    return PFI_OK;
}

void pfi_oadr_event_free(pfi_oadr_event *e)
{
    if (!e) return;
    free(e->iv);
    e->iv = NULL;
    e->n_iv = 0;
}

void pfi_oadr_events_free(pfi_oadr_event *ev, size_t n)
{
    if (!ev) return;
    for (size_t i = 0; i < n; i++)
        pfi_oadr_event_free(&ev[i]);
    free(ev);
}

int pfi_oadr_events_parse(const char *text, size_t len, double now, pfi_oadr_event **out, size_t *n,
                          pfi_error *err)
{
    *out = NULL;
    *n = 0;
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root)
        return pfi_error_set(err, PFI_EPARSE, NULL, je.line, "not JSON (line %d, column %d: %s)",
                             je.line, je.column, je.text);
    int arr = json_is_array(root);
    if (!arr && !json_is_object(root)) {
        json_decref(root);
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "expected an event or an array of events");
    }
    size_t k = arr ? json_array_size(root) : 1;
    pfi_oadr_event *ev = calloc(k ? k : 1, sizeof *ev);
    if (!ev) {
        json_decref(root);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    for (size_t i = 0; i < k; i++)
        pfi_oadr_event_from_json(arr ? json_array_get(root, i) : root, now, &ev[i]);
    json_decref(root);
    *out = ev;
    *n = k;
    return PFI_OK;
}

/* The event id as targets carry it: as it is up to 80 characters, else its
 * first 71 and a hash of the whole (FNV-1a), so that two long ids that
 * share a prefix stay two. */
static void short_id(const char *id, char *dst, size_t cap)
{
    size_t n = strlen(id);
    if (n <= 80) {
        snprintf(dst, cap, "%s", id);
        return;
    }
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)id[i]) * 16777619u;
    snprintf(dst, cap, "%.71s~%08x", id, (unsigned)h);
}

size_t pfi_oadr_event_targets(const pfi_oadr_event *e, pfi_target *out, size_t cap)
{
    if (e->status != PFI_OK) return 0;
    char ev[96];
    short_id(e->id, ev, sizeof ev);
    for (size_t i = 0; i < e->n_iv && i < cap; i++) {
        const pfi_oadr_interval *iv = &e->iv[i];
        pfi_target *t = &out[i];
        memset(t, 0, sizeof *t);
        /* One id per limit: the sub-interval, the payload when an interval
         * has two limits, and the position when the event repeats an
         * interval id (targets of one id replace each other). */
        if (iv->payload)
            snprintf(t->id, sizeof t->id, "oadr:%s:%ld.%d.%d", ev, iv->id, iv->sub, iv->payload);
        else
            snprintf(t->id, sizeof t->id, "oadr:%s:%ld.%d", ev, iv->id, iv->sub);
        for (size_t k = 0; k < i; k++)
            if (strcmp(out[k].id, t->id) == 0) {
                size_t n = strlen(t->id);
                snprintf(t->id + n, sizeof t->id - n, "#%zu", i);
                break;
            }
        t->source = PFI_TARGET_OPENADR;
        t->kind = PFI_TARGET_SITE;
        t->limit_w = iv->value_w;
        t->start = iv->start;
        t->end = iv->end;
        t->priority = e->priority;
        t->is_default = iv->kind == PFI_OADR_SUBSCRIPTION;
    }
    return e->n_iv;
}

json_t *pfi_oadr_report_json(const pfi_oadr_event *e, const char *client, const pfi_oadr_reading *r,
                             size_t n)
{
    double wpu = e->report_w_per_unit > 0 ? e->report_w_per_unit : 1000.0;
    const char *units = wpu == 1.0 ? "W" : "KW";
    json_t *o = json_object(), *pd = json_object(), *res = json_object(), *ivs = json_array();
    if (!o || !pd || !res || !ivs) {
        json_decref(o);
        json_decref(pd);
        json_decref(res);
        json_decref(ivs);
        return NULL;
    }
    pfi_json_set(o, "objectType", json_string("REPORT"));
    pfi_json_set(o, "programID", json_string(e->program_id));
    pfi_json_set(o, "eventID", json_string(e->id));
    pfi_json_set(o, "clientName", json_string(client));
    pfi_json_set(o, "reportName", json_string("pfi control: measured site power"));
    pfi_json_set(pd, "objectType", json_string("REPORT_PAYLOAD_DESCRIPTOR"));
    pfi_json_set(pd, "payloadType", json_string("READING"));
    pfi_json_set(pd, "readingType", json_string("DIRECT_READ"));
    pfi_json_set(pd, "units", json_string(units));
    json_t *pds = json_array();
    json_array_append_new(pds, pd);
    pfi_json_set(o, "payloadDescriptors", pds);
    pfi_json_set(res, "resourceName", json_string("site"));
    for (size_t i = 0; i < n; i++) {
        json_t *iv = json_object(), *per = json_object(), *pl = json_object(), *vals = json_array();
        char ts[32], ds[32];
        pfi_time_format(r[i].start, ts, sizeof ts);
        pfi_duration_format(r[i].duration_s, ds, sizeof ds);
        pfi_json_set(iv, "id", json_integer((json_int_t)r[i].interval_id));
        pfi_json_set(per, "start", json_string(ts));
        pfi_json_set(per, "duration", json_string(ds));
        pfi_json_set(iv, "intervalPeriod", per);
        pfi_json_set(pl, "type", json_string("READING"));
        if (isfinite(r[i].site_w)) json_array_append_new(vals, json_real(r[i].site_w / wpu));
        pfi_json_set(pl, "values", vals);
        json_t *pls = json_array();
        json_array_append_new(pls, pl);
        pfi_json_set(iv, "payloads", pls);
        json_array_append_new(ivs, iv);
    }
    pfi_json_set(res, "intervals", ivs);
    json_t *rs = json_array();
    json_array_append_new(rs, res);
    pfi_json_set(o, "resources", rs);
    return o;
}
