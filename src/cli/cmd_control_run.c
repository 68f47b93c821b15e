/* pfi control run: the cluster controller's service, its options and their
 * checks. The operator clients are in cmd_control.c. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pfi/agents.h"
#include "pfi/controller.h"
#include "pfi/prom_cluster.h"
#include "pfi/token_file.h"

#define SECRET_MAX 4097

static const char *run_about =
    "The controller's service: every --period it reads the jobs and GPUs (from the\n"
    "agents or Prometheus), splits the GPU budget under the site's limits by the\n"
    "policy and pushes one cap per job. SIGTERM/SIGINT stop it; caps stay until\n"
    "they expire. Exit status 0 on a clean stop, 1 when it cannot start, 2 on bad\n"
    "usage.\n";

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static int parse_pos(const char *cmd, const char *flag, const char *v, double lo, double hi,
                     double *out)
{
    if (pfi_cli_parse_double(v, out) || !(*out >= lo && *out <= hi))
        return pfi_cli_usage_error(cmd, "%s must be a number in [%g, %g]", flag, lo, hi);
    return 0;
}

/* A number in [lo, hi] (the table's bounds), the message naming them. */
static int set_in(const pfi_cli_opt *o, const char *arg)
{
    double v;
    char flag[64];
    snprintf(flag, sizeof flag, "--%s", o->name);
    if (parse_pos("control run", flag, arg, o->lo, o->hi, &v)) return -2;
    *(double *)o->dst = v;
    return 0;
}

static int set_in_size(const pfi_cli_opt *o, const char *arg)
{
    double v;
    pfi_cli_opt t = *o;
    t.dst = &v;
    int r = set_in(&t, arg);
    if (r == 0) *(size_t *)o->dst = (size_t)v;
    return r;
}

static int set_in_int(const pfi_cli_opt *o, const char *arg)
{
    double v;
    pfi_cli_opt t = *o;
    t.dst = &v;
    int r = set_in(&t, arg);
    if (r == 0) *(int *)o->dst = (int)v;
    return r;
}

static int set_in_unsigned(const pfi_cli_opt *o, const char *arg)
{
    double v;
    pfi_cli_opt t = *o;
    t.dst = &v;
    int r = set_in(&t, arg);
    if (r == 0) *(unsigned *)o->dst = (unsigned)v;
    return r;
}

typedef struct {
    char **urls;
    size_t n;
} url_list;

static int set_agents(const pfi_cli_opt *o, const char *arg)
{
    url_list *u = o->dst;
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_agents_split(arg, &u->urls, &u->n, &err) == PFI_OK) return 0;
    pfi_cli_usage_error("control run", "%s", err.msg);
    return -2;
}

static int set_agents_file(const pfi_cli_opt *o, const char *arg)
{
    url_list *u = o->dst;
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_agents_read_file(arg, &u->urls, &u->n, &err) == PFI_OK) return 0;
    return pfi_cli_fail("control run", &err);
}

static int set_policy(const pfi_cli_opt *o, const char *arg)
{
    return pfi_plan_policy_parse(arg, o->dst) == PFI_OK ? 0 : -1;
}

static int set_cluster_from(const pfi_cli_opt *o, const char *arg)
{
    if (strcmp(arg, "prometheus") == 0)
        *(int *)o->dst = 1;
    else if (strcmp(arg, "agents") != 0)
        return -1;
    return 0;
}

/* Reads the secrets and the SLA file, then runs the service until a signal. */
static int run_service(pfi_ctl_opts o, char **urls, size_t n_urls, const char *token_file,
                       const char *agent_token_file, const char *secret_file, const char *jobs_file)
{
    pfi_error err;
    pfi_error_clear(&err);
    static char token[4097], agent_token[4097], secret[SECRET_MAX];
    int rc = pfi_token_file_read(token_file, 16, 0, token, sizeof token, &err);
    if (rc == PFI_OK)
        rc = pfi_token_file_read(agent_token_file ? agent_token_file : token_file, 16, 0,
                                 agent_token, sizeof agent_token, &err);
    if (rc == PFI_OK && secret_file)
        rc = pfi_token_file_read(secret_file, 1, 0, secret, sizeof secret, &err);
    if (rc != PFI_OK) {
        pfi_agents_free_urls(urls, n_urls);
        return pfi_cli_fail("control run", &err);
    }
    pfi_sla *sla = NULL;
    if (rc == PFI_OK && jobs_file &&
        (rc = pfi_sla_read(jobs_file, &sla, &o.n_sla, &err)) != PFI_OK) {
        pfi_agents_free_urls(urls, n_urls);
        return pfi_cli_fail("control run", &err);
    }
    o.sla = sla;
    o.token = token;
    o.agent_token = agent_token;
    o.vtn_client_secret = secret_file ? secret : NULL;
    o.agents = urls;
    o.n_agents = n_urls;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    rc = pfi_ctl_run(&o, &stop_flag, &err);
    memset(secret, 0, sizeof secret);
    memset(agent_token, 0, sizeof agent_token);
    memset(token, 0, sizeof token);
    free(sla);
    pfi_agents_free_urls(urls, n_urls);
    return rc == PFI_OK ? PFI_EXIT_OK : pfi_cli_fail("control run", &err);
}

/* The checks across options, after parsing: the first failed one's message
 * and PFI_EXIT_USAGE, or 0. extra is the first operand, if any. */
/* A site's name is one etcd path segment. */
static int ha_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64) return 0;
    for (; *s; s++)
        if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') || ('0' <= *s && *s <= '9') ||
              strchr("._-", *s)))
            return 0;
    return 1;
}

static int check_run(const pfi_ctl_opts *o, size_t n_urls, const char *token_file,
                     const char *secret_file, const char *extra)
{
    pfi_error err;
    pfi_error_clear(&err);
    int bad = 0;
    if (extra) bad = pfi_cli_usage_error("control run", "unexpected argument '%s'", extra);
    if (!bad && (!o->db || !token_file))
        bad = pfi_cli_usage_error("control run", "--db and --token-file are required");
    if (!bad && n_urls == 0 && !o->cluster_from_prometheus && !o->topology)
        bad = pfi_cli_usage_error(
            "control run", "give --agents, --agents-file, --topology or --cluster-from prometheus");
    if (!bad && o->topology && o->cluster_from_prometheus)
        bad = pfi_cli_usage_error("control run",
                                  "--topology places agents by their own figures: use --agents "
                                  "or --agents-file, not --cluster-from prometheus");
    if (!bad && o->cluster_from_prometheus && !o->prometheus_url)
        bad =
            pfi_cli_usage_error("control run", "--cluster-from prometheus needs --prometheus URL");
    if (!bad && o->prometheus_match) {
        char q[4096];
        if (pfi_pc_query_text(PFI_PC_MEMBERS, o->prometheus_match, q, sizeof q, &err) != PFI_OK)
            bad = pfi_cli_usage_error("control run", "--prometheus-match: %s", err.msg);
    }
    if (!bad && o->site_meter && !o->prometheus_url)
        bad = pfi_cli_usage_error("control run", "--site-meter needs --prometheus URL");
    if (!bad && (o->etcd != NULL) != (o->ha_name != NULL))
        bad = pfi_cli_usage_error("control run", "--etcd and --ha-name go together");
    if (!bad && o->ha_name && !ha_name_ok(o->ha_name))
        bad = pfi_cli_usage_error("control run",
                                  "--ha-name: 1-64 characters of A-Z a-z 0-9 . _ -, not '%.80s'",
                                  o->ha_name);
    if (!bad && o->vtn_url && (!o->vtn_program || !o->vtn_client_id || !secret_file))
        bad = pfi_cli_usage_error(
            "control run", "--vtn needs --program, --vtn-client-id and --vtn-client-secret-file");
    return bad;
}

/* The defaults of the options (the help's figures in parentheses). */
static const pfi_ctl_opts run_defaults = {.listen = "127.0.0.1:9478",
                                          .period_s = 5,
                                          .agent_timeout_s = 2,
                                          .policy = PFI_PLAN_PFI,
                                          .cap_margin_s = 60,
                                          .cap_max_s = 3600,
                                          .vtn_poll_s = 30,
                                          .vtn_max_failures = 3,
                                          .cut_lead_ramp_s = 1,
                                          .http_threads = 2,
                                          .confidence = 0.9};

int pfi_cmd_control_run(int argc, char **argv)
{
    pfi_ctl_opts o = run_defaults;
    const char *token_file = NULL, *agent_token_file = NULL, *secret_file = NULL, *jobs_file = NULL;
    url_list ul = {0};
#define STR(name, arg, dst, help) PFI_OPT(name, arg, pfi_cli_set_str, dst, NULL, help)
#define IN(name, arg, set, dst, help, lo, hi) PFI_OPT_R(name, arg, set, dst, NULL, help, lo, hi)
    const pfi_cli_opt opts[] = {
        STR("db", "PATH", &o.db, "the controller's SQLite store (created if missing)"),
        STR("token-file", "F", &token_file, "bearer token of this API's POST/DELETE (chmod 600)"),
        PFI_OPT("agents", "URL,...", set_agents, &ul, NULL, "pfid base URLs"),
        PFI_OPT("agents-file", "F", set_agents_file, &ul, NULL, "or one URL a line"),
        STR("agent-token-file", "F", &agent_token_file, "pfid's token (default: --token-file)"),
        STR("listen", "A:P", &o.listen, "HTTP address (127.0.0.1:9478; port 0: any)"),
        IN("period", "S", set_in, &o.period_s, "control period, 0.1-3600 s (5)", 0.1, 3600),
        PFI_OPT("policy", "P", set_policy, &o.policy, "--policy must be equal, pfi or learn",
                "equal | pfi (default) | learn"),
        IN("learn-rounds", "N", set_in_size, &o.learn_rounds,
           "learn: exploring periods after each budget change (8)", 1, 64),
        IN("confidence", "C", set_in, &o.confidence,
           "of every lower bound the controller states (0.9)", 0.5, 0.999),
        IN("other-load-w", "W", set_in, &o.other_load_w, "the site's non-GPU load, W (0)", 0, 1e12),
        STR("site-meter", "QUERY", &o.site_meter,
            "or a Prometheus query for the site's metered power, W"),
        STR("prometheus", "URL", &o.prometheus_url,
            "the Prometheus that --site-meter and --cluster-from ask"),
        PFI_OPT("cluster-from", "SRC", set_cluster_from, &o.cluster_from_prometheus,
                "--cluster-from must be agents or prometheus",
                "agents (default) | prometheus (jobs, GPUs and power from Prometheus)"),
        STR("prometheus-match", "M", &o.prometheus_match,
            "the label matchers of pfid's series (job=\"pfid\")"),
        IN("margin-w", "W", set_in, &o.margin_w, "kept below every site limit, W (0)", 0, 1e12),
        IN("ramp-w-per-s", "R", set_in, &o.ramp_w_per_s,
           "how fast the GPU budget may rise (0 = at once)", 0, 1e12),
        IN("cap-margin-s", "S", set_in, &o.cap_margin_s,
           "caps expire this long after the target's end (60)", 1, 86400),
        IN("cap-max-s", "S", set_in, &o.cap_max_s,
           "and at most this far ahead, renewed each period (3600)", 10, 604800),
        IN("agent-timeout-s", "S", set_in, &o.agent_timeout_s, "per agent call (2)", 0.05, 60),
        STR("schedule", "FILE", &o.schedule, "a schedule of targets (CSV)"),
        STR("jobs-file", "F", &jobs_file, "SLA floors: CSV job,sla"),
        STR("vtn", "URL", &o.vtn_url, "an OpenADR 3 VTN's base URL"),
        STR("program", "NAME|ID", &o.vtn_program, "its program"),
        STR("vtn-client-id", "ID", &o.vtn_client_id, "OAuth2 client id"),
        STR("vtn-client-secret-file", "F", &secret_file, "its secret (chmod 600)"),
        IN("vtn-poll-s", "S", set_in, &o.vtn_poll_s, "how often to poll the VTN (30)", 0.1, 86400),
        IN("vtn-max-failures", "N", set_in_unsigned, &o.vtn_max_failures,
           "/healthz fails after N failed polls in a row (3)", 1, 1000),
        IN("cut-ramp-s", "S", set_in, &o.cut_lead_ramp_s,
           "a known step down is cut a period plus S early (1)", 0, 3600),
        PFI_OPT("owner", "ID", pfi_cli_set_str, &o.owner, NULL,
                "the id its caps carry (default: made once, kept in the store)"),
        IN("http-threads", "N", set_in_int, &o.http_threads, "HTTP worker threads (2)", 1, 64),
        STR("topology", "FILE", &o.topology,
            "the power tree: every domain held under its rating (JSON; pfi-control(8))"),
        STR("etcd", "URL,...", &o.etcd, "active/standby: etcd endpoints (needs --ha-name)"),
        STR("ha-name", "SITE", &o.ha_name, "the site's name in etcd (/pfi/SITE/)"),
        IN("ha-ttl-s", "S", set_in, &o.ha_ttl_s, "the leader's lease (3 periods, at least 2)", 1,
           3600),
    };
#undef STR
#undef IN
    const pfi_cli_spec spec = {
        .cmd = "control run",
        .usage = "--db PATH --token-file F (--agents URL,... | --agents-file F |\n"
                 "                       --cluster-from prometheus --prometheus URL) [OPTIONS]",
        .about = run_about,
        .opts = opts,
        .n_opts = PFI_CLI_N(opts),
        .page = "pfi-control(8)"};
    int optind_;
    int bad = pfi_cli_parse(&spec, argc, argv, &optind_);
    char **urls = ul.urls;
    size_t n_urls = ul.n;
    if (bad >= 0) {
        pfi_agents_free_urls(urls, n_urls);
        return bad;
    }
    bad = check_run(&o, n_urls, token_file, secret_file, optind_ < argc ? argv[optind_] : NULL);
    if (bad) {
        pfi_agents_free_urls(urls, n_urls);
        return bad;
    }
    return run_service(o, urls, n_urls, token_file, agent_token_file, secret_file, jobs_file);
}
