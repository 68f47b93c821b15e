/* The topology file: the shared 144-node layout read back domain by domain,
 * every kind of bad file with the path its error names, the notes, the
 * one-domain tree. */
#include "test_util.h"

#include <string.h>

#include "pfi/topology.h"

static pfi_topo *parse_ok(const char *json)
{
    pfi_topo *t = NULL;
    pfi_error err;
    pfi_error_clear(&err);
    int rc = pfi_topo_parse(json, strlen(json), "t.json", &t, &err);
    if (rc != PFI_OK) fail_msg("rc %d: %s", rc, err.msg);
    return t;
}

/* The shared layout (shared/data/topology/README.md): utility 750 kW over a
 * 1.6 MW switchboard over four 450 kW floor PDUs of two 150 kW racks, 18
 * nodes a rack; PDU k feeds racks k and k + 4. */
static void site_144(void **state)
{
    (void)state;
    char path[512];
    pfi_topo *t = NULL;
    pfi_error err;
    test_path(path, sizeof path, PFI_SHARED_DIR, "data/topology/site-144-nodes.json");
    assert_int_equal(pfi_topo_load(path, &t, &err), PFI_OK);
    assert_int_equal(pfi_topo_domains(t), 14);
    assert_int_equal(pfi_topo_member_kind_of(t), PFI_TOPO_NODES);
    static const struct {
        const char *name;
        size_t parent, depth, end;
        double limit;
        const char *first;
    } want[] = {
        {"utility", PFI_TOPO_NONE, 0, 14, 750000, NULL}, {"switchboard", 0, 1, 14, 1600000, NULL},
        {"floor-pdu-1", 1, 2, 5, 450000, NULL},          {"rack-1", 2, 3, 4, 150000, "node-001"},
        {"rack-5", 2, 3, 5, 150000, "node-073"},         {"floor-pdu-2", 1, 2, 8, 450000, NULL},
        {"rack-2", 5, 3, 7, 150000, "node-019"},         {"rack-6", 5, 3, 8, 150000, "node-091"},
        {"floor-pdu-3", 1, 2, 11, 450000, NULL},         {"rack-3", 8, 3, 10, 150000, "node-037"},
        {"rack-7", 8, 3, 11, 150000, "node-109"},        {"floor-pdu-4", 1, 2, 14, 450000, NULL},
        {"rack-4", 11, 3, 13, 150000, "node-055"},       {"rack-8", 11, 3, 14, 150000, "node-127"},
    };
    size_t members = 0;
    for (size_t i = 0; i < 14; i++) {
        const pfi_topo_domain *d = pfi_topo_domain_at(t, i);
        assert_string_equal(d->name, want[i].name);
        assert_int_equal(d->parent, want[i].parent);
        assert_int_equal(d->depth, want[i].depth);
        assert_int_equal(d->subtree_end, want[i].end);
        assert_true(d->limit_w == want[i].limit);
        assert_true(d->other_load_w == 0);
        assert_null(d->other_load_query);
        assert_null(d->openadr_program);
        assert_int_equal(pfi_topo_find(t, d->name), i);
        if (want[i].first) {
            assert_int_equal(d->n_members, 18);
            assert_string_equal(d->members[0], want[i].first);
            for (size_t k = 0; k < d->n_members; k++)
                assert_int_equal(pfi_topo_leaf_of(t, d->members[k]), i);
        } else {
            assert_int_equal(d->n_members, 0);
        }
        members += d->n_members;
    }
    assert_int_equal(members, 144);
    assert_null(pfi_topo_domain_at(t, 14));
    assert_int_equal(pfi_topo_find(t, "rack-9"), PFI_TOPO_NONE);
    assert_int_equal(pfi_topo_leaf_of(t, "node-145"), PFI_TOPO_NONE);
    assert_int_equal(pfi_topo_leaf_of(t, "node-144"), 13);
    /* contains: a domain, its ancestors; not a sibling's subtree */
    assert_true(pfi_topo_contains(t, 0, 13));
    assert_true(pfi_topo_contains(t, 2, 4));
    assert_true(pfi_topo_contains(t, 4, 4));
    assert_false(pfi_topo_contains(t, 2, 6));
    assert_false(pfi_topo_contains(t, 4, 2));
    assert_false(pfi_topo_contains(t, 0, 14));
    /* the one note: the switchboard is rated above the utility feed */
    const char *note = pfi_topo_note(t, 0);
    assert_non_null(note);
    assert_non_null(strstr(note, "site-144-nodes.json: $.children[0] (switchboard): limit_w "
                                 "1600000 W is above utility's 750000 W"));
    assert_null(pfi_topo_note(t, 1));
    pfi_topo_destroy(t);
    pfi_topo_destroy(NULL);
}

static void optional_keys(void **state)
{
    (void)state;
    pfi_topo *t =
        parse_ok("{\"name\":\"site\",\"children\":[{\"name\":\"feed-a\",\"limit_w\":1000,"
                 "\"other_load_w\":50.5,\"openadr\":{\"program\":\"p1\",\"resource\":\"r1\"},"
                 "\"children\":[{\"name\":\"r1\",\"limit_w\":2000,\"other_load_query\":"
                 "\"sum(x)\",\"jobs\":[\"g1\",\"g2\"]}]},{\"name\":\"feed-b\",\"openadr\":"
                 "{\"resource\":\"rb\"},\"jobs\":[\"g3\"]}]}");
    assert_int_equal(pfi_topo_domains(t), 4);
    assert_int_equal(pfi_topo_member_kind_of(t), PFI_TOPO_JOBS);
    const pfi_topo_domain *root = pfi_topo_domain_at(t, 0), *a = pfi_topo_domain_at(t, 1),
                          *r1 = pfi_topo_domain_at(t, 2), *b = pfi_topo_domain_at(t, 3);
    assert_true(isinf(root->limit_w));
    assert_true(a->limit_w == 1000 && a->other_load_w == 50.5);
    assert_string_equal(a->openadr_program, "p1");
    assert_string_equal(a->openadr_resource, "r1");
    assert_string_equal(r1->other_load_query, "sum(x)");
    assert_null(b->openadr_program);
    assert_string_equal(b->openadr_resource, "rb");
    assert_int_equal(pfi_topo_leaf_of(t, "g3"), 3);
    /* r1 (2000 W) is above feed-a (1000 W); the unrated root is skipped */
    assert_string_equal(pfi_topo_note(t, 0),
                        "t.json: $.children[0].children[0] (r1): limit_w 2000 W is above feed-a's "
                        "1000 W");
    assert_null(pfi_topo_note(t, 1));
    pfi_topo_destroy(t);
    /* a child of an unrated domain is compared with the nearest rated one */
    t = parse_ok("{\"name\":\"s\",\"limit_w\":10,\"children\":[{\"name\":\"g\",\"children\":"
                 "[{\"name\":\"l\",\"limit_w\":11,\"agents\":[\"http://a:1\"]}]}]}");
    assert_non_null(strstr(pfi_topo_note(t, 0), "$.children[0].children[0] (l): limit_w 11 W is "
                                                "above s's 10 W"));
    pfi_topo_destroy(t);
}

static void bad_files(void **state)
{
    (void)state;
    static const struct {
        const char *json, *want;
        int code;
    } cases[] = {
        {"{\"name\":\"s\",", "t.json:1: ", PFI_EPARSE},
        {"[1]", "$: a domain must be a JSON object", PFI_EINVAL},
        {"{\"name\":\"s\",\"jobs\":[\"a\"],\"limits_w\":1}", "$.limits_w: unknown key", PFI_EINVAL},
        {"{\"name\":\"s\",\"name\":\"t\",\"jobs\":[\"a\"]}", "duplicate", PFI_EPARSE},
        {"{\"jobs\":[\"a\"]}", "$.name: missing", PFI_EINVAL},
        {"{\"name\":\"a b\",\"jobs\":[\"a\"]}", "$.name: must be 1-64 characters", PFI_EINVAL},
        {"{\"name\":\"\",\"jobs\":[\"a\"]}", "$.name: must be", PFI_EINVAL},
        {"{\"name\":7,\"jobs\":[\"a\"]}", "$.name: must be", PFI_EINVAL},
        {"{\"name\":\"s\",\"limit_w\":0,\"jobs\":[\"a\"]}", "$.limit_w: 0 is not a finite positive",
         PFI_EINVAL},
        {"{\"name\":\"s\",\"limit_w\":-5,\"jobs\":[\"a\"]}", "$.limit_w: -5 is not", PFI_EINVAL},
        {"{\"name\":\"s\",\"limit_w\":\"1kW\",\"jobs\":[\"a\"]}", "$.limit_w: must be a number",
         PFI_EINVAL},
        {"{\"name\":\"s\",\"limit_w\":1e999,\"jobs\":[\"a\"]}", "t.json", PFI_EPARSE},
        {"{\"name\":\"s\",\"other_load_w\":-1,\"jobs\":[\"a\"]}",
         "$.other_load_w: -1 is not a finite non-negative", PFI_EINVAL},
        {"{\"name\":\"s\",\"other_load_query\":\"\",\"jobs\":[\"a\"]}",
         "$.other_load_query: must be a non-empty string", PFI_EINVAL},
        {"{\"name\":\"s\",\"openadr\":{},\"jobs\":[\"a\"]}", "$.openadr: must be an object",
         PFI_EINVAL},
        {"{\"name\":\"s\",\"openadr\":{\"ven\":\"x\"},\"jobs\":[\"a\"]}",
         "$.openadr: unknown key \"ven\"", PFI_EINVAL},
        {"{\"name\":\"s\",\"openadr\":{\"program\":1},\"jobs\":[\"a\"]}",
         "$.openadr.program: must be a non-empty string", PFI_EINVAL},
        {"{\"name\":\"s\"}", "$: a domain needs \"children\"", PFI_EINVAL},
        {"{\"name\":\"s\",\"jobs\":[]}", "$.jobs: must be a non-empty array", PFI_EINVAL},
        {"{\"name\":\"s\",\"jobs\":\"a\"}", "$.jobs: must be a non-empty array", PFI_EINVAL},
        {"{\"name\":\"s\",\"jobs\":[\"a\",3]}", "$.jobs[1]: must be a string", PFI_EINVAL},
        {"{\"name\":\"s\",\"jobs\":[\"a\",\"\"]}", "$.jobs[1]: must be a string", PFI_EINVAL},
        {"{\"name\":\"s\",\"jobs\":[\"a\\nb\"]}", "$.jobs[0]: must be a string", PFI_EINVAL},
        {"{\"name\":\"s\",\"jobs\":[\"a\"],\"nodes\":[\"b\"]}", "$: a domain has one of",
         PFI_EINVAL},
        {"{\"name\":\"s\",\"children\":[{\"name\":\"c\",\"jobs\":[\"a\"]}],\"jobs\":[\"b\"]}",
         "$: a domain has one of", PFI_EINVAL},
        {"{\"name\":\"s\",\"children\":[]}", "$.children: must be a non-empty array", PFI_EINVAL},
        {"{\"name\":\"s\",\"children\":[{\"name\":\"c\",\"jobs\":[\"a\"]},3]}",
         "$.children[1]: a domain must be a JSON object", PFI_EINVAL},
        {"{\"name\":\"s\",\"children\":[{\"name\":\"c\",\"jobs\":[\"a\"]},{\"name\":\"d\","
         "\"limit_w\":null,\"jobs\":[\"b\"]}]}",
         "$.children[1].limit_w: must be a number", PFI_EINVAL},
        /* leaves of two kinds */
        {"{\"name\":\"s\",\"children\":[{\"name\":\"c\",\"jobs\":[\"a\"]},{\"name\":\"d\","
         "\"nodes\":[\"b\"]}]}",
         "$.children[1]: lists \"nodes\" where an earlier leaf lists \"jobs\"", PFI_EINVAL},
        /* a name twice (the way a file would write a cycle) */
        {"{\"name\":\"s\",\"children\":[{\"name\":\"c\",\"jobs\":[\"a\"]},{\"name\":\"s\","
         "\"jobs\":[\"b\"]}]}",
         "$.children[1].name: \"s\" is already the name of $ (names are unique)", PFI_EINVAL},
        /* a member in two leaves, and twice in one */
        {"{\"name\":\"s\",\"children\":[{\"name\":\"c\",\"nodes\":[\"n1\",\"n2\"]},{\"name\":"
         "\"d\",\"nodes\":[\"n3\",\"n2\"]}]}",
         "$.children[1].nodes[1]: \"n2\" is already listed at $.children[0].nodes[1]", PFI_EINVAL},
        {"{\"name\":\"s\",\"nodes\":[\"n1\",\"n1\"]}",
         "$.nodes[1]: \"n1\" is already listed at $.nodes[0]", PFI_EINVAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pfi_topo *t = (pfi_topo *)1;
        pfi_error err;
        pfi_error_clear(&err);
        int rc = pfi_topo_parse(cases[i].json, strlen(cases[i].json), "t.json", &t, &err);
        char buf[1024];
        pfi_error_format(&err, buf, sizeof buf);
        if (rc != cases[i].code || !strstr(buf, cases[i].want) || t != NULL ||
            strncmp(buf, "t.json", 6) != 0)
            fail_msg("case %zu: rc %d, message '%s', want %d '%s'", i, rc, buf, cases[i].code,
                     cases[i].want);
    }
    /* depth: 16 levels below the root parse, 17 do not */
    for (int extra = 0; extra < 2; extra++) {
        char json[4096] = "";
        int levels = PFI_TOPO_MAX_DEPTH + extra;
        for (int k = 0; k <= levels; k++)
            snprintf(json + strlen(json), sizeof json - strlen(json), "{\"name\":\"d%d\",%s", k,
                     k < levels ? "\"children\":[" : "\"jobs\":[\"a\"]");
        for (int k = 0; k <= levels; k++)
            snprintf(json + strlen(json), sizeof json - strlen(json), "%s", k ? "]}" : "}");
        pfi_topo *t = NULL;
        pfi_error err;
        int rc = pfi_topo_parse(json, strlen(json), "t.json", &t, &err);
        if (!extra) {
            if (rc != PFI_OK) fail_msg("%d levels: %s", levels, err.msg);
            assert_int_equal(pfi_topo_domains(t), (size_t)levels + 1);
            assert_int_equal(pfi_topo_domain_at(t, levels)->depth, PFI_TOPO_MAX_DEPTH);
        } else {
            assert_int_equal(rc, PFI_EINVAL);
            assert_non_null(strstr(err.msg, "deeper than 16 levels"));
        }
        pfi_topo_destroy(t);
    }
    /* a missing file is an I/O error naming it */
    pfi_topo *t = NULL;
    pfi_error err;
    assert_int_equal(pfi_topo_load("/nonexistent/site.json", &t, &err), PFI_EIO);
    assert_null(t);
    assert_non_null(strstr(err.file, "/nonexistent/site.json"));
}

static void single(void **state)
{
    (void)state;
    const char *agents[] = {"http://10.0.0.1:9400", "http://10.0.0.2:9400"};
    pfi_topo *t = NULL;
    pfi_error err;
    assert_int_equal(pfi_topo_single("site", INFINITY, PFI_TOPO_AGENTS, agents, 2, &t, &err),
                     PFI_OK);
    assert_int_equal(pfi_topo_domains(t), 1);
    const pfi_topo_domain *d = pfi_topo_domain_at(t, 0);
    assert_string_equal(d->name, "site");
    assert_int_equal(d->parent, PFI_TOPO_NONE);
    assert_int_equal(d->subtree_end, 1);
    assert_true(isinf(d->limit_w));
    assert_int_equal(d->n_members, 2);
    assert_true(d->members[1] != agents[1]); /* copied */
    assert_int_equal(pfi_topo_leaf_of(t, "http://10.0.0.2:9400"), 0);
    assert_int_equal(pfi_topo_member_kind_of(t), PFI_TOPO_AGENTS);
    assert_int_equal(pfi_topo_find(t, "site"), 0);
    assert_null(pfi_topo_note(t, 0));
    pfi_topo_destroy(t);
    /* no members (agents found later), a finite limit */
    assert_int_equal(pfi_topo_single("site", 5000, PFI_TOPO_NODES, NULL, 0, &t, &err), PFI_OK);
    assert_true(pfi_topo_domain_at(t, 0)->limit_w == 5000);
    pfi_topo_destroy(t);
    /* errors */
    assert_int_equal(pfi_topo_single("a b", 1, PFI_TOPO_NODES, NULL, 0, &t, &err), PFI_EINVAL);
    assert_null(t);
    assert_int_equal(pfi_topo_single("s", 0, PFI_TOPO_NODES, NULL, 0, &t, &err), PFI_EINVAL);
    assert_int_equal(pfi_topo_single("s", NAN, PFI_TOPO_NODES, NULL, 0, &t, &err), PFI_EINVAL);
    const char *dup[] = {"n1", "n1"};
    assert_int_equal(pfi_topo_single("s", 1, PFI_TOPO_NODES, dup, 2, &t, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "\"n1\" is already listed"));
    assert_null(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(site_144),
        cmocka_unit_test(optional_keys),
        cmocka_unit_test(bad_files),
        cmocka_unit_test(single),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
