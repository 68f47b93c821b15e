/* The one-pass reading of pfid's listings against the Jansson reading it
 * replaced (cluster_ref.h): on listings recorded from a real pfid
 * (tests/data/pfid/, the sim backend: 8 GPUs, 2 capped, 3 jobs) and on them
 * rewritten (blanks everywhere, unknown keys with nested values and escapes,
 * escaped and repeated keys, numbers spelled otherwise), every prefix, and
 * every byte replaced by a few others: the same status and, when accepted,
 * the same view bit for bit (one deliberate difference: a NUL byte, which
 * Jansson sometimes skips, is refused). The recorded views are also checked against
 * values read off the files by hand. */
#include "test_util.h"

#include <string.h>

#include "cluster_ref.h"
#include "pfi/cluster.h"

typedef int (*parse_fn)(const char *, size_t, pfi_cl_node *, pfi_error *);

static char *slurp(const char *rel, size_t *len)
{
    char path[512];
    FILE *f = fopen(test_path(path, sizeof path, PFI_SOURCE_DIR, rel), "rb");
    assert_non_null(f);
    char *b = malloc(1 << 20);
    assert_non_null(b);
    *len = fread(b, 1, (1 << 20) - 1, f);
    b[*len] = '\0';
    fclose(f);
    return b;
}

/* Both readers on text: the same status, the same view when accepted; the
 * new one's status. */
static int same(parse_fn fresh, parse_fn ref, const char *text, size_t len)
{
    pfi_cl_node a = {0}, b = {0};
    pfi_error ea, eb;
    pfi_error_clear(&ea);
    pfi_error_clear(&eb);
    int ra = fresh(text, len, &a, &ea), rb = ref(text, len, &b, &eb);
    /* Jansson drops a NUL byte after a token it ungets (a number's end):
     * not JSON, refused here */
    if (ra == PFI_EPARSE && rb != PFI_EPARSE && memchr(text, '\0', len)) {
        pfi_cl_node_clear(&b);
        return ra;
    }
    if (ra != rb)
        fail_msg("status %d (%s) against Jansson's %d (%s) on %.*s", ra, ea.msg, rb, eb.msg,
                 (int)(len < 300 ? len : 300), text);
    if (ra != PFI_OK && !ea.msg[0]) fail_msg("refused without a message: %.*s", (int)len, text);
    char why[200];
    if (ra == PFI_OK && !ref_cl_same(&a, &b, why, sizeof why))
        fail_msg("views differ: %s on %.*s", why, (int)len, text);
    pfi_cl_node_clear(&a);
    pfi_cl_node_clear(&b);
    return ra;
}

/* text with `ins` inserted after every byte of `after` that is outside strings. */
static char *insert_after(const char *text, const char *after, const char *ins)
{
    size_t n = strlen(text), m = strlen(ins), o = 0;
    char *r = malloc(n * (m + 1) + 1);
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        r[o++] = c;
        if (in_str) {
            if (c == '\\')
                r[o++] = text[++i];
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (strchr(after, c)) {
            memcpy(r + o, ins, m);
            o += m;
        }
    }
    r[o] = '\0';
    return r;
}

/* text with every `from` replaced by `to`. */
static char *replace(const char *text, const char *from, const char *to)
{
    size_t n = strlen(text), f = strlen(from), t = strlen(to), o = 0;
    char *r = malloc(n * (t + 1) + 1);
    for (size_t i = 0; i < n;) {
        if (strncmp(text + i, from, f) == 0) {
            memcpy(r + o, to, t);
            o += t;
            i += f;
        } else {
            r[o++] = text[i++];
        }
    }
    r[o] = '\0';
    return r;
}

static const char *const UNKNOWN =
    "\"z\\\"\\u00e9\\ud83d\\ude00\\/"
    "\\b\\f\\n\\r\\t\":{\"a\":[1,-0.5e-3,{\"b\":null,\"c\":[[],{}]}],"
    "\"d\":\"x\\\\\\\"y \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",\"e\":[true,false,1E+2]},";

/* The rewrites of one listing, each accepted alike (or refused alike). */
static void rewrites(parse_fn fresh, parse_fn ref, const char *text, int want)
{
    char *closing = replace(text, "}", " \n}"), *filled = replace(text, "{}", "{\"q\":1}");
    char *v[] = {
        insert_after(text, "{[,:", " \n\t\r "),
        replace(closing, "]", "\t]"),
        insert_after(filled, "{", UNKNOWN),
        replace(text, "\"gpu\":", "\"\\u0067pu\":"),
        replace(text, "\"power_w\":", "\"power_w\":\"x\",\"power_w\":"), /* the last counts */
        replace(text, "\"limits\":", "\"limits\":{\"min_w\":\"bad\"},\"limits\":"),
        replace(text, "\"cap\":", "\"cap\":{\"watts\":1},\"cap\":"),
        replace(text, "\"id\":", "\"id\":\"a-much-longer-id-first\",\"id\":"),
        replace(text, "\"id\":\"", "\"id\":\"\\ud83d\\ude00\\u00e9"), /* kept, decoded */
        replace(text, "\"gpus\":[", "\"gpus\":[9,8,7,6,5,4,3,2,1,0],\"gpus\":["),
        replace(text, "700.0", "7.0e2"),
        replace(text, "null", "-0"),
        replace(text, "null", "1e-400"),
        replace(text, ".0,", ".000000000000000000000000000000000000000000000000000001,"),
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        int rc = same(fresh, ref, v[i], strlen(v[i]));
        if (i < 4 && rc != want) fail_msg("rewrite %zu: status %d", i, rc);
        free(v[i]);
    }
    free(closing);
    free(filled);
}

/* Every prefix short of the closing brace is refused alike; every byte replaced by each of a few is
 * read alike. */
static void mutations(parse_fn fresh, parse_fn ref, const char *text, size_t len, size_t step)
{
    char *t = malloc(len + 1);
    size_t whole = len;
    while (whole && text[whole - 1] != '}')
        whole--;
    for (size_t n = 0; n < whole; n += step)
        assert_int_not_equal(same(fresh, ref, text, n), PFI_OK);
    static const char subst[] = {'"', '\\', '{', '}', '[', ']', ',',    ':', '0',
                                 '-', 'e',  '.', 'n', ' ', 'x', '\x80', '\0'};
    for (size_t i = 0; i < len; i += step)
        for (size_t k = 0; k < sizeof subst; k++) {
            memcpy(t, text, len);
            t[i] = subst[k];
            same(fresh, ref, t, len);
        }
    free(t);
}

static void test_recorded_gpus(void **st)
{
    (void)st;
    size_t len;
    char *g = slurp("tests/data/pfid/gpus.json", &len);
    assert_int_equal(same(pfi_cl_parse_gpus, ref_cl_parse_gpus, g, len), PFI_OK);
    /* by hand from the file: 8 H200s at 80 W idle, 4 and 5 capped at 450 W */
    pfi_cl_node n = {0};
    assert_int_equal(pfi_cl_parse_gpus(g, len, &n, NULL), PFI_OK);
    assert_int_equal(n.n_gpus, 8);
    assert_int_equal(n.gpus[7].index, 7);
    assert_true(n.gpus[0].up);
    assert_near(n.gpus[0].power_w, 80, 0);
    assert_near(n.gpus[0].min_w, 200, 0);
    assert_near(n.gpus[0].max_w, 700, 0);
    assert_false(n.gpus[3].capped);
    assert_true(isnan(n.gpus[3].cap_w));
    assert_true(n.gpus[4].capped);
    assert_near(n.gpus[4].cap_w, 450, 0);
    assert_near(n.gpus[4].cap_expires_at, 1796141984.12858, 0);
    assert_near(n.gpus[4].enforced_w, 450, 0);
    assert_false(n.gpus[4].restore_failed);
    pfi_cl_node_clear(&n);
    rewrites(pfi_cl_parse_gpus, ref_cl_parse_gpus, g, PFI_OK);
    mutations(pfi_cl_parse_gpus, ref_cl_parse_gpus, g, len, 37);
    free(g);
}

static void test_recorded_jobs(void **st)
{
    (void)st;
    size_t len;
    char *j = slurp("tests/data/pfid/jobs.json", &len);
    assert_int_equal(same(pfi_cl_parse_jobs, ref_cl_parse_jobs, j, len), PFI_OK);
    pfi_cl_node n = {0};
    assert_int_equal(pfi_cl_parse_jobs(j, len, &n, NULL), PFI_OK);
    assert_int_equal(n.n_jobs, 3);
    assert_string_equal(n.jobs[0].id, "llama-70b.pt");
    assert_int_equal(n.jobs[0].n_gpus, 4);
    assert_int_equal(n.jobs[0].gpus[3], 3);
    assert_string_equal(n.jobs[0].phase, "warmup");
    assert_near(n.jobs[0].power_w, 320, 0);
    assert_near(n.jobs[0].tokens_per_s, 131174.5, 0);
    assert_true(isnan(n.jobs[0].tokens_sd));
    assert_near(n.jobs[0].sla_floor, 0.8, 0);
    assert_true(isnan(n.jobs[0].steady_power_w));
    assert_true(n.jobs[1].exempt);
    assert_near(n.jobs[1].tokens_per_s, 20018.25, 0);
    assert_true(isnan(n.jobs[2].tokens_per_s));
    pfi_cl_node_clear(&n);
    rewrites(pfi_cl_parse_jobs, ref_cl_parse_jobs, j, PFI_OK);
    mutations(pfi_cl_parse_jobs, ref_cl_parse_jobs, j, len, 13);
    free(j);
}

/* The fuzz corpus's listings (shorter, with restore_failed, steady values
 * and pfi estimates): every byte. */
static void test_corpus(void **st)
{
    (void)st;
    size_t len;
    char *g = slurp("tests/fuzz/corpus/cluster/gpus.json", &len);
    same(pfi_cl_parse_gpus, ref_cl_parse_gpus, g, len);
    mutations(pfi_cl_parse_gpus, ref_cl_parse_gpus, g, len, 1);
    mutations(pfi_cl_parse_jobs, ref_cl_parse_jobs, g, len, 5);
    free(g);
    char *j = slurp("tests/fuzz/corpus/cluster/jobs.json", &len);
    assert_int_equal(same(pfi_cl_parse_jobs, ref_cl_parse_jobs, j, len), PFI_OK);
    mutations(pfi_cl_parse_jobs, ref_cl_parse_jobs, j, len, 1);
    free(j);
}

/* Number spellings in a value that is read and in one that is skipped:
 * overflow refused (even where skipped, as Jansson does), -0 an integer
 * (+0), underflow accepted. */
static void test_numbers(void **st)
{
    (void)st;
    static const char *const nums[] = {
        "0",
        "-0",
        "-0.0",
        "0.1",
        "1E5",
        "1e+5",
        "2.5e-3",
        "1e400",
        "-1e400",
        "1e-400",
        "1e308",
        "1.8e308",
        "99999999999999999999",
        "-9223372036854775808",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775809",
        "123456789012345678",
        "1234567890123456789",
        "01",
        "-",
        "1.",
        ".5",
        "1e",
        "+1",
        "0x10",
        "1.5e",
        "--1",
        "Infinity",
        "NaN",
        "123456789012345678901234567890.5",
        "0.00000000000000000000000000000000000000000000000000000000000000000000000001e380",
        NULL};
    char t[512];
    for (size_t i = 0; nums[i]; i++) {
        snprintf(t, sizeof t, "{\"jobs\":[{\"id\":\"a\",\"gpus\":[0],\"power_w\":%s,\"x\":[%s]}]}",
                 nums[i], nums[i]);
        same(pfi_cl_parse_jobs, ref_cl_parse_jobs, t, strlen(t));
        snprintf(t, sizeof t, "{\"jobs\":[{\"id\":\"a\",\"gpus\":[0],\"x\":%s}]}", nums[i]);
        same(pfi_cl_parse_jobs, ref_cl_parse_jobs, t, strlen(t));
        snprintf(t, sizeof t, "{\"gpus\":[{\"gpu\":%s}]}", nums[i]);
        same(pfi_cl_parse_gpus, ref_cl_parse_gpus, t, strlen(t));
    }
}

/* Nesting: Jansson refuses past 2048 values deep; so does the new reader,
 * at the same depth. */
static void test_depth(void **st)
{
    (void)st;
    for (int d = 2040; d <= 2050; d++) {
        size_t n = 0;
        char *t = malloc(2 * (size_t)d + 64);
        n += (size_t)sprintf(t, "{\"gpus\":[],\"x\":");
        for (int k = 0; k < d; k++)
            t[n++] = '[';
        t[n++] = '1';
        for (int k = 0; k < d; k++)
            t[n++] = ']';
        t[n++] = '}';
        same(pfi_cl_parse_gpus, ref_cl_parse_gpus, t, n);
        free(t);
    }
}

/* Refusals name the entry and the field. */
static void test_messages(void **st)
{
    (void)st;
    static const struct {
        const char *text, *msg;
        int gpus;
    } cases[] = {
        {"{\"gpus\":[{\"gpu\":3,\"limits\":{\"min_w\":\"200\"}}]}",
         "GPU 3: \"limits.min_w\" is not a number", 1},
        {"{\"gpus\":[{\"gpu\":3,\"cap\":{\"watts\":true}}]}",
         "GPU 3: \"cap.watts\" is not a number", 1},
        {"{\"gpus\":[{\"gpu\":1},{\"gpu\":1.5}]}", "GPU 1: no valid \"gpu\" index", 1},
        {"{\"gpus\":[{\"gpu\":1},{\"gpu\":1}]}", "GPU 1 listed twice", 1},
        {"{\"gpus\":{}}", "expected {\"gpus\":[...]}", 1},
        {"{\"gpus\":[{\"gpu\":1}\n,]}", "bad JSON at line 2 column 2", 1},
        {"{\"jobs\":[{\"id\":\"a\",\"gpus\":[0],\"steady\":{\"tokens_per_s\":\"1\"}}]}",
         "job a: \"steady.tokens_per_s\" is not a number", 0},
        {"{\"jobs\":[{\"id\":\"a\",\"gpus\":[0],\"exempt\":1}]}",
         "job a: \"exempt\" is not a boolean", 0},
        {"{\"jobs\":[{\"id\":\"a\",\"gpus\":[0,-1]}]}", "job a: bad GPU index", 0},
        {"{\"jobs\":[{\"id\":\"a\",\"gpus\":[]}]}", "job a: bad \"gpus\"", 0},
        {"{\"jobs\":[{\"id\":\"\",\"gpus\":[0]}]}", "job 0: no valid id", 0},
        /* a syntax error after a bad entry is the one reported */
        {"{\"jobs\":[{\"id\":\"\",\"gpus\":[0]}],}", "bad JSON", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pfi_cl_node n = {0};
        pfi_error err;
        pfi_error_clear(&err);
        const char *t = cases[i].text;
        int rc = (cases[i].gpus ? pfi_cl_parse_gpus : pfi_cl_parse_jobs)(t, strlen(t), &n, &err);
        assert_int_not_equal(rc, PFI_OK);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("%s: \"%s\", expected \"%s\"", t, err.msg, cases[i].msg);
        same(cases[i].gpus ? pfi_cl_parse_gpus : pfi_cl_parse_jobs,
             cases[i].gpus ? ref_cl_parse_gpus : ref_cl_parse_jobs, t, strlen(t));
    }
}

/* More entries than a node may have: refused as before (ERANGE), even when
 * the first is bad. */
static void test_too_many(void **st)
{
    (void)st;
    size_t cap = (PFI_CL_MAX_GPUS + 2) * 16 + 32, n = 0;
    char *t = malloc(cap);
    n += (size_t)sprintf(t, "{\"gpus\":[{\"gpu\":\"bad\"}");
    for (int i = 1; i <= PFI_CL_MAX_GPUS; i++)
        n += (size_t)sprintf(t + n, ",{\"gpu\":%d}", i);
    n += (size_t)sprintf(t + n, "]}");
    assert_int_equal(same(pfi_cl_parse_gpus, ref_cl_parse_gpus, t, n), PFI_ERANGE);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recorded_gpus), cmocka_unit_test(test_recorded_jobs),
        cmocka_unit_test(test_corpus),        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_depth),         cmocka_unit_test(test_messages),
        cmocka_unit_test(test_too_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
