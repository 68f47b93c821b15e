/* The targets' timeline rule, one test per rule (include/control/pfi/target.h),
 * the POST /v1/targets body and the schedule file. Budgets are hand-computed. */
#include "test_util.h"

#include <string.h>
#include <unistd.h>

#include "pfi/target.h"
#include "pfi/target_io.h"

static pfi_target mk(const char *id, pfi_target_source src, pfi_target_kind kind, double w,
                     double start, double end)
{
    pfi_target t;
    memset(&t, 0, sizeof t);
    snprintf(t.id, sizeof t.id, "%s", id);
    t.source = src;
    t.kind = kind;
    t.limit_w = w;
    t.start = start;
    t.end = end;
    t.priority = PFI_TARGET_NO_PRIORITY;
    return t;
}

/* Rule 1: in force on [start, end). */
static void test_window(void **st)
{
    pfi_target t = mk("a", PFI_TARGET_API, PFI_TARGET_GPU, 5000, 100, 200);
    pfi_target_now now;
    pfi_target_eval(&t, 1, 99.999, 0, 0, &now);
    assert_false(now.active);
    pfi_target_eval(&t, 1, 100, 0, 0, &now);
    assert_true(now.active);
    assert_near(now.gpu_budget_w, 5000, 0);
    assert_true(isnan(now.site_limit_w));
    assert_near(now.until, 200, 0);
    pfi_target_eval(&t, 1, 200, 0, 0, &now);
    assert_false(now.active);
}

/* Rule 4: the lowest GPU budget wins; a site limit less other load and margin. */
static void test_lowest_wins(void **st)
{
    pfi_target ts[3] = {mk("gpu", PFI_TARGET_API, PFI_TARGET_GPU, 60000, 0, 100),
                        mk("site", PFI_TARGET_SCHEDULE, PFI_TARGET_SITE, 80000, 50, 150),
                        mk("late", PFI_TARGET_API, PFI_TARGET_GPU, 1000, 120, 130)};
    pfi_target_now now;
    pfi_target_eval(ts, 3, 10, 15000, 2000, &now); /* only gpu */
    assert_int_equal(now.winner, 0);
    pfi_target_eval(ts, 3, 60, 15000, 2000, &now); /* site: 80000-15000-2000 = 63000 > 60000 */
    assert_int_equal(now.winner, 0);
    assert_near(now.gpu_budget_w, 60000, 0);
    pfi_target_eval(ts, 3, 60, 25000, 2000, &now); /* site: 53000 < 60000 */
    assert_int_equal(now.winner, 1);
    assert_near(now.gpu_budget_w, 53000, 0);
    assert_near(now.site_limit_w, 80000, 0);
    pfi_target_eval(ts, 3, 125, 0, 0, &now);
    assert_int_equal(now.winner, 2);
    /* A site limit below the other load is a zero GPU budget, not negative. */
    assert_near(pfi_target_gpu_budget(&ts[1], 90000, 0), 0, 0);
    /* Ties: the earlier start, then the smaller id. */
    pfi_target tie[2] = {mk("b", PFI_TARGET_API, PFI_TARGET_GPU, 10, 5, 100),
                         mk("a", PFI_TARGET_API, PFI_TARGET_GPU, 10, 0, 100)};
    pfi_target_eval(tie, 2, 50, 0, 0, &now);
    assert_int_equal(now.winner, 1);
    tie[1].start = 5;
    pfi_target_eval(tie, 2, 50, 0, 0, &now);
    assert_int_equal(now.winner, 1);
}

/* Rule 3: among OpenADR events the higher priority (lower number) wins even
 * with a higher limit; other sources still compete on the lowest limit. */
static void test_priority(void **st)
{
    pfi_target ts[3] = {mk("p1", PFI_TARGET_OPENADR, PFI_TARGET_SITE, 50000, 0, 100),
                        mk("p0", PFI_TARGET_OPENADR, PFI_TARGET_SITE, 70000, 0, 100),
                        mk("none", PFI_TARGET_OPENADR, PFI_TARGET_SITE, 10000, 0, 100)};
    ts[0].priority = 1;
    ts[1].priority = 0;
    pfi_target_now now;
    pfi_target_eval(ts, 3, 50, 0, 0, &now);
    assert_int_equal(now.winner, 1);
    assert_near(now.gpu_budget_w, 70000, 0);
    pfi_target api = mk("op", PFI_TARGET_API, PFI_TARGET_SITE, 65000, 0, 100);
    pfi_target all[4] = {ts[0], ts[1], ts[2], api};
    pfi_target_eval(all, 4, 50, 0, 0, &now);
    assert_int_equal(now.winner, 3);
    /* Without priorities, the null priority events compete by limit. */
    ts[0].priority = ts[1].priority = PFI_TARGET_NO_PRIORITY;
    pfi_target_eval(ts, 3, 50, 0, 0, &now);
    assert_int_equal(now.winner, 2);
}

/* Rule 2: a subscription (default) applies only where no limit is in force. */
static void test_default(void **st)
{
    pfi_target ts[2] = {mk("sub", PFI_TARGET_OPENADR, PFI_TARGET_SITE, 240000, 0, INFINITY),
                        mk("lim", PFI_TARGET_OPENADR, PFI_TARGET_SITE, 300000, 100, 200)};
    ts[0].is_default = 1;
    ts[0].priority = ts[1].priority = 0; /* same priority: only rule 2 tells them apart */
    pfi_target_now now;
    pfi_target_eval(ts, 2, 50, 0, 0, &now);
    assert_int_equal(now.winner, 0);
    assert_true(isinf(now.until));
    /* The limit replaces the default even though it is higher. */
    pfi_target_eval(ts, 2, 150, 0, 0, &now);
    assert_int_equal(now.winner, 1);
    assert_near(now.gpu_budget_w, 300000, 0);
    pfi_target_eval(ts, 2, 250, 0, 0, &now);
    assert_int_equal(now.winner, 0);
}

static void test_next_change(void **st)
{
    pfi_target ts[2] = {mk("a", PFI_TARGET_API, PFI_TARGET_GPU, 1, 10, 20),
                        mk("b", PFI_TARGET_API, PFI_TARGET_GPU, 1, 15, INFINITY)};
    assert_near(pfi_target_next_change(ts, 2, 0), 10, 0);
    assert_near(pfi_target_next_change(ts, 2, 10), 15, 0);
    assert_near(pfi_target_next_change(ts, 2, 15), 20, 0);
    assert_true(isinf(pfi_target_next_change(ts, 2, 20)));
}

/* Ramp: down at once, up at most ramp * dt. */
static void test_ramp(void **st)
{
    assert_near(pfi_target_ramp(1000, 500, 5, 10), 500, 0);
    assert_near(pfi_target_ramp(1000, 2000, 5, 10), 1050, 0);
    assert_near(pfi_target_ramp(1000, 1020, 5, 10), 1020, 0);
    assert_near(pfi_target_ramp(1000, 2000, 5, 0), 2000, 0);
    assert_near(pfi_target_ramp(NAN, 2000, 5, 10), 2000, 0);
}

static void test_validate(void **st)
{
    pfi_target t = mk("ok", PFI_TARGET_API, PFI_TARGET_GPU, 1, 0, 1);
    pfi_error err;
    assert_int_equal(pfi_target_validate(&t, &err), PFI_OK);
    t.end = 0;
    assert_int_equal(pfi_target_validate(&t, &err), PFI_EINVAL);
    t.end = 1;
    t.limit_w = NAN;
    assert_int_equal(pfi_target_validate(&t, &err), PFI_EINVAL);
    t.limit_w = 1;
    t.id[0] = '\0';
    assert_int_equal(pfi_target_validate(&t, &err), PFI_EINVAL);
}

static int parse(const char *s, pfi_target *t, int *has_id, pfi_error *err)
{
    pfi_error_clear(err);
    return pfi_target_parse_json(s, strlen(s), t, has_id, err);
}

static void test_json(void **st)
{
    pfi_target t;
    int has;
    pfi_error err;
    assert_int_equal(parse("{\"id\":\"dr-1\",\"site_power_w\":700000,\"start\":"
                           "\"2025-03-14T00:00:00Z\",\"duration_s\":3600,\"ramp_w_per_s\":50}",
                           &t, &has, &err),
                     PFI_OK);
    assert_true(has);
    assert_string_equal(t.id, "dr-1");
    assert_int_equal(t.kind, PFI_TARGET_SITE);
    assert_near(t.start, 1741910400.0, 0);
    assert_near(t.end, 1741914000.0, 0);
    assert_near(t.ramp_w_per_s, 50, 0);
    assert_int_equal(parse("{\"gpu_power_w\":5e4,\"start\":100,\"duration_s\":1}", &t, &has, &err),
                     PFI_OK);
    assert_false(has);
    assert_int_equal(t.kind, PFI_TARGET_GPU);
    assert_string_equal(t.domain, ""); /* the site */
    /* issue 28: a target on one domain of the power tree */
    assert_int_equal(parse("{\"site_power_w\":4e5,\"start\":100,\"duration_s\":1,\"domain\":"
                           "\"feed-a\"}",
                           &t, &has, &err),
                     PFI_OK);
    assert_string_equal(t.domain, "feed-a");
    json_t *js = pfi_target_to_json(&t);
    assert_string_equal(json_string_value(json_object_get(js, "domain")), "feed-a");
    json_decref(js);
    assert_int_equal(
        parse("{\"site_power_w\":1,\"start\":1,\"duration_s\":1,\"domain\":null}", &t, &has, &err),
        PFI_OK);
    assert_string_equal(t.domain, "");
    const char *bad[] = {
        "{\"site_power_w\":1,\"start\":0,\"duration_s\":1,\"domain\":\"\"}",
        "{\"site_power_w\":1,\"start\":0,\"duration_s\":1,\"domain\":\"a b\"}",
        "{\"site_power_w\":1,\"start\":0,\"duration_s\":1,\"domain\":7}",
        "{\"site_power_w\":1,\"start\":0,\"duration_s\":1,\"domain\":\"a+b\"}",
        "{\"site_power_w\":1,\"gpu_power_w\":1,\"start\":0,\"duration_s\":1}",
        "{\"start\":0,\"duration_s\":1}",
        "{\"site_power_w\":1,\"start\":0}",
        "{\"site_power_w\":1,\"start\":0,\"duration_s\":0}",
        "{\"site_power_w\":-1,\"start\":0,\"duration_s\":1}",
        "{\"site_power_w\":1,\"start\":\"14:13:26\",\"duration_s\":1}",
        "{\"site_power_w\":1,\"start\":0,\"duration_s\":1,\"rmap_w_per_s\":1}",
        "{\"site_power_w\":1,\"start\":0,\"duration_s\":1,\"id\":\"a/b\"}",
        "{\"site_power_w\":1,\"site_power_w\":2,\"start\":0,\"duration_s\":1}",
        "{\"site_power_w\":1,\"start\":0,\"duration_s\":1e308}",   /* issue 27: bounded */
        "{\"site_power_w\":1,\"start\":0,\"duration_s\":2678401}", /* 31 days + 1 s */
        "[1]",
        "{",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = parse(bad[i], &t, &has, &err);
        if (rc == PFI_OK) fail_msg("accepted: %s", bad[i]);
        assert_true(err.msg[0] != '\0');
    }
}

static const char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/test_target_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_schedule(void **st)
{
    const char *p = write_tmp("id,start,duration_s,site_power_w,gpu_power_w,ramp_w_per_s\n"
                              "evening,2025-03-14T17:00:00Z,7200,700000,,100\n"
                              ",1741975200,600,,40000,\n");
    pfi_target *ts;
    size_t n;
    pfi_error err;
    pfi_error_clear(&err);
    assert_int_equal(pfi_schedule_read(p, &ts, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    assert_string_equal(ts[0].id, "evening");
    assert_near(ts[0].start, 1741971600.0, 0); /* 1741910400 + 17 h */
    assert_near(ts[0].end - ts[0].start, 7200, 0);
    assert_int_equal(ts[1].kind, PFI_TARGET_GPU);
    assert_string_equal(ts[1].id, "line-3");
    assert_int_equal(ts[1].source, PFI_TARGET_SCHEDULE);
    free(ts);
    unlink(p);
    p = write_tmp("start,duration_s,site_power_w,gpu_power_w\n0,10,1,\n0,10,1,2\n");
    assert_int_equal(pfi_schedule_read(p, &ts, &n, &err), PFI_EINVAL);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.file, p);
    unlink(p);
    p = write_tmp("start,duration_s,site_power_w,domain\n0,10,1,rack-2\n0,10,2,\n");
    assert_int_equal(pfi_schedule_read(p, &ts, &n, &err), PFI_OK);
    assert_string_equal(ts[0].domain, "rack-2");
    assert_string_equal(ts[1].domain, "");
    free(ts);
    unlink(p);
    p = write_tmp("start,duration_s,site_power_w,domain\n0,10,1,rack 2\n");
    assert_int_equal(pfi_schedule_read(p, &ts, &n, &err), PFI_EINVAL);
    assert_int_equal(err.line, 2);
    assert_non_null(strstr(err.msg, "domain"));
    unlink(p);
    p = write_tmp("start,duration_s,site_power_w\nsoon,10,1\n");
    assert_int_equal(pfi_schedule_read(p, &ts, &n, &err), PFI_EINVAL);
    assert_int_equal(err.line, 2);
    unlink(p);
}

/* Issue 27: a known step down is cut lead_s ahead of its start; a raise
 * waits for the lower target's end. */
static void test_eval_ahead(void **st)
{
    (void)st;
    pfi_target ts[3];
    memset(ts, 0, sizeof ts);
    for (int i = 0; i < 3; i++) {
        ts[i].kind = PFI_TARGET_GPU;
        ts[i].priority = PFI_TARGET_NO_PRIORITY;
        snprintf(ts[i].id, sizeof ts[i].id, "t%d", i);
    }
    ts[0].limit_w = 5000, ts[0].start = 10, ts[0].end = 20; /* low */
    ts[1].limit_w = 8000, ts[1].start = 20, ts[1].end = 40; /* a raise after it */
    pfi_target_now n;
    pfi_target_eval_ahead(ts, 2, 6, 3, 0, 0, &n);
    assert_false(n.active);
    pfi_target_eval_ahead(ts, 2, 7.5, 3, 0, 0, &n);
    assert_true(n.active);
    assert_near(n.gpu_budget_w, 5000, 0); /* cut 2.5 s before its start */
    pfi_target_eval_ahead(ts, 2, 19, 3, 0, 0, &n);
    assert_near(n.gpu_budget_w, 5000, 0); /* the raise not early */
    pfi_target_eval_ahead(ts, 2, 20, 3, 0, 0, &n);
    assert_near(n.gpu_budget_w, 8000, 0);                   /* and on time */
    ts[2].limit_w = 6000, ts[2].start = 30, ts[2].end = 35; /* a step down inside ts[1] */
    pfi_target_eval_ahead(ts, 3, 27.5, 3, 0, 0, &n);
    assert_near(n.gpu_budget_w, 6000, 0);
    pfi_target_eval_ahead(ts, 3, 26.9, 3, 0, 0, &n);
    assert_near(n.gpu_budget_w, 8000, 0);
    pfi_target_eval_ahead(ts, 3, 27.5, 0, 0, 0, &n); /* no lead: the old rule */
    assert_near(n.gpu_budget_w, 8000, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eval_ahead),  cmocka_unit_test(test_window),
        cmocka_unit_test(test_lowest_wins), cmocka_unit_test(test_priority),
        cmocka_unit_test(test_default),     cmocka_unit_test(test_next_change),
        cmocka_unit_test(test_ramp),        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_json),        cmocka_unit_test(test_schedule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
