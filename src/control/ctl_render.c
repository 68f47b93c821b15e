/* The controller's /metrics, rendered once per period from its status. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_internal.h"
#include "pfi/prom_emit.h"

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void gauge(FILE *f, const char *name, const char *help, double v)
{
    pfi_prom_family(f, name, PFI_PROM_GAUGE, help);
    pfi_prom_sample(f, name, NULL, v);
}

static void counter(FILE *f, const char *name, const char *help, const json_t *cnt, const char *key)
{
    const json_t *v = json_object_get(cnt, key);
    if (!v) return;
    pfi_prom_family(f, name, PFI_PROM_COUNTER, help);
    pfi_prom_sample(f, name, NULL, json_number_value(v));
}

char *ctl_render_metrics(ctl *c, const json_t *st, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    int ctl_on = json_is_true(json_object_get(st, "controlling"));
    gauge(f, "pfi_control_event_active", "1 while a target is in force",
          json_is_true(json_object_get(st, "active")));
    gauge(f, "pfi_control_controlling", "1 while caps are held (a target, or the ramp after one)",
          ctl_on);
    gauge(f, "pfi_control_target_site_watts", "the site limit in force", num(st, "site_limit_w"));
    gauge(f, "pfi_control_gpu_budget_watts", "the GPU budget in force (after the ramp)",
          num(st, "gpu_budget_w"));
    gauge(f, "pfi_control_measured_gpu_watts",
          "GPU power measured, dead or uncappable agents at their GPUs' maximum",
          num(st, "measured_gpu_w"));
    gauge(f, "pfi_control_site_watts",
          "site power: measured GPU power plus the stated non-GPU load", num(st, "site_w"));
    gauge(f, "pfi_control_other_load_watts", "the non-GPU load counted", num(st, "other_load_w"));
    gauge(f, "pfi_control_headroom_watts", "GPU budget minus measured GPU power",
          num(st, "headroom_w"));
    gauge(f, "pfi_control_fixed_watts", "GPU power the controller cannot move", num(st, "fixed_w"));
    gauge(f, "pfi_control_trim_watts", "feedback trim taken off the budget", num(st, "trim_w"));
    gauge(f, "pfi_control_infeasible", "1 when the floors exceed the budget",
          json_is_true(json_object_get(st, "infeasible")));
    gauge(f, "pfi_control_shortfall_watts", "how far the floors exceed the budget",
          num(st, "shortfall_w"));
    gauge(f, "pfi_control_throughput_expected_tokens_per_second",
          "throughput kept on the jobs' curves", num(st, "expected_tput"));
    gauge(f, "pfi_control_throughput_uncapped_tokens_per_second",
          "throughput uncapped on the jobs' curves", num(st, "uncapped_tput"));
    gauge(f, "pfi_control_throughput_kept_ratio", "expected over uncapped throughput",
          num(st, "kept_ratio"));
    gauge(f, "pfi_control_agents_up", "agents that answered this period", num(st, "agents_up"));
    const json_t *ag = json_object_get(st, "agents");
    gauge(f, "pfi_control_agents", "agents configured", (double)json_array_size(ag));
    pfi_prom_family(f, "pfi_control_agent_up", PFI_PROM_GAUGE, "1 when the agent answered");
    size_t i;
    const json_t *x;
    json_array_foreach(ag, i, x)
    {
        const char *l[] = {"agent", json_string_value(json_object_get(x, "url")), NULL};
        pfi_prom_sample(f, "pfi_control_agent_up", l, json_is_true(json_object_get(x, "up")));
    }
    const json_t *js = json_object_get(st, "jobs");
    pfi_prom_family(f, "pfi_control_job_cap_watts", PFI_PROM_GAUGE,
                    "per-GPU cap pushed to the job's GPUs");
    json_array_foreach(js, i, x)
    {
        const char *l[] = {"job_id", json_string_value(json_object_get(x, "id")), NULL};
        pfi_prom_sample(f, "pfi_control_job_cap_watts", l, num(x, "cap_w"));
    }
    pfi_prom_family(f, "pfi_control_job_planned_watts", PFI_PROM_GAUGE,
                    "the job's planned power, all its GPUs");
    json_array_foreach(js, i, x)
    {
        const char *l[] = {"job_id", json_string_value(json_object_get(x, "id")), NULL};
        pfi_prom_sample(f, "pfi_control_job_planned_watts", l, num(x, "planned_w"));
    }
    pfi_prom_family(f, "pfi_control_job_loss_ratio", PFI_PROM_GAUGE,
                    "expected throughput lost to the cap, fraction");
    json_array_foreach(js, i, x)
    {
        const char *l[] = {"job_id", json_string_value(json_object_get(x, "id")), NULL};
        pfi_prom_sample(f, "pfi_control_job_loss_ratio", l, num(x, "loss"));
    }
    const json_t *cnt = json_object_get(st, "counters");
    counter(f, "pfi_control_periods_total", "control periods run", cnt, "periods");
    counter(f, "pfi_control_cap_calls_total", "cap calls (set and release) sent", cnt, "cap_calls");
    counter(f, "pfi_control_cap_errors_total", "cap calls that failed", cnt, "cap_errors");
    counter(f, "pfi_control_cap_releases_total", "caps released", cnt, "releases");
    gauge(f, "pfi_control_caps_held", "GPUs the controller holds a cap on", num(cnt, "caps_held"));
    counter(f, "pfi_control_vtn_polls_total", "VTN polls", cnt, "vtn_polls");
    counter(f, "pfi_control_vtn_poll_errors_total", "VTN polls that failed", cnt,
            "vtn_poll_errors");
    counter(f, "pfi_control_vtn_reports_total", "reports the VTN accepted", cnt, "vtn_reports");
    counter(f, "pfi_control_vtn_report_errors_total", "reports that failed", cnt,
            "vtn_report_errors");
    ctl_vtn_metrics(c, f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    (void)c;
    return buf;
}
