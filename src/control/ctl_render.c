/* The controller's /metrics, rendered once per period from the period's
 * figures (ctl_status), the ones GET /v1/status is built from. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_ha.h"
#include "ctl_internal.h"
#include "pfi/prom_emit.h"

static void gauge(FILE *f, const char *name, const char *help, double v)
{
    pfi_prom_family(f, name, PFI_PROM_GAUGE, help);
    pfi_prom_sample(f, name, NULL, v);
}

static void counter(FILE *f, const char *name, const char *help, double v)
{
    pfi_prom_family(f, name, PFI_PROM_COUNTER, help);
    pfi_prom_sample(f, name, NULL, v);
}

/* One gauge per job, labelled by its id: what (0 cap, 1 planned, 2 loss). */
static void per_job(FILE *f, const ctl_status *s, const char *name, const char *help, int what)
{
    pfi_prom_family(f, name, PFI_PROM_GAUGE, help);
    for (size_t i = 0; i < s->n_jobs; i++) {
        double v[3], kept, unc;
        ctl_status_job(s, i, &v[0], &v[1], &v[2], &kept, &unc);
        const char *l[] = {"job_id", s->jobs[i].id, NULL};
        pfi_prom_sample(f, name, l, v[what]);
    }
}

static void site(FILE *f, const ctl_status *s)
{
    gauge(f, "pfi_control_event_active", "1 while a target is in force", s->active);
    gauge(f, "pfi_control_controlling", "1 while caps are held (a target, or the ramp after one)",
          s->controlling);
    gauge(f, "pfi_control_target_site_watts", "the site limit in force", s->site_limit_w);
    gauge(f, "pfi_control_gpu_budget_watts", "the GPU budget in force (after the ramp)",
          s->gpu_budget_w);
    gauge(f, "pfi_control_measured_gpu_watts",
          "GPU power measured, dead or uncappable agents at their GPUs' maximum",
          s->measured_gpu_w);
    gauge(f, "pfi_control_site_watts",
          "site power: measured GPU power plus the stated non-GPU load",
          s->measured_gpu_w + s->other_w);
    gauge(f, "pfi_control_other_load_watts", "the non-GPU load counted", s->other_w);
    gauge(f, "pfi_control_headroom_watts", "GPU budget minus measured GPU power",
          s->controlling ? s->gpu_budget_w - s->measured_gpu_w : NAN);
    gauge(f, "pfi_control_fixed_watts", "GPU power the controller cannot move", s->fixed_w);
    gauge(f, "pfi_control_trim_watts", "feedback trim taken off the budget", s->trim_w);
    gauge(f, "pfi_control_infeasible", "1 when the floors exceed the budget", s->infeasible);
    gauge(f, "pfi_control_shortfall_watts", "how far the floors exceed the budget", s->shortfall_w);
    double kept = 0, unc = 0;
    for (size_t i = 0; i < s->n_jobs; i++) {
        double cap, planned, loss, k, u;
        ctl_status_job(s, i, &cap, &planned, &loss, &k, &u);
        kept += k;
        unc += u;
    }
    gauge(f, "pfi_control_throughput_expected_tokens_per_second",
          "throughput kept on the jobs' curves", kept);
    gauge(f, "pfi_control_throughput_uncapped_tokens_per_second",
          "throughput uncapped on the jobs' curves", unc);
    gauge(f, "pfi_control_throughput_kept_ratio", "expected over uncapped throughput",
          unc > 0 ? kept / unc : NAN);
    /* the promise's band (ctl_status_json's) */
    double lo = s->controlling && s->caps ? s->tput_lo : kept;
    gauge(f, "pfi_control_confidence_ratio", "the confidence of every lower bound stated",
          s->confidence);
    gauge(f, "pfi_control_throughput_expected_lower_tokens_per_second",
          "lower bound of the throughput kept, at pfi_control_confidence_ratio",
          s->n_jobs ? lo : NAN);
    gauge(f, "pfi_control_throughput_kept_lower_ratio", "lower bound over uncapped throughput",
          unc > 0 ? lo / unc : NAN);
    /* the supply curve's deepest step: every job at its floor */
    const pfi_plan_flex *fl = s->n_flex && s->caps ? &s->flex[s->n_flex - 1] : NULL;
    gauge(f, "pfi_control_flexibility_floor_watts",
          "GPU power with every job at its floor (the supply curve's end)",
          fl ? fl->gpu_power_w + s->fixed_w : NAN);
    gauge(f, "pfi_control_flexibility_floor_kept_ratio",
          "throughput kept with every job at its floor, expected", fl ? fl->kept : NAN);
    gauge(f, "pfi_control_flexibility_floor_kept_lower_ratio",
          "throughput kept with every job at its floor, lower bound", fl ? fl->kept_lo : NAN);
}

static void counters(FILE *f, const ctl_status *s)
{
    counter(f, "pfi_control_periods_total", "control periods run", (double)s->periods);
    counter(f, "pfi_control_cap_calls_total", "cap calls (set and release) sent",
            (double)s->held->pushes);
    counter(f, "pfi_control_cap_errors_total", "cap calls that failed", (double)s->held->errors);
    counter(f, "pfi_control_cap_releases_total", "caps released", (double)s->held->releases);
    gauge(f, "pfi_control_caps_held", "GPUs the controller holds a cap on", (double)s->held->n);
    gauge(f, "pfi_control_cap_conflicts", "GPUs another controller holds a cap on (pfid's 409)",
          (double)s->held->n_conf);
    counter(f, "pfi_control_cap_refusals_total", "cap calls refused for another owner's cap",
            (double)s->held->refused);
    gauge(f, "pfi_control_period_seconds", "how long the last period's work took", s->period_s);
    if (!s->ven) return;
    pfi_ven_stats vs;
    pfi_ven_get_stats(s->ven, &vs);
    counter(f, "pfi_control_vtn_polls_total", "VTN polls", (double)vs.polls);
    counter(f, "pfi_control_vtn_poll_errors_total", "VTN polls that failed",
            (double)vs.poll_errors);
    counter(f, "pfi_control_vtn_reports_total", "reports the VTN accepted", (double)vs.reports);
    counter(f, "pfi_control_vtn_report_errors_total", "reports that failed",
            (double)vs.report_errors);
}

char *ctl_render_metrics(const ctl_status *s, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    site(f, s);
    gauge(f, "pfi_control_agents_up", "agents that answered this period", (double)s->agents_up);
    size_t na = pfi_agents_count(s->agents);
    gauge(f, "pfi_control_agents", "agents configured", (double)na);
    pfi_prom_family(f, "pfi_control_agent_up", PFI_PROM_GAUGE, "1 when the agent answered");
    for (size_t a = 0; a < na; a++) {
        const pfi_agent_info *g = pfi_agents_get(s->agents, a);
        const char *l[] = {"agent", g->url, NULL};
        pfi_prom_sample(f, "pfi_control_agent_up", l, g->up);
    }
    ctl_domains_metrics(s, f);
    per_job(f, s, "pfi_control_job_cap_watts", "per-GPU cap pushed to the job's GPUs", 0);
    per_job(f, s, "pfi_control_job_planned_watts", "the job's planned power, all its GPUs", 1);
    per_job(f, s, "pfi_control_job_loss_ratio", "expected throughput lost to the cap, fraction", 2);
    pfi_prom_family(
        f, "pfi_control_job_throughput_lower_tokens_per_second", PFI_PROM_GAUGE,
        "lower bound of the job's expected throughput, at pfi_control_confidence_ratio");
    for (size_t i = 0; i < s->n_jobs; i++) {
        const char *l[] = {"job_id", s->jobs[i].id, NULL};
        double v = s->caps ? (s->controlling ? s->caps[i].tput_lo : s->caps[i].tmax) : NAN;
        pfi_prom_sample(f, "pfi_control_job_throughput_lower_tokens_per_second", l, v);
    }
    counters(f, s);
    ctl_vtn_metrics(s->ven, f);
    ctl_ha_metrics(s->ha, f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
