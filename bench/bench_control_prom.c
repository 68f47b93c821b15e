/* pfi control's period read from Prometheus (--cluster-from prometheus), at
 * 10,000 jobs on 100,000 GPUs (12,500 nodes of 8; jobs of 10 GPUs laid over
 * the nodes in order, so most span two nodes), JSON lines:
 *   control_period_prometheus_cpu: the 16 answers Prometheus gives (written
 *     as Prometheus 2.42 writes them, labels included; see
 *     tests/data/prometheus/), parsed, built into the cluster view, merged
 *     into one job table with every job's GPUs (what the caps are pushed
 *     to), the curves built and allocated (pfi policy), the caps planned.
 *     Process CPU seconds, median of 9, with the parse and plan parts; the
 *     answers' size and rows; peak RSS of this process (answers included).
 * Bar (issue 14): < 0.1 s of CPU for the period. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_util.h"
#include "pfi/plan.h"
#include "pfi/prom_cluster.h"
#include "pfi/prom_vector.h"

#define NODES 12500
#define GPUS 8
#define JOBS 10000
#define RUNS 9

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap ? 2 * b->cap : 1 << 20;
        b->s = realloc(b->s, b->cap);
        if (!b->s) exit(1);
    }
}

static const char *HEAD =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[";
static const char *TAIL = "]}}";

static void inst(char *buf, size_t len, int n)
{
    snprintf(buf, len, "10.%d.%d.%d:9477", n / 65536, (n / 256) % 256, n % 256);
}

/* One row per node: {"metric":{"instance":...},"value":[t,"v"]} */
static void per_node(sbuf *b, double (*val)(int))
{
    char in[32];
    put(b, "%s", HEAD);
    for (int n = 0; n < NODES; n++) {
        inst(in, sizeof in, n);
        put(b, "%s{\"metric\":{\"instance\":\"%s\"},\"value\":[1796120951.720,\"%.17g\"]}",
            n ? "," : "", in, val(n));
    }
    put(b, "%s", TAIL);
}

static void per_job(sbuf *b, double (*val)(int))
{
    put(b, "%s", HEAD);
    for (int j = 0; j < JOBS; j++)
        put(b, "%s{\"metric\":{\"job_id\":\"job-%d\"},\"value\":[1796120951.788,\"%.17g\"]}",
            j ? "," : "", j, val(j));
    put(b, "%s", TAIL);
}

static double v_gpus(int n)
{
    (void)n;
    return GPUS;
}
static double v_maxsum(int n)
{
    (void)n;
    return 700.0 * GPUS;
}
static double v_lo(int n)
{
    (void)n;
    return 200;
}
static double v_hi(int n)
{
    (void)n;
    return 700;
}
static double v_idle(int n)
{
    (void)n;
    return 0;
}
static double v_capped(int n)
{
    (void)n;
    return GPUS;
} /* during an event: every GPU */
static double v_jpower(int j)
{
    return 10 * (400.0 + j % 300) + 0.1999999998231;
}
static double v_jtps(int j)
{
    return 160000.0 + j % 1000;
}
static double v_jpfi(int j)
{
    return 0.2 + 0.6 * (j % 7) / 6.0;
}
static double v_one(int j)
{
    (void)j;
    return 1;
}
static double v_jtvar(int j)
{
    return 400.0 * (1 + j % 9);
}
static double v_zero(int j)
{
    (void)j;
    return 0;
}

/* JFLOOR: pfid exports a floor only for the jobs registered with one (every
 * tenth here, 0.3: low enough for the 70% budget to be feasible) */
static void floors(sbuf *b)
{
    put(b, "%s", HEAD);
    for (int j = 0; j < JOBS; j += 10)
        put(b, "%s{\"metric\":{\"job_id\":\"job-%d\"},\"value\":[1796120951.790,\"0.3\"]}",
            j ? "," : "", j);
    put(b, "%s", TAIL);
}

static void members(sbuf *b)
{
    char in[32];
    put(b, "%s", HEAD);
    int any = 0;
    for (int n = 0; n < NODES; n++) {
        inst(in, sizeof in, n);
        int first = n * GPUS, last = first + GPUS - 1;
        for (int job = first / 10; job <= last / 10 && job < JOBS; job++) {
            int lo = job * 10 > first ? job * 10 : first,
                hi = job * 10 + 9 < last ? job * 10 + 9 : last;
            char gpus[64] = "";
            for (int k = lo; k <= hi; k++)
                snprintf(gpus + strlen(gpus), sizeof gpus - strlen(gpus), "%s%d", k > lo ? "," : "",
                         k - first);
            put(b,
                "%s{\"metric\":{\"__name__\":\"pfi_job_info\",\"arch\":\"dense\",\"gpus\":\"%s\","
                "\"instance\":\"%s\",\"job\":\"pfid\",\"job_id\":\"job-%d\",\"task\":\"pt\"},"
                "\"value\":[1796120951.775,\"1\"]}",
                any++ ? "," : "", gpus, in, job);
        }
    }
    put(b, "%s", TAIL);
}

static void empty(sbuf *b)
{
    put(b, "%s%s", HEAD, TAIL);
}

/* What ctl_prom.c keeps per job: its GPUs (agent, index) for the pushes. */
typedef struct mjob {
    size_t n;
    size_t *agent;
    unsigned *gpu;
    double lo, hi;
} mjob;

int main(void)
{
    sbuf ans[PFI_PC_NQ];
    memset(ans, 0, sizeof ans);
    empty(&ans[PFI_PC_DOWN]);
    empty(&ans[PFI_PC_RO]);
    per_node(&ans[PFI_PC_GPUS], v_gpus);
    per_node(&ans[PFI_PC_MAXSUM], v_maxsum);
    per_node(&ans[PFI_PC_LO], v_lo);
    per_node(&ans[PFI_PC_HI], v_hi);
    per_node(&ans[PFI_PC_IDLE], v_idle);
    per_node(&ans[PFI_PC_CAPPED], v_capped);
    members(&ans[PFI_PC_MEMBERS]);
    per_job(&ans[PFI_PC_JPOWER], v_jpower);
    per_job(&ans[PFI_PC_JTPS], v_jtps);
    per_job(&ans[PFI_PC_JPFI], v_jpfi);
    per_job(&ans[PFI_PC_JTRAIN], v_one);
    per_job(&ans[PFI_PC_JTVAR], v_jtvar);
    per_job(&ans[PFI_PC_JEXEMPT], v_zero); /* pfid exports 0 for every job not exempt */
    floors(&ans[PFI_PC_JFLOOR]);
    size_t bytes = 0;
    for (int q = 0; q < PFI_PC_NQ; q++)
        bytes += ans[q].n;

    pfi_plan *plan;
    if (pfi_plan_create(&plan) != PFI_OK) exit(1);
    pfi_plan_job *pj = calloc(JOBS, sizeof *pj);
    pfi_plan_cap *caps = calloc(JOBS, sizeof *caps);
    mjob *mj = calloc(JOBS, sizeof *mj);
    double t[RUNS], tp[RUNS], tv[RUNS];
    size_t rows = 0, n_members = 0, n_gpus = 0;
    for (int r = 0; r < RUNS; r++) {
        double t0 = bench_cpu();
        pfi_prom_vec a[PFI_PC_NQ];
        memset(a, 0, sizeof a);
        rows = 0;
        for (int q = 0; q < PFI_PC_NQ; q++) {
            size_t nl;
            const char *const *l = pfi_pc_query_labels((pfi_pc_query)q, &nl);
            pfi_error err;
            if (pfi_prom_vec_parse(ans[q].s, ans[q].n, l, nl, &a[q], &err) != PFI_OK) {
                fprintf(stderr, "query %d: %s\n", q, err.msg);
                exit(1);
            }
            rows += a[q].n;
        }
        double t1 = bench_cpu();
        pfi_pc_view v = {0};
        if (pfi_pc_view_build(a, &v, NULL) != PFI_OK || v.n_jobs != JOBS) exit(1);
        for (int q = 0; q < PFI_PC_NQ; q++)
            pfi_prom_vec_free(&a[q]);
        double t2 = bench_cpu();
        /* the merge: every job's GPUs, its cap range, its figures */
        n_members = v.n_members;
        n_gpus = 0;
        for (size_t j = 0; j < v.n_jobs; j++)
            mj[j] = (mjob){.lo = 0, .hi = INFINITY};
        for (size_t m = 0; m < v.n_members; m++) {
            const pfi_pc_member *mb = &v.members[m];
            mjob *x = &mj[mb->job];
            x->agent = realloc(x->agent, (x->n + mb->n_gpus) * sizeof *x->agent);
            x->gpu = realloc(x->gpu, (x->n + mb->n_gpus) * sizeof *x->gpu);
            if (!x->agent || !x->gpu) exit(1);
            for (size_t k = 0; k < mb->n_gpus; k++) {
                x->agent[x->n] = mb->node;
                x->gpu[x->n++] = mb->gpus[k];
            }
            n_gpus += mb->n_gpus;
            x->lo = fmax(x->lo, v.nodes[mb->node].lo_w);
            x->hi = fmin(x->hi, v.nodes[mb->node].hi_w);
        }
        double gpu_w = 0;
        size_t n_floors = 0;
        for (size_t j = 0; j < v.n_jobs; j++)
            n_floors += v.jobs[j].sla_floor == 0.3 && !v.jobs[j].exempt;
        if (n_floors != JOBS / 10) exit(1);
        for (size_t j = 0; j < v.n_jobs; j++) {
            pj[j] =
                (pfi_plan_job){.id = v.jobs[j].id,
                               .n_gpus = mj[j].n,
                               .min_w = mj[j].lo,
                               .max_w = mj[j].hi,
                               .pmax_w = v.jobs[j].power_w,
                               .tmax = v.jobs[j].tokens_per_s,
                               .pfi = v.jobs[j].pfi,
                               .sla_frac = isfinite(v.jobs[j].sla_floor) ? v.jobs[j].sla_floor : 0};
            gpu_w += v.jobs[j].power_w;
        }
        if (pfi_plan_set_jobs(plan, pj, v.n_jobs, NULL) != PFI_OK) exit(1);
        pfi_plan_result res;
        if (pfi_plan_run(plan, PFI_PLAN_PFI, 0.7 * gpu_w, 0, 0, caps, &res, NULL) != PFI_OK)
            exit(1);
        t[r] = bench_cpu() - t0;
        tp[r] = t1 - t0;
        tv[r] = t2 - t1;
        if (res.total_power_w > 0.7 * gpu_w * (1 + 1e-9) || n_gpus != (size_t)NODES * GPUS) exit(1);
        for (size_t j = 0; j < v.n_jobs; j++) {
            free(mj[j].agent);
            free(mj[j].gpu);
        }
        pfi_pc_view_clear(&v);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double parse = bench_median(tp, RUNS), view = bench_median(tv, RUNS),
           med = bench_median(t, RUNS);
    printf("{\"name\":\"control_period_prometheus_cpu\",\"jobs\":%d,\"gpus\":%d,\"nodes\":%d,"
           "\"policy\":\"pfi\",\"queries\":%d,\"rows\":%zu,\"members\":%zu,\"answer_bytes\":%zu,"
           "\"cpu_seconds_median\":%.6f,\"parse_seconds_median\":%.6f,\"view_seconds_median\":%.6f,"
           "\"peak_rss_mb\":%.1f,\"bar_seconds\":0.1}\n",
           JOBS, NODES * GPUS, NODES, PFI_PC_NQ, rows, n_members, bytes, med, parse, view,
           ru.ru_maxrss / 1024.0);
    pfi_plan_destroy(plan);
    for (int q = 0; q < PFI_PC_NQ; q++)
        free(ans[q].s);
    free(pj);
    free(caps);
    free(mj);
    return 0;
}
