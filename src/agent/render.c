/* What pfid shows: /metrics in the Prometheus text format and the JSON of
 * /v1/gpus and /v1/jobs. Callers hold mu. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "pfi/features.h"
#include "pfi/gpu_field.h"
#include "pfi/json.h"
#include "pfi/prom_emit.h"

static void gpu_label(char *buf, size_t len, unsigned g)
{
    snprintf(buf, len, "%u", g);
}

/* Who holds each cap, the GPU's prior limit (the ceiling of every cap) and
 * the highest epoch seen (cap_fence.c). */
static void emit_owners(agent *a, FILE *f)
{
    char gl[16];
    pfi_prom_family(f, "pfi_gpu_prior_watts", PFI_PROM_GAUGE,
                    "The GPU's prior limit: the site's own, restored after a cap and the "
                    "highest a cap may be.");
    for (unsigned g = 0; g < a->n_gpus; g++) {
        double w = agent_gpu_prior_w(&a->gpus[g]);
        if (!isfinite(w)) continue;
        gpu_label(gl, sizeof gl, g);
        const char *l[] = {"gpu", gl, NULL};
        pfi_prom_sample(f, "pfi_gpu_prior_watts", l, w);
    }
    pfi_prom_family(f, "pfi_gpu_cap_epoch", PFI_PROM_GAUGE,
                    "The epoch of the owner holding the cap (absent when none).");
    for (unsigned g = 0; g < a->n_gpus; g++) {
        if (!a->gpus[g].capped) continue;
        gpu_label(gl, sizeof gl, g);
        const char *l[] = {"gpu", gl, NULL};
        pfi_prom_sample(f, "pfi_gpu_cap_epoch", l, (double)a->gpus[g].cap_epoch);
    }
    pfi_prom_family(f, "pfi_gpu_cap_owner_info", PFI_PROM_GAUGE,
                    "Who holds the cap (always 1; owner \"\" is the anonymous one).");
    for (unsigned g = 0; g < a->n_gpus; g++) {
        if (!a->gpus[g].capped) continue;
        gpu_label(gl, sizeof gl, g);
        const char *l[] = {"gpu", gl, "owner", a->gpus[g].cap_owner, NULL};
        pfi_prom_sample(f, "pfi_gpu_cap_owner_info", l, 1);
    }
    pfi_prom_family(f, "pfi_gpu_cap_max_epoch", PFI_PROM_GAUGE,
                    "The highest epoch seen on the GPU; a lower one is refused.");
    for (unsigned g = 0; g < a->n_gpus; g++) {
        gpu_label(gl, sizeof gl, g);
        const char *l[] = {"gpu", gl, NULL};
        pfi_prom_sample(f, "pfi_gpu_cap_max_epoch", l, (double)a->gpus[g].st.max_epoch);
    }
    pfi_prom_family(f, "pfi_gpu_cap_release_pending", PFI_PROM_GAUGE,
                    "1 while a released cap's record could not be removed (pfid retries).");
    for (unsigned g = 0; g < a->n_gpus; g++) {
        gpu_label(gl, sizeof gl, g);
        const char *l[] = {"gpu", gl, NULL};
        pfi_prom_sample(f, "pfi_gpu_cap_release_pending", l, a->gpus[g].release_pending);
    }
    static const char *const reason[] = {"owner", "epoch", "ceiling"};
    pfi_prom_family(f, "pfi_cap_refused_total", PFI_PROM_COUNTER,
                    "Limit calls refused: another owner's live cap (owner), an epoch below the "
                    "highest seen (epoch), above the prior limit (ceiling).");
    for (int k = 0; k < 3; k++) {
        const char *l[] = {"reason", reason[k], NULL};
        pfi_prom_sample(f, "pfi_cap_refused_total", l, (double)a->cap_refused_total[k]);
    }
}

static void emit_gpus(agent *a, FILE *f)
{
    char gl[16];
    pfi_prom_family(f, "pfi_gpu_info", PFI_PROM_GAUGE, "GPU identity (always 1).");
    for (unsigned g = 0; g < a->n_gpus; g++) {
        gpu_label(gl, sizeof gl, g);
        const char *l[] = {"gpu", gl, "uuid", a->gpus[g].info.uuid, "name", a->gpus[g].info.name,
                           NULL};
        pfi_prom_sample(f, "pfi_gpu_info", l, 1);
    }
    pfi_prom_family(f, "pfi_gpu_up", PFI_PROM_GAUGE, "1 when the last read of the GPU succeeded.");
    for (unsigned g = 0; g < a->n_gpus; g++) {
        gpu_label(gl, sizeof gl, g);
        const char *l[] = {"gpu", gl, NULL};
        pfi_prom_sample(f, "pfi_gpu_up", l, a->gpus[g].sample_ok);
    }
    /* One family per GPU field that has one (gpu_field.h), in SI times the
     * table's factor. */
    for (int k = 0; k < PFI_GF_COUNT; k++) {
        const pfi_gpu_field_desc *d = &pfi_gpu_fields[k];
        if (!d->prom_name) continue;
        int any = 0;
        for (unsigned g = 0; g < a->n_gpus; g++)
            any |= a->gpus[g].sample_ok && pfi_gpu_sample_has(&a->gpus[g].last, d->field);
        if (!any) continue; /* a family the backend cannot read is left out */
        pfi_prom_family(f, d->prom_name, d->prom_counter ? PFI_PROM_COUNTER : PFI_PROM_GAUGE,
                        d->prom_help);
        for (unsigned g = 0; g < a->n_gpus; g++) {
            const agent_gpu *x = &a->gpus[g];
            if (!x->sample_ok || !pfi_gpu_sample_has(&x->last, d->field)) continue;
            gpu_label(gl, sizeof gl, g);
            const char *l[] = {"gpu", gl, NULL};
            pfi_prom_sample(f, d->prom_name, l, x->last.v[k] * d->si_to_prom);
        }
    }
    static const struct {
        const char *name, *help;
        size_t off;
    } lims[] = {
        {"pfi_gpu_power_limit_watts", "Enforced power limit.",
         offsetof(pfi_gpu_limits, enforced_w)},
        {"pfi_gpu_power_limit_default_watts", "Default power limit.",
         offsetof(pfi_gpu_limits, default_w)},
        {"pfi_gpu_power_limit_min_watts", "Lowest settable power limit.",
         offsetof(pfi_gpu_limits, min_w)},
        {"pfi_gpu_power_limit_max_watts", "Highest settable power limit.",
         offsetof(pfi_gpu_limits, max_w)},
    };
    for (size_t k = 0; k < sizeof lims / sizeof lims[0]; k++) {
        pfi_prom_family(f, lims[k].name, PFI_PROM_GAUGE, lims[k].help);
        for (unsigned g = 0; g < a->n_gpus; g++) {
            if (!a->gpus[g].have_limits) continue;
            gpu_label(gl, sizeof gl, g);
            const char *l[] = {"gpu", gl, NULL};
            double v = *(const double *)((const char *)&a->gpus[g].limits + lims[k].off);
            if (v > 0) pfi_prom_sample(f, lims[k].name, l, v);
        }
    }
    /* sample_age_s of /v1/gpus (dcgm only: a backend that reads live has none). */
    int any_age = 0;
    for (unsigned g = 0; g < a->n_gpus; g++)
        any_age |= a->gpus[g].last_t > 0 && isfinite(a->gpus[g].sample_age_s);
    if (any_age) {
        pfi_prom_family(f, "pfi_gpu_sample_age_seconds", PFI_PROM_GAUGE,
                        "How old the data of the GPU's last sample were when read (dcgm: the "
                        "oldest fresh field of the exporter's page).");
        for (unsigned g = 0; g < a->n_gpus; g++) {
            if (!(a->gpus[g].last_t > 0) || !isfinite(a->gpus[g].sample_age_s)) continue;
            gpu_label(gl, sizeof gl, g);
            const char *l[] = {"gpu", gl, NULL};
            pfi_prom_sample(f, "pfi_gpu_sample_age_seconds", l, a->gpus[g].sample_age_s);
        }
    }
    pfi_prom_family(f, "pfi_gpu_externally_limited", PFI_PROM_GAUGE,
                    "1 when an out-of-band limiter holds the enforced limit below the one set.");
    for (unsigned g = 0; g < a->n_gpus; g++) {
        if (!a->gpus[g].have_limits) continue;
        gpu_label(gl, sizeof gl, g);
        const char *l[] = {"gpu", gl, NULL};
        pfi_prom_sample(f, "pfi_gpu_externally_limited", l,
                        agent_gpu_externally_limited(&a->gpus[g]));
    }
    pfi_prom_family(f, "pfi_gpu_cap_watts", PFI_PROM_GAUGE,
                    "Power cap pfid holds on the GPU (absent when none).");
    for (unsigned g = 0; g < a->n_gpus; g++) {
        if (!a->gpus[g].capped) continue;
        gpu_label(gl, sizeof gl, g);
        const char *l[] = {"gpu", gl, NULL};
        pfi_prom_sample(f, "pfi_gpu_cap_watts", l, a->gpus[g].cap_w);
    }
    pfi_prom_family(f, "pfi_gpu_cap_expiry_timestamp_seconds", PFI_PROM_GAUGE,
                    "When the cap expires and the prior limit is restored (Unix time).");
    for (unsigned g = 0; g < a->n_gpus; g++) {
        if (!a->gpus[g].capped) continue;
        gpu_label(gl, sizeof gl, g);
        const char *l[] = {"gpu", gl, NULL};
        pfi_prom_sample(f, "pfi_gpu_cap_expiry_timestamp_seconds", l,
                        agent_cap_wall(a->gpus[g].cap_expires_m));
    }
    emit_owners(a, f);
    pfi_prom_family(f, "pfi_gpu_cap_restore_failed", PFI_PROM_GAUGE,
                    "1 while restoring an expired cap keeps failing (pfid retries).");
    for (unsigned g = 0; g < a->n_gpus; g++) {
        if (!a->gpus[g].capped) continue;
        gpu_label(gl, sizeof gl, g);
        const char *l[] = {"gpu", gl, NULL};
        pfi_prom_sample(f, "pfi_gpu_cap_restore_failed", l, a->gpus[g].restore_failed);
    }
}

static void emit_jobs(agent *a, FILE *f)
{
    size_t n = a->n_jobs;
    job_agg *agg = calloc(n ? n : 1, sizeof *agg);
    if (!agg) return;
    for (size_t i = 0; i < n; i++)
        agent_job_aggregate(a, a->jobs[i], &agg[i]);

    pfi_prom_family(f, "pfi_job_info", PFI_PROM_GAUGE,
                    "A registered job: its GPUs (comma-separated indices), arch and task.");
    for (size_t i = 0; i < n; i++) {
        const agent_job *j = a->jobs[i];
        char gpus[PFI_STORE_MAX_JOB_GPUS * 6] = "";
        size_t off = 0;
        for (size_t k = 0; k < j->rec.n_gpus; k++)
            off += (size_t)snprintf(gpus + off, sizeof gpus - off, "%s%u", k ? "," : "",
                                    j->rec.gpus[k]);
        const char *l[] = {"job_id",    j->rec.id, "gpus",      gpus, "arch",
                           j->rec.arch, "task",    j->rec.task, NULL};
        pfi_prom_sample(f, "pfi_job_info", l, 1);
    }
    pfi_prom_family(f, "pfi_job_phase", PFI_PROM_GAUGE,
                    "1 for the job's current phase (warmup, startup, training), 0 for the others.");
    for (size_t i = 0; i < n; i++)
        for (int p = 0; p < PFI_PHASE_COUNT; p++) {
            const char *l[] = {"job_id", a->jobs[i]->rec.id, "phase",
                               pfi_trace_phase_name((pfi_phase)p), NULL};
            pfi_prom_sample(f, "pfi_job_phase", l, a->jobs[i]->phase == (pfi_phase)p);
        }
#define JOB_SERIES(name, type, help, expr)                                                         \
    do {                                                                                           \
        pfi_prom_family(f, name, type, help);                                                      \
        for (size_t i = 0; i < n; i++) {                                                           \
            const agent_job *j = a->jobs[i];                                                       \
            const char *l[] = {"job_id", j->rec.id, NULL};                                         \
            pfi_prom_sample(f, name, l, (expr));                                                   \
            (void)j;                                                                               \
        }                                                                                          \
    } while (0)
    JOB_SERIES("pfi_job_sla_floor_ratio", PFI_PROM_GAUGE,
               "The job's minimum throughput as a fraction of uncapped (absent: none).",
               j->rec.sla_floor > 0 ? j->rec.sla_floor : NAN);
    JOB_SERIES("pfi_job_exempt", PFI_PROM_GAUGE, "1 when the job must never be capped.",
               (double)j->rec.exempt);
    JOB_SERIES("pfi_job_power_watts", PFI_PROM_GAUGE,
               "Total power of the job's GPUs at the last sample.", j->last_power_w);
    JOB_SERIES("pfi_job_throughput_tokens_per_second", PFI_PROM_GAUGE,
               "The job's last reported throughput.", j->last_tput);
    JOB_SERIES("pfi_job_throughput_sd_tokens_per_second", PFI_PROM_GAUGE,
               "Standard deviation of one throughput report at the limit in force (the "
               "job's curve point there; absent below 2 reports).",
               agent_curve_sd(j));
    JOB_SERIES("pfi_job_throughput_reports_total", PFI_PROM_COUNTER,
               "Throughput reports received for the job.", (double)j->reports);
    JOB_SERIES("pfi_job_steady_power_watts", PFI_PROM_GAUGE,
               "Mean of the top 10% of the job's total power in the training phase "
               "(rolling window).",
               agg[i].power_w);
    JOB_SERIES("pfi_job_steady_throughput_tokens_per_second", PFI_PROM_GAUGE,
               "Mean of the top 10% of the job's throughput reports in the training phase "
               "(rolling window).",
               agg[i].tput);
    JOB_SERIES("pfi_job_pfi_estimate", PFI_PROM_GAUGE,
               "Live PFI estimate from the --model predictor (absent without a model or "
               "before training).",
               agg[i].has_pfi ? agg[i].pfi : NAN);
    JOB_SERIES("pfi_job_pfi_estimate_timestamp_seconds", PFI_PROM_GAUGE,
               "When the newest uncapped sample behind the PFI estimate was taken (Unix "
               "time; it stops moving while the job is capped).",
               agg[i].has_pfi ? agg[i].basis_t : NAN);
#undef JOB_SERIES
    pfi_prom_family(f, "pfi_job_telemetry", PFI_PROM_GAUGE,
                    "Top-10% mean over the training phase of a DCGM field (telemetry.csv "
                    "units: ratios, percent, W per GPU, MHz, MiB, C, bytes/s).");
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < PFI_TM_NFIELDS; k++) {
            const char *l[] = {"job_id", a->jobs[i]->rec.id, "field",
                               pfi_tm_field_name((pfi_tm_field)k), NULL};
            pfi_prom_sample(f, "pfi_job_telemetry", l, agg[i].tm[k]);
        }
    pfi_prom_family(f, "pfi_job_feature", PFI_PROM_GAUGE,
                    "The job's predictor features (paper Fig. 14), from its telemetry.");
    for (size_t i = 0; i < n; i++) {
        if (!agg[i].training) continue;
        pfi_features ft;
        agent_job_features(a, a->jobs[i], &agg[i], &ft);
        for (int k = 0; k < PFI_FEAT_COUNT; k++) {
            if (!(ft.valid & (1u << k))) continue;
            const char *l[] = {"job_id", a->jobs[i]->rec.id, "feature",
                               pfi_feature_name((pfi_feature)k), NULL};
            pfi_prom_sample(f, "pfi_job_feature", l, ft.v[k]);
        }
    }
    free(agg);
}

static void emit_agent(agent *a, FILE *f)
{
    pfi_prom_family(f, "pfi_agent_info", PFI_PROM_GAUGE, "pfid build and configuration.");
    const char *l[] = {"version", PFI_VERSION, "backend", a->o.backend, NULL};
    pfi_prom_sample(f, "pfi_agent_info", l, 1);
    pfi_prom_family(f, "pfi_agent_read_only", PFI_PROM_GAUGE,
                    "1 when pfid never changes GPU settings (--read-only).");
    pfi_prom_sample(f, "pfi_agent_read_only", NULL, a->o.read_only);
    pfi_prom_family(f, "pfi_agent_start_time_seconds", PFI_PROM_GAUGE, "When pfid started.");
    pfi_prom_sample(f, "pfi_agent_start_time_seconds", NULL, a->started_at);
    pfi_prom_family(f, "pfi_agent_jobs", PFI_PROM_GAUGE, "Registered jobs.");
    pfi_prom_sample(f, "pfi_agent_jobs", NULL, (double)a->n_jobs);
    static const struct {
        const char *name, *help;
        size_t off;
    } counters[] = {
        {"pfi_agent_samples_total", "Sampler ticks.", offsetof(agent, samples_total)},
        {"pfi_agent_sample_errors_total", "GPU reads that failed.",
         offsetof(agent, sample_errors_total)},
        {"pfi_agent_store_errors_total", "Sample batches the store could not write.",
         offsetof(agent, store_errors_total)},
        {"pfi_agent_caps_set_total", "Power caps applied.", offsetof(agent, caps_set_total)},
        {"pfi_agent_caps_restored_total", "Prior limits restored.",
         offsetof(agent, caps_restored_total)},
        {"pfi_agent_cap_restore_errors_total", "Failed attempts to restore a prior limit.",
         offsetof(agent, cap_restore_errors_total)},
        {"pfi_agent_cap_drift_total",
         "Times a held cap was found changed on the device (then re-applied).",
         offsetof(agent, cap_drift_total)},
    };
    for (size_t k = 0; k < sizeof counters / sizeof counters[0]; k++) {
        pfi_prom_family(f, counters[k].name, PFI_PROM_COUNTER, counters[k].help);
        pfi_prom_sample(f, counters[k].name, NULL,
                        (double)*(const unsigned long long *)((const char *)a + counters[k].off));
    }
    pfi_prom_family(f, "pfi_node_limit_watts", PFI_PROM_GAUGE,
                    "The node ceiling on the GPUs' summed power (absent when none).");
    if (a->node.set) pfi_prom_sample(f, "pfi_node_limit_watts", NULL, a->node.watts);
    pfi_prom_family(f, "pfi_node_limit_enforcing", PFI_PROM_GAUGE,
                    "1 while the node ceiling's even shares are on the GPUs.");
    pfi_prom_sample(f, "pfi_node_limit_enforcing", NULL, a->node.enforcing);
    pfi_prom_family(f, "pfi_agent_last_sample_duration_seconds", PFI_PROM_GAUGE,
                    "How long the last sampler tick took.");
    pfi_prom_sample(f, "pfi_agent_last_sample_duration_seconds", NULL, a->last_tick_s);
}

char *agent_render_metrics(agent *a, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    emit_gpus(a, f);
    emit_jobs(a, f);
    emit_agent(a, f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static json_t *gpu_json(agent *a, unsigned g)
{
    const agent_gpu *x = &a->gpus[g];
    json_t *o = json_object();
    pfi_json_set(o, "gpu", json_integer(g));
    pfi_json_set(o, "name", json_string(x->info.name));
    pfi_json_set(o, "uuid", json_string(x->info.uuid));
    pfi_json_set(o, "up", json_boolean(x->sample_ok));
    pfi_json_set(o, "sampled_at", x->last_t > 0 ? pfi_json_num(x->last_t) : json_null());
    /* How old the data were when sampled (dcgm: the exporter's page), null
     * for a backend that reads the device live. */
    pfi_json_set(o, "sample_age_s",
                 x->last_t > 0 && isfinite(x->sample_age_s) ? pfi_json_num(x->sample_age_s)
                                                            : json_null());
    pfi_json_set(o, "persistence_mode",
                 x->persistence < 0 ? json_null() : json_boolean(x->persistence));
    json_t *s = json_object();
    /* Every GPU field under its table name, in the Prometheus family's unit
     * (null when not read). */
    for (int f = 0; f < PFI_GF_COUNT; f++) {
        const pfi_gpu_field_desc *d = &pfi_gpu_fields[f];
        if (x->sample_ok && pfi_gpu_sample_has(&x->last, d->field))
            pfi_json_set(s, d->name, pfi_json_num(x->last.v[f] * d->si_to_prom));
        else
            pfi_json_set(s, d->name, json_null());
    }
    pfi_json_set(o, "sample", s);
    if (x->have_limits) {
        json_t *l = json_object();
        pfi_json_set(l, "enforced_w", pfi_json_num(x->limits.enforced_w));
        pfi_json_set(l, "current_w",
                     x->limits.current_w > 0 ? pfi_json_num(x->limits.current_w) : json_null());
        pfi_json_set(l, "default_w", pfi_json_num(x->limits.default_w));
        pfi_json_set(l, "min_w", pfi_json_num(x->limits.min_w));
        pfi_json_set(l, "max_w", pfi_json_num(x->limits.max_w));
        pfi_json_set(l, "externally_limited", json_boolean(agent_gpu_externally_limited(x)));
        pfi_json_set(o, "limits", l);
    } else {
        pfi_json_set(o, "limits", json_null());
    }
    /* The prior limit for every GPU (the controller plans with it as the
     * GPU's maximum), who holds its cap and the highest epoch seen. */
    double prior = agent_gpu_prior_w(x);
    pfi_json_set(o, "prior_w", isfinite(prior) ? pfi_json_num(prior) : json_null());
    pfi_json_set(o, "owner", x->capped ? json_string(x->cap_owner) : json_null());
    pfi_json_set(o, "epoch", x->capped ? json_integer(x->cap_epoch) : json_null());
    pfi_json_set(o, "max_epoch", json_integer(x->st.max_epoch));
    pfi_json_set(o, "release_pending", json_boolean(x->release_pending));
    /* the node ceiling's share on it (node_limit.c): the device holds the
     * lower of it and the cap */
    pfi_json_set(o, "node_share_w", pfi_json_num(x->node_w));
    if (x->capped) {
        json_t *c = json_object();
        pfi_json_set(c, "watts", pfi_json_num(x->cap_w));
        pfi_json_set(c, "set_at", pfi_json_num(x->cap_set_at));
        pfi_json_set(c, "expires_at", pfi_json_num(agent_cap_wall(x->cap_expires_m)));
        pfi_json_set(c, "prior_w", pfi_json_num(x->cap_prior_w));
        pfi_json_set(c, "owner", json_string(x->cap_owner));
        pfi_json_set(c, "epoch", json_integer(x->cap_epoch));
        pfi_json_set(c, "restore_failed", json_boolean(x->restore_failed));
        pfi_json_set(c, "drifting", json_boolean(x->drifting));
        pfi_json_set(o, "cap", c);
    } else {
        pfi_json_set(o, "cap", json_null());
    }
    json_t *jobs = json_array();
    for (size_t i = 0; x->job >= 0 && i < a->n_jobs; i++)
        for (size_t k = 0; k < a->jobs[i]->rec.n_gpus; k++)
            if (a->jobs[i]->rec.gpus[k] == g)
                json_array_append_new(jobs, json_string(a->jobs[i]->rec.id));
    pfi_json_set(o, "jobs", jobs);
    return o;
}

json_t *agent_gpus_json(agent *a)
{
    json_t *arr = json_array();
    for (unsigned g = 0; g < a->n_gpus; g++)
        json_array_append_new(arr, gpu_json(a, g));
    json_t *root = json_object();
    pfi_json_set(root, "gpus", arr);
    return root;
}

json_t *agent_jobs_json(agent *a)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < a->n_jobs; i++)
        json_array_append_new(arr, agent_job_json(a, a->jobs[i]));
    json_t *root = json_object();
    pfi_json_set(root, "jobs", arr);
    return root;
}
