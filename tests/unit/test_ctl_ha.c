/* The HA pieces that need no etcd running: base64 (RFC 4648's test
 * vectors), the parsers of etcd 3.4's gateway answers (bodies captured from
 * a real etcd 3.4.23, int64 as strings, defaults left out), and the shared
 * state's values: a target through pfi_target_to_json and back unchanged,
 * bad values refused with a sentence naming the key. */
#include "test_util.h"
#include "store_fixture.h"

#include <string.h>

#include "control/ctl_ha.h"
#include "control/ctl_internal.h"
#include "pfi/base64.h"
#include "pfi/etcd.h"
#include "pfi/target_io.h"

static void test_base64(void **st)
{
    (void)st;
    static const char *const v[][2] = {{"", ""},
                                       {"f", "Zg=="},
                                       {"fo", "Zm8="},
                                       {"foo", "Zm9v"},
                                       {"foob", "Zm9vYg=="},
                                       {"fooba", "Zm9vYmE="},
                                       {"foobar", "Zm9vYmFy"}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char *e = pfi_base64_encode((const unsigned char *)v[i][0], strlen(v[i][0]));
        assert_string_equal(e, v[i][1]);
        free(e);
        size_t n;
        unsigned char *d = pfi_base64_decode(v[i][1], strlen(v[i][1]), &n);
        assert_non_null(d);
        assert_int_equal(n, strlen(v[i][0]));
        assert_memory_equal(d, v[i][0], n);
        free(d);
    }
    static const char *const bad[] = {"Zg=", "Z===", "Zm9v!A==", "=Zg=", "Zg==Zg==", "Zm=v"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n;
        unsigned char *d = pfi_base64_decode(bad[i], strlen(bad[i]), &n);
        if (d) fail_msg("'%s' decoded", bad[i]);
    }
}

#define HDR                                                                                        \
    "\"header\":{\"cluster_id\":\"1\",\"member_id\":\"2\",\"revision\":\"5\",\"raft_term\":\"2\"}"

static void test_range(void **st)
{
    (void)st;
    /* keys /pfi/s1/caps and /pfi/s1/leader, values {} and {"id":"x"} */
    const char *b = "{" HDR ",\"kvs\":[{\"key\":\"L3BmaS9zMS9jYXBz\",\"create_revision\":\"3\","
                    "\"mod_revision\":\"5\",\"version\":\"2\",\"value\":\"e30=\"},"
                    "{\"key\":\"L3BmaS9zMS9sZWFkZXI=\",\"create_revision\":\"2\",\"mod_revision\":"
                    "\"2\",\"version\":\"1\",\"value\":\"eyJpZCI6IngifQ==\",\"lease\":"
                    "\"4111120440598491911\"}],\"count\":\"2\"}";
    pfi_etcd_range r;
    pfi_error err;
    pfi_error_clear(&err);
    assert_int_equal(pfi_etcd_parse_range(b, strlen(b), &r, &err), PFI_OK);
    assert_int_equal(r.revision, 5);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.kvs[0].key, "/pfi/s1/caps");
    assert_string_equal(r.kvs[0].value, "{}");
    assert_int_equal(r.kvs[0].create_rev, 3);
    assert_int_equal(r.kvs[0].mod_rev, 5);
    assert_int_equal(r.kvs[0].lease, 0); /* left out: no lease */
    assert_string_equal(r.kvs[1].value, "{\"id\":\"x\"}");
    assert_int_equal(r.kvs[1].lease, 4111120440598491911LL);
    pfi_etcd_range_free(&r);
    /* no kvs: an empty range */
    const char *e = "{" HDR "}";
    assert_int_equal(pfi_etcd_parse_range(e, strlen(e), &r, &err), PFI_OK);
    assert_int_equal(r.n, 0);
    /* refused */
    const char *bad[] = {"{\"kvs\":[{\"key\":\"!!\"}]}",
                         "{\"kvs\":{}}",
                         "{\"header\":{\"revision\":\"5x\"}}",
                         "[1]",
                         "{\"kvs\":[1]}",
                         "{"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pfi_error_clear(&err);
        assert_int_equal(pfi_etcd_parse_range(bad[i], strlen(bad[i]), &r, &err), PFI_EPARSE);
        assert_true(err.msg[0] != '\0');
        assert_int_equal(r.n, 0);
    }
    /* etcd's own error */
    const char *x =
        "{\"error\":\"etcdserver: requested lease not found\",\"message\":\"etcdserver: "
        "requested lease not found\",\"code\":5}";
    assert_int_equal(pfi_etcd_parse_range(x, strlen(x), &r, &err), PFI_EIO);
    assert_non_null(strstr(err.msg, "requested lease not found"));
}

static void test_lease_txn(void **st)
{
    (void)st;
    long long id, ttl;
    pfi_error err;
    pfi_error_clear(&err);
    const char *g = "{" HDR ",\"ID\":\"4111120440531066629\",\"TTL\":\"2\"}";
    assert_int_equal(pfi_etcd_parse_lease(g, strlen(g), &id, &ttl, &err), PFI_OK);
    assert_int_equal(id, 4111120440531066629LL);
    assert_int_equal(ttl, 2);
    const char *k = "{\"result\":{" HDR ",\"ID\":\"7\",\"TTL\":\"5\"}}";
    assert_int_equal(pfi_etcd_parse_lease(k, strlen(k), &id, &ttl, &err), PFI_OK);
    assert_int_equal(ttl, 5);
    /* an expired lease's keep-alive: no TTL */
    const char *gone = "{\"result\":{" HDR ",\"ID\":\"123\"}}";
    assert_int_equal(pfi_etcd_parse_lease(gone, strlen(gone), &id, &ttl, &err), PFI_OK);
    assert_int_equal(ttl, 0);
    const char *neg = "{\"result\":{\"ID\":\"123\",\"TTL\":\"-1\"}}";
    assert_int_equal(pfi_etcd_parse_lease(neg, strlen(neg), &id, &ttl, &err), PFI_OK);
    assert_int_equal(ttl, 0);

    int ok;
    long long rev;
    pfi_etcd_range h;
    const char *won = "{" HDR ",\"succeeded\":true,\"responses\":[{\"response_put\":{\"header\":{"
                      "\"revision\":\"2\"}}}]}";
    assert_int_equal(pfi_etcd_parse_txn(won, strlen(won), &ok, &rev, &h, &err), PFI_OK);
    assert_int_equal(ok, 1);
    assert_int_equal(rev, 5);
    assert_int_equal(h.n, 0);
    /* lost: "succeeded" left out, the holder in the failure's range */
    const char *lost =
        "{" HDR ",\"responses\":[{\"response_range\":{\"header\":{\"revision\":\"2\"},"
        "\"kvs\":[{\"key\":\"L3BmaS9zL2xlYWRlcg==\",\"create_revision\":\"2\","
        "\"mod_revision\":\"2\",\"version\":\"1\",\"value\":\"eyJpZCI6IngifQ==\","
        "\"lease\":\"9\"}],\"count\":\"1\"}}]}";
    assert_int_equal(pfi_etcd_parse_txn(lost, strlen(lost), &ok, &rev, &h, &err), PFI_OK);
    assert_int_equal(ok, 0);
    assert_int_equal(h.n, 1);
    assert_string_equal(h.kvs[0].key, "/pfi/s/leader");
    assert_int_equal(h.kvs[0].create_rev, 2);
    pfi_etcd_range_free(&h);
    const char *badt = "{\"succeeded\":\"yes\"}";
    assert_int_equal(pfi_etcd_parse_txn(badt, strlen(badt), &ok, &rev, &h, &err), PFI_EPARSE);
}

static void test_state_values(void **st)
{
    (void)st;
    pfi_target in[2] = {{.id = "dr",
                         .source = PFI_TARGET_API,
                         .kind = PFI_TARGET_GPU,
                         .limit_w = 2400,
                         .start = 1796409057,
                         .end = 1796409657,
                         .ramp_w_per_s = 5,
                         .priority = PFI_TARGET_NO_PRIORITY,
                         .domain = "rack-1"},
                        {.id = "sub",
                         .source = PFI_TARGET_OPENADR,
                         .kind = PFI_TARGET_SITE,
                         .limit_w = 240000,
                         .start = 100,
                         .end = INFINITY,
                         .priority = 2,
                         .is_default = 1}};
    json_t *a = json_array();
    for (int i = 0; i < 2; i++)
        json_array_append_new(a, pfi_target_to_json(&in[i]));
    json_t *o = json_pack("{s:o}", "targets", a);
    char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    pfi_target *ts;
    size_t n;
    pfi_error err;
    pfi_error_clear(&err);
    assert_int_equal(ctl_ha_parse_targets(s, strlen(s), &ts, &n, &err), PFI_OK);
    free(s);
    assert_int_equal(n, 2);
    for (int i = 0; i < 2; i++) {
        assert_string_equal(ts[i].id, in[i].id);
        assert_int_equal(ts[i].source, in[i].source);
        assert_int_equal(ts[i].kind, in[i].kind);
        assert_true(ts[i].limit_w == in[i].limit_w && ts[i].start == in[i].start);
        assert_true(ts[i].end == in[i].end); /* INFINITY through null */
        assert_true(ts[i].ramp_w_per_s == in[i].ramp_w_per_s);
        assert_int_equal(ts[i].priority, in[i].priority);
        assert_int_equal(ts[i].is_default, in[i].is_default);
        assert_string_equal(ts[i].domain, in[i].domain);
    }
    free(ts);
    const char *badt[] = {"{\"targets\":{}}", "{\"targets\":[],\"x\":1}",
                          "{\"targets\":[{\"id\":\"a\"}]}", "[]", "nul"};
    for (size_t i = 0; i < sizeof badt / sizeof badt[0]; i++) {
        pfi_error_clear(&err);
        assert_int_equal(ctl_ha_parse_targets(badt[i], strlen(badt[i]), &ts, &n, &err), PFI_EPARSE);
        assert_non_null(strstr(err.msg, "etcd key targets"));
    }

    ctl_ha_cap *c;
    const char *caps = "{\"caps\":[{\"agent\":\"http://127.0.0.1:1\",\"expires_at\":1796409717.0,"
                       "\"gpu\":1,\"watts\":450.0}]}";
    assert_int_equal(ctl_ha_parse_caps(caps, strlen(caps), &c, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    assert_string_equal(c[0].agent, "http://127.0.0.1:1");
    assert_int_equal(c[0].gpu, 1);
    assert_near(c[0].watts, 450, 0);
    free(c);
    const char *badc[] = {"{\"caps\":[{\"agent\":\"u\",\"expires_at\":1,\"gpu\":-1,\"watts\":4}]}",
                          "{\"caps\":[{\"agent\":\"u\",\"expires_at\":1,\"gpu\":0,\"watts\":0}]}",
                          "{\"caps\":[{\"agent\":\"u\",\"gpu\":0,\"watts\":10}]}"};
    for (size_t i = 0; i < sizeof badc / sizeof badc[0]; i++) {
        pfi_error_clear(&err);
        assert_int_equal(ctl_ha_parse_caps(badc[i], strlen(badc[i]), &c, &n, &err), PFI_EPARSE);
        assert_non_null(strstr(err.msg, "etcd key caps"));
    }

    double b, t;
    const char *sv = "{\"budget_w\":null,\"trim_w\":12.5}";
    assert_int_equal(ctl_ha_parse_state(sv, strlen(sv), &b, &t, &err), PFI_OK);
    assert_true(isnan(b));
    assert_near(t, 12.5, 0);
    const char *bs = "{\"budget_w\":1,\"trim_w\":null}";
    assert_int_equal(ctl_ha_parse_state(bs, strlen(bs), &b, &t, &err), PFI_EPARSE);

    ctl_ha_job j;
    const char *jv = "{\"class\":\"moe\",\"pmax_w\":1390.2,\"points\":[[450,880.5,12000,null],"
                     "[500,960,13000,4.0]],\"tmax\":null}";
    assert_int_equal(ctl_ha_parse_job(jv, strlen(jv), &j, &err), PFI_OK);
    assert_string_equal(j.job_class, "moe");
    assert_near(j.pmax_w, 1390.2, 0);
    assert_true(isnan(j.tmax));
    assert_int_equal(j.n, 2);
    assert_true(isnan(j.pts[0].var));
    assert_near(j.pts[1].var, 4, 0);
    assert_near(j.pts[1].power_w, 960, 0);
    free(j.pts);
    const char *bj = "{\"class\":\"\",\"pmax_w\":1,\"points\":[[0,1,2,null]],\"tmax\":1}";
    assert_int_equal(ctl_ha_parse_job(bj, strlen(bj), &j, &err), PFI_EPARSE);
    assert_non_null(strstr(err.msg, "points[0]"));
    assert_null(j.pts);
}

/* What a follower takes from etcd is set, not averaged into what it had,
 * and a point is never doubled: ctl_obs_put's mean moves 0.3 of the way
 * (100 -> 130), ctl_obs_set puts the leader's value (200) on the same point. */
static void test_obs_set(void **st)
{
    (void)st;
    ctl_jobs J;
    memset(&J, 0, sizeof J);
    char dir[64], path[128];
    assert_int_equal(store_fixture_dir(dir, path), 0);
    pfi_ctl_store *s;
    assert_int_equal(pfi_ctl_store_open(path, &s, NULL), PFI_OK);
    ctl_obs_put(&J, s, "j", 450, 800, 100, 4, 0);
    ctl_obs_put(&J, s, "j", 450, 800, 200, 4, 0);
    assert_int_equal(J.n_obs, 1);
    assert_near(J.obs[0].o.tput, 130, 1e-9);
    ctl_obs_set(&J, "j", 450, 810, 200, NAN);
    ctl_obs_set(&J, "j", 500, 900, 250, 9);
    assert_int_equal(J.n_obs, 2);
    assert_near(J.obs[0].o.tput, 200, 0);
    assert_near(J.obs[0].o.power_w, 810, 0);
    assert_true(isnan(J.obs[0].var));
    assert_near(J.obs[1].o.tput_sd, 3, 1e-12);
    ctl_known_set(&J, "j", 1400, 16000, "moe");
    ctl_known_set(&J, "j", 1390, NAN, "");
    assert_int_equal(J.n_known, 1);
    const ctl_known *k = ctl_known_find(&J, "j");
    assert_near(k->pmax_w, 1390, 0); /* set, not the highest seen */
    assert_true(isnan(k->tmax));
    assert_string_equal(k->job_class, "");
    ctl_jobs_free(&J);
    pfi_ctl_store_close(s);
    store_fixture_remove(dir, path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_base64), cmocka_unit_test(test_range),
                                       cmocka_unit_test(test_lease_txn),
                                       cmocka_unit_test(test_state_values),
                                       cmocka_unit_test(test_obs_set)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
