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

int agent_cap_fence(agent *a, unsigned gpu, const agent_caller *by, agent_holder *holder,
                    pfi_error *err)
{
    agent_gpu *x = &a->gpus[gpu];
    pthread_mutex_lock(&a->mu);
    int live = x->capped && !x->release_pending && x->cap_expires_m > agent_cap_now() &&
               !x->cap_owner_unknown;
    agent_holder h = {1, "", 0};
    long long max = x->st.max_epoch;
    pthread_mutex_unlock(&a->mu);
    agent_caller caller = *by;
    char msg[512];
    if (by->epoch < max) {
        snprintf(h.owner, sizeof h.owner, "%s", x->st.max_epoch_owner);
        h.epoch = max;
        snprintf(msg, sizeof msg,
                 "GPU %u: epoch %lld of %s is below the highest seen, %lld of %s: a deposed "
                 "controller is fenced off",
                 gpu, by->epoch, who(by->owner), max, who(h.owner));
        agent_cap_refused(a, gpu, AGENT_REFUSED_EPOCH, &caller, msg);
        if (holder) *holder = h;
        return pfi_error_set(err, PFI_ESTATE, NULL, 0, "%s", msg);
    }
    if (live && strcmp(by->owner, x->cap_owner) != 0) {
        if (by->epoch <= x->cap_epoch) {
            snprintf(h.owner, sizeof h.owner, "%s", x->cap_owner);
            h.epoch = x->cap_epoch;
            snprintf(msg, sizeof msg,
                     "GPU %u's cap is held by %s at epoch %lld until it expires or is released; "
                     "%s at epoch %lld may not change it (a takeover needs a higher epoch)",
                     gpu, who(h.owner), h.epoch, who(by->owner), by->epoch);
            agent_cap_refused(a, gpu, AGENT_REFUSED_OWNER, &caller, msg);
            if (holder) *holder = h;
            return pfi_error_set(err, PFI_ESTATE, NULL, 0, "%s", msg);
        }
        pfi_log("GPU %u: %s at epoch %lld takes over the cap held by %s at epoch %lld", gpu,
                who(by->owner), by->epoch, who(x->cap_owner), x->cap_epoch);
    }
    return PFI_OK;
}
