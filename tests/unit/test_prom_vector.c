/* The one-pass reader of Prometheus' instant-query answers, and the cluster
 * view built from them. The answers in tests/data/prometheus/ were recorded
 * from a real Prometheus 2.42 scraping 4 sim pfid (4 GPUs each; "span" on
 * GPUs 0-1 of two nodes; tests/integration/test_control_prometheus.sh with
 * PFI_RECORD_DIR set, one file per query, named after it; jexempt and
 * jfloor from a later run of it, where node 3 registers moe-3 exempt and
 * dense-3 with an SLA floor of 0.9: the same job ids). The expected
 * figures below are read off those files (python3 -m json.tool), not from
 * this code; the escape cases are worked by hand. */
#include "test_util.h"

#include <string.h>

#include "pfi/fileio.h"
#include "pfi/prom_cluster.h"
#include "pfi/prom_vector.h"

static int parse(const char *s, const char *const *keep, size_t n, pfi_prom_vec *v, pfi_error *err)
{
    pfi_error_clear(err);
    return pfi_prom_vec_parse(s, strlen(s), keep, n, v, err);
}

static int parse_file(const char *name, const char *const *keep, size_t n, pfi_prom_vec *v,
                      pfi_error *err)
{
    char path[1024], rel[256], *buf;
    size_t len;
    snprintf(rel, sizeof rel, "tests/data/prometheus/%s.json", name);
    if (pfi_file_read_all(test_path(path, sizeof path, PFI_SOURCE_DIR, rel), &buf, &len, err) !=
        PFI_OK)
        fail_msg("%s: %s", path, err->msg);
    pfi_error_clear(err);
    int rc = pfi_prom_vec_parse(buf, len, keep, n, v, err);
    free(buf);
    return rc;
}

static void test_recorded_members(void **st)
{
    (void)st;
    static const char *const keep[] = {"instance", "job_id", "gpus", "missing"};
    pfi_prom_vec v = {0};
    pfi_error err;
    assert_int_equal(parse_file("members", keep, 4, &v, &err), PFI_OK);
    assert_int_equal(v.n, 8);
    assert_false(v.scalar);
    assert_string_equal(pfi_prom_vec_label(&v, 1, 0), "127.0.0.1:35685");
    assert_string_equal(pfi_prom_vec_label(&v, 1, 1), "span");
    assert_string_equal(pfi_prom_vec_label(&v, 1, 2), "0,1");
    assert_string_equal(pfi_prom_vec_label(&v, 7, 2), "2,3");
    assert_null(pfi_prom_vec_label(&v, 0, 3));
    for (size_t i = 0; i < v.n; i++)
        assert_near(v.values[i], 1, 0);
    assert_int_equal(parse_file("jpower", keep + 1, 1, &v, &err), PFI_OK);
    assert_int_equal(v.n, 7);
    assert_string_equal(pfi_prom_vec_label(&v, 3, 0), "span");
    assert_near(v.values[3], 2780.3999999996463, 1e-9);
    pfi_prom_vec_free(&v);
    pfi_prom_vec_free(&v); /* twice: emptied */
}

static void test_recorded_shapes(void **st)
{
    (void)st;
    pfi_prom_vec v = {0};
    pfi_error err;
    static const char *const inst[] = {"instance"};
    assert_int_equal(parse_file("scalar", NULL, 0, &v, &err), PFI_OK);
    assert_true(v.scalar);
    assert_int_equal(v.n, 1);
    assert_near(v.values[0], 1390.1999999998231, 1e-9);
    assert_int_equal(parse_file("nan", inst, 1, &v, &err), PFI_OK);
    assert_true(isinf(v.values[0]) && v.values[0] > 0); /* "+Inf" */
    assert_int_equal(parse_file("down", inst, 1, &v, &err), PFI_OK);
    assert_int_equal(v.n, 0);
    assert_int_equal(parse_file("error", inst, 1, &v, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "unclosed left parenthesis"));
    assert_int_equal(parse_file("matrix", inst, 1, &v, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "not an instant vector"));
    assert_int_equal(v.n, 0); /* kept as it was (empty) on failure */
    pfi_prom_vec_free(&v);
}

static void test_escapes(void **st)
{
    (void)st;
    static const char *const keep[] = {"a"};
    pfi_prom_vec v = {0};
    pfi_error err;
    /* keys out of order, unknown keys, blanks; \" \\ \/ \u00e9 (e-acute),
     * a surrogate pair (U+1F600), raw UTF-8 (u-umlaut) */
    const char *doc =
        " { \"data\" : {\"result\":[{\"value\":[1.5e9,\"-2.5e3\"],\"metric\":{\"a\":"
        "\"x\\\"\\\\\\/\\u00e9\\ud83d\\ude00\xc3\xbc\",\"b\":\"1\"}}],\"resultType\":\"vector\"},"
        "\"warnings\":[\"w\",{\"k\":[true,false,null,-0.5E-3]}],\"status\":\"success\"} ";
    assert_int_equal(parse(doc, keep, 1, &v, &err), PFI_OK);
    assert_int_equal(v.n, 1);
    assert_near(v.values[0], -2500, 0);
    assert_string_equal(pfi_prom_vec_label(&v, 0, 0), "x\"\\/\xc3\xa9\xf0\x9f\x98\x80\xc3\xbc");

    static const char *const bad[] = {
        "",
        "{",
        "{\"status\":\"success\"}", /* no data */
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}} x", /* trailing
                                                                                          */
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{"
        "\"a\":\"\\ud800\"},\"value\":[1,\"1\"]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{"
        "\"a\":\"\\udc00\"},\"value\":[1,\"1\"]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{"
        "\"a\":\"\xc3\"},\"value\":[1,\"1\"]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{"
        "\"a\":\"\xed\xa0\x80\"},\"value\":[1,\"1\"]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{"
        "\"a\":\"\x01\"},\"value\":[1,\"1\"]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{"
        "\"a\":\"\\u0000\"},\"value\":[1,\"1\"]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{"
        "\"a\":1},\"value\":[1,\"1\"]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},"
        "\"value\":[1,\"1x\"]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},"
        "\"value\":[1,2]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},"
        "\"value\":[01,\"1\"]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{}}]}"
        "}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[{\"metric\":{},"
        "\"value\":[1,\"1\"]}]}}",
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[1,\"1\"]}}",
        "{\"status\":\"success\",\"x\":tru,\"data\":{\"resultType\":\"vector\",\"result\":[]}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = parse(bad[i], keep, 1, &v, &err);
        if (rc != PFI_EPARSE && rc != PFI_EINVAL) fail_msg("case %zu accepted: %s", i, bad[i]);
        assert_true(err.msg[0] != '\0');
    }
    /* nesting past the limit in a skipped value: refused, not a stack overflow */
    char deep[400];
    int n = snprintf(deep, sizeof deep, "{\"status\":\"success\",\"x\":");
    for (int i = 0; i < 100; i++)
        deep[n++] = '[';
    deep[n] = '\0';
    assert_int_equal(parse(deep, keep, 1, &v, &err), PFI_EPARSE);
    assert_non_null(strstr(err.msg, "nested too deeply"));
    pfi_prom_vec_free(&v);
}

/* Every value as strtod reads it, bit for bit: the short decimals go
 * through a fast path, the rest (17 digits, exponents, NaN, Inf) through
 * strtod; both must agree with strtod on the same text. */
static void test_values_exact(void **st)
{
    (void)st;
    enum { N = 20000 };
    char *doc = malloc((size_t)N * 64 + 256), (*txt)[40] = malloc(N * sizeof *txt);
    size_t o = (size_t)sprintf(
        doc, "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[");
    uint64_t x = 88172645463325252ULL;
    static const char *const odd[] = {"NaN",
                                      "+Inf",
                                      "-Inf",
                                      "1e3",
                                      "-0",
                                      "0.000",
                                      "007.5",
                                      "123456789012345.6",
                                      "1234567890123456",
                                      "0.1",
                                      "-0.3",
                                      "9007199254740993",
                                      "2780.3999999996463",
                                      "1e-320"};
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (i < (int)(sizeof odd / sizeof odd[0])) {
            snprintf(txt[i], sizeof txt[i], "%s", odd[i]);
        } else {
            int digits = 1 + (int)(x % 17), point = (int)((x >> 8) % (unsigned)(digits + 1));
            char d[24];
            for (int k = 0; k < digits; k++)
                d[k] = (char)('0' + (x >> (12 + 2 * k)) % 10);
            d[digits] = '\0';
            if (point == 0 || point == digits)
                snprintf(txt[i], sizeof txt[i], "%s%s", (x >> 60) & 1 ? "-" : "", d);
            else
                snprintf(txt[i], sizeof txt[i], "%s%.*s.%s", (x >> 60) & 1 ? "-" : "", point, d,
                         d + point);
        }
        o += (size_t)sprintf(doc + o, "%s{\"metric\":{},\"value\":[1.5,\"%s\"]}", i ? "," : "",
                             txt[i]);
    }
    sprintf(doc + o, "]}}");
    pfi_prom_vec v = {0};
    pfi_error err;
    assert_int_equal(parse(doc, NULL, 0, &v, &err), PFI_OK);
    assert_int_equal(v.n, N);
    for (int i = 0; i < N; i++) {
        double want = strtod(txt[i], NULL);
        if (memcmp(&want, &v.values[i], sizeof want) != 0 && !(isnan(want) && isnan(v.values[i])))
            fail_msg("'%s': %.17g, strtod %.17g", txt[i], v.values[i], want);
    }
    pfi_prom_vec_free(&v);
    free(doc);
    free(txt);
}

static void load_all(pfi_prom_vec a[PFI_PC_NQ])
{
    static const char *const names[PFI_PC_NQ] = {
        [PFI_PC_DOWN] = "down-one", [PFI_PC_RO] = "ro",         [PFI_PC_GPUS] = "gpus",
        [PFI_PC_MAXSUM] = "maxsum", [PFI_PC_LO] = "lo",         [PFI_PC_HI] = "hi",
        [PFI_PC_IDLE] = "idle",     [PFI_PC_CAPPED] = "capped", [PFI_PC_MEMBERS] = "members",
        [PFI_PC_JPOWER] = "jpower", [PFI_PC_JTPS] = "jtps",     [PFI_PC_JPFI] = "jpfi",
        [PFI_PC_JTRAIN] = "jtrain", [PFI_PC_JTVAR] = "jtvar",   [PFI_PC_JEXEMPT] = "jexempt",
        [PFI_PC_JFLOOR] = "jfloor"};
    pfi_error err;
    for (int q = 0; q < PFI_PC_NQ; q++) {
        size_t nl;
        const char *const *l = pfi_pc_query_labels((pfi_pc_query)q, &nl);
        memset(&a[q], 0, sizeof a[q]);
        if (parse_file(names[q], l, nl, &a[q], &err) != PFI_OK)
            fail_msg("%s: %s", names[q], err.msg);
    }
}

static const pfi_pc_node *node(const pfi_pc_view *v, const char *inst)
{
    for (size_t i = 0; i < v->n_nodes; i++)
        if (strcmp(v->nodes[i].instance, inst) == 0) return &v->nodes[i];
    fail_msg("no node %s", inst);
    return NULL;
}

static void test_view_recorded(void **st)
{
    (void)st;
    pfi_prom_vec a[PFI_PC_NQ];
    load_all(a);
    pfi_pc_view v = {0};
    pfi_error err;
    assert_int_equal(pfi_pc_view_build(a, &v, &err), PFI_OK);
    /* 4 scraped nodes, and 127.0.0.1:1 that Prometheus cannot scrape */
    assert_int_equal(v.n_nodes, 5);
    assert_int_equal(v.n_jobs, 7);
    assert_int_equal(v.n_members, 8);
    assert_int_equal(v.skipped, 0);
    const pfi_pc_node *n0 = node(&v, "127.0.0.1:35685");
    assert_near(n0->n_gpus, 4, 0);
    assert_near(n0->max_sum_w, 2800, 0);
    assert_near(n0->lo_w, 200, 0);
    assert_near(n0->hi_w, 700, 0);
    assert_near(n0->idle_w, 0, 0);
    assert_near(n0->capped, 0, 0);
    assert_false(n0->down);
    assert_true(node(&v, "127.0.0.1:1")->down);
    assert_true(isnan(node(&v, "127.0.0.1:1")->n_gpus));
    size_t span = SIZE_MAX, span_members = 0;
    for (size_t j = 0; j < v.n_jobs; j++)
        if (strcmp(v.jobs[j].id, "span") == 0) span = j;
    assert_true(span != SIZE_MAX);
    assert_near(v.jobs[span].power_w, 2780.3999999996463, 1e-9);
    assert_true(v.jobs[span].training);
    assert_true(isnan(v.jobs[span].tokens_per_s)); /* the sim reports none through pfid */
    assert_true(isnan(v.jobs[span].pfi));          /* no --model */
    assert_false(v.jobs[span].exempt);
    assert_true(isnan(v.jobs[span].sla_floor));
    for (size_t j = 0; j < v.n_jobs; j++) {
        const pfi_pc_job *jb = &v.jobs[j];
        assert_int_equal(jb->exempt, strcmp(jb->id, "moe-3") == 0);
        if (strcmp(jb->id, "dense-3") == 0)
            assert_near(jb->sla_floor, 0.9, 0);
        else
            assert_true(isnan(jb->sla_floor));
    }
    for (size_t m = 0; m < v.n_members; m++)
        if (v.members[m].job == span) {
            span_members++;
            assert_int_equal(v.members[m].n_gpus, 2);
            assert_int_equal(v.members[m].gpus[0], 0);
            assert_int_equal(v.members[m].gpus[1], 1);
        }
    assert_int_equal(span_members, 2);
    pfi_pc_view_clear(&v);
    for (int q = 0; q < PFI_PC_NQ; q++)
        pfi_prom_vec_free(&a[q]);
}

static void test_view_bad_rows(void **st)
{
    (void)st;
    pfi_prom_vec a[PFI_PC_NQ];
    memset(a, 0, sizeof a);
    pfi_error err;
    size_t nl;
    const char *const *l = pfi_pc_query_labels(PFI_PC_MEMBERS, &nl);
    char many[400] = "";
    for (int i = 0; i < 65; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s%d", i ? "," : "", i);
    char doc[4096];
    snprintf(
        doc, sizeof doc,
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"ok\",\"gpus\":\"0,3\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"ok\",\"gpus\":\"1\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"dup\",\"gpus\":\"0,0\"},\"value\":[1,\"1\"]}"
        ","
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"neg\",\"gpus\":\"-1\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"empty\",\"gpus\":\"\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"comma\",\"gpus\":\"1,\"},\"value\":[1,\"1\"]"
        "},"
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"many\",\"gpus\":\"%s\"},\"value\":[1,\"1\"]}"
        ","
        "{\"metric\":{\"job_id\":\"noinst\",\"gpus\":\"1\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n2\",\"gpus\":\"1\"},\"value\":[1,\"1\"]}]}}",
        many);
    assert_int_equal(pfi_prom_vec_parse(doc, strlen(doc), l, nl, &a[PFI_PC_MEMBERS], &err), PFI_OK);
    pfi_pc_view v = {0};
    assert_int_equal(pfi_pc_view_build(a, &v, &err), PFI_OK);
    assert_int_equal(v.n_jobs, 1);
    assert_string_equal(v.jobs[0].id, "ok");
    assert_int_equal(v.n_members, 1); /* the second "ok" row on n1: the first counts */
    assert_int_equal(v.members[0].n_gpus, 2);
    assert_int_equal(v.members[0].gpus[1], 3);
    assert_int_equal(v.skipped, 8);
    pfi_pc_view_clear(&v);
    pfi_pc_view_clear(NULL);
    for (int q = 0; q < PFI_PC_NQ; q++)
        pfi_prom_vec_free(&a[q]);
}

/* JTVAR: a job's summed variance as Prometheus gives it; NaN (a node
 * without a spread) and no row are both unknown. */
static void test_view_variance(void **st)
{
    (void)st;
    pfi_prom_vec a[PFI_PC_NQ];
    memset(a, 0, sizeof a);
    pfi_error err;
    size_t nl;
    const char *const *l = pfi_pc_query_labels(PFI_PC_MEMBERS, &nl);
    const char *mem =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"a\",\"gpus\":\"0\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"b\",\"gpus\":\"1\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"c\",\"gpus\":\"2\"},\"value\":[1,\"1\"]}]}}";
    assert_int_equal(pfi_prom_vec_parse(mem, strlen(mem), l, nl, &a[PFI_PC_MEMBERS], &err), PFI_OK);
    l = pfi_pc_query_labels(PFI_PC_JTVAR, &nl);
    const char *var = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
                      "{\"metric\":{\"job_id\":\"a\"},\"value\":[1,\"169\"]},"
                      "{\"metric\":{\"job_id\":\"b\"},\"value\":[1,\"NaN\"]}]}}";
    assert_int_equal(pfi_prom_vec_parse(var, strlen(var), l, nl, &a[PFI_PC_JTVAR], &err), PFI_OK);
    pfi_pc_view v = {0};
    assert_int_equal(pfi_pc_view_build(a, &v, &err), PFI_OK);
    assert_int_equal(v.n_jobs, 3);
    for (size_t j = 0; j < v.n_jobs; j++) {
        if (strcmp(v.jobs[j].id, "a") == 0)
            assert_near(v.jobs[j].tokens_var, 169, 0);
        else
            assert_true(isnan(v.jobs[j].tokens_var));
    }
    pfi_pc_view_clear(&v);
    for (int q = 0; q < PFI_PC_NQ; q++)
        pfi_prom_vec_free(&a[q]);
}

/* A hand-written answer as Prometheus gives it (status, vector) for the
 * rows "key":value of query q, into a[q]. */
static void answer(pfi_prom_vec a[PFI_PC_NQ], pfi_pc_query q, const char *rows)
{
    char doc[2048];
    snprintf(doc, sizeof doc,
             "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[%s]}}", rows);
    size_t nl;
    const char *const *l = pfi_pc_query_labels(q, &nl);
    pfi_error err;
    if (parse(doc, l, nl, &a[q], &err) != PFI_OK) fail_msg("%s", err.msg);
}

static const pfi_pc_job *job(const pfi_pc_view *v, const char *id)
{
    for (size_t j = 0; j < v->n_jobs; j++)
        if (strcmp(v->jobs[j].id, id) == 0) return &v->jobs[j];
    fail_msg("no job %s", id);
    return NULL;
}

/* JEXEMPT and JFLOOR as Prometheus answers them (max by job_id over the
 * nodes; tests/data/prometheus/registration.test.yml has promtool check
 * that on the series of several nodes): "a" exempt on one of its two nodes
 * (max 1), floors 0.6 and 0.8 (max 0.8); "b" 0 on both, no floor row; "c"
 * no row at all (an older pfid): not exempt, no floor. A floor outside (0, 1]
 * or NaN is none, as the agents' JSON path reads one. */
static void test_view_registration(void **st)
{
    (void)st;
    pfi_prom_vec a[PFI_PC_NQ];
    memset(a, 0, sizeof a);
    answer(
        a, PFI_PC_MEMBERS,
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"a\",\"gpus\":\"0\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n2\",\"job_id\":\"a\",\"gpus\":\"0\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"b\",\"gpus\":\"1\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n2\",\"job_id\":\"b\",\"gpus\":\"1\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"c\",\"gpus\":\"2\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"d\",\"gpus\":\"3\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"e\",\"gpus\":\"4\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"instance\":\"n1\",\"job_id\":\"f\",\"gpus\":\"5\"},\"value\":[1,\"1\"]}");
    answer(a, PFI_PC_JEXEMPT,
           "{\"metric\":{\"job_id\":\"a\"},\"value\":[1,\"1\"]},"
           "{\"metric\":{\"job_id\":\"b\"},\"value\":[1,\"0\"]},"
           "{\"metric\":{\"job_id\":\"d\"},\"value\":[1,\"NaN\"]},"
           "{\"metric\":{\"job_id\":\"gone\"},\"value\":[1,\"1\"]}");
    answer(a, PFI_PC_JFLOOR,
           "{\"metric\":{\"job_id\":\"a\"},\"value\":[1,\"0.8\"]},"
           "{\"metric\":{\"job_id\":\"d\"},\"value\":[1,\"1.5\"]},"
           "{\"metric\":{\"job_id\":\"e\"},\"value\":[1,\"0\"]},"
           "{\"metric\":{\"job_id\":\"f\"},\"value\":[1,\"1\"]}");
    pfi_pc_view v = {0};
    pfi_error err;
    assert_int_equal(pfi_pc_view_build(a, &v, &err), PFI_OK);
    assert_int_equal(v.n_jobs, 6); /* "gone" has no GPUs: not a job */
    assert_true(job(&v, "a")->exempt);
    assert_near(job(&v, "a")->sla_floor, 0.8, 0);
    assert_false(job(&v, "b")->exempt);
    assert_true(isnan(job(&v, "b")->sla_floor));
    assert_false(job(&v, "c")->exempt);
    assert_true(isnan(job(&v, "c")->sla_floor));
    assert_false(job(&v, "d")->exempt);
    assert_true(isnan(job(&v, "d")->sla_floor));
    assert_true(isnan(job(&v, "e")->sla_floor));
    assert_near(job(&v, "f")->sla_floor, 1, 0);
    pfi_pc_view_clear(&v);
    for (int q = 0; q < PFI_PC_NQ; q++)
        pfi_prom_vec_free(&a[q]);
}

static void test_query_text(void **st)
{
    (void)st;
    char b[2048];
    pfi_error err;
    assert_int_equal(
        pfi_pc_query_text(PFI_PC_JTRAIN, "job=\"pfid\",dc=~\"a|b\"", b, sizeof b, &err), PFI_OK);
    assert_string_equal(
        b, "min by (job_id) (pfi_job_phase{job=\"pfid\",dc=~\"a|b\",phase=\"training\"})");
    assert_int_equal(pfi_pc_query_text(PFI_PC_DOWN, "", b, sizeof b, &err), PFI_OK);
    assert_string_equal(b, "up == 0");
    assert_int_equal(pfi_pc_query_text(PFI_PC_JTRAIN, "", b, sizeof b, &err), PFI_OK);
    assert_string_equal(b, "min by (job_id) (pfi_job_phase{phase=\"training\"})");
    assert_int_equal(pfi_pc_query_text(PFI_PC_IDLE, "job=\"x\"", b, sizeof b, &err), PFI_OK);
    assert_non_null(strstr(b, "or 0 * sum by (instance) (pfi_gpu_power_watts{job=\"x\"})"));
    /* a brace in a quoted value is fine; outside one, or an open quote, is not */
    assert_int_equal(pfi_pc_query_text(PFI_PC_GPUS, "a=\"}\"", b, sizeof b, &err), PFI_OK);
    assert_int_equal(pfi_pc_query_text(PFI_PC_GPUS, "a=\"x\"} or vector(1", b, sizeof b, &err),
                     PFI_EINVAL);
    assert_int_equal(pfi_pc_query_text(PFI_PC_GPUS, "a=\"x", b, sizeof b, &err), PFI_EINVAL);
    assert_int_equal(pfi_pc_query_text(PFI_PC_GPUS, "job=\"pfid\"", b, 10, &err), PFI_EINVAL);
    /* the registration queries are the ones promtool checks in
     * tests/data/prometheus/registration.test.yml */
    char path[1024], *yml, want[2100];
    size_t len;
    if (pfi_file_read_all(test_path(path, sizeof path, PFI_SOURCE_DIR,
                                    "tests/data/prometheus/registration.test.yml"),
                          &yml, &len, &err) != PFI_OK)
        fail_msg("%s: %s", path, err.msg);
    for (int q = PFI_PC_JEXEMPT; q <= PFI_PC_JFLOOR; q++) {
        assert_int_equal(
            pfi_pc_query_text((pfi_pc_query)q, PFI_PC_DEFAULT_MATCH, b, sizeof b, &err), PFI_OK);
        snprintf(want, sizeof want, "expr: '%s'\n", b);
        if (!strstr(yml, want)) fail_msg("%s lacks %s", path, want);
    }
    assert_string_equal(b, "max by (job_id) (pfi_job_sla_floor_ratio{job=\"pfid\"})");
    free(yml);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recorded_members), cmocka_unit_test(test_recorded_shapes),
        cmocka_unit_test(test_escapes),          cmocka_unit_test(test_values_exact),
        cmocka_unit_test(test_view_recorded),    cmocka_unit_test(test_view_bad_rows),
        cmocka_unit_test(test_view_variance),    cmocka_unit_test(test_view_registration),
        cmocka_unit_test(test_query_text)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
