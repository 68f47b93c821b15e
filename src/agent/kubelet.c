/* Jobs from Kubernetes: every --kubelet-interval, which pod holds which GPU
 * (the kubelet's PodResources List, or the pod labels of the dcgm-exporter
 * page pfid reads) joined with the pods' labels and annotations (a PodList
 * from --pods-url: the API server's pods on this node, or the kubelet's
 * /pods), grouped into jobs, and registered in the job registry as a
 * POST /v1/jobs would. The job id is "NAMESPACE:GROUP" (the first group
 * label a pod has: JobSet, Kueue pod group, Kubeflow, KubeRay, batch Job),
 * the same on every node, so the controller, which merges jobs across agents
 * by id, gives a multi-node job one cap. Without --pods-url a pod is a job
 * of its own ("NAMESPACE:POD").
 *
 * Ownership: the ids of the form NAMESPACE:NAME (a DNS label, a colon) are
 * this poller's. A running one whose pods are gone is ended, and so is one
 * restored from the store at start whose pods are no longer there. When a
 * job ends here or its GPUs change (a pod moved or was replaced), the caps
 * on the GPUs it leaves are restored: the next pod on them starts uncapped.
 * A failed read changes nothing (a kubelet restart must not end every
 * job); a pod the PodList does not show yet waits for the next poll.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "agent.h"
#include "pfi/k8s.h"
#include "pfi/kubelet.h"
#include "pfi/prom.h"

#define MAX_LABELS 16
#define TIMEOUT_MS 5000

typedef struct want {
    pfi_store_job rec;
    char pods[160];    /* "ns/pod, ..." for the log */
    char warning[512]; /* a pod's bad annotation or label, logged at registration */
} want;

struct agent_k8s {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop, started;
    char labels_buf[1024];
    const char *labels[MAX_LABELS + 1];
    char last_error[512]; /* the last poll's failure, "" after a good one */
    unsigned unmatched;   /* devices matching no GPU at the last poll */
    /* The ids whose registration failed at the last poll: said once, not
     * every poll while the GPU stays busy. */
    char (*failed)[PFI_STORE_JOB_ID_MAX + 1];
    size_t n_failed, n_failed_now;
};

const char agent_k8s_help[] =
    "Kubernetes (docs/kubernetes.md):\n"
    "  --kubelet-socket PATH  register the node's pods as jobs from the kubelet's\n"
    "                    PodResources API (/var/lib/kubelet/pod-resources/kubelet.sock)\n"
    "  --k8s-from-dcgm   the same from dcgm-exporter's pod labels (--backend dcgm)\n"
    "  --kubelet-interval S  how often (default --interval)\n"
    "  --pods-url URL    the pods' labels and annotations: a PodList (the API\n"
    "                    server's .../pods?fieldSelector=spec.nodeName=NODE);\n"
    "                    without it a pod is a job of its own\n"
    "  --pods-token-file F, --pods-ca-file F  its bearer token and CA\n"
    "  --k8s-group-labels L,...  label keys naming a pod's job (default JobSet,\n"
    "                    Kueue pod group, Kubeflow, KubeRay, batch Job)\n"
    "\n";

const char *agent_k8s_check(const agent_opts *o)
{
    if (o->k8s.from_dcgm && (strcmp(o->backend, "dcgm") != 0 || o->k8s.socket))
        return "--k8s-from-dcgm needs --backend dcgm and no --kubelet-socket";
    if (!o->k8s.socket && !o->k8s.from_dcgm &&
        (o->k8s.pods_url || o->k8s.pods_token || o->k8s.pods_ca || o->k8s.interval_s > 0 ||
         o->k8s.group_labels))
        return "the pod options need --kubelet-socket or --k8s-from-dcgm";
    return NULL;
}

/* NAMESPACE:NAME with NAMESPACE a DNS label: the ids this poller owns. */
static int k8s_id(const char *id)
{
    const char *c = strchr(id, ':');
    if (!c || c == id || c - id > PFI_K8S_NS_MAX || !c[1]) return 0;
    for (const char *p = id; p < c; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) return 0;
    return 1;
}

/* A device's GPU: the source's index, else the UUID (a MIG instance's
 * "UUID#GI" is its GPU's), else a bare index (DEVICE_ID_STRATEGY=index). */
static int device_gpu(const agent *a, const pfi_k8s_gpu *e)
{
    if (e->index >= 0) return e->index < (int)a->n_gpus ? e->index : -1;
    size_t n = strcspn(e->device, "#");
    for (unsigned g = 0; g < a->n_gpus; g++)
        if (a->gpus[g].info.uuid[0] && strlen(a->gpus[g].info.uuid) == n &&
            strncasecmp(a->gpus[g].info.uuid, e->device, n) == 0)
            return (int)g;
    char *end;
    long g = strtol(e->device, &end, 10);
    if (end != e->device && !*end && g >= 0 && g < (long)a->n_gpus) return (int)g;
    return -1;
}

static const pfi_k8s_pod *find_pod(const pfi_k8s_pod *pods, size_t n, const char *ns,
                                   const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(pods[i].name, name) == 0 && strcmp(pods[i].ns, ns) == 0) return &pods[i];
    return NULL;
}

static int cmp_unsigned(const void *x, const void *y)
{
    unsigned a = *(const unsigned *)x, b = *(const unsigned *)y;
    return a < b ? -1 : a > b;
}

/* Adds GPU g of pod (ns, name) to the job `id`; returns the wants' count. */
static size_t add_want(want **w, size_t n, size_t *cap, const char *id, const pfi_k8s_pod *meta,
                       const pfi_k8s_gpu *e, unsigned g)
{
    size_t i = 0;
    while (i < n && strcmp((*w)[i].rec.id, id) != 0)
        i++;
    if (i == n) {
        if (n == *cap) {
            size_t nc = *cap ? 2 * *cap : 8;
            want *q = realloc(*w, nc * sizeof *q);
            if (!q) return n;
            *w = q;
            *cap = nc;
        }
        want *x = &(*w)[n++];
        memset(x, 0, sizeof *x);
        snprintf(x->rec.id, sizeof x->rec.id, "%s", id);
        if (meta) {
            x->rec.sla_floor = meta->sla_floor;
            x->rec.exempt = meta->exempt;
            snprintf(x->rec.arch, sizeof x->rec.arch, "%s", meta->arch);
            snprintf(x->rec.task, sizeof x->rec.task, "%s", meta->task);
            snprintf(x->rec.job_class, sizeof x->rec.job_class, "%s", meta->job_class);
            if (meta->warning[0])
                snprintf(x->warning, sizeof x->warning, "pod %s/%s: %s", meta->ns, meta->name,
                         meta->warning);
        }
    }
    want *x = &(*w)[i];
    for (size_t k = 0; k < x->rec.n_gpus; k++)
        if (x->rec.gpus[k] == g) return n;
    if (x->rec.n_gpus == PFI_STORE_MAX_JOB_GPUS) return n;
    x->rec.gpus[x->rec.n_gpus++] = g;
    qsort(x->rec.gpus, x->rec.n_gpus, sizeof x->rec.gpus[0], cmp_unsigned);
    char pod[PFI_K8S_NS_MAX + PFI_K8S_NAME_MAX + 2];
    snprintf(pod, sizeof pod, "%s/%s", e->ns, e->pod);
    if (!strstr(x->pods, pod)) {
        size_t l = strlen(x->pods);
        snprintf(x->pods + l, sizeof x->pods - l, "%s%s", l ? ", " : "", pod);
    }
    return n;
}

/* Which pod holds which GPU, from the configured source. */
static int read_gpus(agent *a, pfi_k8s_gpu **gpus, size_t *n, pfi_error *err)
{
    if (a->o.k8s.socket) return pfi_kubelet_list(a->o.k8s.socket, TIMEOUT_MS, gpus, n, err);
    /* The backend's option string: a URL, or "url=URL,key=value...". */
    const char *opt = a->o.dcgm_url ? a->o.dcgm_url : "http://127.0.0.1:9400/metrics";
    char url[1024];
    if (strncmp(opt, "url=", 4) == 0)
        snprintf(url, sizeof url, "%.*s", (int)strcspn(opt + 4, ","), opt + 4);
    else
        snprintf(url, sizeof url, "%s", opt);
    char *body;
    size_t len;
    int rc = pfi_k8s_fetch(url, NULL, NULL, TIMEOUT_MS, &body, &len, err);
    if (rc != PFI_OK) return rc;
    pfi_prom_doc *doc = NULL;
    rc = pfi_prom_parse(body, len, url, &doc, err);
    free(body);
    if (rc == PFI_OK) rc = pfi_k8s_gpus_from_prom(doc, gpus, n, err);
    pfi_prom_doc_destroy(doc);
    return rc;
}

/* The jobs the node's pods make now; PFI_OK with *n 0 when there are none. */
static int desired(agent *a, want **out, size_t *n_out, pfi_error *err)
{
    struct agent_k8s *k = a->k8s;
    pfi_k8s_gpu *gpus = NULL;
    pfi_k8s_pod *pods = NULL;
    size_t ng = 0, np = 0, n = 0, cap = 0;
    *out = NULL;
    *n_out = 0;
    int rc = read_gpus(a, &gpus, &ng, err);
    if (rc == PFI_OK && a->o.k8s.pods_url) {
        char *body;
        size_t len;
        rc = pfi_k8s_fetch(a->o.k8s.pods_url, a->o.k8s.pods_token, a->o.k8s.pods_ca, TIMEOUT_MS,
                           &body, &len, err);
        if (rc == PFI_OK) {
            rc =
                pfi_k8s_pod_list_parse(body, len, k->labels[0] ? k->labels : NULL, &pods, &np, err);
            free(body);
        }
    }
    want *w = NULL;
    unsigned unmatched = 0;
    for (size_t i = 0; i < ng && rc == PFI_OK; i++) {
        int g = device_gpu(a, &gpus[i]);
        if (g < 0) {
            unmatched++;
            continue;
        }
        const pfi_k8s_pod *meta = NULL;
        char id[PFI_STORE_JOB_ID_MAX + 1];
        if (a->o.k8s.pods_url) {
            meta = find_pod(pods, np, gpus[i].ns, gpus[i].pod);
            if (!meta || meta->ended || !meta->job[0]) continue;
            snprintf(id, sizeof id, "%s", meta->job);
        } else if (!pfi_k8s_job_id(gpus[i].ns, NULL, gpus[i].pod, id, sizeof id)) {
            continue;
        }
        n = add_want(&w, n, &cap, id, meta, &gpus[i], (unsigned)g);
    }
    if (rc == PFI_OK && unmatched != k->unmatched && unmatched)
        pfi_log("k8s: %u GPU device(s) held by pods match no GPU of this node (MIG devices "
                "are matched through dcgm-exporter's labels only)",
                unmatched);
    if (rc == PFI_OK) k->unmatched = unmatched;
    free(gpus);
    free(pods);
    if (rc != PFI_OK) {
        free(w);
        return rc;
    }
    *out = w;
    *n_out = n;
    return PFI_OK;
}

/* Restores the caps on the GPUs in `gpus` that `keep` does not hold. */
static void free_caps(agent *a, const char *id, const unsigned *gpus, size_t n,
                      const pfi_store_job *keep)
{
    for (size_t i = 0; i < n; i++) {
        int kept = 0;
        for (size_t k = 0; keep && k < keep->n_gpus; k++)
            kept |= keep->gpus[k] == gpus[i];
        pthread_mutex_lock(&a->mu);
        int capped = gpus[i] < a->n_gpus && a->gpus[gpus[i]].capped;
        pthread_mutex_unlock(&a->mu);
        if (kept || !capped) continue;
        pfi_error err;
        if (agent_cap_clear(a, gpus[i], "its pod is gone", NULL, NULL, NULL, &err) != PFI_OK)
            pfi_log("k8s: job %s: GPU %u: cannot restore its cap: %s", id, gpus[i], err.msg);
        else
            pfi_log("k8s: job %s left GPU %u: its cap restored", id, gpus[i]);
    }
}

static void end_job(agent *a, const char *id, const pfi_store_job *next)
{
    pfi_store_job old = {0};
    pthread_mutex_lock(&a->mu);
    int i = agent_job_find(a, id);
    if (i >= 0) old = a->jobs[i]->rec;
    pthread_mutex_unlock(&a->mu);
    if (i < 0) return;
    pfi_error err;
    pfi_error_clear(&err);
    if (agent_job_end(a, id, NULL, &err) != PFI_OK && err.code != PFI_ENOTFOUND) {
        pfi_log("k8s: job %s: cannot end it: %s", id, err.msg);
        return;
    }
    pfi_log("k8s: job %s ended on this node (%s)", id, next ? "its GPUs changed" : "no pod left");
    free_caps(a, id, old.gpus, old.n_gpus, next);
}

static int same_gpus(const pfi_store_job *x, const pfi_store_job *y)
{
    return x->n_gpus == y->n_gpus && memcmp(x->gpus, y->gpus, x->n_gpus * sizeof x->gpus[0]) == 0;
}

static int failed_before(const struct agent_k8s *k, const char *id)
{
    for (size_t i = 0; i < k->n_failed; i++)
        if (strcmp(k->failed[i], id) == 0) return 1;
    return 0;
}

/* The failures of this poll go after the last poll's, which apply() drops
 * when it is done. */
static void note_failed(struct agent_k8s *k, const char *id)
{
    void *p = realloc(k->failed, (k->n_failed + k->n_failed_now + 1) * sizeof *k->failed);
    if (!p) return;
    k->failed = p;
    snprintf(k->failed[k->n_failed + k->n_failed_now++], sizeof k->failed[0], "%s", id);
}

/* The registry made to match the wants: gone jobs first (their GPUs may be
 * the new ones'), then changed and new ones. */
static void apply(agent *a, want *w, size_t n)
{
    /* The owned ids running now. */
    pthread_mutex_lock(&a->mu);
    size_t nr = a->n_jobs;
    pfi_store_job *run = calloc(nr ? nr : 1, sizeof *run);
    for (size_t i = 0; run && i < nr; i++)
        run[i] = a->jobs[i]->rec;
    pthread_mutex_unlock(&a->mu);
    if (!run) return;
    for (size_t i = 0; i < nr; i++) {
        if (!k8s_id(run[i].id)) continue;
        const want *x = NULL;
        for (size_t k = 0; k < n && !x; k++)
            if (strcmp(w[k].rec.id, run[i].id) == 0) x = &w[k];
        if (!x)
            end_job(a, run[i].id, NULL);
        else if (!same_gpus(&x->rec, &run[i]))
            end_job(a, run[i].id, &x->rec);
    }
    free(run);
    for (size_t k = 0; k < n; k++) {
        pthread_mutex_lock(&a->mu);
        int running = agent_job_find(a, w[k].rec.id) >= 0;
        pthread_mutex_unlock(&a->mu);
        if (running) continue;
        pfi_error err;
        w[k].rec.registered_at = pfi_clock_wall();
        if (agent_job_register(a, &w[k].rec, 1, &err) != PFI_OK) {
            if (!failed_before(a->k8s, w[k].rec.id))
                pfi_log("k8s: job %s (pods %s) not registered: %s", w[k].rec.id, w[k].pods,
                        err.msg);
            note_failed(a->k8s, w[k].rec.id);
            continue;
        }
        char list[PFI_STORE_MAX_JOB_GPUS * 5 + 1] = "";
        for (size_t g = 0, l = 0; g < w[k].rec.n_gpus; g++)
            l +=
                (size_t)snprintf(list + l, sizeof list - l, "%s%u", g ? "," : "", w[k].rec.gpus[g]);
        pfi_log("k8s: job %s registered on GPU(s) %s (pods %s)", w[k].rec.id, list, w[k].pods);
        if (w[k].warning[0]) pfi_log("k8s: job %s: %s", w[k].rec.id, w[k].warning);
    }
    struct agent_k8s *ks = a->k8s;
    if (ks->n_failed_now)
        memmove(ks->failed, ks->failed + ks->n_failed, ks->n_failed_now * sizeof *ks->failed);
    ks->n_failed = ks->n_failed_now;
    ks->n_failed_now = 0;
}

void agent_k8s_poll(agent *a)
{
    struct agent_k8s *k = a->k8s;
    if (!k) return;
    want *w = NULL;
    size_t n = 0;
    pfi_error err;
    pfi_error_clear(&err);
    int rc = desired(a, &w, &n, &err);
    if (rc != PFI_OK) {
        char msg[512];
        pfi_error_format(&err, msg, sizeof msg);
        if (strcmp(msg, k->last_error) != 0)
            pfi_log("k8s: %s; the jobs stay as they are until a read succeeds", msg);
        snprintf(k->last_error, sizeof k->last_error, "%s", msg);
        return;
    }
    if (k->last_error[0]) pfi_log("k8s: reading the node's pods again");
    k->last_error[0] = '\0';
    apply(a, w, n);
    free(w);
}

static void *k8s_main(void *arg)
{
    agent *a = arg;
    struct agent_k8s *k = a->k8s;
    double every = a->o.k8s.interval_s > 0 ? a->o.k8s.interval_s : a->o.interval_s;
    double next = pfi_clock_mono() + every;
    pthread_mutex_lock(&k->mu);
    while (!k->stop) {
        double now = pfi_clock_mono();
        if (now < next) {
            struct timespec ts;
            ts.tv_sec = (time_t)floor(next);
            ts.tv_nsec = (long)((next - floor(next)) * 1e9);
            pthread_cond_timedwait(&k->cv, &k->mu, &ts);
            continue;
        }
        pthread_mutex_unlock(&k->mu);
        agent_k8s_poll(a);
        next += every * (1 + floor((pfi_clock_mono() - next) / every));
        pthread_mutex_lock(&k->mu);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

/* --k8s-group-labels: comma-separated keys, at most MAX_LABELS. */
static int split_labels(struct agent_k8s *k, const char *s, pfi_error *err)
{
    if (!s) return PFI_OK;
    if (strlen(s) >= sizeof k->labels_buf)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "--k8s-group-labels is too long");
    snprintf(k->labels_buf, sizeof k->labels_buf, "%s", s);
    size_t n = 0;
    for (char *save = NULL, *t = strtok_r(k->labels_buf, ",", &save); t;
         t = strtok_r(NULL, ",", &save)) {
        if (n == MAX_LABELS)
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "--k8s-group-labels: at most %d labels",
                                 MAX_LABELS);
        k->labels[n++] = t;
    }
    k->labels[n] = NULL;
    if (!n) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "--k8s-group-labels is empty");
    return PFI_OK;
}

int agent_k8s_start(agent *a, pfi_error *err)
{
    if (!a->o.k8s.socket && !a->o.k8s.from_dcgm) return PFI_OK;
    struct agent_k8s *k = calloc(1, sizeof *k);
    if (!k) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int rc = split_labels(k, a->o.k8s.group_labels, err);
    if (rc != PFI_OK) {
        free(k);
        return rc;
    }
    pthread_mutex_init(&k->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&k->cv, &ca);
    pthread_condattr_destroy(&ca);
    a->k8s = k;
    pfi_log("k8s: jobs from %s%s%s, every %g s", a->o.k8s.socket ? "the PodResources API at " : "",
            a->o.k8s.socket ? a->o.k8s.socket : "dcgm-exporter's pod labels",
            a->o.k8s.pods_url ? ", grouped by the pod list's labels" : " (a job per pod)",
            a->o.k8s.interval_s > 0 ? a->o.k8s.interval_s : a->o.interval_s);
    agent_k8s_poll(a); /* the node's jobs are there before the first request */
    if (pthread_create(&k->th, NULL, k8s_main, a) != 0) {
        agent_k8s_stop(a);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "cannot start the kubelet thread");
    }
    k->started = 1;
    return PFI_OK;
}

void agent_k8s_stop(agent *a)
{
    struct agent_k8s *k = a->k8s;
    if (!k) return;
    pthread_mutex_lock(&k->mu);
    k->stop = 1;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    if (k->started) pthread_join(k->th, NULL);
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    free(k->failed);
    free(k);
    a->k8s = NULL;
}
