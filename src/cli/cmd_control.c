/* pfi control: the cluster controller's dispatch and its operator clients
 * (status, plan, target add|list|rm, events); run is in cmd_control_run.c. */
#include <getopt.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "pfi/controller.h"
#include "pfi/ctl_client.h"
#include "pfi/ctl_time.h"
#include "pfi/json.h"
#include "pfi/openadr.h"
#include "pfi/target_io.h"
#include "pfi/token_file.h"
#include "pfi/ven.h"

#define DEFAULT_URL "http://127.0.0.1:9478"
#define SECRET_MAX 4097

static const char *help =
    "Usage: pfi control COMMAND [OPTIONS]\n"
    "\n"
    "The cluster controller: keeps the site under a power limit (from its HTTP\n"
    "API, a schedule file or an OpenADR 3 VTN) by capping every job's GPUs\n"
    "through the pfid agents, deepest on the most flexible jobs.\n"
    "\n"
    "Commands:\n"
    "  run      the service (see 'pfi control run --help')\n"
    "  status   the event, target vs measured, each job's cap and loss\n"
    "  plan     the supply curve: throughput kept at each site power\n"
    "  target   add | list | rm: the operator's targets\n"
    "  events   poll a VTN once and print what the VEN would act on\n"
    "\n"
    "Client options (status, plan, target): --url URL (" DEFAULT_URL "),\n"
    "--token-file F (for add and rm), --json.\n";

static double ctl_wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Client flags shared by status, plan and target. */
typedef struct client {
    const char *url, *token_file;
    int json;
    char token[4097];
} client;

/* Calls the controller; prints the error and returns non-zero on failure. */
static int call(const char *cmd, client *cl, const char *method, const char *path, const char *body,
                json_t **out)
{
    pfi_error err;
    pfi_error_clear(&err);
    if (cl->token_file && !cl->token[0] &&
        pfi_token_file_read(cl->token_file, 16, 0, cl->token, sizeof cl->token, &err) != PFI_OK)
        return pfi_cli_fail(cmd, &err);
    long st;
    char *ans;
    if (pfi_ctl_call(cl->url, method, path, cl->token[0] ? cl->token : NULL, body, 10, &st, &ans,
                     &err) != PFI_OK)
        return pfi_cli_fail(cmd, &err);
    json_t *v = json_loads(ans, 0, NULL);
    free(ans);
    if (st < 200 || st >= 300) {
        const json_t *e = json_object_get(v, "error");
        fprintf(stderr, "pfi %s: HTTP %ld: %s\n", cmd, st,
                json_is_string(e) ? json_string_value(e) : "?");
        json_decref(v);
        return PFI_EXIT_DATA;
    }
    if (!v) {
        fprintf(stderr, "pfi %s: the answer is not JSON\n", cmd);
        return PFI_EXIT_DATA;
    }
    *out = v;
    return 0;
}

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* v in watts, or "-" when unknown (never "nan"). */
static const char *watts(char *buf, size_t len, double v)
{
    if (isfinite(v))
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "-");
    return buf;
}

/* The power tree (issue 28), one domain a line, indented by depth: what it
 * may draw (rating, target), what it draws, its budget and headroom. */
static void print_tree(const json_t *doms)
{
    size_t n = json_array_size(doms);
    if (n < 2) return; /* the site alone: the lines above say it */
    const char **name = calloc(n, sizeof *name);
    size_t *depth = calloc(n, sizeof *depth);
    if (!name || !depth) goto out;
    printf("\n%-28s %10s %10s %10s %10s %10s %10s %5s\n", "domain", "limit_w", "target_w",
           "measured_w", "budget_w", "planned_w", "headroom_w", "dead");
    char b[7][32];
    for (size_t i = 0; i < n; i++) {
        const json_t *d = json_array_get(doms, i);
        name[i] = json_string_value(json_object_get(d, "name"));
        const char *par = json_string_value(json_object_get(d, "parent"));
        for (size_t k = 0; par && k < i; k++)
            if (name[k] && strcmp(name[k], par) == 0) depth[i] = depth[k] + 1;
        char label[64];
        snprintf(label, sizeof label, "%*s%s%s", (int)(2 * depth[i]), "", name[i] ? name[i] : "?",
                 num(d, "over_periods") >= 2 ? " OVER" : "");
        printf("%-28s %10s %10s %10s %10s %10s %10s %5.0f\n", label,
               watts(b[0], sizeof b[0], num(d, "limit_w")),
               watts(b[1], sizeof b[1], num(d, "target_w")),
               watts(b[2], sizeof b[2], num(d, "measured_w")),
               watts(b[3], sizeof b[3], num(d, "budget_w")),
               watts(b[4], sizeof b[4], num(d, "planned_w")),
               watts(b[5], sizeof b[5], num(d, "headroom_w")), num(d, "dead_agents"));
    }
out:
    free(name);
    free(depth);
}

static void print_status(const json_t *s)
{
    const json_t *t = json_object_get(s, "target");
    int ctl_on = json_is_true(json_object_get(s, "controlling"));
    char b1[32], b2[32], b3[32];
    if (json_is_object(t))
        printf("event      %s (%s), until %.0f\n", json_string_value(json_object_get(t, "id")),
               json_string_value(json_object_get(t, "source")), num(t, "end"));
    else
        printf("event      none%s\n", !ctl_on                            ? ""
                                      : isfinite(num(s, "gpu_budget_w")) ? " (ramping up)"
                                                                         : " (a domain's rating)");
    double lim = num(s, "site_limit_w");
    if (isfinite(lim))
        printf("site       limit %.0f W, ", lim);
    else
        printf("site       no event, ");
    printf("measured %.0f W (GPU %.0f + other %.0f)\n", num(s, "site_w"), num(s, "measured_gpu_w"),
           num(s, "other_load_w"));
    if (ctl_on && !isfinite(num(s, "gpu_budget_w")))
        printf("GPU budget none at the site (the power tree holds its domains), fixed %.0f W\n",
               num(s, "fixed_w"));
    else if (ctl_on)
        printf("GPU budget %.0f W, headroom %.0f W, trim %.0f W, fixed %.0f W%s\n",
               num(s, "gpu_budget_w"), num(s, "headroom_w"), num(s, "trim_w"), num(s, "fixed_w"),
               json_is_true(json_object_get(s, "infeasible")) ? ", INFEASIBLE" : "");
    else
        printf("GPU budget none (not controlling), fixed %.0f W\n", num(s, "fixed_w"));
    size_t n_jobs = json_array_size(json_object_get(s, "jobs"));
    double kept = num(s, "kept_ratio");
    char k[96];
    if (n_jobs == 0)
        snprintf(k, sizeof k, "no jobs");
    else if (isfinite(kept) && isfinite(num(s, "kept_ratio_lo")))
        snprintf(k, sizeof k, "throughput kept %.1f%% (>= %.1f%% at %.0f%%)", 100 * kept,
                 100 * num(s, "kept_ratio_lo"), 100 * num(s, "confidence"));
    else if (isfinite(kept))
        snprintf(k, sizeof k, "throughput kept %.1f%%", 100 * kept);
    else
        snprintf(k, sizeof k, "throughput kept unknown (no uncapped figures yet)");
    printf("agents     %.0f of %zu up; policy %s; %s\n", num(s, "agents_up"),
           json_array_size(json_object_get(s, "agents")),
           json_string_value(json_object_get(s, "policy")), k);
    const json_t *ha = json_object_get(s, "ha");
    if (json_is_object(ha))
        printf("ha         %s, epoch %.0f, leader %s, %.0f etcd key(s) written last period\n",
               json_string_value(json_object_get(ha, "role")), num(ha, "epoch"),
               json_is_string(json_object_get(ha, "leader"))
                   ? json_string_value(json_object_get(ha, "leader"))
                   : "(none)",
               num(ha, "etcd_puts_last_period"));
    size_t i;
    const json_t *j;
    json_array_foreach(json_object_get(s, "conflicts"), i, j)
        printf("conflict   %s GPU %.0f held by controller %s\n",
               json_string_value(json_object_get(j, "agent")), num(j, "gpu"),
               json_string_value(json_object_get(j, "owner")));
    print_tree(json_object_get(s, "domains"));
    if (n_jobs == 0) return;
    printf("\n%-32s %5s %9s %9s %9s %7s %12s %12s\n", "job", "gpus", "cap_w", "power_w",
           "planned_w", "loss", "expected", "lower");
    json_array_foreach(json_object_get(s, "jobs"), i, j)
        printf("%-32s %5.0f %9s %9s %9s %6.1f%% %12.1f %12.1f\n",
               json_string_value(json_object_get(j, "id")), num(j, "gpus"),
               watts(b1, sizeof b1, num(j, "cap_w")), watts(b2, sizeof b2, num(j, "power_w")),
               watts(b3, sizeof b3, num(j, "planned_w")),
               isfinite(num(j, "loss")) ? 100 * num(j, "loss") : 0, num(j, "expected_tput"),
               num(j, "expected_tput_lo"));
}

static int parse_client(const char *cmd, int argc, char **argv, client *cl, const char *usage,
                        const struct option *extra, int (*on_extra)(int, const char *, void *),
                        void *ctx)
{
    struct option opts[16] = {
        {"url", 1, 0, 'u'}, {"token-file", 1, 0, 't'}, {"json", 0, 0, 'j'}, {"help", 0, 0, 'h'}};
    size_t k = 4;
    for (; extra && extra[k - 4].name && k < 15; k++)
        opts[k] = extra[k - 4];
    memset(&opts[k], 0, sizeof opts[k]);
    cl->url = DEFAULT_URL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'u')
            cl->url = optarg;
        else if (c == 't')
            cl->token_file = optarg;
        else if (c == 'j')
            cl->json = 1;
        else if (c == 'h') {
            fputs(usage, stdout);
            return -1;
        } else if (c == '?' || !on_extra || on_extra(c, optarg, ctx))
            return PFI_EXIT_USAGE;
    }
    (void)cmd;
    return 0;
}

static int cmd_status(int argc, char **argv)
{
    client cl = {0};
    int rc = parse_client("control status", argc, argv, &cl,
                          "Usage: pfi control status [--url URL] [--json]\n", NULL, NULL, NULL);
    if (rc) return rc < 0 ? PFI_EXIT_OK : rc;
    json_t *s;
    if ((rc = call("control status", &cl, "GET", "/v1/status", NULL, &s))) return rc;
    if (cl.json)
        pfi_json_print(stdout, s);
    else
        print_status(s);
    json_decref(s);
    return PFI_EXIT_OK;
}

/* --confidence C: the bounds restated at C from each figure's SD. */
static int on_plan(int c, const char *v, void *ctx)
{
    double *conf = ctx;
    if (c != 'C') return 1;
    if (pfi_cli_parse_double(v, conf) || !(*conf >= 0.5 && *conf < 1)) {
        pfi_cli_usage_error("control plan", "--confidence must be a number in [0.5, 1)");
        return 1;
    }
    return 0;
}

/* The answer's bounds at confidence conf: throughput - z SD (the
 * controller's SDs, so any confidence is one subtraction away). */
static void restate(json_t *f, double conf)
{
    double z = gsl_cdf_ugaussian_Pinv(conf);
    pfi_json_set(f, "confidence", json_real(conf));
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(f, "steps"), i, x)
    {
        double t = num(x, "throughput"), sd = num(x, "throughput_sd"), k = num(x, "kept");
        if (!isfinite(t) || !isfinite(sd)) continue;
        double lo = fmax(0, t - z * sd);
        pfi_json_set(x, "throughput_lo", pfi_json_num(lo));
        pfi_json_set(x, "kept_lo", pfi_json_num(t > 0 && isfinite(k) ? k * lo / t : NAN));
    }
}

static int cmd_plan(int argc, char **argv)
{
    client cl = {0};
    double conf = NAN;
    static const struct option extra[] = {{"confidence", 1, 0, 'C'}, {0, 0, 0, 0}};
    int rc =
        parse_client("control plan", argc, argv, &cl,
                     "Usage: pfi control plan [--url URL] [--confidence C] [--json]\n\n"
                     "What a cut would cost: for site powers from all jobs uncapped down to\n"
                     "all at their floors, the throughput the cluster would keep, expected and\n"
                     "its lower bound, from the current curve estimates (GET /v1/flexibility).\n"
                     "  --confidence C  the lower bounds at C, in [0.5, 1) (default: the\n"
                     "                  controller's, pfi control run --confidence, 0.9)\n",
                     extra, on_plan, &conf);
    if (rc) return rc < 0 ? PFI_EXIT_OK : rc;
    json_t *f;
    if ((rc = call("control plan", &cl, "GET", "/v1/flexibility", NULL, &f))) return rc;
    if (isfinite(conf)) restate(f, conf);
    if (cl.json) {
        pfi_json_print(stdout, f);
    } else {
        double c = num(f, "confidence");
        char h1[32], h2[32];
        snprintf(h1, sizeof h1, "lo_%.0f%%", 100 * (isfinite(c) ? c : 0.9));
        snprintf(h2, sizeof h2, "kept_lo");
        printf("%14s %14s %16s %16s %8s %8s\n", "site_power_w", "gpu_power_w", "throughput", h1,
               "kept", h2);
        size_t i;
        const json_t *x;
        json_array_foreach(json_object_get(f, "steps"), i, x)
            printf("%14.0f %14.0f %16.1f %16.1f %7.1f%% %7.1f%%\n", num(x, "site_power_w"),
                   num(x, "gpu_power_w"), num(x, "throughput"), num(x, "throughput_lo"),
                   100 * num(x, "kept"), 100 * num(x, "kept_lo"));
    }
    json_decref(f);
    return PFI_EXIT_OK;
}

typedef struct add_args {
    double site, gpu, dur, ramp;
    const char *start, *id, *domain;
    int have_site, have_gpu, have_dur, have_ramp, bad, replace;
} add_args;

static int on_add(int c, const char *v, void *ctx)
{
    add_args *a = ctx;
    double *dst = c == 'S'   ? &a->site
                  : c == 'G' ? &a->gpu
                  : c == 'D' ? &a->dur
                  : c == 'R' ? &a->ramp
                             : NULL;
    if (dst) {
        if (pfi_cli_parse_double(v, dst)) {
            pfi_cli_usage_error("control target add", "not a number: '%s'", v);
            return 1;
        }
        *(c == 'S'   ? &a->have_site
          : c == 'G' ? &a->have_gpu
          : c == 'D' ? &a->have_dur
                     : &a->have_ramp) = 1;
        return 0;
    }
    if (c == 'B')
        a->start = v;
    else if (c == 'I')
        a->id = v;
    else if (c == 'X')
        a->replace = 1;
    else if (c == 'M')
        a->domain = v;
    else
        return 1;
    return 0;
}

static int cmd_target(int argc, char **argv)
{
    static const char *usage =
        "Usage: pfi control target add (--site-power-w W | --gpu-power-w W) --duration-s S\n"
        "                              [--start RFC3339|UNIX] [--id ID [--replace]]\n"
        "                              [--ramp-w-per-s R] [--domain NAME]\n"
        "       pfi control target list   (state: active, scheduled or ended)\n"
        "       pfi control target rm ID\n"
        "Common: --url URL (" DEFAULT_URL "), --token-file F (add, rm), --json\n"
        "An --id of a target still scheduled or active is refused (409) unless\n"
        "--replace is given (PUT /v1/targets/ID); a target that has ended, or a\n"
        "duration over 31 days, is refused. --domain: a domain of the controller's\n"
        "--topology (default: the site).\n";
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? PFI_EXIT_USAGE : PFI_EXIT_OK;
    }
    const char *verb = argv[1];
    client cl = {0};
    json_t *v;
    int rc;
    if (strcmp(verb, "add") == 0) {
        static const struct option extra[] = {
            {"site-power-w", 1, 0, 'S'}, {"gpu-power-w", 1, 0, 'G'}, {"duration-s", 1, 0, 'D'},
            {"ramp-w-per-s", 1, 0, 'R'}, {"start", 1, 0, 'B'},       {"id", 1, 0, 'I'},
            {"replace", 0, 0, 'X'},      {"domain", 1, 0, 'M'},      {0, 0, 0, 0}};
        add_args a = {0};
        rc = parse_client("control target add", argc - 1, argv + 1, &cl, usage, extra, on_add, &a);
        if (rc) return rc < 0 ? PFI_EXIT_OK : rc;
        if (a.have_site == a.have_gpu || !a.have_dur)
            return pfi_cli_usage_error(
                "control target add",
                "give one of --site-power-w and --gpu-power-w, and --duration-s");
        if (a.replace && !a.id)
            return pfi_cli_usage_error("control target add", "--replace needs the --id to replace");
        json_t *b = json_object();
        if (a.id) pfi_json_set(b, "id", json_string(a.id));
        pfi_json_set(b, a.have_site ? "site_power_w" : "gpu_power_w",
                     json_real(a.have_site ? a.site : a.gpu));
        double st;
        if (!a.start)
            pfi_json_set(b, "start", json_real(floor(ctl_wall_now())));
        else if (!pfi_cli_parse_double(a.start, &st))
            pfi_json_set(b, "start", json_real(st));
        else
            pfi_json_set(b, "start", json_string(a.start));
        pfi_json_set(b, "duration_s", json_real(a.dur));
        if (a.have_ramp) pfi_json_set(b, "ramp_w_per_s", json_real(a.ramp));
        if (a.domain) pfi_json_set(b, "domain", json_string(a.domain));
        char *body = json_dumps(b, JSON_COMPACT);
        json_decref(b);
        char path[300] = "/v1/targets";
        if (a.replace) snprintf(path, sizeof path, "/v1/targets/%.200s", a.id);
        rc = call("control target add", &cl, a.replace ? "PUT" : "POST", path, body, &v);
        free(body);
    } else if (strcmp(verb, "list") == 0) {
        rc = parse_client("control target list", argc - 1, argv + 1, &cl, usage, NULL, NULL, NULL);
        if (rc) return rc < 0 ? PFI_EXIT_OK : rc;
        rc = call("control target list", &cl, "GET", "/v1/targets", NULL, &v);
    } else if (strcmp(verb, "rm") == 0) {
        rc = parse_client("control target rm", argc - 1, argv + 1, &cl, usage, NULL, NULL, NULL);
        if (rc) return rc < 0 ? PFI_EXIT_OK : rc;
        if (optind + 1 != argc - 1)
            return pfi_cli_usage_error("control target rm", "give one target ID");
        char path[300];
        snprintf(path, sizeof path, "/v1/targets/%.200s", argv[optind + 1]);
        rc = call("control target rm", &cl, "DELETE", path, NULL, &v);
    } else {
        return pfi_cli_usage_error("control target", "unknown verb '%s' (add, list, rm)", verb);
    }
    if (rc) return rc;
    if (cl.json || strcmp(verb, "list") != 0) {
        pfi_json_print(stdout, v);
    } else {
        printf("%-40s %-9s %-5s %-9s %12s %12s %12s %s\n", "id", "source", "kind", "state",
               "limit_w", "start", "duration_s", "domain");
        size_t i;
        const json_t *t;
        json_array_foreach(json_object_get(v, "targets"), i, t)
        {
            const char *st = json_string_value(json_object_get(t, "state"));
            const char *dm = json_string_value(json_object_get(t, "domain"));
            printf("%-40s %-9s %-5s %-9s %12.0f %12.0f %12.0f %s\n",
                   json_string_value(json_object_get(t, "id")),
                   json_string_value(json_object_get(t, "source")),
                   json_string_value(json_object_get(t, "kind")), st ? st : "?", num(t, "limit_w"),
                   num(t, "start"), num(t, "duration_s"), dm ? dm : "site");
        }
    }
    json_decref(v);
    return PFI_EXIT_OK;
}

static int cmd_events(int argc, char **argv)
{
    pfi_ven_opts vo = {0};
    const char *secret_file = NULL;
    int json = 0, first;
    const pfi_cli_opt opts[] = {
        PFI_OPT("vtn", "URL", pfi_cli_set_str, &vo.url, NULL, "the VTN's base URL"),
        PFI_OPT("program", "NAME|ID", pfi_cli_set_str, &vo.program, NULL, "its program"),
        PFI_OPT("vtn-client-id", "ID", pfi_cli_set_str, &vo.client_id, NULL, "OAuth2 client id"),
        PFI_OPT("vtn-client-secret-file", "F", pfi_cli_set_str, &secret_file, NULL,
                "its secret (chmod 600)"),
        PFI_OPT("json", NULL, pfi_cli_set_flag, &json, NULL, "print one JSON object"),
    };
    const pfi_cli_spec spec = {
        .cmd = "control events",
        .usage = "--vtn URL --program NAME|ID --vtn-client-id ID\n"
                 "                          --vtn-client-secret-file F [--json]",
        .about = "Polls the VTN once (every page) and prints each event of the program: the\n"
                 "limits the controller would act on, what it tolerated, what it refused.\n",
        .opts = opts,
        .n_opts = PFI_CLI_N(opts),
        .page = "pfi-control(8)"};
    int ec = pfi_cli_parse(&spec, argc, argv, &first);
    if (ec >= 0) return ec;
    if (!vo.url || !vo.program || !vo.client_id || !secret_file)
        return pfi_cli_usage_error(
            "control events",
            "--vtn, --program, --vtn-client-id and --vtn-client-secret-file are required");
    static char secret[SECRET_MAX];
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_token_file_read(secret_file, 1, 0, secret, sizeof secret, &err) != PFI_OK)
        return pfi_cli_fail("control events", &err);
    vo.client_secret = secret;
    pfi_ven *v;
    int rc = pfi_ven_create(&vo, &v, &err);
    memset(secret, 0, sizeof secret);
    if (rc != PFI_OK) return pfi_cli_fail("control events", &err);
    pfi_oadr_event *ev;
    size_t n;
    double now = ctl_wall_now();
    rc = pfi_ven_poll(v, now, &ev, &n, &err);
    pfi_ven_destroy(v);
    if (rc != PFI_OK) return pfi_cli_fail("control events", &err);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        pfi_json_set(o, "id", json_string(ev[i].id));
        pfi_json_set(o, "status", json_string(ev[i].status == PFI_OK ? "ok" : "refused"));
        pfi_json_set(o, "error", ev[i].error[0] ? json_string(ev[i].error) : json_null());
        pfi_json_set(o, "priority",
                     ev[i].priority == PFI_TARGET_NO_PRIORITY ? json_null()
                                                              : json_integer(ev[i].priority));
        pfi_json_set(o, "notes", json_string(ev[i].notes));
        pfi_json_set(o, "report_asked", json_boolean(ev[i].report_w_per_unit > 0));
        json_t *ts = json_array();
        pfi_target t[64];
        size_t k = pfi_oadr_event_targets(&ev[i], t, 64);
        for (size_t j = 0; j < k && j < 64; j++)
            json_array_append_new(ts, pfi_target_to_json(&t[j]));
        pfi_json_set(o, "limits", ts);
        json_array_append_new(arr, o);
    }
    if (json) {
        json_t *o = json_object();
        pfi_json_set(o, "events", arr);
        pfi_json_print(stdout, o);
        json_decref(o);
    } else {
        size_t i;
        json_t *o;
        json_array_foreach(arr, i, o)
        {
            printf("%s: %s%s%s, %zu limit(s)\n", json_string_value(json_object_get(o, "id")),
                   json_string_value(json_object_get(o, "status")),
                   json_is_string(json_object_get(o, "error")) ? ": " : "",
                   json_is_string(json_object_get(o, "error"))
                       ? json_string_value(json_object_get(o, "error"))
                       : "",
                   json_array_size(json_object_get(o, "limits")));
            size_t j;
            json_t *t;
            json_array_foreach(json_object_get(o, "limits"), j, t) printf(
                "  %-40s %10.0f W from %.0f to %.0f%s\n",
                json_string_value(json_object_get(t, "id")), num(t, "limit_w"), num(t, "start"),
                num(t, "end"), json_is_true(json_object_get(t, "default")) ? " (default)" : "");
        }
        json_decref(arr);
    }
    pfi_oadr_events_free(ev, n);
    return PFI_EXIT_OK;
}

int pfi_cmd_control(int argc, char **argv)
{
    if (argc < 2) {
        fputs(help, stderr);
        return PFI_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        fputs(help, stdout);
        return PFI_EXIT_OK;
    }
    if (strcmp(sub, "run") == 0) return pfi_cmd_control_run(argc - 1, argv + 1);
    if (strcmp(sub, "status") == 0) return cmd_status(argc - 1, argv + 1);
    if (strcmp(sub, "plan") == 0) return cmd_plan(argc - 1, argv + 1);
    if (strcmp(sub, "target") == 0) return cmd_target(argc - 1, argv + 1);
    if (strcmp(sub, "events") == 0) return cmd_events(argc - 1, argv + 1);
    return pfi_cli_usage_error("control", "unknown command '%s'", sub);
}
