/* Benchmarks of pfid (sim backend, 8 GPUs, 20 jobs, 1 s interval), each
 * printed as one JSON line:
 *
 *   pfid_steady   CPU share of one core and RSS over a quiet period in which
 *                 every job reports its throughput once a second and
 *                 /metrics is scraped every 5 s (targets: < 1%, < 30 MB);
 *   pfid_metrics_paced      latency of GET /metrics from 200 open
 *                 connections scraping in turn, 2,000 scrapes/s in all
 *                 (10/s each; target: p99 < 5 ms);
 *   pfid_metrics_saturated  the same 200 connections scraping back to back:
 *                 the throughput ceiling (latency there is queueing);
 *   pfid_reports  1,000 throughput reports/s paced for a while: every one
 *                 answered 200, counted by pfid and stored in SQLite;
 *   pfid_job_rounds  pfid's resident set after rounds of 3,000 jobs
 *                 registered at once, each reporting once, a tick later all
 *                 ended (issue 27: 10 -> 441 MB before the job windows grew
 *                 on demand; target: under the systemd unit's MemoryMax=128M).
 *
 * pfid is found next to this binary (or at $PFID_BIN). The load generator
 * is libcurl's multi interface in this process. PFID_BENCH_SCALE (default 1)
 * scales the durations. Numbers on a shared machine are noisy: the load
 * generator competes with pfid for the same cores.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <sqlite3.h>

#include "pfi/quantile.h"

#define N_GPUS 8
#define N_JOBS 20

static char work[64], base[128], token[80];
static pid_t pid;
static int port;

/* The 1-minute load average: on a shared machine it explains the tails. */
static double loadavg(void)
{
    double l = NAN;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf", &l) != 1) l = NAN;
    if (f) fclose(f);
    return l;
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *msg)
{
    fprintf(stderr, "bench_pfid: %s\n", msg);
    if (pid > 0) kill(pid, SIGKILL);
    exit(1);
}

static void start_pfid(const char *self)
{
    const char *bin = getenv("PFID_BIN");
    char path[600];
    if (!bin) {
        char tmp[512];
        snprintf(tmp, sizeof tmp, "%s", self);
        snprintf(path, sizeof path, "%s/pfid", dirname(tmp));
        bin = path;
    }
    if (access(bin, X_OK) != 0) die("pfid not found next to bench_pfid (set PFID_BIN)");
    snprintf(work, sizeof work, "/tmp/pfid-bench-XXXXXX");
    if (!mkdtemp(work)) die("mkdtemp");
    char tokf[128], jobs[128], db[128], log[128];
    snprintf(tokf, sizeof tokf, "%s/token", work);
    snprintf(jobs, sizeof jobs, "%s/jobs.csv", work);
    snprintf(db, sizeof db, "%s/pfid.db", work);
    snprintf(log, sizeof log, "%s/pfid.log", work);
    snprintf(token, sizeof token, "bench-token-%ld-%d", (long)time(NULL), (int)getpid());
    FILE *f = fopen(tokf, "w");
    if (!f) die("token file");
    fprintf(f, "%s\n", token);
    fclose(f);
    chmod(tokf, 0600);
    /* Every GPU runs a modelled training job (the sim's own processes). */
    f = fopen(jobs, "w");
    if (!f) die("jobs file");
    fprintf(f, "gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu\n");
    for (int g = 0; g < N_GPUS; g++)
        fprintf(f, "%d,j%d,%.2f,0.9,0.4,0.6,16000\n", g, g, 0.5 + 0.05 * g);
    fclose(f);
    pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) dup2(fd, 2);
        execl(bin, bin, "--backend", "sim", "--sim-gpus", "8", "--sim-jobs", jobs, "--listen",
              "127.0.0.1:0", "--db", db, "--interval", "1", "--token-file", tokf, "--share-gpus",
              "--phase-hold", "2",
              /* 200 connections from one address stand for many scrapers */
              "--http-conns-per-ip", "256", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100 && !port; i++) {
        usleep(100000);
        f = fopen(log, "r");
        char line[256];
        while (f && fgets(line, sizeof line, f)) {
            char *p = strstr(line, "listening on http://127.0.0.1:");
            if (p) port = atoi(p + strlen("listening on http://127.0.0.1:"));
        }
        if (f) fclose(f);
    }
    if (!port) die("pfid did not start (see its log in /tmp/pfid-bench-*)");
    snprintf(base, sizeof base, "http://127.0.0.1:%d", port);
}

static void stop_pfid(void)
{
    kill(pid, SIGTERM);
    int st;
    waitpid(pid, &st, 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", work);
    if (system(cmd) != 0) fprintf(stderr, "bench_pfid: could not remove %s\n", work);
}

static size_t discard(char *p, size_t s, size_t n, void *u)
{
    return s * n;
}

/* One blocking request; returns the HTTP status. */
static long request(CURL *h, const char *method, const char *path, const char *body)
{
    char url[256];
    snprintf(url, sizeof url, "%s%s", base, path);
    struct curl_slist *hd = NULL;
    char auth[128];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    hd = curl_slist_append(hd, auth);
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    if (body) curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    long code = 0;
    if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(hd);
    return code;
}

/* utime + stime of pfid in seconds, and its resident set (kB). */
static double proc_cpu(void)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    if (!f || !fgets(buf, sizeof buf, f)) die("cannot read /proc/PID/stat");
    fclose(f);
    char *s = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    /* fields after ")": state(3) ... utime(14) stime(15) */
    if (sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        die("cannot parse /proc/PID/stat");
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static long proc_kb(const char *key)
{
    char p[64], line[256];
    snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
    FILE *f = fopen(p, "r");
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0) v = atol(line + strlen(key) + 1);
    if (f) fclose(f);
    return v;
}

static void bench_steady(CURL *h, double secs)
{
    /* Let the jobs reach training and the first windows fill. */
    double t_end = mono() + 3;
    while (mono() < t_end)
        usleep(100000);
    double c0 = proc_cpu(), t0 = mono();
    long errors = 0;
    int tick = 0;
    for (double next = t0; next < t0 + secs; next += 1.0, tick++) {
        while (mono() < next)
            usleep(2000);
        char path[64], body[64];
        for (int j = 0; j < N_JOBS; j++) {
            snprintf(path, sizeof path, "/v1/jobs/job%d/throughput", j);
            snprintf(body, sizeof body, "{\"tokens_per_s\":%d}", 10000 + j);
            errors += request(h, "POST", path, body) != 200;
        }
        if (tick % 5 == 0) errors += request(h, "GET", "/metrics", NULL) != 200;
    }
    double wall = mono() - t0, cpu = proc_cpu() - c0;
    printf("{\"name\":\"pfid_steady\",\"seconds\":%.3f,\"gpus\":%d,\"jobs\":%d,\"interval_s\":1,"
           "\"cpu_pct_of_core\":%.3f,\"rss_mb\":%.2f,\"rss_peak_mb\":%.2f,\"errors\":%ld,"
           "\"target_cpu_pct\":1,\"target_rss_mb\":30,\"loadavg\":%.2f}\n",
           wall, N_GPUS, N_JOBS, 100.0 * cpu / wall, proc_kb("VmRSS") / 1024.0,
           proc_kb("VmHWM") / 1024.0, errors, loadavg());
    fflush(stdout);
}

typedef struct {
    CURL *h;
    struct curl_slist *hd;
    double t0;
    char body[64];
} slot;

/* conns keep-alive connections scrape /metrics. rate == 0: each scrapes
 * again as soon as it has its answer (saturation: latency is then mostly
 * queueing behind the other connections). rate > 0: scrape k leaves at
 * t0 + k / rate on the next idle connection in turn, so all conns stay open
 * and in use (200 scrapers at rate/200 each). Latency: send to last byte. */
static void bench_scrapes(const char *name, int conns, double rate, double secs)
{
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)conns + 8);
    slot *s = calloc((size_t)conns, sizeof *s);
    int *busy = calloc((size_t)conns, sizeof *busy);
    size_t cap = 1 << 21, n = 0;
    double *lat = malloc(cap * sizeof *lat);
    char url[160];
    snprintf(url, sizeof url, "%s/metrics", base);
    for (int i = 0; i < conns; i++) {
        s[i].h = curl_easy_init();
        curl_easy_setopt(s[i].h, CURLOPT_URL, url);
        curl_easy_setopt(s[i].h, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(s[i].h, CURLOPT_PRIVATE, &s[i]);
    }
    /* Open every connection first (one scrape each, not measured). */
    for (int i = 0; i < conns; i++)
        curl_multi_add_handle(m, s[i].h);
    int running = conns;
    while (running > 0) {
        curl_multi_perform(m, &running);
        if (running) curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    CURLMsg *msg;
    int q;
    while ((msg = curl_multi_info_read(m, &q)))
        if (msg->msg == CURLMSG_DONE) curl_multi_remove_handle(m, msg->easy_handle);

    long errors = 0;
    long long sent = 0;
    int next_conn = 0, active = 0;
    double t0 = mono(), t_stop = t0 + secs, max_behind = 0;
    for (;;) {
        double now = mono();
        if (now < t_stop) {
            if (rate <= 0) {
                for (int i = 0; i < conns; i++)
                    if (!busy[i]) {
                        busy[i] = 1;
                        s[i].t0 = now;
                        curl_multi_add_handle(m, s[i].h);
                        active++;
                        sent++;
                    }
            } else {
                while (now >= t0 + (double)sent / rate && active < conns) {
                    while (busy[next_conn])
                        next_conn = (next_conn + 1) % conns;
                    double behind = now - (t0 + (double)sent / rate);
                    if (behind > max_behind) max_behind = behind;
                    busy[next_conn] = 1;
                    s[next_conn].t0 = now;
                    curl_multi_add_handle(m, s[next_conn].h);
                    next_conn = (next_conn + 1) % conns;
                    active++;
                    sent++;
                }
            }
        } else if (active == 0) {
            break;
        }
        int still;
        curl_multi_perform(m, &still);
        while ((msg = curl_multi_info_read(m, &q))) {
            if (msg->msg != CURLMSG_DONE) continue;
            slot *sl;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&sl);
            long code = 0;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &code);
            if (msg->data.result != CURLE_OK || code != 200) errors++;
            if (n < cap) lat[n++] = (mono() - sl->t0) * 1e3;
            curl_multi_remove_handle(m, msg->easy_handle);
            busy[sl - s] = 0;
            active--;
        }
        int wait_ms = 1;
        if (rate > 0 && active == 0) {
            wait_ms = (int)((t0 + (double)sent / rate - mono()) * 1000);
            if (wait_ms < 0) wait_ms = 0;
        }
        if (active || wait_ms > 0) curl_multi_poll(m, NULL, 0, wait_ms, NULL);
    }
    double wall = mono() - t0;
    double mx = NAN;
    for (size_t i = 0; i < n; i++)
        if (!(lat[i] <= mx)) mx = lat[i];
    double p50 = n ? pfi_quantile_select(lat, n, 0.5) : NAN;
    double p99 = n ? pfi_quantile_select(lat, n, 0.99) : NAN;
    printf("{\"name\":\"%s\",\"seconds\":%.3f,\"connections\":%d,\"target_rate\":%.0f,"
           "\"scrapes\":%zu,\"scrapes_per_s\":%.1f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,"
           "\"max_ms\":%.3f,\"max_behind_schedule_ms\":%.1f,\"errors\":%ld,\"target_p99_ms\":5,"
           "\"loadavg\":%.2f}\n",
           name, wall, conns, rate, n, (double)n / wall, p50, p99, mx, max_behind * 1e3, errors,
           loadavg());
    fflush(stdout);
    for (int i = 0; i < conns; i++)
        curl_easy_cleanup(s[i].h);
    curl_multi_cleanup(m);
    free(s);
    free(busy);
    free(lat);
}

static long long pfid_reports_counted(CURL *h)
{
    /* Sum of "reports" in GET /v1/jobs, read with the body into memory. */
    char url[160];
    snprintf(url, sizeof url, "%s/v1/jobs", base);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, mem);
    CURLcode rc = curl_easy_perform(h);
    fclose(mem);
    long long total = 0;
    /* "reports":N appears per job and in "steady"; take the job-level one
     * (the first after each "id"). */
    for (char *p = buf; rc == CURLE_OK && p && (p = strstr(p, "\"id\":"));) {
        char *r = strstr(p, "\"reports\":");
        if (!r) break;
        total += atoll(r + 10);
        p = r + 10;
    }
    free(buf);
    return total;
}

static long long store_reports(void)
{
    char db[128];
    snprintf(db, sizeof db, "%s/pfid.db", work);
    sqlite3 *d;
    long long n = -1;
    if (sqlite3_open_v2(db, &d, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(d, 5000);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(d, "SELECT count(*) FROM throughput", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(d);
    return n;
}

static void bench_reports(CURL *h, double rate, double secs)
{
    long long before_pfid = pfid_reports_counted(h), before_store = store_reports();
    const int conns = 32;
    CURLM *m = curl_multi_init();
    slot *s = calloc(conns, sizeof *s);
    int *free_list = malloc(conns * sizeof *free_list), n_free = conns;
    char auth[128];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    for (int i = 0; i < conns; i++) {
        s[i].h = curl_easy_init();
        s[i].hd = curl_slist_append(NULL, auth);
        s[i].hd = curl_slist_append(s[i].hd, "Content-Type: application/json");
        curl_easy_setopt(s[i].h, CURLOPT_HTTPHEADER, s[i].hd);
        curl_easy_setopt(s[i].h, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(s[i].h, CURLOPT_PRIVATE, &s[i]);
        free_list[i] = i;
    }
    long long total = (long long)(rate * secs), sent = 0, ok = 0, bad = 0;
    size_t n_lat = 0;
    double *lat = malloc((size_t)total * sizeof *lat);
    double t0 = mono(), max_behind = 0;
    int running = 0;
    while (ok + bad < total) {
        double now = mono();
        /* Paced: request k leaves at t0 + k / rate, not earlier. */
        while (sent < total && n_free > 0 && now >= t0 + (double)sent / rate) {
            double behind = now - (t0 + (double)sent / rate);
            if (behind > max_behind) max_behind = behind;
            slot *sl = &s[free_list[--n_free]];
            char url[160];
            snprintf(url, sizeof url, "%s/v1/jobs/job%lld/throughput", base, sent % N_JOBS);
            snprintf(sl->body, sizeof sl->body, "{\"tokens_per_s\":%lld}", 10000 + sent % 977);
            curl_easy_setopt(sl->h, CURLOPT_URL, url);
            curl_easy_setopt(sl->h, CURLOPT_POSTFIELDS, sl->body);
            sl->t0 = now;
            curl_multi_add_handle(m, sl->h);
            sent++;
            running++;
        }
        int still;
        curl_multi_perform(m, &still);
        CURLMsg *msg;
        int q;
        while ((msg = curl_multi_info_read(m, &q))) {
            if (msg->msg != CURLMSG_DONE) continue;
            slot *sl;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&sl);
            long code = 0;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &code);
            if (msg->data.result == CURLE_OK && code == 200)
                ok++;
            else
                bad++;
            lat[n_lat++] = (mono() - sl->t0) * 1e3;
            curl_multi_remove_handle(m, msg->easy_handle);
            free_list[n_free++] = (int)(sl - s);
            running--;
        }
        double next = t0 + (double)sent / rate;
        int wait_ms = (int)((next - mono()) * 1000);
        if (wait_ms < 0 || n_free == 0) wait_ms = 0;
        if (running || wait_ms > 0) curl_multi_poll(m, NULL, 0, wait_ms > 50 ? 50 : wait_ms, NULL);
    }
    double wall = mono() - t0;
    long long counted = pfid_reports_counted(h) - before_pfid;
    long long stored = store_reports() - before_store;
    double p99 = n_lat ? pfi_quantile_select(lat, n_lat, 0.99) : NAN;
    printf("{\"name\":\"pfid_reports\",\"seconds\":%.3f,\"target_rate\":%.0f,\"sent\":%lld,"
           "\"achieved_rate\":%.1f,\"ok\":%lld,\"failed\":%lld,\"counted_by_pfid\":%lld,"
           "\"stored\":%lld,\"lost\":%lld,\"p99_ms\":%.3f,\"max_behind_schedule_ms\":%.1f,"
           "\"loadavg\":%.2f}\n",
           wall, rate, sent, (double)ok / wall, ok, bad, counted, stored,
           sent - (counted < stored ? counted : stored), p99, max_behind * 1e3, loadavg());
    fflush(stdout);
    for (int i = 0; i < conns; i++) {
        curl_easy_cleanup(s[i].h);
        curl_slist_free_all(s[i].hd);
    }
    curl_multi_cleanup(m);
    free(s);
    free(free_list);
    free(lat);
}

static void bench_job_rounds(CURL *h, int rounds, int jobs)
{
    long before = proc_kb("VmRSS"), errors = 0;
    double t0 = mono();
    char path[64], body[128];
    for (int r = 0; r < rounds; r++) {
        for (int j = 0; j < jobs; j++) {
            snprintf(body, sizeof body, "{\"id\":\"round%d-%d\",\"gpus\":[%d,%d]}", r, j,
                     j % N_GPUS, (j + 1) % N_GPUS);
            errors += request(h, "POST", "/v1/jobs", body) != 201;
            snprintf(path, sizeof path, "/v1/jobs/round%d-%d/throughput", r, j);
            errors += request(h, "POST", path, "{\"tokens_per_s\":1000}") != 200;
        }
        usleep(1200000); /* a tick into every job's window */
        for (int j = 0; j < jobs; j++) {
            snprintf(path, sizeof path, "/v1/jobs/round%d-%d", r, j);
            errors += request(h, "DELETE", path, NULL) != 200;
        }
    }
    printf("{\"name\":\"pfid_job_rounds\",\"seconds\":%.3f,\"rounds\":%d,\"jobs_per_round\":%d,"
           "\"rss_before_mb\":%.2f,\"rss_after_mb\":%.2f,\"rss_peak_mb\":%.2f,\"errors\":%ld,"
           "\"target_rss_mb\":128,\"loadavg\":%.2f}\n",
           mono() - t0, rounds, jobs, before / 1024.0, proc_kb("VmRSS") / 1024.0,
           proc_kb("VmHWM") / 1024.0, errors, loadavg());
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *sc = getenv("PFID_BENCH_SCALE");
    double scale = sc ? atof(sc) : 1.0;
    if (!(scale > 0)) scale = 1.0;
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    start_pfid(argv[0]);
    CURL *h = curl_easy_init();
    /* 20 jobs over 8 GPUs (GPU sharing, --share-gpus), 1-3 GPUs each. */
    for (int j = 0; j < N_JOBS; j++) {
        char body[160];
        int n = 1 + j % 3;
        char gpus[32] = "";
        for (int k = 0; k < n; k++)
            snprintf(gpus + strlen(gpus), sizeof gpus - strlen(gpus), "%s%d", k ? "," : "",
                     (j + k) % N_GPUS);
        snprintf(body, sizeof body,
                 "{\"id\":\"job%d\",\"gpus\":[%s],\"arch\":\"%s\",\"task\":\"pt\"}", j, gpus,
                 j % 2 ? "moe" : "dense");
        if (request(h, "POST", "/v1/jobs", body) != 201) die("job registration failed");
    }
    bench_steady(h, 30 * scale);
    bench_scrapes("pfid_metrics_paced", 200, 2000, 10 * scale);
    bench_scrapes("pfid_metrics_saturated", 200, 0, 5 * scale);
    bench_reports(h, 1000, 10 * scale);
    bench_job_rounds(h, 3, (int)(3000 * scale));
    curl_easy_cleanup(h);
    stop_pfid();
    curl_global_cleanup();
    return 0;
}
