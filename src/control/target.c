/* The timeline rule of include/control/pfi/target.h. */
#include "pfi/target.h"

#include <math.h>
#include <string.h>

const char *pfi_target_source_name(pfi_target_source s)
{
    switch (s) {
    case PFI_TARGET_API:
        return "api";
    case PFI_TARGET_SCHEDULE:
        return "schedule";
    case PFI_TARGET_OPENADR:
        return "openadr";
    }
    return "?";
}

int pfi_target_validate(const pfi_target *t, pfi_error *err)
{
    size_t n = strnlen(t->id, sizeof t->id);
    if (n == 0 || n > PFI_TARGET_ID_MAX)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "a target needs an id of 1-%d characters",
                             PFI_TARGET_ID_MAX);
    if (!(t->limit_w >= 0 && t->limit_w <= PFI_TARGET_MAX_W))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "target %s: the limit must be in [0, 1e12] W", t->id);
    if (!isfinite(t->start))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "target %s: no start", t->id);
    if (!(t->end > t->start))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "target %s: its end must come after its start", t->id);
    if (!(t->ramp_w_per_s >= 0 && isfinite(t->ramp_w_per_s)))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "target %s: the ramp must be a finite number >= 0 W/s", t->id);
    if (t->priority < 0)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "target %s: a priority is >= 0", t->id);
    return PFI_OK;
}

double pfi_target_gpu_budget(const pfi_target *t, double other_w, double margin_w)
{
    if (t->kind == PFI_TARGET_GPU) return t->limit_w;
    double b = t->limit_w - other_w - margin_w;
    return b > 0 ? b : 0;
}

static int in_force(const pfi_target *t, double at)
{
    return t->start <= at && at < t->end;
}

/* Whether a beats b under rule 4 (with budgets ba, bb). */
static int better(const pfi_target *a, double ba, const pfi_target *b, double bb)
{
    if (ba != bb) return ba < bb;
    if (a->start != b->start) return a->start < b->start;
    return strcmp(a->id, b->id) < 0;
}

void pfi_target_eval(const pfi_target *ts, size_t n, double t, double other_w, double margin_w,
                     pfi_target_now *out)
{
    memset(out, 0, sizeof *out);
    out->site_limit_w = NAN;
    /* Rule 2: defaults only where nothing else is in force. */
    int any_regular = 0;
    for (size_t i = 0; i < n; i++)
        any_regular |= in_force(&ts[i], t) && !ts[i].is_default;
    /* Rule 3: the best OpenADR priority among the candidates. */
    long best_prio = PFI_TARGET_NO_PRIORITY;
    for (size_t i = 0; i < n; i++)
        if (in_force(&ts[i], t) && ts[i].is_default == !any_regular &&
            ts[i].source == PFI_TARGET_OPENADR && ts[i].priority < best_prio)
            best_prio = ts[i].priority;
    double best_b = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const pfi_target *c = &ts[i];
        if (!in_force(c, t) || c->is_default != !any_regular) continue;
        if (c->source == PFI_TARGET_OPENADR && c->priority != best_prio) continue;
        double b = pfi_target_gpu_budget(c, other_w, margin_w);
        if (!out->active || better(c, b, &ts[out->winner], best_b)) {
            out->active = 1;
            out->winner = i;
            best_b = b;
        }
    }
    if (!out->active) return;
    const pfi_target *w = &ts[out->winner];
    out->gpu_budget_w = best_b;
    out->site_limit_w = w->kind == PFI_TARGET_SITE ? w->limit_w : NAN;
    out->until = w->end;
    out->ramp_w_per_s = w->ramp_w_per_s;
}

void pfi_target_eval_ahead(const pfi_target *ts, size_t n, double t, double lead_s, double other_w,
                           double margin_w, pfi_target_now *out)
{
    pfi_target_eval(ts, n, t, other_w, margin_w, out);
    /* The answer changes only where a target starts or ends: look at each
     * such instant in (t, t + lead_s]. A raise is never taken early: the
     * lower budget in force now stays the minimum until it ends. */
    for (double at = t; lead_s > 0;) {
        double next = pfi_target_next_change(ts, n, at);
        if (!(next <= t + lead_s)) break;
        pfi_target_now o;
        pfi_target_eval(ts, n, next, other_w, margin_w, &o);
        if (o.active && (!out->active || o.gpu_budget_w < out->gpu_budget_w)) *out = o;
        at = next;
    }
}

double pfi_target_next_change(const pfi_target *ts, size_t n, double t)
{
    double next = INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (ts[i].start > t && ts[i].start < next) next = ts[i].start;
        if (ts[i].end > t && ts[i].end < next) next = ts[i].end;
    }
    return next;
}

double pfi_target_ramp(double prev_w, double want_w, double dt_s, double ramp_w_per_s)
{
    if (!isfinite(prev_w) || want_w <= prev_w || !(ramp_w_per_s > 0)) return want_w;
    double up = prev_w + ramp_w_per_s * (dt_s > 0 ? dt_s : 0);
    return up < want_w ? up : want_w;
}
