/* spank_pfi: registers each Slurm job with the node's pfid, so that pfid
 * knows which job runs on which GPUs without any change to the training
 * script (see docs/slurm.md).
 *
 * Hooks, all in slurmd's or slurmstepd's processes, as root:
 *   slurm_spank_job_prolog   once per job and node, when its first step (or
 *                            batch script) starts there: POST /v1/jobs with
 *                            the Slurm job id and SLURM_JOB_GPUS, the node's
 *                            GRES GPU indices for the whole job (not one
 *                            step's subset, not CUDA_VISIBLE_DEVICES, which
 *                            device cgroups renumber).
 *   slurm_spank_init_post_opt (remote)  each step: if the prolog could not
 *                            reach pfid, a thread of the step's slurmstepd
 *                            retries until pfid answers or the step ends.
 *   slurm_spank_job_epilog   once per job and node at its end (also after
 *                            scancel): DELETE /v1/jobs/ID.
 * pfid being down never fails or delays a job beyond one short timeout: the
 * prolog queues the registration in state_dir/pending/ID, the epilog queues
 * an end it could not deliver in state_dir/ended/ID, and the next prolog
 * delivers those ends first (so that a lost end cannot keep GPUs busy).
 * Every hook returns 0: a pfid problem must never drain the node.
 *
 * plugstack.conf:  optional /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_pfi.so \
 *                    url=http://127.0.0.1:9477 token_file=/etc/pfi/token \
 *                    state_dir=/var/spool/pfi-slurm timeout=2 retry=5 allow_exempt
 * The token is read from its file (root's, mode 0600) when a request is
 * made, sent only in the Authorization header, and never logged nor put in
 * any environment.
 *
 * User options (srun, sbatch, salloc, #SBATCH): --pfi-sla=F (the job's
 * minimum throughput as a fraction of uncapped, 0 < F <= 1), --pfi-arch=
 * dense|moe, --pfi-task=pt|ft, --pfi-exempt (never cap this job; refused
 * unless plugstack.conf says allow_exempt), --pfi-class=NAME (the jobs
 * expected to share a power curve; by default the job array's id,
 * "array-N", for an array's tasks. The job name would be the natural
 * default, but a node's prolog is not given it: SLURM_JOB_NAME is
 * PrologSlurmctld's only, slurm.conf(5).) */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "pfi/token_file.h"

SPANK_PLUGIN(pfi, 1);

#define MAX_GPUS 64
#define BODY_MAX 1024

typedef struct {
    char url[256];
    char token_file[256];
    char state_dir[256];
    long timeout_ms;
    double retry_s;
    int allow_exempt;
} conf;

/* ---- options ---- */

static int opt_cb(int val, const char *optarg, int remote);

enum { OPT_SLA = 1, OPT_ARCH, OPT_TASK, OPT_EXEMPT, OPT_CLASS };
#define CLASS_MAX 64 /* pfid's PFI_STORE_CLASS_MAX */
static struct spank_option pfi_options[] = {
    {"pfi-sla", "F", "pfid: the job's minimum throughput as a fraction of uncapped (0 < F <= 1)", 1,
     OPT_SLA, opt_cb},
    {"pfi-arch", "dense|moe", "pfid: the model's architecture", 1, OPT_ARCH, opt_cb},
    {"pfi-task", "pt|ft", "pfid: pre-training or fine-tuning", 1, OPT_TASK, opt_cb},
    {"pfi-exempt", NULL, "pfid: never cap this job (where the site allows it)", 0, OPT_EXEMPT,
     opt_cb},
    {"pfi-class", "NAME", "pfid: jobs expected to share a power curve (default: array id or name)",
     1, OPT_CLASS, opt_cb},
    SPANK_OPTIONS_TABLE_END};

static int parse_sla(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : NAN;
    if (!s || errno || end == s || *end || !(v > 0 && v <= 1)) return -1;
    *out = v;
    return 0;
}

/* A class as pfid takes it: 1-64 of [A-Za-z0-9._:@+-]. */
static int class_valid(const char *s)
{
    if (!s || !*s || strlen(s) > CLASS_MAX) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("._:@+-", *s)))
            return 0;
    return 1;
}

/* The default class into out: "array-N" for an array's task (its id, from
 * the item or the prolog's SLURM_ARRAY_JOB_ID), else "" none. */
static void default_class(spank_t sp, char *out, size_t len)
{
    uint32_t arr = 0;
    out[0] = '\0';
    if (spank_get_item(sp, S_JOB_ARRAY_ID, &arr) != ESPANK_SUCCESS || arr == 0) {
        const char *e = getenv("SLURM_ARRAY_JOB_ID");
        char *end;
        unsigned long v = e ? strtoul(e, &end, 10) : 0;
        if (e && *e && !*end && v > 0 && v <= UINT32_MAX) arr = (uint32_t)v;
    }
    if (arr) snprintf(out, len, "array-%u", (unsigned)arr);
}

static int one_of(const char *s, const char *a, const char *b)
{
    return s && (strcmp(s, a) == 0 || strcmp(s, b) == 0);
}

/* Checked where the user typed them (srun/sbatch), so a typo is an error
 * there and not a silent default on the node. */
static int opt_cb(int val, const char *optarg, int remote)
{
    double v;
    switch (val) {
    case OPT_SLA:
        if (parse_sla(optarg, &v) == 0) return 0;
        slurm_error("pfi: --pfi-sla must be a number in (0, 1], not '%s'", optarg ? optarg : "");
        return -1;
    case OPT_ARCH:
        if (one_of(optarg, "dense", "moe")) return 0;
        slurm_error("pfi: --pfi-arch must be dense or moe, not '%s'", optarg ? optarg : "");
        return -1;
    case OPT_TASK:
        if (one_of(optarg, "pt", "ft")) return 0;
        slurm_error("pfi: --pfi-task must be pt or ft, not '%s'", optarg ? optarg : "");
        return -1;
    case OPT_CLASS:
        if (class_valid(optarg)) return 0;
        slurm_error("pfi: --pfi-class must be 1-64 of A-Z a-z 0-9 . _ : @ + -, not '%s'",
                    optarg ? optarg : "");
        return -1;
    default:
        return 0;
    }
}

/* ---- plugstack.conf arguments ---- */

static int parse_conf(int ac, char **av, conf *c)
{
    snprintf(c->url, sizeof c->url, "http://127.0.0.1:9477");
    snprintf(c->token_file, sizeof c->token_file, "/etc/pfi/token");
    snprintf(c->state_dir, sizeof c->state_dir, "/var/spool/pfi-slurm");
    c->timeout_ms = 2000;
    c->retry_s = 5;
    c->allow_exempt = 0;
    for (int i = 0; i < ac; i++) {
        const char *a = av[i];
        char *end;
        if (strncmp(a, "url=", 4) == 0 && strlen(a + 4) < sizeof c->url)
            snprintf(c->url, sizeof c->url, "%s", a + 4);
        else if (strncmp(a, "token_file=", 11) == 0 && strlen(a + 11) < sizeof c->token_file)
            snprintf(c->token_file, sizeof c->token_file, "%s", a + 11);
        else if (strncmp(a, "state_dir=", 10) == 0 && strlen(a + 10) < sizeof c->state_dir - 32)
            snprintf(c->state_dir, sizeof c->state_dir, "%s", a + 10);
        else if (strncmp(a, "timeout=", 8) == 0) {
            double t = strtod(a + 8, &end);
            if (*end || !(t > 0 && t <= 30)) goto bad;
            c->timeout_ms = (long)(t * 1000);
        } else if (strncmp(a, "retry=", 6) == 0) {
            double t = strtod(a + 6, &end);
            if (*end || !(t >= 0.1 && t <= 3600)) goto bad;
            c->retry_s = t;
        } else if (strcmp(a, "allow_exempt") == 0)
            c->allow_exempt = 1;
        else
            goto bad;
        continue;
    bad:
        slurm_error("pfi: plugstack.conf: bad argument '%s' (url=, token_file=, state_dir=, "
                    "timeout=S (0-30], retry=S, allow_exempt)",
                    a);
        return -1;
    }
    return 0;
}

/* ---- HTTP ---- */

/* The token, from a private file of root's, by pfi's one token-file reader
 * (src/io/token_file.c, compiled into this plugin); never logged (only its
 * file's name is). */
static int read_token(const conf *c, char *out, size_t len)
{
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_token_file_read(c->token_file, 16, PFI_TOKEN_ROOT_OWNED, out, len, &err) == PFI_OK)
        return 0;
    char msg[800];
    pfi_error_format(&err, msg, sizeof msg);
    slurm_error("pfi: %s", msg);
    return -1;
}

typedef struct {
    char buf[512];
    size_t n;
} reply;

static size_t on_data(char *p, size_t sz, size_t nm, void *ctx)
{
    reply *r = ctx;
    size_t len = sz * nm, room = sizeof r->buf - 1 - r->n;
    memcpy(r->buf + r->n, p, len < room ? len : room);
    r->n += len < room ? len : room;
    r->buf[r->n] = '\0';
    return len;
}

/* One request to pfid. Returns the HTTP status, or 0 when pfid could not be
 * reached (curl's reason in why), -1 when the token cannot be read. */
static long http(const conf *c, const char *method, const char *path, const char *body, char *why,
                 size_t why_len)
{
    char token[512], auth[600], url[512];
    why[0] = '\0';
    if (read_token(c, token, sizeof token) != 0) return -1;
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    memset(token, 0, sizeof token);
    snprintf(url, sizeof url, "%s%s", c->url, path);
    CURL *h = curl_easy_init();
    if (!h) {
        memset(auth, 0, sizeof auth);
        snprintf(why, why_len, "curl_easy_init failed");
        return 0;
    }
    struct curl_slist *hd = curl_slist_append(NULL, auth);
    if (body) hd = curl_slist_append(hd, "Content-Type: application/json");
    reply r = {.n = 0};
    r.buf[0] = '\0';
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    if (body) curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->timeout_ms);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* threads; slurmstepd's signals */
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    CURLcode rc = curl_easy_perform(h);
    long code = 0;
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    else
        snprintf(why, why_len, "%s", curl_easy_strerror(rc));
    if (rc == CURLE_OK) snprintf(why, why_len, "%.200s", r.buf);
    curl_easy_cleanup(h);
    /* curl_slist_free_all does not clear: the header copy holds the token. */
    for (struct curl_slist *s = hd; s; s = s->next)
        memset(s->data, 0, strlen(s->data));
    curl_slist_free_all(hd);
    memset(auth, 0, sizeof auth);
    return code;
}

/* pfid answered with something final (a 5xx may be a pfid coming up). */
static int answered(long code)
{
    return code >= 200 && code < 500;
}

/* ---- the queue files ---- */

static void qpath(const conf *c, const char *q, const char *id, char *out, size_t len)
{
    snprintf(out, len, "%s/%s/%s", c->state_dir, q, id);
}

/* Writes data to state_dir/q/id through a temporary file and a rename, so
 * that a reader never sees half a body. */
static int queue_put(const conf *c, const char *q, const char *id, const char *data)
{
    char dir[320], path[400], tmp[420];
    snprintf(dir, sizeof dir, "%s/%s", c->state_dir, q);
    mkdir(c->state_dir, 0700);
    mkdir(dir, 0700);
    qpath(c, q, id, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f || fputs(data, f) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        slurm_error("pfi: cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int queue_get(const conf *c, const char *q, const char *id, char *out, size_t len)
{
    char path[400];
    qpath(c, q, id, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(out, 1, len - 1, f);
    fclose(f);
    out[n] = '\0';
    return 0;
}

static void queue_del(const conf *c, const char *q, const char *id)
{
    char path[400];
    qpath(c, q, id, path, sizeof path);
    unlink(path);
}

/* Ends that an epilog could not deliver: a job still registered after its
 * end would keep its GPUs busy for the next job. */
static void deliver_ends(const conf *c)
{
    char dir[320], why[256], path[64];
    snprintf(dir, sizeof dir, "%s/ended", c->state_dir);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *id = e->d_name;
        if (strspn(id, "0123456789") != strlen(id) || strlen(id) > 20) continue;
        snprintf(path, sizeof path, "/v1/jobs/%s", id);
        long code = http(c, "DELETE", path, NULL, why, sizeof why);
        if (!answered(code)) break; /* still down: later */
        queue_del(c, "ended", id);
        slurm_info("pfi: job %s: its queued end delivered (HTTP %ld)", id, code);
    }
    closedir(d);
}

/* ---- the registration ---- */

/* SLURM_JOB_GPUS: "0,1,3". Returns the count, 0 when empty, -1 when bad. */
static int parse_gpus(const char *s, unsigned *out, int max)
{
    int n = 0;
    if (!s || !*s) return 0;
    while (*s) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (end == s || errno || v > 1023 || n == max || (*end && *end != ',')) return -1;
        for (int k = 0; k < n; k++)
            if (out[k] == v) return -1;
        out[n++] = (unsigned)v;
        s = *end ? end + 1 : end;
        if (*end && !*s) return -1;
    }
    return n;
}

static int job_body(spank_t sp, const conf *c, const char *id, const char *gpus_env, char *out,
                    size_t len)
{
    unsigned gpus[MAX_GPUS];
    int n = parse_gpus(gpus_env, gpus, MAX_GPUS);
    if (n < 0) {
        slurm_error("pfi: job %s: cannot read SLURM_JOB_GPUS '%s'", id, gpus_env);
        return -1;
    }
    if (n == 0) return 0; /* no GPUs here: nothing for pfid */
    size_t k = (size_t)snprintf(out, len, "{\"id\":\"%s\",\"gpus\":[", id);
    for (int i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(out + k, len - k, "%s%u", i ? "," : "", gpus[i]);
    if (k < len) k += (size_t)snprintf(out + k, len - k, "]");
    /* Options were checked in srun/sbatch; checked again (a job's
     * environment can be forged) and dropped with a log when bad. */
    char *v = NULL;
    double sla;
    if (spank_option_getopt(sp, &pfi_options[0], &v) == ESPANK_SUCCESS) {
        if (parse_sla(v, &sla) == 0 && k < len)
            k += (size_t)snprintf(out + k, len - k, ",\"sla_floor\":%.17g", sla);
        else
            slurm_error("pfi: job %s: --pfi-sla '%s' ignored", id, v ? v : "");
    }
    const char *keys[] = {NULL, NULL, "arch", "task"};
    for (int o = OPT_ARCH; o <= OPT_TASK; o++) {
        v = NULL;
        if (spank_option_getopt(sp, &pfi_options[o - 1], &v) != ESPANK_SUCCESS) continue;
        if (one_of(v, o == OPT_ARCH ? "dense" : "pt", o == OPT_ARCH ? "moe" : "ft") && k < len)
            k += (size_t)snprintf(out + k, len - k, ",\"%s\":\"%s\"", keys[o], v);
        else
            slurm_error("pfi: job %s: --pfi-%s '%s' ignored", id, keys[o], v ? v : "");
    }
    if (spank_option_getopt(sp, &pfi_options[3], &v) == ESPANK_SUCCESS) {
        if (c->allow_exempt && k < len)
            k += (size_t)snprintf(out + k, len - k, ",\"exempt\":true");
        else if (!c->allow_exempt)
            slurm_error("pfi: job %s: --pfi-exempt ignored: this site does not allow it "
                        "(plugstack.conf: allow_exempt)",
                        id);
    }
    char cls[CLASS_MAX + 1];
    v = NULL;
    if (spank_option_getopt(sp, &pfi_options[4], &v) == ESPANK_SUCCESS && class_valid(v)) {
        snprintf(cls, sizeof cls, "%s", v);
    } else {
        if (v) slurm_error("pfi: job %s: --pfi-class '%s' ignored", id, v);
        default_class(sp, cls, sizeof cls);
    }
    if (cls[0] && k < len) k += (size_t)snprintf(out + k, len - k, ",\"class\":\"%s\"", cls);
    if (k < len) k += (size_t)snprintf(out + k, len - k, "}");
    if (k >= len) {
        slurm_error("pfi: job %s: registration body too long", id);
        return -1;
    }
    return n;
}

/* Logs pfid's answer to a registration; 1 when it is final. */
static int register_once(const conf *c, const char *id, const char *body, int queued)
{
    char why[256];
    long code = http(c, "POST", "/v1/jobs", body, why, sizeof why);
    if (code == 201)
        slurm_info("pfi: job %s registered with pfid%s: %s", id, queued ? " (queued)" : "", body);
    else if (code == 409 && strstr(why, "already registered"))
        slurm_verbose("pfi: job %s already registered", id);
    else if (answered(code))
        slurm_error("pfi: job %s: pfid refused the registration (HTTP %ld): %s", id, code, why);
    else if (code == 0 || code >= 500)
        slurm_verbose("pfi: job %s: pfid at %s not reachable (%s)", id, c->url,
                      code ? "HTTP 5xx" : why);
    return code != 0 && (answered(code) || code < 0);
}

static int job_id(spank_t sp, char *out, size_t len)
{
    uint32_t id = 0;
    if (spank_get_item(sp, S_JOB_ID, &id) != ESPANK_SUCCESS || id == 0) return -1;
    snprintf(out, len, "%u", id);
    return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    /* The static spank_options table is not read by sbatch and salloc
     * (allocator context): register the options in every context. */
    for (int i = 0; pfi_options[i].name; i++)
        if (spank_option_register(sp, &pfi_options[i]) != ESPANK_SUCCESS) {
            slurm_error("pfi: cannot register --%s", pfi_options[i].name);
            return -1;
        }
    /* A bad plugstack.conf line is said where a user runs srun/sbatch, but
     * fails no job (the node side then does nothing). */
    if (spank_context() == S_CTX_LOCAL || spank_context() == S_CTX_ALLOCATOR) {
        conf c;
        parse_conf(ac, av, &c);
    }
    return 0;
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
    conf c;
    char id[24], body[BODY_MAX];
    if (parse_conf(ac, av, &c) != 0 || job_id(sp, id, sizeof id) != 0) return 0;
    int n = job_body(sp, &c, id, getenv("SLURM_JOB_GPUS"), body, sizeof body);
    if (n <= 0) return 0;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    deliver_ends(&c);
    if (!register_once(&c, id, body, 0)) {
        if (queue_put(&c, "pending", id, body) == 0)
            slurm_info("pfi: job %s: pfid at %s not reachable; registration queued, retried "
                       "every %.3g s by the job's steps",
                       id, c.url, c.retry_s);
    }
    curl_global_cleanup();
    return 0;
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
    conf c;
    char id[24], path[64], why[256];
    if (parse_conf(ac, av, &c) != 0 || job_id(sp, id, sizeof id) != 0) return 0;
    if (!getenv("SLURM_JOB_GPUS") || !*getenv("SLURM_JOB_GPUS")) return 0;
    queue_del(&c, "pending", id);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    snprintf(path, sizeof path, "/v1/jobs/%s", id);
    long code = http(&c, "DELETE", path, NULL, why, sizeof why);
    if (code == 200)
        slurm_info("pfi: job %s ended with pfid", id);
    else if (code == 404)
        slurm_verbose("pfi: job %s was not registered", id);
    else if (code != -1 && !answered(code) && queue_put(&c, "ended", id, "") == 0)
        slurm_info("pfi: job %s: pfid not reachable (%s); its end is queued", id,
                   code ? "HTTP 5xx" : why);
    else if (code != -1)
        slurm_error("pfi: job %s: pfid refused the end (HTTP %ld): %s", id, code, why);
    curl_global_cleanup();
    return 0;
}

/* ---- the retry in a step's slurmstepd ---- */

static struct {
    pthread_t th;
    int running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    conf c;
    char id[24];
} retry = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *retry_main(void *unused)
{
    char cur[BODY_MAX];
    pthread_mutex_lock(&retry.mu);
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double t = (double)ts.tv_nsec * 1e-9 + retry.c.retry_s;
        ts.tv_sec += (time_t)t;
        ts.tv_nsec = (long)((t - floor(t)) * 1e9);
        while (!retry.stop && pthread_cond_timedwait(&retry.cv, &retry.mu, &ts) != ETIMEDOUT) {
        }
        if (retry.stop) break;
        pthread_mutex_unlock(&retry.mu);
        /* Gone: another step registered it, or the job ended. */
        int done = queue_get(&retry.c, "pending", retry.id, cur, sizeof cur) != 0;
        if (!done && register_once(&retry.c, retry.id, cur, 1)) {
            queue_del(&retry.c, "pending", retry.id);
            done = 1;
        }
        pthread_mutex_lock(&retry.mu);
        if (done) break;
    }
    pthread_mutex_unlock(&retry.mu);
    return NULL;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    if (!spank_remote(sp) || retry.running) return 0;
    if (parse_conf(ac, av, &retry.c) != 0 || job_id(sp, retry.id, sizeof retry.id) != 0) return 0;
    char path[400];
    qpath(&retry.c, "pending", retry.id, path, sizeof path);
    if (access(path, F_OK) != 0) return 0; /* the prolog reached pfid */
    curl_global_init(CURL_GLOBAL_DEFAULT);
    retry.stop = 0;
    if (pthread_create(&retry.th, NULL, retry_main, NULL) == 0)
        retry.running = 1;
    else
        slurm_error("pfi: job %s: cannot start the registration retry", retry.id);
    return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    if (!retry.running) return 0;
    pthread_mutex_lock(&retry.mu);
    retry.stop = 1;
    pthread_cond_signal(&retry.cv);
    pthread_mutex_unlock(&retry.mu);
    pthread_join(retry.th, NULL); /* at most one request's timeout */
    retry.running = 0;
    curl_global_cleanup();
    return 0;
}
