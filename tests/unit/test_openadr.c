/* OpenADR 3 event parsing: every fixture in ../shared/data/openadr3/examples/
 * parses or fails as its README predicts, and one test per timing rule.
 * Times from Python's datetime (see test_ctl_time.c); 2023-02-10T00:00:00Z
 * is 1675987200. */
#include "test_util.h"

#include <string.h>

#include "pfi/fileio.h"
#include "pfi/openadr.h"

#define T0 1675987200.0 /* 2023-02-10T00:00:00Z */
#define NOW 1.7e9

static pfi_oadr_event *load(const char *name, size_t *n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/data/openadr3/examples/%s", PFI_SHARED_DIR, name);
    char *buf;
    size_t len;
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_file_read_all(path, &buf, &len, &err) != PFI_OK) fail_msg("%s: %s", path, err.msg);
    pfi_oadr_event *ev;
    int rc = pfi_oadr_events_parse(buf, len, NOW, &ev, n, &err);
    free(buf);
    if (rc != PFI_OK) fail_msg("%s: %s", name, err.msg);
    return ev;
}

static pfi_oadr_event *parse_str(const char *s)
{
    pfi_oadr_event *ev;
    size_t n;
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_oadr_events_parse(s, strlen(s), NOW, &ev, &n, &err) != PFI_OK) fail_msg("%s", err.msg);
    assert_int_equal(n, 1);
    return ev;
}

static void has_note(const pfi_oadr_event *e, const char *what)
{
    if (!strstr(e->notes, what)) fail_msg("no note '%s' in '%s'", what, e->notes);
}

/* ug310_ex8.10.1-1: two limits in KW, default period PT30M; the second
 * starts where the first ended. Valid except the descriptors' objectType. */
static void test_capacity_limit(void **st)
{
    size_t n;
    pfi_oadr_event *e = load("ug310_ex8.10.1-1_capacity_limit_event.json", &n);
    assert_int_equal(n, 1);
    assert_int_equal(e->status, PFI_OK);
    assert_int_equal(e->n_iv, 2);
    assert_near(e->iv[0].start, T0, 0);
    assert_near(e->iv[0].end, T0 + 1800, 0);
    assert_near(e->iv[0].value_w, 10000, 0);
    assert_near(e->iv[1].start, T0 + 1800, 0);
    assert_near(e->iv[1].end, T0 + 3600, 0);
    assert_near(e->iv[1].value_w, 8000, 0);
    assert_near(e->report_w_per_unit, 1000, 0); /* the KW READING; VOLTS and KVAR not */
    has_note(e, "'VOLTS' is not supported");
    has_note(e, "payloadDescriptors without objectType");
    has_note(e, "EXPORT_CAPACITY_LIMIT ignored");
    pfi_target t[4];
    assert_int_equal(pfi_oadr_event_targets(e, t, 4), 2);
    assert_string_equal(t[1].id, "oadr:capacity_limit_Event:1.0");
    assert_int_equal(t[1].kind, PFI_TARGET_SITE);
    assert_false(t[1].is_default);
    pfi_oadr_events_free(e, n);
}

/* ug310_ex8.10.2-1: CAPACITY_SUBSCRIPTION (not enumerated) tolerated as the
 * import subscription, P9999Y = infinite, a default limit. */
static void test_subscription(void **st)
{
    size_t n;
    pfi_oadr_event *e = load("ug310_ex8.10.2-1_capacity_subscription_event.json", &n);
    assert_int_equal(e->status, PFI_OK);
    assert_int_equal(e->n_iv, 1);
    assert_int_equal(e->iv[0].kind, PFI_OADR_SUBSCRIPTION);
    assert_true(isinf(e->iv[0].end));
    assert_near(e->iv[0].value_w, 240000, 0);
    has_note(e, "CAPACITY_SUBSCRIPTION read as IMPORT_CAPACITY_SUBSCRIPTION");
    pfi_target t;
    assert_int_equal(pfi_oadr_event_targets(e, &t, 1), 1);
    assert_true(t.is_default);
    pfi_oadr_events_free(e, n);
}

/* openadr-rs_event.json: integer id, scalar values (both tolerated), own
 * interval periods. */
static void test_openadr_rs(void **st)
{
    size_t n;
    pfi_oadr_event *e = load("openadr-rs_event.json", &n);
    assert_int_equal(e->status, PFI_OK);
    assert_string_equal(e->id, "1");
    assert_int_equal(e->priority, 0);
    assert_int_equal(e->n_iv, 2);
    assert_near(e->iv[0].start, 1718790672.53057, 1e-5);
    assert_near(e->iv[0].value_w, 100000, 0);
    assert_near(e->iv[1].start, 1718791572.530573, 1e-5);
    assert_near(e->iv[1].end, 1718791572.530573 + 900, 1e-5);
    assert_near(e->iv[1].value_w, 50000, 0);
    has_note(e, "scalar \"values\"");
    has_note(e, "id is an integer");
    pfi_oadr_events_free(e, n);
}

/* Issue 28: an event's targets, which the topology maps to a domain: the
 * User Guide's 8.13-5 (3.1.0 strings), 3.0.1's valuesMaps, and what is
 * ignored (a non-string, past 8). */
static void test_targets(void **st)
{
    size_t n;
    pfi_oadr_event *e = load("ug310_ex8.13-5_ven_reads_event_with_targets.json", &n);
    assert_int_equal(n, 1);
    assert_int_equal(e->n_targets, 1);
    assert_string_equal(e->targets[0], "ven_0999");
    pfi_oadr_events_free(e, n);
    e = parse_str("{\"programID\":\"p\",\"id\":\"e\",\"targets\":[{\"type\":\"RESOURCE_NAME\","
                  "\"values\":[\"feed-a\",\"feed-b\"]},{\"type\":\"GROUP\",\"values\":[7]},"
                  "\"rack-1\"]}");
    assert_int_equal(e->n_targets, 3);
    assert_string_equal(e->targets[0], "feed-a");
    assert_string_equal(e->targets[1], "feed-b");
    assert_string_equal(e->targets[2], "rack-1");
    has_note(e, "a target that is not a string");
    pfi_oadr_events_free(e, 1);
    e = parse_str("{\"programID\":\"p\",\"id\":\"e\",\"targets\":[\"1\",\"2\",\"3\",\"4\","
                  "\"5\",\"6\",\"7\",\"8\",\"9\"]}");
    assert_int_equal(e->n_targets, 8);
    has_note(e, "more than 8 targets");
    pfi_oadr_events_free(e, 1);
    e = parse_str("{\"programID\":\"p\",\"id\":\"e\",\"targets\":\"feed-a\"}");
    assert_int_equal(e->n_targets, 0);
    has_note(e, "targets is not an array");
    pfi_oadr_events_free(e, 1);
}

/* Events we read but do not act on: prices, SIMPLE, DISPATCH_SETPOINT. */
static void test_not_acted_on(void **st)
{
    const char *files[] = {
        "ug310_ex7.2-4_read_minimal_event.json", "ug310_ex7.4-1_variable_intervals_event.json",
        "ug310_ex8.2-1_simple_load_shed_event.json", "ug310_ex8.9.3-1_fast_dr_dispatch_event.json"};
    for (size_t i = 0; i < 4; i++) {
        size_t n;
        pfi_oadr_event *e = load(files[i], &n);
        if (e->status != PFI_OK) fail_msg("%s: %s", files[i], e->error);
        assert_int_equal(e->n_iv, 0);
        has_note(e, "ignored");
        pfi_oadr_events_free(e, n);
    }
    size_t n;
    pfi_oadr_event *e = load("ug310_ex7.2-4_read_minimal_event.json", &n);
    has_note(e, "createdDateTime is not RFC 3339");
    pfi_oadr_events_free(e, n);
}

/* ug310_ex8.13-5: an array (a GET /events answer) of an event without intervals. */
static void test_array_without_intervals(void **st)
{
    size_t n;
    pfi_oadr_event *e = load("ug310_ex8.13-5_ven_reads_event_with_targets.json", &n);
    assert_int_equal(n, 1);
    assert_int_equal(e->status, PFI_OK);
    assert_string_equal(e->id, "0");
    assert_int_equal(e->n_iv, 0);
    has_note(e, "no intervals");
    pfi_oadr_events_free(e, n);
}

/* A report (not an event) and the YAML fixture: clear errors. */
static void test_not_events(void **st)
{
    size_t n;
    pfi_oadr_event *e = load("ug310_ex8.3-4_pricing_report.json", &n);
    assert_int_equal(e->status, PFI_EINVAL);
    assert_string_equal(e->error, "no programID");
    pfi_oadr_events_free(e, n);
    char path[1024];
    snprintf(path, sizeof path, "%s/data/openadr3/examples/openadr-rs_tests_load-sched.oadr.yaml",
             PFI_SHARED_DIR);
    char *buf;
    size_t len;
    pfi_error err;
    pfi_error_clear(&err);
    assert_int_equal(pfi_file_read_all(path, &buf, &len, &err), PFI_OK);
    assert_int_equal(pfi_oadr_events_parse(buf, len, NOW, &e, &n, &err), PFI_EPARSE);
    assert_non_null(strstr(err.msg, "not JSON"));
    free(buf);
    /* Its event in JSON: the start without seconds is tolerated, SIMPLE ignored. */
    e = parse_str("{\"id\":\"ls101-e0\",\"programID\":\"ls101\",\"intervalPeriod\":{\"start\":"
                  "\"2024-01-01T13:37Z\",\"duration\":\"PT4H\"},\"payloadDescriptors\":[{"
                  "\"payloadType\":\"SIMPLE\"}],\"intervals\":[{\"id\":0,\"payloads\":[{\"type\":"
                  "\"SIMPLE\",\"values\":[1]}]}]}");
    assert_int_equal(e->status, PFI_OK);
    has_note(e, "start has no seconds");
    pfi_oadr_events_free(e, 1);
}

#define HEAD                                                                                       \
    "{\"id\":\"e\",\"programID\":\"p\",\"payloadDescriptors\":[{\"payloadType\":"                  \
    "\"IMPORT_CAPACITY_LIMIT\",\"units\":\"KW\"}],"
#define LIMIT(v) "{\"type\":\"IMPORT_CAPACITY_LIMIT\",\"values\":" v "}"

/* Rule: an interval's own intervalPeriod overrides the default; one without
 * a start starts where the previous ended. */
static void test_rule_override(void **st)
{
    pfi_oadr_event *e = parse_str(
        HEAD "\"intervalPeriod\":{\"start\":\"2023-02-10T00:00:00Z\",\"duration\":\"PT1H\"},"
             "\"intervals\":[{\"id\":0,\"payloads\":[" LIMIT(
                 "[5]") "]},"
                        "{\"id\":1,\"intervalPeriod\":{\"duration\":\"PT2H\"},\"payloads\":[" LIMIT(
                            "[6]") "]},"
                                   "{\"id\":2,\"intervalPeriod\":{\"start\":\"2023-02-10T05:00:"
                                   "00Z\"},\"payloads\":[" LIMIT(
                                       "[7]") "]},"
                                              "{\"id\":3,\"payloads\":[" LIMIT("[8]") "]}]}");
    assert_int_equal(e->status, PFI_OK);
    assert_int_equal(e->n_iv, 4);
    assert_near(e->iv[1].start, T0 + 3600, 0);
    assert_near(e->iv[1].end, T0 + 3 * 3600, 0);
    assert_near(e->iv[2].start, T0 + 5 * 3600, 0);
    assert_near(e->iv[2].end, T0 + 6 * 3600, 0);
    assert_near(e->iv[3].start, T0 + 6 * 3600, 0);
    assert_near(e->iv[3].end, T0 + 7 * 3600, 0);
    pfi_oadr_events_free(e, 1);
}

/* Issue 27: each limit gets its own target id (the timeline keeps one
 * target per id, so a shared id dropped a limit): two limit payloads in one
 * interval, an interval id the event repeats, two long event ids that
 * share their first 80 characters. */
static void test_target_ids_unique(void **st)
{
    pfi_oadr_event *e = parse_str(
        HEAD "\"intervalPeriod\":{\"start\":\"2023-02-10T00:00:00Z\",\"duration\":\"PT1H\"},"
             "\"intervals\":[{\"id\":0,\"payloads\":[" LIMIT("[70]") "," LIMIT(
                 "[50]") "]},"
                         "{\"id\":0,\"payloads\":[" LIMIT("[60]") "]}]}");
    assert_int_equal(e->status, PFI_OK);
    assert_int_equal(e->n_iv, 3);
    pfi_target t[3];
    assert_int_equal(pfi_oadr_event_targets(e, t, 3), 3);
    assert_string_equal(t[0].id, "oadr:e:0.0");
    assert_string_not_equal(t[0].id, t[1].id);
    assert_string_not_equal(t[0].id, t[2].id);
    assert_string_not_equal(t[1].id, t[2].id);
    assert_near(t[1].limit_w, 50000, 0);
    pfi_oadr_events_free(e, 1);
    char a[101], b[101];
    memset(a, 'x', 100);
    memcpy(b, a, 100);
    a[100] = b[100] = '\0';
    a[99] = 'a';
    b[99] = 'b';
    pfi_oadr_event ea, eb;
    memset(&ea, 0, sizeof ea);
    pfi_oadr_interval iv = {.id = 0, .start = T0, .end = T0 + 60, .value_w = 1};
    ea.iv = &iv;
    ea.n_iv = 1;
    eb = ea;
    snprintf(ea.id, sizeof ea.id, "%s", a);
    snprintf(eb.id, sizeof eb.id, "%s", b);
    pfi_target ta, tb;
    pfi_oadr_event_targets(&ea, &ta, 1);
    pfi_oadr_event_targets(&eb, &tb, 1);
    assert_string_not_equal(ta.id, tb.id);
    assert_true(strlen(ta.id) <= PFI_TARGET_ID_MAX);
}

/* Rule: N values are N equal sub-intervals. */
static void test_rule_split(void **st)
{
    pfi_oadr_event *e = parse_str(
        HEAD "\"intervalPeriod\":{\"start\":\"2023-02-10T00:00:00Z\",\"duration\":\"PT1H\"},"
             "\"intervals\":[{\"id\":7,\"payloads\":[" LIMIT("[10,20,30,40]") "]}]}");
    assert_int_equal(e->n_iv, 4);
    for (int i = 0; i < 4; i++) {
        assert_near(e->iv[i].start, T0 + 900 * i, 0);
        assert_near(e->iv[i].end, T0 + 900 * (i + 1), 0);
        assert_near(e->iv[i].value_w, 10000.0 * (i + 1), 0);
        assert_int_equal(e->iv[i].id, 7);
        assert_int_equal(e->iv[i].sub, i);
    }
    pfi_oadr_events_free(e, 1);
}

/* Rules: 0001-01-01 is now, P9999Y is infinite; priority read. */
static void test_rule_now_infinite(void **st)
{
    pfi_oadr_event *e = parse_str(
        HEAD "\"priority\":3,\"intervalPeriod\":{\"start\":\"0001-01-01T00:00:00Z\",\"duration\":"
             "\"P9999Y\"},\"intervals\":[{\"id\":0,\"payloads\":[" LIMIT("[5]") "]}]}");
    assert_int_equal(e->status, PFI_OK);
    assert_near(e->iv[0].start, NOW, 0);
    assert_true(isinf(e->iv[0].end));
    assert_int_equal(e->priority, 3);
    pfi_oadr_events_free(e, 1);
    /* N values over an infinite interval cannot be split: refused. */
    e = parse_str(HEAD "\"intervalPeriod\":{\"start\":\"0001-01-01\",\"duration\":\"P9999Y\"},"
                       "\"intervals\":[{\"id\":0,\"payloads\":[" LIMIT("[5,6]") "]}]}");
    assert_int_equal(e->status, PFI_EINVAL);
    pfi_oadr_events_free(e, 1);
}

/* Units: W is read, unknown or missing units refuse an event acted on. */
static void test_units(void **st)
{
    pfi_oadr_event *e =
        parse_str("{\"id\":\"e\",\"programID\":\"p\",\"payloadDescriptors\":[{\"payloadType\":"
                  "\"IMPORT_CAPACITY_LIMIT\",\"units\":\"W\"}],\"intervalPeriod\":{\"start\":"
                  "\"2023-02-10T00:00:00Z\",\"duration\":\"PT1H\"},\"intervals\":[{\"id\":0,"
                  "\"payloads\":[" LIMIT("[5000]") "]}]}");
    assert_near(e->iv[0].value_w, 5000, 0);
    pfi_oadr_events_free(e, 1);
    e = parse_str("{\"id\":\"e\",\"programID\":\"p\",\"payloadDescriptors\":[{\"payloadType\":"
                  "\"IMPORT_CAPACITY_LIMIT\",\"units\":\"KWH\"}],\"intervalPeriod\":{\"start\":"
                  "\"2023-02-10T00:00:00Z\",\"duration\":\"PT1H\"},\"intervals\":[{\"id\":0,"
                  "\"payloads\":[" LIMIT("[5]") "]}]}");
    assert_int_equal(e->status, PFI_EINVAL);
    assert_non_null(strstr(e->error, "'KWH'"));
    assert_int_equal(e->n_iv, 0);
    pfi_oadr_events_free(e, 1);
    e = parse_str("{\"id\":\"e\",\"programID\":\"p\",\"intervalPeriod\":{\"start\":"
                  "\"2023-02-10T00:00:00Z\",\"duration\":\"PT1H\"},\"intervals\":[{\"id\":0,"
                  "\"payloads\":[" LIMIT("[5]") "]}]}");
    assert_int_equal(e->status, PFI_EINVAL);
    assert_non_null(strstr(e->error, "no units"));
    pfi_oadr_events_free(e, 1);
}

/* Bad values and timing: refused with a reason, never a crash. */
static void test_refusals(void **st)
{
    const char *bad[] = {
        HEAD "\"intervals\":[{\"id\":0,\"payloads\":[" LIMIT("[5]") "]}]}", /* no start */
        HEAD "\"intervalPeriod\":{\"start\":\"2023-02-10T00:00:00Z\"},\"intervals\":[{\"id\":0,"
             "\"payloads\":[" LIMIT("[5]") "]}]}", /* no duration */
        HEAD "\"intervalPeriod\":{\"start\":\"2023-02-10T00:00:00Z\",\"duration\":\"PT1H\"},"
             "\"intervals\":[{\"id\":0,\"payloads\":[" LIMIT("[-5]") "]}]}",
        HEAD "\"intervalPeriod\":{\"start\":\"2023-02-10T00:00:00Z\",\"duration\":\"PT1H\"},"
             "\"intervals\":[{\"id\":0,\"payloads\":[" LIMIT("[\"5\"]") "]}]}",
        HEAD "\"intervalPeriod\":{\"start\":\"yesterday\",\"duration\":\"PT1H\"},\"intervals\":[]}",
        HEAD "\"priority\":-1,\"intervals\":[]}",
        "{\"id\":\"e\",\"programID\":\"p\",\"objectType\":\"REPORT\"}",
        "{\"programID\":\"p\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pfi_oadr_event *e = parse_str(bad[i]);
        if (e->status == PFI_OK) fail_msg("accepted: %s", bad[i]);
        assert_true(e->error[0] != '\0');
        pfi_oadr_events_free(e, 1);
    }
}

/* The report body: one READING per interval in the units asked for. */
static void test_report(void **st)
{
    size_t n;
    pfi_oadr_event *e = load("ug310_ex8.10.1-1_capacity_limit_event.json", &n);
    pfi_oadr_reading r[2] = {{0, T0, 1800, 9500}, {1, T0 + 1800, 1800, NAN}};
    json_t *o = pfi_oadr_report_json(e, "pfi-site", r, 2);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "eventID")), "capacity_limit_Event");
    json_t *ivs = json_object_get(json_array_get(json_object_get(o, "resources"), 0), "intervals");
    assert_int_equal(json_array_size(ivs), 2);
    json_t *v0 = json_object_get(
        json_array_get(json_object_get(json_array_get(ivs, 0), "payloads"), 0), "values");
    assert_near(json_number_value(json_array_get(v0, 0)), 9.5, 1e-12);
    json_t *p1 = json_object_get(json_array_get(ivs, 1), "intervalPeriod");
    assert_string_equal(json_string_value(json_object_get(p1, "start")), "2023-02-10T00:30:00Z");
    assert_string_equal(json_string_value(json_object_get(p1, "duration")), "PT1800S");
    json_decref(o);
    pfi_oadr_events_free(e, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_limit),    cmocka_unit_test(test_subscription),
        cmocka_unit_test(test_openadr_rs),        cmocka_unit_test(test_targets),
        cmocka_unit_test(test_not_acted_on),      cmocka_unit_test(test_array_without_intervals),
        cmocka_unit_test(test_not_events),        cmocka_unit_test(test_rule_override),
        cmocka_unit_test(test_rule_split),        cmocka_unit_test(test_target_ids_unique),
        cmocka_unit_test(test_rule_now_infinite), cmocka_unit_test(test_units),
        cmocka_unit_test(test_refusals),          cmocka_unit_test(test_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
