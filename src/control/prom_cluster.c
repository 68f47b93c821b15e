/* The cluster from Prometheus' aggregates (include/control/pfi/prom_cluster.h). */
#include "pfi/prom_cluster.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/http_client.h"
#include "ctl_index.h"

/* %s is the matcher ({M} or {M,extra}); each query names its rows' labels. */
static const struct {
    const char *fmt; /* with %1$s for "{M}" */
    int by_job;      /* rows keyed by job_id (else by instance) */
    const char *extra;
} Q[PFI_PC_NQ] = {
    [PFI_PC_DOWN] = {"up%s == 0", 0, NULL},
    [PFI_PC_RO] = {"pfi_agent_read_only%s == 1", 0, NULL},
    [PFI_PC_GPUS] = {"count by (instance) (pfi_gpu_power_limit_max_watts%s)", 0, NULL},
    [PFI_PC_MAXSUM] = {"sum by (instance) (pfi_gpu_power_limit_max_watts%s)", 0, NULL},
    [PFI_PC_LO] = {"max by (instance) (pfi_gpu_power_limit_min_watts%s)", 0, NULL},
    [PFI_PC_HI] = {"min by (instance) (pfi_gpu_power_limit_max_watts%s)", 0, NULL},
    /* a node without jobs has no job series: "or 0 * ..." keeps it */
    [PFI_PC_IDLE] =
        {"sum by (instance) (pfi_gpu_power_watts%1$s) - (sum by (instance) "
         "(pfi_job_power_watts%1$s) or 0 * sum by (instance) (pfi_gpu_power_watts%1$s))",
         0, NULL},
    [PFI_PC_CAPPED] = {"count by (instance) (pfi_gpu_cap_watts%s)", 0, NULL},
    [PFI_PC_MEMBERS] = {"pfi_job_info%s", 0, NULL},
    [PFI_PC_JPOWER] = {"sum by (job_id) (pfi_job_power_watts%s)", 1, NULL},
    [PFI_PC_JTPS] = {"sum by (job_id) (pfi_job_throughput_tokens_per_second%s)", 1, NULL},
    [PFI_PC_JPFI] = {"avg by (job_id) (pfi_job_pfi_estimate%s)", 1, NULL},
    [PFI_PC_JTRAIN] = {"min by (job_id) (pfi_job_phase%s)", 1, "phase=\"training\""},
    /* a node with tokens/s but no spread (fewer than 2 reports at its cap,
     * an older pfid) makes the sum NaN: unknown, not the known part */
    [PFI_PC_JTVAR] = {"sum by (job_id) (pfi_job_throughput_sd_tokens_per_second%1$s ^ 2 or "
                      "pfi_job_throughput_tokens_per_second%1$s * NaN)",
                      1, NULL},
    /* any node's "exempt" wins, as does the highest floor: the safe side */
    [PFI_PC_JEXEMPT] = {"max by (job_id) (pfi_job_exempt%s)", 1, NULL},
    [PFI_PC_JFLOOR] = {"max by (job_id) (pfi_job_sla_floor_ratio%s)", 1, NULL},
};

static const char *const L_NODE[] = {"instance"};
static const char *const L_JOB[] = {"job_id"};
static const char *const L_MEMBER[] = {"instance", "job_id", "gpus"};

const char *const *pfi_pc_query_labels(pfi_pc_query q, size_t *n)
{
    if (q == PFI_PC_MEMBERS) {
        *n = 3;
        return L_MEMBER;
    }
    *n = 1;
    return Q[q].by_job ? L_JOB : L_NODE;
}

/* A matcher list is spliced into {...}: refuse what would break out of it. */
static int match_ok(const char *m)
{
    int in = 0;
    for (const char *p = m; *p; p++) {
        if (in && *p == '\\' && p[1])
            p++;
        else if (*p == '"')
            in = !in;
        else if (!in && (*p == '{' || *p == '}' || *p == '\n'))
            return 0;
    }
    return !in;
}

int pfi_pc_query_text(pfi_pc_query q, const char *match, char *buf, size_t len, pfi_error *err)
{
    if ((unsigned)q >= PFI_PC_NQ) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "no such query");
    if (!match) match = "";
    if (!match_ok(match))
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "the label matcher '%.100s' is not a list like job=\"pfid\"", match);
    char sel[1100];
    const char *x = Q[q].extra;
    int n = match[0] || x
                ? snprintf(sel, sizeof sel, "{%s%s%s}", match, match[0] && x ? "," : "", x ? x : "")
                : snprintf(sel, sizeof sel, "%s", ""); /* "{}" is not PromQL */
    if (n < 0 || (size_t)n >= sizeof sel)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "the label matcher is too long");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    n = snprintf(buf, len, Q[q].fmt, sel);
#pragma GCC diagnostic pop
    if (n < 0 || (size_t)n >= len) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "query too long");
    return PFI_OK;
}

/* ---- the view ---- */

typedef struct builder {
    pfi_pc_view *v;
    size_t cap_nodes, cap_jobs, cap_members;
    ctl_index node_ix, job_ix, member_ix;
} builder;

static int node_eq(size_t pos, const void *x)
{
    const void *const *k = x;
    const builder *b = k[0];
    return strcmp(b->v->nodes[pos].instance, (const char *)k[1]) == 0;
}

static int job_eq(size_t pos, const void *x)
{
    const void *const *k = x;
    const builder *b = k[0];
    return strcmp(b->v->jobs[pos].id, (const char *)k[1]) == 0;
}

static void *grow(void *p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return p;
    size_t c = *cap ? 2 * *cap : 64;
    void *q = realloc(p, c * elem);
    if (q) *cap = c;
    return q;
}

static size_t node_find(builder *b, const char *inst, int create, int *oom);
static size_t job_find(builder *b, const char *id, int create, int *oom);

/* The node of that instance, created when asked; SIZE_MAX when the name is
 * unusable (or no memory, then *oom). */
static size_t node_of(builder *b, const char *inst, int create, int *oom, size_t *hint)
{
    if (!inst || !inst[0] || strlen(inst) > PFI_PC_INSTANCE_MAX) return SIZE_MAX;
    /* Prometheus lists the groups of every "by (instance)" query in the same
     * order: the row after the last one found is the first guess */
    if (*hint < b->v->n_nodes && strcmp(b->v->nodes[*hint].instance, inst) == 0) return (*hint)++;
    size_t pos = node_find(b, inst, create, oom);
    *hint = pos == SIZE_MAX ? SIZE_MAX : pos + 1;
    return pos;
}

static size_t node_find(builder *b, const char *inst, int create, int *oom)
{
    uint64_t h = ctl_hash_str(inst);
    const void *k[2] = {b, inst};
    size_t pos = ctl_index_get(&b->node_ix, h, node_eq, k);
    if (pos != SIZE_MAX || !create) return pos;
    pfi_pc_node *arr = grow(b->v->nodes, &b->cap_nodes, b->v->n_nodes, sizeof *arr);
    if (!arr) return *oom = 1, SIZE_MAX;
    b->v->nodes = arr;
    pfi_pc_node *nd = &arr[b->v->n_nodes];
    memset(nd, 0, sizeof *nd);
    memcpy(nd->instance, inst, strlen(inst) + 1); /* length checked by node_of */
    nd->n_gpus = nd->max_sum_w = nd->lo_w = nd->hi_w = nd->idle_w = NAN;
    if (ctl_index_put(&b->node_ix, h, b->v->n_nodes) != 0) return *oom = 1, SIZE_MAX;
    return b->v->n_nodes++;
}

static size_t job_of(builder *b, const char *id, int create, int *oom, size_t *hint)
{
    if (!id || !id[0] || strlen(id) > PFI_CL_ID_MAX) return SIZE_MAX;
    if (*hint < b->v->n_jobs && strcmp(b->v->jobs[*hint].id, id) == 0) return (*hint)++;
    size_t pos = job_find(b, id, create, oom);
    *hint = pos == SIZE_MAX ? SIZE_MAX : pos + 1;
    return pos;
}

static size_t job_find(builder *b, const char *id, int create, int *oom)
{
    uint64_t h = ctl_hash_str(id);
    const void *k[2] = {b, id};
    size_t pos = ctl_index_get(&b->job_ix, h, job_eq, k);
    if (pos != SIZE_MAX || !create) return pos;
    pfi_pc_job *arr = grow(b->v->jobs, &b->cap_jobs, b->v->n_jobs, sizeof *arr);
    if (!arr) return *oom = 1, SIZE_MAX;
    b->v->jobs = arr;
    pfi_pc_job *j = &arr[b->v->n_jobs];
    memset(j, 0, sizeof *j);
    memcpy(j->id, id, strlen(id) + 1); /* length checked by job_of */
    j->power_w = j->tokens_per_s = j->pfi = j->tokens_var = j->sla_floor = NAN;
    if (ctl_index_put(&b->job_ix, h, b->v->n_jobs) != 0) return *oom = 1, SIZE_MAX;
    return b->v->n_jobs++;
}

/* "0,1,7": distinct indices in [0, 1e6], at most PFI_CL_JOB_GPUS. */
static int parse_gpus(const char *s, unsigned *out, size_t *n)
{
    *n = 0;
    if (!s || !*s) return -1;
    for (;;) {
        if (*s < '0' || *s > '9') return -1;
        unsigned long x = 0;
        int digits = 0;
        while (*s >= '0' && *s <= '9') {
            x = x * 10 + (unsigned long)(*s++ - '0');
            if (++digits > 7) return -1;
        }
        if (x > 1000000 || *n == PFI_CL_JOB_GPUS) return -1;
        for (size_t k = 0; k < *n; k++)
            if (out[k] == x) return -1;
        out[(*n)++] = (unsigned)x;
        if (!*s) return 0;
        if (*s++ != ',') return -1;
    }
}

static int member_eq(size_t pos, const void *x)
{
    const void *const *k = x;
    const builder *b = k[0];
    const size_t *nj = k[1];
    return b->v->members[pos].node == nj[0] && b->v->members[pos].job == nj[1];
}

int pfi_pc_view_build(const pfi_prom_vec a[PFI_PC_NQ], pfi_pc_view *out, pfi_error *err)
{
    pfi_pc_view v = {0};
    builder b = {.v = &v};
    int oom = 0;
    /* members first: they make the jobs (a job without GPUs cannot be capped) */
    const pfi_prom_vec *m = &a[PFI_PC_MEMBERS];
    size_t nh = SIZE_MAX, jh = SIZE_MAX;
    for (size_t i = 0; i < m->n && !oom; i++) {
        pfi_pc_member mb = {0};
        size_t nd = node_of(&b, pfi_prom_vec_label(m, i, 0), 1, &oom, &nh);
        if (nd == SIZE_MAX || parse_gpus(pfi_prom_vec_label(m, i, 2), mb.gpus, &mb.n_gpus) != 0) {
            v.skipped++;
            continue;
        }
        size_t j = job_of(&b, pfi_prom_vec_label(m, i, 1), 1, &oom, &jh);
        if (j == SIZE_MAX) {
            v.skipped += !oom;
            continue;
        }
        mb.node = nd;
        mb.job = j;
        size_t key[2] = {nd, j};
        const void *k[2] = {&b, key};
        uint64_t h = ctl_hash_2(nd, j);
        if (ctl_index_get(&b.member_ix, h, member_eq, k) != SIZE_MAX) {
            v.skipped++; /* the same job twice on a node (two series): the first counts */
            continue;
        }
        pfi_pc_member *arr = grow(v.members, &b.cap_members, v.n_members, sizeof *arr);
        if (!arr || ctl_index_put(&b.member_ix, h, v.n_members) != 0) {
            if (arr) v.members = arr;
            oom = 1;
            break;
        }
        v.members = arr;
        arr[v.n_members++] = mb;
    }
    for (int q = 0; q < PFI_PC_NQ && !oom; q++) {
        if (q == PFI_PC_MEMBERS) continue;
        const pfi_prom_vec *x = &a[q];
        size_t hint = SIZE_MAX;
        for (size_t i = 0; i < x->n && !oom; i++) {
            double val = x->values[i];
            const char *key = pfi_prom_vec_label(x, i, 0);
            if (Q[q].by_job) {
                size_t j = job_of(&b, key, 0, &oom, &hint);
                if (j == SIZE_MAX || !isfinite(val)) continue; /* a job with no GPUs known */
                pfi_pc_job *jb = &v.jobs[j];
                if (q == PFI_PC_JPOWER)
                    jb->power_w = val;
                else if (q == PFI_PC_JTPS)
                    jb->tokens_per_s = val;
                else if (q == PFI_PC_JPFI)
                    jb->pfi = val;
                else if (q == PFI_PC_JTRAIN)
                    jb->training = val == 1;
                else if (q == PFI_PC_JTVAR)
                    jb->tokens_var = val >= 0 ? val : NAN;
                else if (q == PFI_PC_JEXEMPT)
                    jb->exempt = val > 0;
                else if (q == PFI_PC_JFLOOR)
                    jb->sla_floor = val > 0 && val <= 1 ? val : NAN;
                continue;
            }
            size_t n = node_of(&b, key, 1, &oom, &hint);
            if (n == SIZE_MAX) {
                v.skipped += !oom;
                continue;
            }
            pfi_pc_node *nd = &v.nodes[n];
            if (q == PFI_PC_DOWN)
                nd->down = 1;
            else if (q == PFI_PC_RO)
                nd->read_only = 1;
            else if (!isfinite(val))
                continue;
            else if (q == PFI_PC_GPUS)
                nd->n_gpus = val;
            else if (q == PFI_PC_MAXSUM)
                nd->max_sum_w = val;
            else if (q == PFI_PC_LO)
                nd->lo_w = val;
            else if (q == PFI_PC_HI)
                nd->hi_w = val;
            else if (q == PFI_PC_IDLE)
                nd->idle_w = val > 0 ? val : 0;
            else if (q == PFI_PC_CAPPED)
                nd->capped = val;
        }
    }
    ctl_index_free(&b.node_ix);
    ctl_index_free(&b.job_ix);
    ctl_index_free(&b.member_ix);
    if (oom) {
        pfi_pc_view_clear(&v);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    pfi_pc_view_clear(out);
    *out = v;
    return PFI_OK;
}

void pfi_pc_view_clear(pfi_pc_view *v)
{
    if (!v) return;
    free(v->nodes);
    free(v->jobs);
    free(v->members);
    memset(v, 0, sizeof *v);
}

/* ---- the queries over HTTP ---- */

int pfi_pc_fetch(const char *base, const char *match, double timeout_s, pfi_prom_vec a[PFI_PC_NQ],
                 pfi_error *err)
{
    struct {
        CURL *h;
        struct curl_slist *hdrs;
        pfi_http_buf buf;
        char *body;
        CURLcode cc;
    } x[PFI_PC_NQ];
    memset(x, 0, sizeof x);
    for (int q = 0; q < PFI_PC_NQ; q++)
        pfi_prom_vec_free(&a[q]);
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/')
        n--;
    char url[1024];
    snprintf(url, sizeof url, "%.*s/api/v1/query", (int)(n < 900 ? n : 900), base);
    CURLM *mh = curl_multi_init();
    int rc = mh ? PFI_OK : pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (int q = 0; q < PFI_PC_NQ && rc == PFI_OK; q++) {
        char text[4096];
        rc = pfi_pc_query_text((pfi_pc_query)q, match, text, sizeof text, err);
        if (rc != PFI_OK) break;
        x[q].h = pfi_http_handle();
        char *e = x[q].h ? curl_easy_escape(x[q].h, text, 0) : NULL;
        x[q].body = e ? malloc(strlen(e) + 8) : NULL;
        if (!x[q].body) {
            curl_free(e);
            rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
            break;
        }
        /* POST: long queries do not fit every proxy's URL limit */
        sprintf(x[q].body, "query=%s", e);
        curl_free(e);
        pfi_http_req r = {.method = "POST",
                          .url = url,
                          .body = x[q].body,
                          .content_type = "application/x-www-form-urlencoded",
                          .timeout_s = timeout_s,
                          .user_agent = "pfi-control/" PFI_VERSION};
        pfi_http_setup(x[q].h, &r, &x[q].buf, &x[q].hdrs);
        curl_easy_setopt(x[q].h, CURLOPT_PRIVATE, (char *)&x[q]);
        if (q != PFI_PC_JEXEMPT) curl_multi_add_handle(mh, x[q].h);
    }
    /* The exempt flags are asked once the other answers are in: Prometheus
     * evaluates each query when it gets it, so a job registered (scraped)
     * while they ran, in MEMBERS, has its flag in the later answer; asked
     * together, it could be missing there and the job capped for a period. */
    for (int round = 0; round < 2 && rc == PFI_OK; round++) {
        if (round == 1) curl_multi_add_handle(mh, x[PFI_PC_JEXEMPT].h);
        int running = 1;
        while (running) {
            if (curl_multi_perform(mh, &running) != CURLM_OK) break;
            if (running) curl_multi_poll(mh, NULL, 0, 100, NULL);
        }
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(mh, &left)))
            if (msg->msg == CURLMSG_DONE)
                for (int q = 0; q < PFI_PC_NQ; q++)
                    if (x[q].h == msg->easy_handle) x[q].cc = msg->data.result;
    }
    for (int q = 0; q < PFI_PC_NQ && rc == PFI_OK; q++) {
        long st = 0;
        size_t nl;
        const char *const *labels = pfi_pc_query_labels((pfi_pc_query)q, &nl);
        pfi_error pe;
        pfi_error_clear(&pe);
        char text[4096]; /* said in an error: which query */
        pfi_pc_query_text((pfi_pc_query)q, match, text, sizeof text, NULL);
        pfi_http_req r = {.method = "POST", .url = url};
        if ((rc = pfi_http_finish(x[q].h, x[q].cc, &r, &x[q].buf, &st, err)) != PFI_OK)
            ;
        else if ((rc = pfi_prom_vec_parse(x[q].buf.data, x[q].buf.len, labels, nl, &a[q], &pe)) !=
                 PFI_OK)
            pfi_error_set(err, rc, NULL, 0, "'%.120s' (HTTP %ld): %.300s", text, st, pe.msg);
        else if (st != 200)
            rc = pfi_error_set(err, PFI_EIO, NULL, 0, "'%.120s': HTTP %ld", text, st);
    }
    for (int q = 0; q < PFI_PC_NQ; q++) {
        if (x[q].h) {
            if (mh) curl_multi_remove_handle(mh, x[q].h);
            curl_easy_cleanup(x[q].h);
        }
        curl_slist_free_all(x[q].hdrs);
        pfi_http_buf_free(&x[q].buf);
        free(x[q].body);
        if (rc != PFI_OK) pfi_prom_vec_free(&a[q]);
    }
    if (mh) curl_multi_cleanup(mh);
    return rc;
}
