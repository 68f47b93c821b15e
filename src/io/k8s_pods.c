/* Which pods form one job, from a PodList's labels and annotations, and which
 * pod holds which GPU according to a dcgm-exporter page. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pfi/k8s.h"
#include "pfi/prom.h"

/* First match wins: a JobSet's pods also carry their child Job's name (one
 * per replicated job), so JobSet comes before the batch Job; Kueue's pod
 * groups and the Kubeflow training operator name a multi-pod job of their
 * own; KubeRay's cluster is the unit a Ray training run spans. */
const char *const pfi_k8s_default_group_labels[] = {"jobset.sigs.k8s.io/jobset-name",
                                                    "kueue.x-k8s.io/pod-group-name",
                                                    "training.kubeflow.org/job-name",
                                                    "ray.io/cluster",
                                                    "batch.kubernetes.io/job-name",
                                                    "job-name",
                                                    NULL};

int pfi_k8s_job_id(const char *ns, const char *group_value, const char *pod, char *out, size_t len)
{
    const char *v = group_value && *group_value ? group_value : pod;
    int n = snprintf(out, len, "%s:%s", ns, v);
    if (n < 0 || (size_t)n >= len || n > 128) {
        if (len) out[0] = '\0';
        return 0;
    }
    return 1;
}

static const char *str_at(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The annotations' terms: pfi.io/sla-floor a fraction in (0, 1],
 * pfi.io/exempt "true"; a bad value is ignored and said. */
static void terms(json_t *ann, pfi_k8s_pod *p)
{
    const char *s = str_at(ann, "pfi.io/sla-floor");
    if (s) {
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (!errno && end != s && !*end && isfinite(v) && v > 0 && v <= 1)
            p->sla_floor = v;
        else
            snprintf(p->warning, sizeof p->warning,
                     "annotation pfi.io/sla-floor '%.40s' is not in (0, 1]; ignored", s);
    }
    const char *e = str_at(ann, "pfi.io/exempt");
    if (e) p->exempt = strcmp(e, "true") == 0;
}

/* Label pfi.io/class: "ARCH-TASK", "ARCH" or "-TASK" as the API's arch
 * (dense|moe) and task (pt|ft). */
static void job_class(const char *c, pfi_k8s_pod *p)
{
    if (!c) return;
    const char *dash = strchr(c, '-');
    size_t na = dash ? (size_t)(dash - c) : strlen(c);
    const char *t = dash ? dash + 1 : "";
    int arch_ok = na == 0 || (na == 5 && strncmp(c, "dense", 5) == 0) ||
                  (na == 3 && strncmp(c, "moe", 3) == 0);
    int task_ok = !*t || strcmp(t, "pt") == 0 || strcmp(t, "ft") == 0;
    if (!arch_ok || !task_ok) {
        snprintf(p->warning, sizeof p->warning,
                 "label pfi.io/class '%.40s' is not ARCH-TASK (dense|moe, pt|ft); ignored", c);
        return;
    }
    snprintf(p->arch, sizeof p->arch, "%.*s", (int)na, c);
    snprintf(p->task, sizeof p->task, "%s", t);
}

/* Label pfi.io/job-class: jobs expected to share a curve (issue 29), the
 * job id's charset, up to 64 characters (a label value's limit is 63). */
static void curve_class(const char *c, pfi_k8s_pod *p)
{
    if (!c || !*c) return;
    int ok = strlen(c) < sizeof p->job_class;
    for (const char *q = c; ok && *q; q++)
        ok = isalnum((unsigned char)*q) || strchr("._:@+-", *q);
    if (ok)
        snprintf(p->job_class, sizeof p->job_class, "%s", c);
    else if (!p->warning[0]) /* the first bad term is the one said */
        snprintf(p->warning, sizeof p->warning,
                 "label pfi.io/job-class '%.40s' is not 1-64 of A-Z a-z 0-9 . _ : @ + -; ignored",
                 c);
}

int pfi_k8s_pod_list_parse(const char *buf, size_t len, const char *const *labels,
                           pfi_k8s_pod **out, size_t *n, pfi_error *err)
{
    *out = NULL;
    *n = 0;
    if (!labels) labels = pfi_k8s_default_group_labels;
    json_error_t je;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) return pfi_error_set(err, PFI_EPARSE, NULL, je.line, "pod list: %s", je.text);
    json_t *items = json_object_get(root, "items");
    const char *kind = str_at(root, "kind");
    if (!json_is_array(items) || (kind && strcmp(kind, "PodList") != 0)) {
        pfi_error_set(err, PFI_EPARSE, NULL, 0, "pod list: not a PodList (kind '%.40s'%s)",
                      kind ? kind : "", json_is_array(items) ? "" : ", no items array");
        json_decref(root); /* after the message: kind is root's */
        return PFI_EPARSE;
    }
    size_t m = json_array_size(items), k = 0;
    pfi_k8s_pod *v = calloc(m ? m : 1, sizeof *v);
    if (!v) {
        json_decref(root);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    for (size_t i = 0; i < m; i++) {
        json_t *it = json_array_get(items, i);
        json_t *md = json_object_get(it, "metadata");
        const char *ns = str_at(md, "namespace"), *name = str_at(md, "name");
        if (!ns || !name || !*ns || !*name || strlen(ns) > PFI_K8S_NS_MAX ||
            strlen(name) > PFI_K8S_NAME_MAX)
            continue;
        pfi_k8s_pod *p = &v[k++];
        snprintf(p->ns, sizeof p->ns, "%s", ns);
        snprintf(p->name, sizeof p->name, "%s", name);
        json_t *lab = json_object_get(md, "labels");
        const char *group = NULL;
        for (size_t l = 0; labels[l] && !group; l++) {
            group = str_at(lab, labels[l]);
            if (group && !*group) group = NULL;
        }
        pfi_k8s_job_id(ns, group, name, p->job, sizeof p->job);
        /* A job id takes [A-Za-z0-9._:@+-]: label values and DNS names
         * keep to that already; anything else is not a valid pod. */
        for (const char *c = p->job; *c; c++)
            if (!isalnum((unsigned char)*c) && !strchr("._:@+-", *c)) {
                p->job[0] = '\0';
                break;
            }
        terms(json_object_get(md, "annotations"), p);
        job_class(str_at(lab, "pfi.io/class"), p);
        curve_class(str_at(lab, "pfi.io/job-class"), p);
        const char *phase = str_at(json_object_get(it, "status"), "phase");
        p->ended = phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
    }
    json_decref(root);
    *out = v;
    *n = k;
    return PFI_OK;
}

int pfi_k8s_gpus_from_prom(const pfi_prom_doc *doc, pfi_k8s_gpu **out, size_t *n, pfi_error *err)
{
    *out = NULL;
    *n = 0;
    pfi_k8s_gpu *v = NULL;
    size_t k = 0, cap = 0;
    for (size_t i = 0; i < pfi_prom_doc_series_count(doc); i++) {
        const pfi_prom_series *s = pfi_prom_doc_series(doc, i);
        if (strncmp(s->name, "DCGM_FI_", 8) != 0) continue;
        const char *pod = pfi_prom_series_label(s, "pod");
        const char *ns = pfi_prom_series_label(s, "namespace");
        const char *gpu = pfi_prom_series_label(s, "gpu");
        if (!pod || !ns || !gpu || !*pod || !*ns || strlen(pod) > PFI_K8S_NAME_MAX ||
            strlen(ns) > PFI_K8S_NS_MAX)
            continue;
        char *end;
        long g = strtol(gpu, &end, 10);
        if (*end || end == gpu || g < 0 || g > 1023) continue;
        const char *ctr = pfi_prom_series_label(s, "container");
        const char *uuid = pfi_prom_series_label(s, "UUID");
        const char *mig = pfi_prom_series_label(s, "GPU_I_ID");
        /* The GPU's UUID, with the MIG instance after '#' (a MIG GPU is
         * capped whole: the instance only tells two tenants apart). */
        char dev[sizeof v->device];
        if (mig)
            snprintf(dev, sizeof dev, "%.100s#%.20s", uuid ? uuid : gpu, mig);
        else
            snprintf(dev, sizeof dev, "%.120s", uuid ? uuid : gpu);
        if (!ctr) ctr = "";
        /* Every field repeats the labels: one entry per (pod, GPU, instance). */
        int dup = 0;
        for (size_t j = 0; j < k && !dup; j++)
            dup = strcmp(v[j].device, dev) == 0 && strcmp(v[j].pod, pod) == 0 &&
                  strcmp(v[j].ns, ns) == 0 && strcmp(v[j].container, ctr) == 0;
        if (dup) continue;
        if (k == cap) {
            size_t nc = cap ? 2 * cap : 16;
            pfi_k8s_gpu *q = realloc(v, nc * sizeof *q);
            if (!q) {
                free(v);
                return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
            }
            v = q;
            cap = nc;
        }
        pfi_k8s_gpu *e = &v[k++];
        memset(e, 0, sizeof *e);
        snprintf(e->ns, sizeof e->ns, "%s", ns);
        snprintf(e->pod, sizeof e->pod, "%s", pod);
        snprintf(e->container, sizeof e->container, "%s", ctr);
        memcpy(e->device, dev, sizeof dev);
        e->index = (int)g;
    }
    *out = v;
    *n = k;
    return PFI_OK;
}
