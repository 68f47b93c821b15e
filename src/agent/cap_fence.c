/* Caps have an owner and an epoch (agent.h: agent_cap_fence).
 *
 * A controller sends Pfi-Owner (its id) and Pfi-Epoch (its term, raised by
 * each takeover) with every PUT and DELETE of a limit. pfid keeps the
 * highest epoch seen per GPU in the GPU's state file, so it survives
 * restarts and lost stores, and refuses with 409:
 *
 *  - an epoch below that highest one: a deposed leader, fenced;
 *  - another owner while a live cap (unexpired, not released) is held,
 *    unless its epoch is strictly higher than the holder's: that is an HA
 *    takeover, accepted and logged.
 *
 * The same owner is accepted as before, and so is anyone on a cap recovered
 * from a store row alone, whose owner was not recorded. Refusals are counted by reason and
 * logged once per refused owner, not per request (a fenced controller
 * retries every period).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

static int owner_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == ':' || c == '@' || c == '-';
}

int agent_caller_parse(const char *owner, const char *epoch, agent_caller *out, pfi_error *err)
{
    memset(out, 0, sizeof *out);
    if (owner) {
        size_t n = strlen(owner);
        if (n < 1 || n > AGENT_OWNER_MAX)
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "Pfi-Owner must be 1-%d characters of [A-Za-z0-9._:@-]",
                                 AGENT_OWNER_MAX);
        for (size_t i = 0; i < n; i++)
            if (!owner_char(owner[i]))
                return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                     "Pfi-Owner must be 1-%d characters of [A-Za-z0-9._:@-]",
                                     AGENT_OWNER_MAX);
        memcpy(out->owner, owner, n + 1);
    }
    if (epoch) {
        char *end;
        errno = 0;
        long long e = strtoll(epoch, &end, 10);
        if (errno || end == epoch || *end || e < 0 || epoch[0] < '0' || epoch[0] > '9')
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "Pfi-Epoch must be an integer >= 0, not '%.40s'", epoch);
        out->epoch = e;
    }
    return PFI_OK;
}

static const char *who(const char *owner)
{
    return *owner ? owner : "(anonymous)";
}

void agent_cap_refused(agent *a, unsigned gpu, agent_refusal why, const agent_caller *by,
                       const char *msg)
{
    agent_gpu *x = &a->gpus[gpu];
    pthread_mutex_lock(&a->mu);
    a->cap_refused_total[why]++;
    a->gen++;
    pthread_mutex_unlock(&a->mu);
    if (x->refused_logged && strcmp(x->refused_owner, by->owner) == 0) return;
    snprintf(x->refused_owner, sizeof x->refused_owner, "%s", by->owner);
    x->refused_logged = 1;
    pfi_log("%s (logged once per owner; pfi_cap_refused_total counts them)", msg);
}

int agent_fence_decide(const agent_fence *f, const char *what, const char *thing,
                       const agent_caller *by, agent_holder *h, agent_refusal *why, char *msg,
                       size_t len)
{
    if (by->epoch < f->max_epoch) {
        snprintf(msg, len,
                 "%s: epoch %lld of %s is below the highest seen, %lld of %s: a deposed "
                 "controller is fenced off",
                 what, by->epoch, who(by->owner), f->max_epoch, who(f->max_owner));
        *h = (agent_holder){1, "", f->max_epoch};
        snprintf(h->owner, sizeof h->owner, "%s", f->max_owner);
        *why = AGENT_REFUSED_EPOCH;
        return PFI_ESTATE;
    }
    if (f->live && strcmp(by->owner, f->holder) != 0) {
        if (by->epoch <= f->holder_epoch) {
            snprintf(msg, len,
                     "%s's %s is held by %s at epoch %lld until it expires or is released; "
                     "%s at epoch %lld may not change it (a takeover needs a higher epoch)",
                     what, thing, who(f->holder), f->holder_epoch, who(by->owner), by->epoch);
            *h = (agent_holder){1, "", f->holder_epoch};
            snprintf(h->owner, sizeof h->owner, "%s", f->holder);
            *why = AGENT_REFUSED_OWNER;
            return PFI_ESTATE;
        }
        pfi_log("%s: %s at epoch %lld takes over the %s held by %s at epoch %lld", what,
                who(by->owner), by->epoch, thing, who(f->holder), f->holder_epoch);
    }
    return PFI_OK;
}

int agent_cap_fence(agent *a, unsigned gpu, const agent_caller *by, agent_holder *holder,
                    pfi_error *err)
{
    agent_gpu *x = &a->gpus[gpu];
    agent_fence f;
    pthread_mutex_lock(&a->mu);
    f.live = x->capped && !x->release_pending && x->cap_expires_m > agent_cap_now() &&
             !x->cap_owner_unknown;
    snprintf(f.holder, sizeof f.holder, "%s", x->cap_owner);
    f.holder_epoch = x->cap_epoch;
    f.max_epoch = x->st.max_epoch;
    snprintf(f.max_owner, sizeof f.max_owner, "%s", x->st.max_epoch_owner);
    pthread_mutex_unlock(&a->mu);
    char what[64], msg[512];
    snprintf(what, sizeof what, "GPU %u", gpu);
    agent_holder h = {0};
    agent_refusal why;
    int rc = agent_fence_decide(&f, what, "cap", by, &h, &why, msg, sizeof msg);
    if (rc == PFI_OK) return PFI_OK;
    agent_cap_refused(a, gpu, why, by, msg);
    if (holder) *holder = h;
    return pfi_error_set(err, PFI_ESTATE, NULL, 0, "%s", msg);
}
