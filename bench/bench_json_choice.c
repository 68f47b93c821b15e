/* Issue 30's JSON question, JSON lines: do the hand-written one-pass readers
 * (src/io/json_scan.c behind the agents' listings, src/control/prom_vector.c
 * behind Prometheus' answers) pay 1.5x in the time a user sees, one
 * controller period, against Jansson's DOM read the same way?
 *   json_listings: 12,500 nodes' /v1/gpus and /v1/jobs (8 GPUs each, 10,000
 *     jobs; bench_control's short listings), read by pfi_cl_parse_* and by
 *     the Jansson reference (tests/unit/cluster_ref.h, the reader before the
 *     one-pass one); then the rest of the period (merge, plan the caps), so
 *     the period with each reader and their ratio.
 *   json_prom_vector: one answer of 100,000 series (per-GPU power, labels as
 *     Prometheus writes them), read keeping instance and gpu by
 *     pfi_prom_vec_parse and by Jansson (json_loadb, the same rows built).
 * CPU seconds, medians of 7 (the two readers alternate). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../tests/unit/cluster_ref.h"
#include "bench_util.h"
#include "pfi/cluster.h"
#include "pfi/plan.h"
#include "pfi/prom_vector.h"

#define NODES 12500
#define GPUS 8
#define JOBS 10000
#define RUNS 7
#define SERIES 100000

static void listing(int n, char *g, size_t gl, char *j, size_t jl)
{
    size_t o = (size_t)snprintf(g, gl, "{\"gpus\":[");
    for (int k = 0; k < GPUS; k++)
        o += (size_t)snprintf(
            g + o, gl - o,
            "%s{\"gpu\":%d,\"name\":\"NVIDIA H200\",\"uuid\":\"GPU-%d-%d\",\"up\":true,"
            "\"sampled_at\":1.7e9,\"sample\":{\"power_watts\":%.1f},\"limits\":"
            "{\"enforced_w\":700,\"current_w\":700,\"default_w\":700,\"min_w\":200,"
            "\"max_w\":700},\"cap\":null,\"jobs\":[]}",
            k ? "," : "", k, n, k, 400.0 + (n * 8 + k) % 300);
    snprintf(g + o, gl - o, "]}");
    o = (size_t)snprintf(j, jl, "{\"jobs\":[");
    int first = n * GPUS, last = first + GPUS - 1, any = 0;
    for (int job = first / 10; job <= last / 10 && job < JOBS; job++) {
        int lo = job * 10 > first ? job * 10 : first,
            hi = job * 10 + 9 < last ? job * 10 + 9 : last;
        o += (size_t)snprintf(j + o, jl - o, "%s{\"id\":\"job-%d\",\"gpus\":[", any++ ? "," : "",
                              job);
        for (int k = lo; k <= hi; k++)
            o += (size_t)snprintf(j + o, jl - o, "%s%d", k > lo ? "," : "", k - first);
        o += (size_t)snprintf(
            j + o, jl - o,
            "],\"phase\":\"training\",\"power_w\":%.1f,\"tokens_per_s\":%.1f,"
            "\"steady\":{\"power_w\":1,\"tokens_per_s\":1},\"pfi_estimate\":%.3f}",
            550.0 * (hi - lo + 1), 16000.0 * (hi - lo + 1), 0.2 + 0.6 * (job % 7) / 6.0);
    }
    snprintf(j + o, jl - o, "]}");
}

/* The rest of a period after the reading: merge the jobs, plan the caps. */
static double plan_part(pfi_cl_node *nodes, pfi_plan *plan, pfi_plan_job *pj, pfi_plan_cap *caps,
                        double *pw, double *tps, double *pfi, size_t *ng, char (*ids)[32])
{
    double t0 = bench_cpu(), gpu_w = 0;
    memset(pw, 0, JOBS * sizeof *pw);
    memset(tps, 0, JOBS * sizeof *tps);
    memset(ng, 0, JOBS * sizeof *ng);
    for (int n = 0; n < NODES; n++) {
        for (size_t k = 0; k < nodes[n].n_gpus; k++)
            gpu_w += nodes[n].gpus[k].power_w;
        for (size_t k = 0; k < nodes[n].n_jobs; k++) {
            int id = atoi(nodes[n].jobs[k].id + 4);
            snprintf(ids[id], sizeof ids[id], "%s", nodes[n].jobs[k].id);
            ng[id] += nodes[n].jobs[k].n_gpus;
            pw[id] += nodes[n].jobs[k].power_w;
            tps[id] += nodes[n].jobs[k].tokens_per_s;
            pfi[id] = nodes[n].jobs[k].pfi_estimate;
        }
    }
    for (int i = 0; i < JOBS; i++)
        pj[i] = (pfi_plan_job){.id = ids[i],
                               .n_gpus = ng[i],
                               .min_w = 200,
                               .max_w = 700,
                               .pmax_w = pw[i],
                               .tmax = tps[i],
                               .pfi = pfi[i]};
    pfi_plan_result res;
    if (pfi_plan_set_jobs(plan, pj, JOBS, NULL) != PFI_OK ||
        pfi_plan_run(plan, PFI_PLAN_PFI, 0.7 * gpu_w, 0, 0, caps, &res, NULL) != PFI_OK)
        exit(1);
    return bench_cpu() - t0;
}

static void bench_listings(void)
{
    enum { GL = 8192, JL = 4096 };
    char **g = malloc(NODES * sizeof *g), **jt = malloc(NODES * sizeof *jt), tg[GL], tj[JL];
    size_t *gl = malloc(NODES * sizeof *gl), *jl = malloc(NODES * sizeof *jl), bytes = 0;
    for (int n = 0; n < NODES; n++) {
        listing(n, tg, GL, tj, JL);
        g[n] = strdup(tg);
        jt[n] = strdup(tj);
        gl[n] = strlen(tg);
        jl[n] = strlen(tj);
        bytes += gl[n] + jl[n];
    }
    pfi_cl_node *nodes = calloc(NODES, sizeof *nodes);
    pfi_plan *plan;
    pfi_plan_create(&plan);
    pfi_plan_job *pj = calloc(JOBS, sizeof *pj);
    pfi_plan_cap *caps = calloc(JOBS, sizeof *caps);
    double *pw = calloc(JOBS, sizeof *pw), *tps = calloc(JOBS, sizeof *tps),
           *pfi = calloc(JOBS, sizeof *pfi);
    size_t *ng = calloc(JOBS, sizeof *ng);
    char(*ids)[32] = calloc(JOBS, sizeof *ids);
    double th[RUNS], tj2[RUNS], tr[RUNS];
    for (int r = 0; r < RUNS; r++) {
        for (int jans = 0; jans < 2; jans++) {
            double t0 = bench_cpu();
            for (int n = 0; n < NODES; n++) {
                memset(&nodes[n], 0, sizeof nodes[n]);
                int rc = jans ? ref_cl_parse_gpus(g[n], gl[n], &nodes[n], NULL)
                              : pfi_cl_parse_gpus(g[n], gl[n], &nodes[n], NULL);
                if (rc == PFI_OK)
                    rc = jans ? ref_cl_parse_jobs(jt[n], jl[n], &nodes[n], NULL)
                              : pfi_cl_parse_jobs(jt[n], jl[n], &nodes[n], NULL);
                if (rc != PFI_OK) exit(1);
            }
            (jans ? tj2 : th)[r] = bench_cpu() - t0;
            if (!jans) tr[r] = plan_part(nodes, plan, pj, caps, pw, tps, pfi, ng, ids);
            for (int n = 0; n < NODES; n++)
                pfi_cl_node_clear(&nodes[n]);
        }
    }
    double h = bench_median(th, RUNS), jn = bench_median(tj2, RUNS), rest = bench_median(tr, RUNS);
    printf("{\"name\":\"json_listings\",\"nodes\":%d,\"gpus\":%d,\"jobs\":%d,\"mb\":%.1f,"
           "\"hand_parse_s\":%.4f,\"jansson_parse_s\":%.4f,\"parse_ratio\":%.2f,"
           "\"rest_of_period_s\":%.4f,\"period_hand_s\":%.4f,\"period_jansson_s\":%.4f,"
           "\"period_ratio\":%.2f}\n",
           NODES, NODES * GPUS, JOBS, bytes / 1e6, h, jn, jn / h, rest, h + rest, jn + rest,
           (jn + rest) / (h + rest));
    for (int n = 0; n < NODES; n++) {
        free(g[n]);
        free(jt[n]);
    }
    free(g), free(jt), free(gl), free(jl), free(nodes), free(pj), free(caps), free(pw), free(tps);
    free(pfi), free(ng), free(ids);
    pfi_plan_destroy(plan);
}

/* Jansson's reading of an answer into the same rows as pfi_prom_vec_parse. */
static int jansson_vec(const char *text, size_t len, const char *const *keep, size_t nk,
                       pfi_prom_vec *v)
{
    json_t *root = json_loadb(text, len, 0, NULL);
    const json_t *res = json_object_get(json_object_get(root, "data"), "result");
    const char *st = json_string_value(json_object_get(root, "status"));
    if (!st || strcmp(st, "success") || !json_is_array(res)) return json_decref(root), -1;
    size_t n = json_array_size(res);
    v->n = n;
    v->n_labels = nk;
    v->values = malloc(n * sizeof *v->values);
    v->lab = calloc(n * nk, sizeof *v->lab);
    v->text_cap = 1 << 20;
    v->text = malloc(v->text_cap);
    v->text_len = 1;
    for (size_t i = 0; i < n; i++) {
        const json_t *row = json_array_get(res, i), *m = json_object_get(row, "metric");
        const json_t *val = json_object_get(row, "value");
        const char *s = json_string_value(json_array_get(val, 1));
        if (!json_is_object(m) || !s) return json_decref(root), -1;
        v->values[i] = strtod(s, NULL);
        for (size_t k = 0; k < nk; k++) {
            const json_t *l = json_object_get(m, keep[k]);
            if (!json_is_string(l)) continue;
            size_t ll = json_string_length(l);
            if (v->text_len + ll + 1 > v->text_cap) {
                v->text_cap *= 2;
                v->text = realloc(v->text, v->text_cap);
            }
            memcpy(v->text + v->text_len, json_string_value(l), ll + 1);
            v->lab[i * nk + k] = v->text_len;
            v->text_len += ll + 1;
        }
    }
    json_decref(root);
    return 0;
}

static void bench_prom(void)
{
    size_t cap = (size_t)SERIES * 200, o = 0;
    char *a = malloc(cap);
    o += (size_t)snprintf(
        a + o, cap - o, "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[");
    for (int i = 0; i < SERIES; i++) {
        int n = i / GPUS;
        o += (size_t)snprintf(a + o, cap - o,
                              "%s{\"metric\":{\"__name__\":\"pfi_gpu_power_watts\",\"gpu\":\"%d\","
                              "\"instance\":\"10.%d.%d.%d:9477\",\"job\":\"pfid\"},"
                              "\"value\":[1764410400.123,\"%.2f\"]}",
                              i ? "," : "", i % GPUS, n / 65536, (n / 256) % 256, n % 256,
                              400.0 + i % 300 + 0.25);
    }
    o += (size_t)snprintf(a + o, cap - o, "]}}");
    static const char *const keep[] = {"instance", "gpu"};
    double th[RUNS], tj[RUNS];
    for (int r = 0; r < RUNS; r++) {
        pfi_prom_vec v = {0}, w = {0};
        double t0 = bench_cpu();
        if (pfi_prom_vec_parse(a, o, keep, 2, &v, NULL) != PFI_OK) exit(1);
        th[r] = bench_cpu() - t0;
        t0 = bench_cpu();
        if (jansson_vec(a, o, keep, 2, &w) != 0) exit(1);
        tj[r] = bench_cpu() - t0;
        if (v.n != w.n || v.values[7] != w.values[7] ||
            strcmp(pfi_prom_vec_label(&v, 9, 0), pfi_prom_vec_label(&w, 9, 0)))
            exit(1);
        pfi_prom_vec_free(&v);
        pfi_prom_vec_free(&w);
    }
    double h = bench_median(th, RUNS), j = bench_median(tj, RUNS);
    printf("{\"name\":\"json_prom_vector\",\"series\":%d,\"mb\":%.1f,\"hand_parse_s\":%.4f,"
           "\"jansson_parse_s\":%.4f,\"parse_ratio\":%.2f,\"us_per_series_saved\":%.2f}\n",
           SERIES, o / 1e6, h, j, j / h, (j - h) / SERIES * 1e6);
    free(a);
}

int main(void)
{
    (void)ref_cl_same; /* the reference's comparison, for the tests */
    bench_listings();
    bench_prom();
    return 0;
}
