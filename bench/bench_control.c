/* pfi control's benchmarks, JSON lines:
 *   control_period_cpu: one period's computation at 10,000 jobs on 100,000
 *     GPUs (12,500 nodes of 8): parse every node's pfid listings (GPUs and
 *     jobs, the fields the controller reads and a few more: 280 bytes a
 *     GPU), merge jobs by id, build the curves and allocate (pfi policy),
 *     plan the caps. CPU seconds, median of 5, and the peak RSS (the
 *     listings' text, listing_mb, included).
 *   control_period_pfid_cpu: the same with the listings as pfid writes
 *     them (every sample field, limits, cap, telemetry: tests/data/pfid/'s
 *     shape, ~800 bytes a GPU).
 *   control_plan_learn_cpu: the plan's part of a period with --policy
 *     learn at the same size: the jobs and their readings in (each job read
 *     at the cap it was given, on a curve the prior does not know), one
 *     round of the loop, the caps out. CPU seconds per period, median of
 *     the 16 periods after the first.
 *   control_period_tree_cpu: the period of control_period_cpu under a
 *     4-level power tree (issue 28): a site, 5 feeds, 25 PDUs, 125 racks of
 *     100 nodes, racks rated at 60-90% of their GPUs' uncapped power, PDUs
 *     and feeds a little under their children (write_tree); after the
 *     merge each domain's power, demand, limit and the jobs' spans
 *     (ctl_topo_build), the tree into the plan, and the plan under the
 *     site's budget and every domain's limit. CPU seconds, median of 5, and
 *     the tree's own part (tree_seconds).
 *   control_caps_64_agents: a target change to every cap acknowledged across
 *     64 agents on loopback (in-process HTTP servers answering as pfid does):
 *     read all agents, plan, push 512 caps in parallel. Wall seconds, median
 *     of 9.
 * Bars (issue 14): < 0.1 s of CPU for the period, < 1 s for the caps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "bench_util.h"
#include "pfi/agents.h"
#include "pfi/cluster.h"
#include "pfi/plan.h"

#include "control/ctl_topo.h"

#define NODES 12500
#define GPUS 8
#define JOBS 10000

/* Node n's /v1/gpus and /v1/jobs: 8 GPUs; jobs of 10 GPUs laid over the
 * nodes in order (so most span two nodes). full: every field pfid writes
 * (tests/data/pfid/), else the controller's and a few more. */
static void listings_as(int n, int full, char *g, size_t gl, char *j, size_t jl)
{
    size_t o = (size_t)snprintf(g, gl, "{\"gpus\":[");
    for (int k = 0; k < GPUS; k++) {
        double w = 400.0 + (n * 8 + k) % 300;
        if (!full) {
            o += (size_t)snprintf(
                g + o, gl - o,
                "%s{\"gpu\":%d,\"name\":\"NVIDIA H200\",\"uuid\":\"GPU-%d-%d\",\"up\":true,"
                "\"sampled_at\":1.7e9,\"sample\":{\"power_watts\":%.1f},\"limits\":"
                "{\"enforced_w\":700,\"current_w\":700,\"default_w\":700,\"min_w\":200,"
                "\"max_w\":700},\"cap\":null,\"jobs\":[]}",
                k ? "," : "", k, n, k, w);
            continue;
        }
        o += (size_t)snprintf(
            g + o, gl - o,
            "%s{\"gpu\":%d,\"name\":\"NVIDIA "
            "H200\",\"uuid\":\"GPU-5155d000-0000-4000-8000-%012d\",\"up\":true,"
            "\"sampled_at\":1796138386.05285,\"sample_age_s\":null,\"persistence_mode\":true,"
            "\"sample\":{"
            "\"power_watts\":%.1f,\"energy_joules_total\":%.9f,\"power_limit_enforced_watts\":700."
            "0,"
            "\"sm_clock_hertz\":1980000000.0,\"memory_clock_hertz\":3201000000.0,\"utilization_"
            "ratio\":1.0,"
            "\"memory_copy_utilization_ratio\":0.41,\"temperature_celsius\":61.25,"
            "\"framebuffer_used_bytes\":120324866048.0,\"clock_event_reasons\":0.0,\"sm_active_"
            "ratio\":0.93,"
            "\"sm_occupancy_ratio\":0.41,\"tensor_active_ratio\":0.52,\"dram_active_ratio\":0.38,"
            "\"pcie_tx_bytes_per_second\":null,\"pcie_rx_bytes_per_second\":null,"
            "\"nvlink_tx_bytes_per_second\":null,\"nvlink_rx_bytes_per_second\":null},\"limits\":{"
            "\"enforced_w\":700.0,\"current_w\":700.0,\"default_w\":700.0,\"min_w\":200.0,\"max_"
            "w\":700.0,"
            "\"externally_limited\":false},\"cap\":null,\"jobs\":[\"job-%d\"]}",
            k ? "," : "", k, n * 8 + k, w, 277052.223999926 + n, (n * 8 + k) / 10);
    }
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
        if (full)
            o += (size_t)snprintf(
                j + o, jl - o,
                "],\"arch\":\"dense\",\"task\":\"pt\",\"sla_floor\":null,\"exempt\":false,"
                "\"registered_at\":1796138384.09549,\"phase\":\"training\",\"phase_started_at\":{"
                "\"warmup\":1796138384.25322,\"startup\":1796138390.1,\"training\":1796138399.7},"
                "\"power_w\":%.1f,\"tokens_per_s\":%.1f,\"tokens_sd\":192.7,\"reports\":600,"
                "\"steady\":{\"power_w\":1,\"tokens_per_s\":1,\"samples\":20,\"reports\":4},"
                "\"telemetry\":{"
                "\"DCGM_FI_PROF_SM_ACTIVE\":0.93,\"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE\":0.52,"
                "\"DCGM_FI_PROF_DRAM_ACTIVE\":0.38,\"DCGM_FI_DEV_MEM_COPY_UTIL\":41.0,\"DCGM_FI_"
                "DEV_GPU_UTIL\":100.0,"
                "\"DCGM_FI_DEV_POWER_USAGE\":550.0,\"DCGM_FI_DEV_SM_CLOCK\":1980.0,\"DCGM_FI_DEV_"
                "MEM_CLOCK\":3201.0,"
                "\"DCGM_FI_DEV_FB_USED\":114750.0,\"DCGM_FI_DEV_GPU_TEMP\":61.25,"
                "\"DCGM_FI_PROF_NVLINK_TX_BYTES\":null,\"DCGM_FI_PROF_NVLINK_RX_BYTES\":null,"
                "\"DCGM_FI_PROF_PCIE_TX_BYTES\":null,\"DCGM_FI_PROF_PCIE_RX_BYTES\":null},"
                "\"features\":{},"
                "\"pfi_estimate\":%.3f,\"estimate_basis\":\"telemetry\",\"estimate_at\":1796138400."
                "2,"
                "\"estimate_age_s\":3.5}",
                550.0 * (hi - lo + 1), 16000.0 * (hi - lo + 1), 0.2 + 0.6 * (job % 7) / 6.0);
        else
            o += (size_t)snprintf(
                j + o, jl - o,
                "],\"phase\":\"training\",\"power_w\":%.1f,\"tokens_per_s\":%.1f,"
                "\"steady\":{\"power_w\":1,\"tokens_per_s\":1},\"pfi_estimate\":%.3f}",
                550.0 * (hi - lo + 1), 16000.0 * (hi - lo + 1), 0.2 + 0.6 * (job % 7) / 6.0);
    }
    snprintf(j + o, jl - o, "]}");
}

static void listings(int n, char *g, size_t gl, char *j, size_t jl)
{
    listings_as(n, 0, g, gl, j, jl);
}

typedef struct mjob {
    char id[PFI_CL_ID_MAX + 1];
    size_t n;
    double power, tps, pfi;
} mjob;

/* Every node's two listings, copied to their size, with their lengths:
 * what the controller holds after its transfers (no strlen in the period). */
typedef struct site {
    char **g, **jt;
    size_t *gl, *jl, bytes;
} site;

static void site_make(int full, site *S)
{
    enum { GL = 8192, JL = 4096 };
    char *tg = malloc(GL), *tj = malloc(JL);
    S->g = malloc(NODES * sizeof *S->g);
    S->jt = malloc(NODES * sizeof *S->jt);
    S->gl = malloc(NODES * sizeof *S->gl);
    S->jl = malloc(NODES * sizeof *S->jl);
    S->bytes = 0;
    for (int n = 0; n < NODES; n++) {
        listings_as(n, full, tg, GL, tj, JL);
        S->gl[n] = strlen(tg);
        S->jl[n] = strlen(tj);
        if (S->gl[n] + 1 >= GL || S->jl[n] + 1 >= JL) exit(1);
        S->g[n] = strdup(tg);
        S->jt[n] = strdup(tj);
        S->bytes += S->gl[n] + S->jl[n];
    }
    free(tg);
    free(tj);
}

static void site_free(site *S)
{
    for (int n = 0; n < NODES; n++) {
        free(S->g[n]);
        free(S->jt[n]);
    }
    free(S->g);
    free(S->jt);
    free(S->gl);
    free(S->jl);
}

/* Parses node n's listings and merges its jobs into mj (ids are job-N:
 * indexed directly; the controller's merge is a linear search, at this size
 * it would use a hash). With ga, each job's GPUs' node (at most 10) go to
 * ga[job] and count its GPUs; without, its n_gpus do. Returns the node's GPU
 * power. */
static double merge_node(const site *S, int n, mjob *mj, size_t **ga)
{
    pfi_cl_node node = {0};
    if (pfi_cl_parse_gpus(S->g[n], S->gl[n], &node, NULL) != PFI_OK ||
        pfi_cl_parse_jobs(S->jt[n], S->jl[n], &node, NULL) != PFI_OK)
        exit(1);
    double nw = 0;
    for (size_t k = 0; k < node.n_gpus; k++)
        nw += node.gpus[k].power_w;
    for (size_t k = 0; k < node.n_jobs; k++) {
        int id = atoi(node.jobs[k].id + 4);
        mjob *m = &mj[id];
        snprintf(m->id, sizeof m->id, "%s", node.jobs[k].id);
        if (ga)
            for (size_t q = 0; q < node.jobs[k].n_gpus && m->n < 10; q++)
                ga[id][m->n++] = (size_t)n;
        else
            m->n += node.jobs[k].n_gpus;
        m->power += node.jobs[k].power_w;
        m->tps += node.jobs[k].tokens_per_s;
        m->pfi = node.jobs[k].pfi_estimate;
    }
    pfi_cl_node_clear(&node);
    return nw;
}

static void bench_period(int full)
{
    site S;
    site_make(full, &S);
    mjob *mj = calloc(JOBS, sizeof *mj);
    pfi_plan_job *pj = calloc(JOBS, sizeof *pj);
    pfi_plan_cap *caps = calloc(JOBS, sizeof *caps);
    pfi_plan *plan;
    pfi_plan_create(&plan);
    double t[5], tp[5];
    for (int r = 0; r < 5; r++) {
        double t0 = bench_cpu();
        memset(mj, 0, JOBS * sizeof *mj);
        double gpu_w = 0;
        for (int n = 0; n < NODES; n++)
            gpu_w += merge_node(&S, n, mj, NULL);
        double t1 = bench_cpu();
        tp[r] = t1 - t0;
        for (int i = 0; i < JOBS; i++)
            pj[i] = (pfi_plan_job){.id = mj[i].id,
                                   .n_gpus = mj[i].n,
                                   .min_w = 200,
                                   .max_w = 700,
                                   .pmax_w = mj[i].power,
                                   .tmax = mj[i].tps,
                                   .pfi = mj[i].pfi};
        if (pfi_plan_set_jobs(plan, pj, JOBS, NULL) != PFI_OK) exit(1);
        pfi_plan_result res;
        if (pfi_plan_run(plan, PFI_PLAN_PFI, 0.7 * gpu_w, 0, 0, caps, &res, NULL) != PFI_OK)
            exit(1);
        t[r] = bench_cpu() - t0;
        if (res.total_power_w > 0.7 * gpu_w * (1 + 1e-9)) exit(1);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double med = bench_median(t, 5), parse = bench_median(tp, 5);
    printf("{\"name\":\"%s\",\"jobs\":%d,\"gpus\":%d,\"nodes\":%d,\"policy\":\"pfi\","
           "\"listing_mb\":%.1f,\"cpu_seconds_median\":%.6f,\"parse_seconds_median\":%.6f,"
           "\"plan_seconds_median\":%.6f,\"peak_rss_mb\":%.1f,\"bar_seconds\":0.1}\n",
           full ? "control_period_pfid_cpu" : "control_period_cpu", JOBS, NODES * GPUS, NODES,
           S.bytes / 1e6, med, parse, med - parse, ru.ru_maxrss / 1024.0);
    pfi_plan_destroy(plan);
    site_free(&S);
    free(mj);
    free(pj);
    free(caps);
}

#define RACK_NODES 100

/* The 4-level tree in a file (ctl_topo_init reads one) from each rack's
 * uncapped GPU power rack_w[r]: racks rated 60-90% of it (by r mod 5), each
 * PDU at 95% of its racks' ratings, each feed at 97% of its PDUs'; so some
 * racks, PDUs and feeds bind, and the site's budget (70%) too. */
static void write_tree(const char *path, const double *rack_w)
{
    FILE *f = fopen(path, "w");
    if (!f) exit(1);
    int racks = NODES / RACK_NODES, per = 5;
    double *rr = malloc(racks * sizeof *rr);
    for (int r = 0; r < racks; r++)
        rr[r] = (0.6 + 0.075 * (r % 5)) * rack_w[r];
    fprintf(f, "{\"name\":\"site\",\"children\":[");
    for (int fe = 0; fe < racks / (per * per); fe++) {
        double fw = 0;
        for (int r = fe * per * per; r < (fe + 1) * per * per; r++)
            fw += rr[r];
        fprintf(f, "%s{\"name\":\"feed-%d\",\"limit_w\":%.0f,\"children\":[", fe ? "," : "", fe,
                0.97 * 0.95 * fw);
        for (int pd = fe * per; pd < (fe + 1) * per; pd++) {
            double pw = 0;
            for (int r = pd * per; r < (pd + 1) * per; r++)
                pw += rr[r];
            fprintf(f, "%s{\"name\":\"pdu-%d\",\"limit_w\":%.0f,\"children\":[",
                    pd > fe * per ? "," : "", pd, 0.95 * pw);
            for (int r = pd * per; r < (pd + 1) * per; r++) {
                fprintf(f, "%s{\"name\":\"rack-%d\",\"limit_w\":%.0f,\"nodes\":[",
                        r > pd * per ? "," : "", r, rr[r]);
                for (int n = r * RACK_NODES; n < (r + 1) * RACK_NODES; n++)
                    fprintf(f, "%s\"node-%d\"", n > r * RACK_NODES ? "," : "", n);
                fprintf(f, "]}");
            }
            fprintf(f, "]}");
        }
        fprintf(f, "]}");
    }
    fprintf(f, "]}");
    free(rr);
    if (fclose(f) != 0) exit(1);
}

static void bench_period_tree(void)
{
    site S;
    site_make(0, &S);
    double *rack_w = calloc(NODES / RACK_NODES, sizeof *rack_w);
    for (int n = 0; n < NODES; n++)
        for (int k = 0; k < GPUS; k++)
            rack_w[n / RACK_NODES] += 400.0 + (n * 8 + k) % 300; /* listings_as's powers */
    char path[] = "/tmp/bench_control_tree_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) exit(1);
    close(fd);
    write_tree(path, rack_w);
    ctl_topo T;
    char **extra;
    size_t n_extra;
    pfi_error err;
    pfi_error_clear(&err);
    if (ctl_topo_init(&T, path, NULL, 0, &extra, &n_extra, &err) != PFI_OK ||
        ctl_topo_agents(&T, NULL, NODES, &err) != PFI_OK) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    unlink(path);
    for (int n = 0; n < NODES; n++) { /* what GET /v1/node places */
        char nm[32];
        /* racks start 3 nodes in: the 125 jobs on a boundary span two */
        snprintf(nm, sizeof nm, "node-%d", (n + 3) % NODES);
        T.leaf[n] = pfi_topo_leaf_of(T.t, nm);
        T.placed[n] = 1;
    }
    ctl_topo_other(&T, NULL, 0, 0);
    mjob *mj = calloc(JOBS, sizeof *mj);
    pfi_plan_job *pj = calloc(JOBS, sizeof *pj);
    pfi_plan_cap *caps = calloc(JOBS, sizeof *caps);
    size_t **ga = calloc(JOBS, sizeof *ga), *ng = calloc(JOBS, sizeof *ng);
    double *pmax = calloc(JOBS, sizeof *pmax);
    for (int i = 0; i < JOBS; i++)
        ga[i] = calloc(10, sizeof **ga);
    pfi_plan *plan;
    pfi_plan_create(&plan);
    double t[5], tt[5];
    pfi_plan_result res;
    for (int r = 0; r < 5; r++) {
        double t0 = bench_cpu();
        memset(mj, 0, JOBS * sizeof *mj);
        double gpu_w = 0;
        for (int n = 0; n < NODES; n++) {
            double nw = merge_node(&S, n, mj, ga);
            gpu_w += nw;
            T.ag_gpu_w[n] = nw;
            T.ag_fixed_w[n] = 0;
            T.ag_down[n] = 0;
        }
        double t1 = bench_cpu();
        for (int i = 0; i < JOBS; i++) {
            ng[i] = mj[i].n;
            pmax[i] = mj[i].power;
        }
        if (ctl_topo_build(&T, JOBS, (const size_t *const *)ga, ng, pmax, 0, 1, 1) != PFI_OK)
            exit(1);
        for (int i = 0; i < JOBS; i++)
            pj[i] = (pfi_plan_job){.id = mj[i].id,
                                   .n_gpus = mj[i].n,
                                   .min_w = 200,
                                   .max_w = 700,
                                   .pmax_w = mj[i].power,
                                   .tmax = mj[i].tps,
                                   .pfi = mj[i].pfi,
                                   .domains = &T.jdom[T.joff[i]],
                                   .shares = &T.jshare[T.joff[i]],
                                   .n_domains = T.joff[i + 1] - T.joff[i]};
        if (pfi_plan_set_tree(plan, T.pd, T.n, &err) != PFI_OK) {
            fprintf(stderr, "%s\n", err.msg);
            exit(1);
        }
        tt[r] = bench_cpu() - t1;
        if (pfi_plan_set_jobs(plan, pj, JOBS, NULL) != PFI_OK) exit(1);
        if (pfi_plan_run(plan, PFI_PLAN_PFI, 0.7 * gpu_w, 0, 0, caps, &res, &err) != PFI_OK) {
            fprintf(stderr, "%s\n", err.msg);
            exit(1);
        }
        t[r] = bench_cpu() - t0;
        if (res.total_power_w > 0.7 * gpu_w * (1 + 1e-9)) exit(1);
    }
    /* every rack under its limit in the plan */
    size_t over = 0, bound = 0;
    for (size_t d = 0; d < T.n; d++) {
        double pw = pfi_plan_domain_power(plan, d);
        over += pw > T.pd[d].limit_w * (1 + 1e-9);
        bound += pw > T.pd[d].limit_w * (1 - 1e-3); /* within 0.1%: binding */
    }
    size_t spanning = 0;
    for (int i = 0; i < JOBS; i++)
        spanning += T.joff[i + 1] - T.joff[i] > 1;
    printf("{\"name\":\"control_period_tree_cpu\",\"jobs\":%d,\"gpus\":%d,\"nodes\":%d,"
           "\"domains\":%zu,\"levels\":4,\"jobs_spanning_leaves\":%zu,\"policy\":\"pfi\","
           "\"seconds_median\":%.6f,\"tree_seconds_median\":%.6f,\"domains_binding\":%zu,"
           "\"domains_over\":%zu,\"bar_seconds\":0.1}\n",
           JOBS, NODES * GPUS, NODES, T.n, spanning, bench_median(t, 5), bench_median(tt, 5), bound,
           over);
    pfi_plan_destroy(plan);
    ctl_topo_free(&T);
    site_free(&S);
    for (int i = 0; i < JOBS; i++)
        free(ga[i]);
    free(ga);
    free(ng);
    free(pmax);
    free(rack_w);
    free(mj);
    free(pj);
    free(caps);
}

/* A fake pfid: its two listings and 200 on limit calls. */
static enum MHD_Result fake(void *cls, struct MHD_Connection *c, const char *url,
                            const char *method, const char *version, const char *upload,
                            size_t *upload_size, void **ctx)
{
    if (!*ctx) {
        *ctx = (void *)1;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    const char **pages = cls;
    const char *body = strcmp(url, "/v1/gpus") == 0 ? pages[0]
                       : strcmp(url, "/v1/jobs") == 0
                           ? pages[1]
                           : "{\"gpu\":0,\"capped\":true,\"enforced_w\":400}";
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static void bench_caps(void)
{
    enum { A = 64 };
    static char g[A][4096], j[A][2048];
    static const char *pages[A][2];
    struct MHD_Daemon *d[A];
    char *urls[A];
    for (int a = 0; a < A; a++) {
        listings(a, g[a], sizeof g[a], j[a], sizeof j[a]);
        pages[a][0] = g[a];
        pages[a][1] = j[a];
        d[a] = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
                                fake, pages[a], MHD_OPTION_END);
        if (!d[a]) exit(1);
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(d[a], MHD_DAEMON_INFO_BIND_PORT);
        urls[a] = malloc(64);
        snprintf(urls[a], 64, "http://127.0.0.1:%u", di->port);
    }
    pfi_agents *ag;
    if (pfi_agents_create((const char *const *)urls, A, "bench-token-0123456789", 2, &ag, NULL) !=
        PFI_OK)
        exit(1);
    pfi_cap_cmd *cmds = calloc(A * GPUS, sizeof *cmds);
    pfi_plan *plan;
    pfi_plan_create(&plan);
    double t[9], tmax = 0;
    size_t acked = 0;
    for (int r = 0; r < 9; r++) {
        double t0 = bench_now();
        if (pfi_agents_poll(ag, 0) != A) exit(1);
        /* one job per node here: its 8 GPUs */
        pfi_plan_job pj[A];
        for (int a = 0; a < A; a++)
            pj[a] = (pfi_plan_job){.id = pfi_agents_get(ag, a)->url,
                                   .n_gpus = GPUS,
                                   .min_w = 200,
                                   .max_w = 700,
                                   .pmax_w = 4400,
                                   .tmax = 1,
                                   .pfi = 0.5};
        pfi_plan_cap caps[A];
        pfi_plan_result res;
        pfi_plan_set_jobs(plan, pj, A, NULL);
        pfi_plan_run(plan, PFI_PLAN_PFI, 0.7 * 4400 * A, 0, 0, caps, &res, NULL);
        size_t n = 0;
        for (int a = 0; a < A; a++)
            for (unsigned k = 0; k < GPUS; k++)
                cmds[n++] = (pfi_cap_cmd){
                    .agent = (size_t)a, .gpu = k, .watts = caps[a].cap_w, .expires_s = 600};
        acked = pfi_agents_push(ag, cmds, n);
        t[r] = bench_now() - t0;
        if (t[r] > tmax) tmax = t[r];
        if (acked != n) exit(1);
    }
    printf("{\"name\":\"control_caps_64_agents\",\"agents\":%d,\"caps\":%d,\"acknowledged\":%zu,"
           "\"seconds_median\":%.6f,\"seconds_max\":%.6f,\"bar_seconds\":1}\n",
           A, A * GPUS, acked, bench_median(t, 9), tmax);
    pfi_plan_destroy(plan);
    pfi_agents_destroy(ag);
    for (int a = 0; a < A; a++) {
        MHD_stop_daemon(d[a]);
        free(urls[a]);
    }
    free(cmds);
}

static void bench_learn(void)
{
    pfi_plan *plan;
    if (pfi_plan_create(&plan) != PFI_OK || pfi_plan_use_learn(plan, 8, 2, NULL) != PFI_OK) exit(1);
    pfi_plan_job *pj = calloc(JOBS, sizeof *pj);
    pfi_plan_cap *caps = calloc(JOBS, sizeof *caps);
    char(*ids)[16] = calloc(JOBS, sizeof *ids);
    double *cap = malloc(JOBS * sizeof *cap), *truth = malloc(JOBS * sizeof *truth), total = 0;
    if (!pj || !caps || !ids || !cap || !truth) exit(1);
    for (int i = 0; i < JOBS; i++) {
        snprintf(ids[i], sizeof ids[i], "job-%d", i);
        cap[i] = NAN;
        truth[i] = 0.2 + 0.7 * (double)(i % 97) / 96; /* the true PFI; the prior says 0.5 */
        total += 10 * 700.0;
    }
    enum { R = 17 };
    double t[R];
    for (int r = 0; r < R; r++) {
        double t0 = bench_cpu();
        for (int i = 0; i < JOBS; i++) {
            pj[i] = (pfi_plan_job){.id = ids[i],
                                   .n_gpus = 10,
                                   .min_w = 200,
                                   .max_w = 700,
                                   .pmax_w = 7000,
                                   .tmax = 1000,
                                   .pfi = 0.5};
            if (isfinite(cap[i])) {
                double p = fmin(10 * cap[i], 7000);
                pj[i].reading = (pfi_plan_obs){cap[i], p, 1000 * pow(p / 7000, 1 - truth[i]), 0};
            }
        }
        pfi_plan_set_time(plan, r);
        pfi_plan_result res;
        if (pfi_plan_set_jobs(plan, pj, JOBS, NULL) != PFI_OK ||
            pfi_plan_run(plan, PFI_PLAN_LEARN, 0.7 * total, 0, 0, caps, &res, NULL) != PFI_OK)
            exit(1);
        for (int i = 0; i < JOBS; i++)
            cap[i] = caps[i].cap_w;
        t[r] = bench_cpu() - t0;
        if (res.total_power_w > 0.7 * total * (1 + 1e-9)) exit(1);
    }
    printf("{\"name\":\"control_plan_learn_cpu\",\"jobs\":%d,\"gpus\":%d,\"policy\":\"learn\","
           "\"plan_seconds_median\":%.6f,\"first_period_seconds\":%.6f,\"bar_seconds\":0.1}\n",
           JOBS, JOBS * 10, bench_median(t + 1, R - 1), t[0]);
    pfi_plan_destroy(plan);
    free(pj);
    free(caps);
    free(ids);
    free(cap);
    free(truth);
}

int main(void)
{
    bench_caps();
    bench_period(0);
    bench_period(1);
    bench_period_tree();
    bench_learn();
    return 0;
}
