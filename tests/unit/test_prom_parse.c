/* The Prometheus text parser: hand-written documents with known parses,
 * every rejection with its line, and the dcgm-exporter fixture. */
#include "test_util.h"

#include <string.h>

#include "pfi/fileio.h"
#include "pfi/prom.h"

static pfi_prom_doc *parse_ok(const char *text)
{
    pfi_prom_doc *d = NULL;
    pfi_error err = {0};
    if (pfi_prom_parse(text, strlen(text), "t", &d, &err) != PFI_OK)
        fail_msg("parse failed: line %ld: %s", err.line, err.msg);
    return d;
}

static void test_basic(void **state)
{
    (void)state;
    pfi_prom_doc *d =
        parse_ok("# HELP up Whether the target is up.\n"
                 "# TYPE up gauge\n"
                 "up 1\n"
                 "\n"
                 "  # just a comment\n"
                 "http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
                 "x{ a = \"1\" , } \t 2.5e-3\r\n"
                 "y{} -0");
    assert_int_equal(pfi_prom_doc_series_count(d), 4);
    const pfi_prom_series *s = pfi_prom_doc_series(d, 0);
    assert_string_equal(s->name, "up");
    assert_int_equal(s->n_labels, 0);
    assert_near(s->value, 1, 0);
    assert_false(s->has_timestamp);
    assert_int_equal(s->line, 3);
    s = pfi_prom_doc_series(d, 1);
    assert_int_equal(s->n_labels, 2);
    assert_string_equal(s->labels[0].name, "method");
    assert_string_equal(pfi_prom_series_label(s, "code"), "200");
    assert_null(pfi_prom_series_label(s, "nope"));
    assert_true(s->has_timestamp);
    assert_true(s->timestamp_ms == INT64_C(1395066363000));
    assert_int_equal(s->line, 6);
    s = pfi_prom_doc_series(d, 2);
    assert_string_equal(pfi_prom_series_label(s, "a"), "1");
    assert_near(s->value, 0.0025, 1e-18);
    s = pfi_prom_doc_series(d, 3);
    assert_int_equal(s->n_labels, 0);
    assert_near(s->value, 0, 0);
    const pfi_prom_meta *m = pfi_prom_doc_find_meta(d, "up");
    assert_non_null(m);
    assert_string_equal(m->help, "Whether the target is up.");
    assert_string_equal(m->type, "gauge");
    assert_null(pfi_prom_doc_find_meta(d, "x"));
    assert_int_equal(pfi_prom_doc_meta_count(d), 1);
    pfi_prom_doc_destroy(d);
}

static void test_escapes(void **state)
{
    (void)state;
    pfi_prom_doc *d =
        parse_ok("# HELP m A \\\\ backslash\\nand a newline.\n"
                 "m{a=\"q\\\"uote\",b=\"back\\\\slash\",c=\"new\\nline\",d=\"\"} NaN\n"
                 "m{a=\"2\"} +Inf -12\n"
                 "m{a=\"3\"} -Inf\n"
                 "m{a=\"4\"} inf\n"
                 "m{a=\"\xc3\xa9t\xc3\xa9\"} 7\n");
    const pfi_prom_meta *m = pfi_prom_doc_find_meta(d, "m");
    assert_string_equal(m->help, "A \\ backslash\nand a newline.");
    assert_null(m->type);
    const pfi_prom_series *s = pfi_prom_doc_series(d, 0);
    assert_string_equal(pfi_prom_series_label(s, "a"), "q\"uote");
    assert_string_equal(pfi_prom_series_label(s, "b"), "back\\slash");
    assert_string_equal(pfi_prom_series_label(s, "c"), "new\nline");
    assert_string_equal(pfi_prom_series_label(s, "d"), "");
    assert_true(isnan(s->value));
    s = pfi_prom_doc_series(d, 1);
    assert_true(isinf(s->value) && s->value > 0);
    assert_true(s->timestamp_ms == -12);
    assert_true(isinf(pfi_prom_doc_series(d, 2)->value) && pfi_prom_doc_series(d, 2)->value < 0);
    assert_true(isinf(pfi_prom_doc_series(d, 3)->value));
    assert_string_equal(pfi_prom_series_label(pfi_prom_doc_series(d, 4), "a"), "\xc3\xa9t\xc3\xa9");
    pfi_prom_doc_destroy(d);
}

/* Every malformed input: the error code, the line, a word of the cause. */
static void test_rejections(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        long line;
        const char *why;
    } t[] = {
        {"ok 1\n9bad 1\n", 2, "metric name"},
        {"m{9=\"x\"} 1\n", 1, "label name"},
        {"m{a=\"x\\q\"} 1\n", 1, "invalid escape"},
        {"m{a=\"x} 1\n", 1, "unterminated"},
        {"m{a=x} 1\n", 1, "open a label value"},
        {"m{a \"x\"} 1\n", 1, "'='"},
        {"m{a=\"1\" b=\"2\"} 1\n", 1, "',' or '}'"},
        {"m{a=\"1\",a=\"2\"} 1\n", 1, "duplicate label a"},
        {"m\n", 1, "expected a value"},
        {"m abc\n", 1, "not a number"},
        {"m 0x10\n", 1, "not a number"},
        {"m 1e999\n", 1, "out of range"},
        {"m 1 2 3\n", 1, "after the timestamp"},
        {"m 1 1.5\n", 1, "timestamp"},
        {"m 1 99999999999999999999\n", 1, "timestamp out of range"},
        {"m-x 1\n", 1, "after the metric name"},
        {"# TYPE m gauge\n# TYPE m counter\n", 2, "second TYPE"},
        {"# HELP m a\n# HELP m b\n", 2, "second HELP"},
        {"m 1\n# TYPE m gauge\n", 2, "after its samples"},
        {"# TYPE m bogus\n", 1, "unknown metric type"},
        {"# TYPE m gauge extra\n", 1, "after the metric type"},
        {"# HELP m bad \\t escape\n", 1, "invalid escape"},
        {"# HELP 1m x\n", 1, "metric name"},
        {"m 1\nn{a=\"\xff\"} 2\n", 2, "UTF-8"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        pfi_prom_doc *d = (pfi_prom_doc *)1;
        pfi_error err = {0};
        int rc = pfi_prom_parse(t[i].text, strlen(t[i].text), "scrape", &d, &err);
        if (rc != PFI_EPARSE) fail_msg("case %zu (%s): rc %d", i, t[i].text, rc);
        assert_null(d);
        assert_string_equal(err.file, "scrape");
        if (err.line != t[i].line)
            fail_msg("case %zu: line %ld, expected %ld (%s)", i, err.line, t[i].line, err.msg);
        if (!strstr(err.msg, t[i].why)) fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, t[i].why);
    }
    /* a NUL byte inside the buffer */
    pfi_prom_doc *d = NULL;
    assert_int_equal(pfi_prom_parse("m 1\0", 4, NULL, &d, NULL), PFI_EPARSE);
    /* empty input is an empty document */
    assert_int_equal(pfi_prom_parse("", 0, NULL, &d, NULL), PFI_OK);
    assert_int_equal(pfi_prom_doc_series_count(d), 0);
    pfi_prom_doc_destroy(d);
    pfi_prom_doc_destroy(NULL);
}

/* Not NUL-terminated: the parser stays inside len. */
static void test_no_terminator(void **state)
{
    (void)state;
    char buf[8];
    memcpy(buf, "m 12345X", 8);
    pfi_prom_doc *d = NULL;
    assert_int_equal(pfi_prom_parse(buf, 7, NULL, &d, NULL), PFI_OK);
    assert_near(pfi_prom_doc_series(d, 0)->value, 12345, 0);
    pfi_prom_doc_destroy(d);
}

/* The dcgm-exporter fixture (also accepted by promtool's parser). */
static void test_fixture(void **state)
{
    (void)state;
    char path[1024];
    test_path(path, sizeof path, PFI_SOURCE_DIR, "tests/data/dcgm-exporter-metrics.txt");
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(pfi_file_read_all(path, &buf, &len, NULL), PFI_OK);
    pfi_prom_doc *d = NULL;
    pfi_error err = {0};
    assert_int_equal(pfi_prom_parse(buf, len, path, &d, &err), PFI_OK);
    /* 26 DCGM families x 3 GPUs, one MIG series, two escape-test series */
    assert_int_equal(pfi_prom_doc_series_count(d), 81);
    assert_int_equal(pfi_prom_doc_meta_count(d), 27);
    const pfi_prom_meta *m = pfi_prom_doc_find_meta(d, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
    assert_string_equal(m->type, "counter");
    assert_string_equal(m->help, "Total energy consumption since boot (in mJ).");
    m = pfi_prom_doc_find_meta(d, "pfi_fixture_escapes");
    assert_string_equal(m->help,
                        "A family to exercise HELP escapes: backslash \\ and newline \n end.");
    int seen_pod1 = 0;
    for (size_t i = 0; i < pfi_prom_doc_series_count(d); i++) {
        const pfi_prom_series *s = pfi_prom_doc_series(d, i);
        if (strcmp(s->name, "DCGM_FI_DEV_POWER_USAGE") == 0 &&
            strcmp(pfi_prom_series_label(s, "gpu"), "1") == 0) {
            assert_string_equal(pfi_prom_series_label(s, "pod"), "C:\\jobs\\moe\nft");
            assert_string_equal(pfi_prom_series_label(s, "Hostname"), "gpu-node-07");
            assert_near(s->value, 395.25, 0);
            assert_true(s->timestamp_ms == INT64_C(1764410400123));
            seen_pod1 = 1;
        }
        if (strcmp(s->name, "DCGM_FI_PROF_DRAM_ACTIVE") == 0 &&
            strcmp(pfi_prom_series_label(s, "gpu"), "1") == 0)
            assert_true(isnan(s->value));
    }
    assert_true(seen_pod1);
    const pfi_prom_series *last = pfi_prom_doc_series(d, 80);
    assert_string_equal(pfi_prom_series_label(last, "path"), "x");
    assert_true(isinf(last->value) && last->value < 0);
    pfi_prom_doc_destroy(d);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),      cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_rejections), cmocka_unit_test(test_no_terminator),
        cmocka_unit_test(test_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
