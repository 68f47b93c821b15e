/* The VEN's part of a period: poll the VTN when due (its events become the
 * OpenADR targets; an event gone from the list is cancelled), accumulate the
 * site power over each interval that asked for a report, and send the report
 * once the interval has ended. */
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

static void replace_targets(ctl *c, double now)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_events; i++)
        n += c->events[i].n_iv;
    pfi_target *ts = calloc(n + 1, sizeof *ts);
    if (!ts) return;
    size_t k = 0;
    for (size_t i = 0; i < c->n_events; i++)
        k += pfi_oadr_event_targets(&c->events[i], ts + k, n - k);
    pthread_mutex_lock(&c->mu);
    ctl_targets_replace(c, PFI_TARGET_OPENADR, ts, k);
    pthread_mutex_unlock(&c->mu);
    pfi_ctl_store_replace_source(c->store, PFI_TARGET_OPENADR, ts, k, NULL);
    free(ts);
}

void ctl_ven_task(ctl *c, double now, double site_w)
{
    if (!c->ven) return;
    if (now >= c->next_vtn_poll) {
        c->next_vtn_poll = now + c->o.vtn_poll_s;
        pfi_oadr_event *ev;
        size_t n;
        pfi_error err;
        pfi_error_clear(&err);
        if (pfi_ven_poll(c->ven, now, &ev, &n, &err) == PFI_OK) {
            for (size_t i = 0; i < n; i++) {
                int known = 0;
                for (size_t k = 0; k < c->n_events; k++)
                    known |= strcmp(c->events[k].id, ev[i].id) == 0;
                if (known) continue;
                if (ev[i].status != PFI_OK)
                    pfi_log("VTN event %s refused: %s", ev[i].id[0] ? ev[i].id : "?", ev[i].error);
                else
                    pfi_log("VTN event %s: %zu interval(s)%s%s", ev[i].id, ev[i].n_iv,
                            ev[i].notes[0] ? "; " : "", ev[i].notes);
            }
            for (size_t k = 0; k < c->n_events; k++) {
                int still = 0;
                for (size_t i = 0; i < n; i++)
                    still |= strcmp(c->events[k].id, ev[i].id) == 0;
                if (!still) pfi_log("VTN event %s is gone: cancelled", c->events[k].id);
            }
            pfi_oadr_events_free(c->events, c->n_events);
            c->events = ev;
            c->n_events = n;
            replace_targets(c, now);
        } else {
            pfi_log("VTN poll failed (keeping the last %zu event(s)): %s", c->n_events, err.msg);
        }
    }
    /* Accumulate and report. */
    for (size_t i = 0; i < c->n_events; i++) {
        const pfi_oadr_event *e = &c->events[i];
        if (e->status != PFI_OK || e->report_w_per_unit <= 0) continue;
        for (size_t k = 0; k < e->n_iv; k++) {
            const pfi_oadr_interval *iv = &e->iv[k];
            if (iv->kind != PFI_OADR_LIMIT || isinf(iv->end)) continue;
            ctl_acc *a = acc_find(c, e->id, iv->id, iv->sub);
            if (!a && now >= iv->start) {
                if (c->n_accs == c->cap_accs) {
                    size_t cap = c->cap_accs ? 2 * c->cap_accs : 16;
                    ctl_acc *arr = realloc(c->accs, cap * sizeof *arr);
                    if (!arr) continue;
                    c->accs = arr;
                    c->cap_accs = cap;
                }
                a = &c->accs[c->n_accs++];
                memset(a, 0, sizeof *a);
                snprintf(a->event, sizeof a->event, "%s", e->id);
                a->interval = iv->id;
                a->sub = iv->sub;
            }
            if (!a || a->sent) continue;
            if (now >= iv->start && now < iv->end && isfinite(site_w)) {
                a->sum += site_w;
                a->n++;
            }
            if (now >= iv->end) {
                pfi_oadr_reading r = {.interval_id = iv->id,
                                      .start = iv->start,
                                      .duration_s = iv->end - iv->start,
                                      .site_w = a->n ? a->sum / (double)a->n : NAN};
                json_t *body = pfi_oadr_report_json(e, "pfi-control", &r, 1);
                pfi_error err;
                pfi_error_clear(&err);
                if (body && pfi_ven_report(c->ven, body, &err) == PFI_OK) {
                    a->sent = 1;
                    pfi_log("reported event %s interval %ld: %.1f kW mean site power", e->id,
                            iv->id, r.site_w / 1000);
                } else {
                    pfi_log("report for event %s failed (retried next period): %s", e->id, err.msg);
                }
                json_decref(body);
            }
        }
    }
}
