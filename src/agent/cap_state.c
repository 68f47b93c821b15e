/* A GPU's cap state where a lost store cannot take it (agent.h:
 * agent_state_*).
 *
 * One small JSON file per GPU UUID in --state-dir, beside the per-GPU lock:
 * the prior limit (the site's own), the highest epoch seen and who brought
 * it, and the cap pfid holds, with what decides its expiry across a restart
 * (the boot id and the expiry on the boot clock; the wall-clock fields are
 * for people). A store that lost its -wal, was emptied or moved aside still
 * leaves this: caps.c writes it before the store and the device, so a
 * record here is never older than the store's.
 *
 * Written atomically: a temporary file, fsync, rename, fsync of the
 * directory; a crash leaves the old file or the new one, never half of one.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "pfi/json.h"

#define STATE_VERSION 1

const char *agent_boot_id(void)
{
    static char id[40];
    static int done;
    if (done) return id;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(id, sizeof id, f)) id[0] = '\0';
        fclose(f);
    }
    id[strcspn(id, "\r\n")] = '\0';
    done = 1;
    return id;
}

int agent_state_path(const agent *a, unsigned gpu, char *buf, size_t len)
{
    if (!a->o.state_dir) return -1;
    const char *uuid = a->gpus[gpu].info.uuid;
    char name[128];
    size_t k = 0;
    for (const char *p = uuid; *p && k + 1 < sizeof name; p++)
        name[k++] = ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                     (*p >= '0' && *p <= '9') || *p == '-')
                        ? *p
                        : '_';
    name[k] = '\0';
    if (!k) snprintf(name, sizeof name, "index-%u", gpu);
    int n = snprintf(buf, len, "%s/gpu-%s.json", a->o.state_dir, name);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

double agent_record_num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

void agent_record_str(json_t *o, const char *k, char *buf, size_t len)
{
    json_t *v = json_object_get(o, k);
    snprintf(buf, len, "%s", json_is_string(v) ? json_string_value(v) : "");
}

int agent_state_load(agent *a, unsigned gpu, agent_state *st, pfi_error *err)
{
    memset(st, 0, sizeof *st);
    st->prior_w = st->node_w = NAN;
    char path[4096];
    if (agent_state_path(a, gpu, path, sizeof path) != 0) return PFI_OK;
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        if (access(path, F_OK) != 0 && errno == ENOENT) return PFI_OK;
        return pfi_error_set(err, PFI_EPARSE, path, je.line, "unreadable state file: %s", je.text);
    }
    st->present = 1;
    st->prior_w = agent_record_num(root, "prior_w");
    st->node_w = agent_record_num(root, "node_w");
    double me = agent_record_num(root, "max_epoch");
    st->max_epoch = isfinite(me) && me >= 0 ? (long long)me : 0;
    agent_record_str(root, "max_epoch_owner", st->max_epoch_owner, sizeof st->max_epoch_owner);
    json_t *c = json_object_get(root, "cap");
    if (json_is_object(c)) {
        st->capped = 1;
        st->watts = agent_record_num(c, "watts");
        st->set_at = agent_record_num(c, "set_at");
        st->expires_at = agent_record_num(c, "expires_at");
        st->expires_mono = agent_record_num(c, "expires_mono");
        agent_record_str(c, "boot_id", st->boot_id, sizeof st->boot_id);
        agent_record_str(c, "owner", st->owner, sizeof st->owner);
        double e = agent_record_num(c, "epoch");
        st->epoch = isfinite(e) && e >= 0 ? (long long)e : 0;
    }
    json_decref(root);
    return PFI_OK;
}

static json_t *state_json(const agent *a, unsigned gpu, const agent_state *st)
{
    json_t *o = json_object();
    pfi_json_set(o, "version", json_integer(STATE_VERSION));
    pfi_json_set(o, "uuid", json_string(a->gpus[gpu].info.uuid));
    pfi_json_set(o, "prior_w", isfinite(st->prior_w) ? json_real(st->prior_w) : json_null());
    pfi_json_set(o, "max_epoch", json_integer(st->max_epoch));
    /* a node ceiling's share on the device: what a crash leaves to undo */
    if (isfinite(st->node_w)) pfi_json_set(o, "node_w", json_real(st->node_w));
    pfi_json_set(o, "max_epoch_owner", json_string(st->max_epoch_owner));
    if (st->capped) {
        json_t *c = json_object();
        pfi_json_set(c, "watts", pfi_json_num(st->watts));
        pfi_json_set(c, "owner", json_string(st->owner));
        pfi_json_set(c, "epoch", json_integer(st->epoch));
        pfi_json_set(c, "set_at", pfi_json_num(st->set_at));
        pfi_json_set(c, "expires_at", pfi_json_num(st->expires_at));
        pfi_json_set(c, "boot_id", json_string(st->boot_id));
        pfi_json_set(c, "expires_mono", pfi_json_num(st->expires_mono));
        pfi_json_set(o, "cap", c);
    } else {
        pfi_json_set(o, "cap", json_null());
    }
    return o;
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

int agent_record_save(const agent *a, const char *path, json_t *o, const char *what, pfi_error *err)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    char *text = o ? json_dumps(o, JSON_INDENT(1) | JSON_SORT_KEYS) : NULL;
    if (!text) return pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    int e = 0;
    if (fd < 0) {
        e = errno;
    } else {
        if (write_all(fd, text, strlen(text)) != 0 || write_all(fd, "\n", 1) != 0 || fsync(fd) != 0)
            e = errno ? errno : EIO;
        if (close(fd) != 0 && !e) e = errno;
        if (!e && rename(tmp, path) != 0) e = errno;
        if (e) unlink(tmp);
    }
    free(text);
    if (e) return pfi_error_set(err, PFI_EIO, path, 0, "cannot write %s: %s", what, strerror(e));
    int dfd = open(a->o.state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd); /* the rename itself */
        close(dfd);
    }
    return PFI_OK;
}

int agent_state_save(agent *a, unsigned gpu, const agent_state *st, pfi_error *err)
{
    char path[4096];
    if (agent_state_path(a, gpu, path, sizeof path) != 0) return PFI_OK;
    json_t *o = state_json(a, gpu, st);
    int rc = agent_record_save(a, path, o, "the GPU's state file", err);
    json_decref(o);
    return rc;
}

int agent_state_dir_open(agent *a, pfi_error *err)
{
    if (!a->o.state_dir) return PFI_OK;
    if (mkdir(a->o.state_dir, 0700) != 0 && errno != EEXIST)
        return pfi_error_set(err, PFI_EIO, a->o.state_dir, 0,
                             "cannot create the state directory: %s (set --state-dir)",
                             strerror(errno));
    struct stat sb;
    if (stat(a->o.state_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return pfi_error_set(err, PFI_EIO, a->o.state_dir, 0,
                             "the state directory is not a directory (set --state-dir)");
    for (unsigned g = 0; g < a->n_gpus; g++) {
        pfi_error e;
        if (agent_state_load(a, g, &a->gpus[g].st, &e) != PFI_OK) {
            /* An unreadable file is no record: say so, and go on from the
             * store (the file is rewritten at the next change). */
            char msg[768];
            pfi_error_format(&e, msg, sizeof msg);
            pfi_log("GPU %u: %s; ignored", g, msg);
            memset(&a->gpus[g].st, 0, sizeof a->gpus[g].st);
            a->gpus[g].st.prior_w = a->gpus[g].st.node_w = NAN;
        }
    }
    return PFI_OK;
}
