/* The VEN's part of a period: poll the VTN when due (its events become the
 * OpenADR targets), measure the site power over each interval that asked for
 * a report, and send the report once the interval has ended, or at once for
 * the part that ran when its event is cancelled.
 *
 * An event gone from a good list is asked for by id (GET /events/{id})
 * before it is cancelled: 404 cancels it, anything else keeps it, so that a
 * list that glitches to [] cannot release a site mid-event. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_internal.h"

static ctl_acc *acc_find(ctl *c, const char *ev, long iv, int sub)
{
    for (size_t i = 0; i < c->n_accs; i++)
        if (c->accs[i].interval == iv && c->accs[i].sub == sub && strcmp(c->accs[i].event, ev) == 0)
            return &c->accs[i];
    return NULL;
}

static ctl_acc *acc_new(ctl *c, const char *ev, long iv, int sub)
{
    if (c->n_accs == c->cap_accs) {
        size_t cap = c->cap_accs ? 2 * c->cap_accs : 16;
        ctl_acc *arr = realloc(c->accs, cap * sizeof *arr);
        if (!arr) return NULL;
        c->accs = arr;
        c->cap_accs = cap;
    }
    ctl_acc *a = &c->accs[c->n_accs++];
    memset(a, 0, sizeof *a);
    snprintf(a->event, sizeof a->event, "%s", ev);
    a->interval = iv;
    a->sub = sub;
    return a;
}

/* One sample at t: the previous one held until t (time-weighted). */
static void acc_add(ctl_acc *a, double t, double w)
{
    if (a->n > 0 && t > a->last_t) {
        a->wsum += a->last_w * (t - a->last_t);
        a->wdur += t - a->last_t;
    }
    a->last_t = t;
    a->last_w = w;
    a->n++;
}

/* The time-weighted mean of the samples inside [start, until): the last one
 * holds to until; NaN without a sample. A sample before the interval never
 * counted (acc_add takes only those inside). */
static double acc_mean(const ctl_acc *a, double until)
{
    if (a->n == 0) return NAN;
    double s = a->wsum, d = a->wdur;
    if (until > a->last_t) {
        s += a->last_w * (until - a->last_t);
        d += until - a->last_t;
    }
    return d > 0 ? s / d : a->last_w;
}

static void replace_targets(ctl *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_events; i++)
        n += c->events[i].n_iv;
    pfi_target *ts = calloc(n + 1, sizeof *ts);
    if (!ts) return;
    size_t k = 0;
    for (size_t i = 0; i < c->n_events; i++) {
        size_t k0 = k;
        k += pfi_oadr_event_targets(&c->events[i], ts + k, n - k);
        /* a resource or program of the topology's: that domain's targets */
        size_t d = ctl_topo_oadr_domain(&c->topo, &c->events[i], c->o.vtn_program);
        for (size_t j = k0; d && j < k; j++)
            snprintf(ts[j].domain, sizeof ts[j].domain, "%s", ctl_topo_name(&c->topo, d));
    }
    pthread_mutex_lock(&c->mu);
    ctl_targets_replace(c, PFI_TARGET_OPENADR, ts, k);
    pthread_mutex_unlock(&c->mu);
    pfi_ctl_store_replace_source(c->store, PFI_TARGET_OPENADR, ts, k, NULL);
    free(ts);
}

/* A cancelled event's report: each interval that had started, over the
 * part that ran (to now). */
static void report_cancelled(ctl *c, const pfi_oadr_event *e, double now)
{
    if (e->status != PFI_OK || e->report_w_per_unit <= 0) return;
    pfi_oadr_reading *r = calloc(e->n_iv + 1, sizeof *r);
    if (!r) return;
    size_t n = 0;
    for (size_t k = 0; k < e->n_iv; k++) {
        const pfi_oadr_interval *iv = &e->iv[k];
        ctl_acc *a = acc_find(c, e->id, iv->id, iv->sub);
        if (iv->kind != PFI_OADR_LIMIT || !(now > iv->start) || !a || a->sent) continue;
        double until = fmin(now, iv->end);
        r[n++] = (pfi_oadr_reading){.interval_id = iv->id,
                                    .start = iv->start,
                                    .duration_s = until - iv->start,
                                    .site_w = acc_mean(a, until)};
        a->sent = 1;
    }
    json_t *body = n ? pfi_oadr_report_json(e, "pfi-control", r, n) : NULL;
    pfi_error err;
    pfi_error_clear(&err);
    if (body && pfi_ven_report(c->ven, body, &err) == PFI_OK)
        pfi_log("reported cancelled event %s: %zu interval(s) over the part that ran", e->id, n);
    else if (n)
        pfi_log("report for cancelled event %s failed: %s", e->id, err.msg);
    json_decref(body);
    free(r);
}

static int listed(const pfi_oadr_event *ev, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(ev[i].id, id) == 0) return 1;
    return 0;
}

/* The events of the last good list that this one lacks: confirmed gone
 * (404) are cancelled and reported; the others are appended to *ev. */
static void confirm_gone(ctl *c, double now, pfi_oadr_event **ev, size_t *n)
{
    for (size_t k = 0; k < c->n_events; k++) {
        pfi_oadr_event *old = &c->events[k];
        if (old->status != PFI_OK || !old->id[0] || listed(*ev, *n, old->id)) continue;
        pfi_oadr_event got;
        int gone = 0;
        pfi_error err;
        pfi_error_clear(&err);
        int rc = pfi_ven_event_get(c->ven, old->id, now, &got, &gone, &err);
        pfi_oadr_event_free(&got); /* kept as it was: a list-less answer changes nothing */
        if (rc == PFI_OK && gone) {
            pfi_log("VTN event %s is gone: cancelled (GET /events/{id}: 404)", old->id);
            report_cancelled(c, old, now);
            continue;
        }
        pfi_oadr_event *p = realloc(*ev, (*n + 1) * sizeof *p);
        if (!p) continue;
        *ev = p;
        p[(*n)++] = *old;
        memset(old, 0, sizeof *old); /* its intervals moved */
        pfi_log("VTN event %s missing from the list but %s: kept", p[*n - 1].id,
                rc == PFI_OK ? "still served by id" : err.msg);
    }
}

static void poll_vtn(ctl *c, double now)
{
    pfi_oadr_event *ev;
    size_t n;
    pfi_error err;
    pfi_error_clear(&err);
    int rc = pfi_ven_poll(c->ven, now, &ev, &n, &err);
    if (rc == PFI_OK) {
        for (size_t i = 0; i < n; i++) {
            if (listed(c->events, c->n_events, ev[i].id)) continue;
            if (ev[i].status != PFI_OK)
                pfi_log("VTN event %s refused: %s", ev[i].id[0] ? ev[i].id : "?", ev[i].error);
            else
                pfi_log("VTN event %s: %zu interval(s)%s%s", ev[i].id, ev[i].n_iv,
                        ev[i].notes[0] ? "; " : "", ev[i].notes);
        }
        confirm_gone(c, now, &ev, &n);
        pfi_oadr_events_free(c->events, c->n_events);
        c->events = ev;
        c->n_events = n;
        replace_targets(c);
    } else {
        pfi_log("VTN poll failed (keeping the last %zu event(s)): %s", c->n_events, err.msg);
    }
    pthread_mutex_lock(&c->mu);
    pfi_ven_get_health(c->ven, &c->vtn_health);
    pthread_mutex_unlock(&c->mu);
}

static void report_due(ctl *c, const pfi_oadr_event *e, const pfi_oadr_interval *iv, ctl_acc *a)
{
    pfi_oadr_reading r = {.interval_id = iv->id,
                          .start = iv->start,
                          .duration_s = iv->end - iv->start,
                          .site_w = acc_mean(a, iv->end)};
    json_t *body = pfi_oadr_report_json(e, "pfi-control", &r, 1);
    pfi_error err;
    pfi_error_clear(&err);
    if (body && pfi_ven_report(c->ven, body, &err) == PFI_OK) {
        a->sent = 1;
        pfi_log("reported event %s interval %ld: %.1f kW mean site power", e->id, iv->id,
                r.site_w / 1000);
    } else {
        pfi_log("report for event %s failed (retried next period): %s", e->id, err.msg);
    }
    json_decref(body);
}

void ctl_ven_task(ctl *c, double now, double site_w)
{
    if (!c->ven) return;
    if (now >= c->next_vtn_poll) {
        c->next_vtn_poll = now + c->o.vtn_poll_s;
        poll_vtn(c, now);
    }
    /* Measure and report: site_w was read at now. */
    for (size_t i = 0; i < c->n_events; i++) {
        const pfi_oadr_event *e = &c->events[i];
        if (e->status != PFI_OK || e->report_w_per_unit <= 0) continue;
        for (size_t k = 0; k < e->n_iv; k++) {
            const pfi_oadr_interval *iv = &e->iv[k];
            if (iv->kind != PFI_OADR_LIMIT || isinf(iv->end)) continue;
            ctl_acc *a = acc_find(c, e->id, iv->id, iv->sub);
            if (!a && now >= iv->start) a = acc_new(c, e->id, iv->id, iv->sub);
            if (!a || a->sent) continue;
            if (now >= iv->start && now < iv->end && isfinite(site_w)) acc_add(a, now, site_w);
            if (now >= iv->end) report_due(c, e, iv, a);
        }
    }
}
