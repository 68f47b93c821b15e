/* The VTN's health as the controller shows it: the "vtn" object of
 * /v1/status, /healthz's reason, and /metrics' gauges. The loop thread
 * copies the VEN's record into c->vtn_health after each poll; these read
 * that copy under c->mu (the HTTP thread) or the VEN itself (the loop). */
#include <math.h>
#include <stdio.h>

#include "ctl_internal.h"
#include "pfi/json.h"
#include "pfi/prom_emit.h"

static unsigned max_failures(const ctl *c)
{
    return c->o.vtn_max_failures ? c->o.vtn_max_failures : 3;
}

json_t *ctl_vtn_json(ctl *c)
{
    if (!c->ven) return NULL;
    pthread_mutex_lock(&c->mu);
    pfi_ven_health h = c->vtn_health;
    pthread_mutex_unlock(&c->mu);
    json_t *o = json_object();
    pfi_json_set(o, "url", json_string(pfi_ven_url(c->ven)));
    pfi_json_set(o, "last_success", pfi_json_num(h.last_ok));
    pfi_json_set(o, "last_error_at", pfi_json_num(h.last_error_at));
    pfi_json_set(o, "last_error", h.last_error[0] ? json_string(h.last_error) : json_null());
    pfi_json_set(o, "consecutive_failures", json_integer((json_int_t)h.consecutive_failures));
    pfi_json_set(o, "auth_ok", json_boolean(h.auth_ok));
    pfi_json_set(o, "healthy", json_boolean(h.auth_ok && h.consecutive_failures < max_failures(c)));
    return o;
}

int ctl_vtn_unhealthy(ctl *c, char *why, size_t len)
{
    if (!c->ven) return 0;
    pthread_mutex_lock(&c->mu);
    pfi_ven_health h = c->vtn_health;
    pthread_mutex_unlock(&c->mu);
    if (!h.auth_ok) {
        snprintf(why, len, "VTN %s refuses the client credentials: %s", pfi_ven_url(c->ven),
                 h.last_error);
        return 1;
    }
    if (h.consecutive_failures >= max_failures(c)) {
        snprintf(why, len, "VTN %s: %u polls failed in a row (the events in force are kept): %s",
                 pfi_ven_url(c->ven), h.consecutive_failures, h.last_error);
        return 1;
    }
    return 0;
}

void ctl_vtn_metrics(pfi_ven *ven, FILE *f)
{
    if (!ven) return;
    pfi_ven_health h;
    pfi_ven_get_health(ven, &h);
    pfi_prom_family(f, "pfi_control_vtn_consecutive_failures", PFI_PROM_GAUGE,
                    "VTN polls failed in a row (0 after a good one)");
    pfi_prom_sample(f, "pfi_control_vtn_consecutive_failures", NULL,
                    (double)h.consecutive_failures);
    pfi_prom_family(f, "pfi_control_vtn_auth_ok", PFI_PROM_GAUGE,
                    "0 while the VTN refuses the client credentials");
    pfi_prom_sample(f, "pfi_control_vtn_auth_ok", NULL, h.auth_ok);
    pfi_prom_family(f, "pfi_control_vtn_last_success_timestamp_seconds", PFI_PROM_GAUGE,
                    "when a VTN poll last succeeded (Unix s)");
    pfi_prom_sample(f, "pfi_control_vtn_last_success_timestamp_seconds", NULL,
                    isfinite(h.last_ok) ? h.last_ok : 0);
}
