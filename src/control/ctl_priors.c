/* The learn policy's prior points: what pfid has observed of each job's
 * curve (GET /v1/jobs/ID/curve) before this controller saw the job, read
 * once per job and process (the controller's own readings follow it from
 * then on). A job on several nodes: its points at the caps every node has
 * seen, powers and tokens/s summed, spreads added in quadrature. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_internal.h"

typedef struct prior_ctx {
    const ctl_jobs *J;
    const char *id;
} prior_ctx;

static int prior_eq(size_t pos, const void *x)
{
    const prior_ctx *k = x;
    return strcmp(k->J->priors[pos].job, k->id) == 0;
}

const ctl_prior *ctl_prior_find(const ctl_jobs *J, const char *id)
{
    prior_ctx k = {J, id};
    size_t pos = ctl_index_get(&J->prior_ix, ctl_hash_str(id), prior_eq, &k);
    return pos == SIZE_MAX ? NULL : &J->priors[pos];
}

void ctl_priors_free(ctl_jobs *J)
{
    for (size_t i = 0; i < J->n_priors; i++)
        free(J->priors[i].pts);
    free(J->priors);
    ctl_index_free(&J->prior_ix);
}

/* pfid's job ids are URL-safe; anything else is not asked for. */
static int url_safe(const char *s)
{
    for (; *s; s++)
        if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') || ('0' <= *s && *s <= '9') ||
              strchr("._:@+-", *s)))
            return 0;
    return 1;
}

/* The points of one job from its nodes' answers a[0..k). */
static size_t combine(pfi_cl_point *const *a, const size_t *na, size_t k, pfi_plan_obs *out)
{
    size_t m = 0;
    for (size_t i = 0; k && i < na[0]; i++) {
        pfi_plan_obs o = {a[0][i].cap_w, a[0][i].power_w, a[0][i].tput,
                          a[0][i].tput_sd * a[0][i].tput_sd / a[0][i].n};
        int all = 1;
        for (size_t r = 1; r < k && all; r++) {
            size_t q;
            for (q = 0; q < na[r] && fabs(a[r][q].cap_w - o.cap_w) > 0.5; q++)
                continue;
            if (q == na[r]) {
                all = 0;
                break;
            }
            o.power_w += a[r][q].power_w;
            o.tput += a[r][q].tput;
            o.tput_sd += a[r][q].tput_sd * a[r][q].tput_sd / a[r][q].n;
        }
        if (!all) continue;
        o.tput_sd = sqrt(o.tput_sd); /* the SD of the point's mean */
        out[m++] = o;
    }
    return m;
}

void ctl_priors_fetch(ctl_jobs *J, pfi_agents *agents)
{
    /* one request per (job without priors, node of the job) */
    size_t room = 0;
    for (size_t i = 0; i < J->n; i++)
        if (!ctl_prior_find(J, J->v[i].id)) room += J->v[i].n_gpus;
    if (room == 0) return;
    size_t *agent = calloc(room, sizeof *agent), *owner = calloc(room, sizeof *owner);
    char **path = calloc(room, sizeof *path), **body = calloc(room, sizeof *body);
    long *status = calloc(room, sizeof *status);
    size_t *len = calloc(room, sizeof *len), n = 0;
    for (size_t i = 0; agent && owner && path && body && status && len && i < J->n; i++) {
        const ctl_job *j = &J->v[i];
        if (ctl_prior_find(J, j->id) || !url_safe(j->id)) continue;
        for (size_t g = 0; g < j->n_gpus; g++) {
            int asked = 0; /* this node, among the job's requests (the last ones) */
            for (size_t q = n; q > 0 && owner[q - 1] == i && !asked; q--)
                asked = agent[q - 1] == j->gpu_agent[g];
            if (asked) continue;
            char *pa = malloc(sizeof j->id + 32);
            if (!pa) break;
            snprintf(pa, sizeof j->id + 32, "/v1/jobs/%s/curve", j->id);
            agent[n] = j->gpu_agent[g];
            owner[n] = i;
            path[n++] = pa;
        }
    }
    if (n) pfi_agents_get_many(agents, agent, (const char *const *)path, n, status, body, len);
    for (size_t s = 0; s < n;) {
        size_t e = s;
        while (e < n && owner[e] == owner[s])
            e++;
        /* every node answered (a 404: it has no points) or the job waits for the next period */
        pfi_cl_point *pts[PFI_CL_JOB_GPUS] = {0};
        size_t np[PFI_CL_JOB_GPUS] = {0}, k = 0, total = 0;
        int ok = e - s <= PFI_CL_JOB_GPUS;
        for (size_t r = s; ok && r < e; r++) {
            pfi_error err;
            pfi_error_clear(&err);
            if (status[r] == 404) {
                np[k] = 0;
                pts[k++] = NULL;
            } else if (status[r] != 200 ||
                       pfi_cl_parse_curve(body[r], len[r], &pts[k], &np[k], &err) != PFI_OK) {
                if (status[r] == 200) pfi_log("%s: %s", path[r], err.msg);
                ok = status[r] == 200; /* a bad answer is not asked again */
                pts[k] = NULL;
                np[k++] = 0;
            } else {
                total += np[k++];
            }
        }
        ctl_prior *arr = NULL;
        if (ok && (arr = realloc(J->priors, (J->n_priors + 1) * sizeof *arr))) {
            J->priors = arr;
            ctl_prior *p = &J->priors[J->n_priors];
            snprintf(p->job, sizeof p->job, "%s", J->v[owner[s]].id);
            p->pts = calloc(total + 1, sizeof *p->pts);
            p->n = p->pts ? combine(pts, np, k, p->pts) : 0;
            if (p->n)
                pfi_log("learn: job %s: %zu curve point(s) from pfid as priors", p->job, p->n);
            ctl_index_put(&J->prior_ix, ctl_hash_str(p->job), J->n_priors++);
        }
        for (size_t r = 0; r < k; r++)
            free(pts[r]);
        s = e;
    }
    for (size_t s = 0; s < n; s++) {
        free(path[s]);
        free(body[s]);
    }
    free(agent);
    free(owner);
    free(path);
    free(body);
    free(status);
    free(len);
}
