/* sweeps.csv reading: good files and every bad input of issue 2, each with the
 * line it must name. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/sweeps_csv.h"

#define HDR "group,platform,model,arch,task,gpus,config,cap_w,power_w,throughput_tok_s\n"
#define ROW700 "g,H200,m,dense,pt,8,,700,5600,10000\n"

static int parse(const char *text, size_t len, pfi_sweeps **s, pfi_error *err)
{
    pfi_csv *c = NULL;
    *s = NULL;
    pfi_error_clear(err);
    int rc = pfi_csv_parse(text, len, "t.csv", &c, err);
    if (rc == PFI_OK) rc = pfi_sweeps_from_csv(c, 0, s, err);
    pfi_csv_destroy(c);
    return rc;
}

static void good_file(void **state)
{
    const char *t =
        "\xEF\xBB\xBF" /* BOM */
        "throughput_tok_s,cap_w,power_w,group,platform,model,arch,task,gpus,config,power_sem_w,"
        "throughput_sem_tok_s\r\n"
        "9000,600,4800,\"MoE FT H200x8 (a, b)\",H200,m,moe,ft,8,\"EP8, \"\"x\"\"\",2,3\r\n"
        "\r\n"
        "10000,700,5600,\"MoE FT H200x8 (a, b)\",H200,m,moe,ft,8,\"EP8, \"\"x\"\"\",,\r\n";
    pfi_sweeps *s;
    pfi_error err;
    assert_int_equal(parse(t, strlen(t), &s, &err), PFI_OK);
    assert_int_equal(pfi_sweeps_count(s), 1);
    const pfi_group *g = pfi_sweeps_group(s, 0);
    assert_string_equal(g->name, "MoE FT H200x8 (a, b)");
    assert_string_equal(g->meta.config, "EP8, \"x\"");
    assert_int_equal(g->meta.gpus, 8);
    assert_int_equal(g->n_runs, 2);
    assert_near(g->runs[0].cap_w, 600, 0);
    assert_near(g->runs[0].power_sem_w, 2, 0);
    assert_near(g->runs[0].tput_sem, 3, 0);
    assert_near(g->runs[1].tput_sem, 0, 0); /* empty SEM: no noise */
    assert_int_equal(g->runs[1].line, 4);   /* the blank line still counts */
    assert_non_null(pfi_sweeps_find(s, "MoE FT H200x8 (a, b)"));
    assert_null(pfi_sweeps_find(s, "nope"));
    pfi_sweeps_destroy(s);
}

/* Writing and reading back gives the same sweeps. */
static void write_read_roundtrip(void **state)
{
    const char *t = HDR "\"a,\"\"b\"\"\",H200,m,moe,ft,8,\"x,y\",600,4800,9000\n"
                        "\"a,\"\"b\"\"\",H200,m,moe,ft,8,\"x,y\",700,5600,10000\n";
    pfi_sweeps *s, *s2;
    pfi_error err;
    assert_int_equal(parse(t, strlen(t), &s, &err), PFI_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(pfi_sweeps_write(f, s), PFI_OK);
    fclose(f);
    assert_int_equal(parse(buf, len, &s2, &err), PFI_OK);
    const pfi_group *a = pfi_sweeps_group(s, 0), *b = pfi_sweeps_group(s2, 0);
    assert_string_equal(a->name, b->name);
    assert_string_equal(a->meta.config, b->meta.config);
    for (int i = 0; i < 2; i++)
        assert_near(a->runs[i].tput, b->runs[i].tput, 0);
    free(buf);
    pfi_sweeps_destroy(s);
    pfi_sweeps_destroy(s2);
}

struct bad_case {
    const char *what;
    const char *text;
    size_t len; /* 0 = strlen */
    int code;
    long line;
    const char *msg; /* substring of the message */
};

static void bad_inputs(void **state)
{
    static const char nul_text[] = HDR "g,H200,m,dense,pt,8,,600,48\0000,9000\n" ROW700;
    const struct bad_case cases[] = {
        {"missing column",
         "group,platform,model,arch,task,gpus,config,cap_w,power_w\n"
         "g,H200,m,dense,pt,8,,700,5600\n",
         0, PFI_EPARSE, 1, "missing column \"throughput_tok_s\""},
        {"every missing column named",
         "group,platform,model,arch,task,gpus,config,cap_w\n"
         "g,H200,m,dense,pt,8,,700\n",
         0, PFI_EPARSE, 1, "missing columns \"power_w\", \"throughput_tok_s\""},
        {"semicolons",
         "group;platform;model;arch;task;gpus;config;cap_w;power_w;throughput_tok_s\n"
         "g;H200;m;dense;pt;8;;700;5600;10000\n",
         0, PFI_EPARSE, 1, "separated by ';'"},
        {"semicolons with decimal commas",
         "group;platform;model;arch;task;gpus;config;cap_w;power_w;throughput_tok_s\n"
         "g;H200;m;dense;pt;8;;700;5600,5;10000\n",
         0, PFI_EPARSE, 2, "separated by ';'"},
        {"comma and space",
         "group, platform, model, arch, task, gpus, config, cap_w, power_w, throughput_tok_s\n"
         "g,H200,m,dense,pt,8,,700,5600,10000\n",
         0, PFI_EPARSE, 1, "spaces around its names"},
        {"non-numeric", HDR "g,H200,m,dense,pt,8,,600,abc,9000\n" ROW700, 0, PFI_EPARSE, 2,
         "power_w is not a number"},
        {"trailing junk", HDR "g,H200,m,dense,pt,8,,600,4800W,9000\n" ROW700, 0, PFI_EPARSE, 2,
         "not a number"},
        {"NaN", HDR "g,H200,m,dense,pt,8,,600,4800,nan\n" ROW700, 0, PFI_EPARSE, 2,
         "throughput_tok_s is not finite"},
        {"inf", HDR ROW700 "g,H200,m,dense,pt,8,,600,inf,9000\n", 0, PFI_EPARSE, 3,
         "power_w is not finite"},
        {"empty number", HDR "g,H200,m,dense,pt,8,,600,,9000\n" ROW700, 0, PFI_EPARSE, 2,
         "empty power_w"},
        {"negative power", HDR "g,H200,m,dense,pt,8,,600,-4800,9000\n" ROW700, 0, PFI_ERANGE, 2,
         "power_w must be positive"},
        {"zero throughput", HDR "g,H200,m,dense,pt,8,,600,4800,0\n" ROW700, 0, PFI_ERANGE, 2,
         "throughput_tok_s must be positive"},
        {"negative SEM",
         "group,platform,model,arch,task,gpus,config,cap_w,power_w,"
         "throughput_tok_s,power_sem_w\n"
         "g,H200,m,dense,pt,8,,700,5600,10000,-1\n",
         0, PFI_ERANGE, 2, "standard errors"},
        {"one run", HDR ROW700, 0, PFI_ENODATA, 2, "has 1 run"},
        {"no uncapped run",
         HDR "g,H200,m,dense,pt,8,,500,4000,9000\n"
             "g,H200,m,dense,pt,8,,600,4800,9500\n",
         0, PFI_EINVAL, 2, "no uncapped run"},
        {"duplicate caps",
         HDR "g,H200,m,dense,pt,8,,600,4800,9000\n" ROW700 "g,H200,m,dense,pt,8,,600,4700,8900\n",
         0, PFI_EINVAL, 4, "duplicate cap 600 W"},
        {"metadata changes",
         HDR "g,H200,m,dense,pt,8,,600,4800,9000\n"
             "g,H200,m,dense,pt,16,,700,5600,10000\n",
         0, PFI_EINVAL, 3, "metadata differs"},
        {"bad arch", HDR "g,H200,m,sparse,pt,8,,600,4800,9000\n" ROW700, 0, PFI_EPARSE, 2,
         "arch must be dense or moe"},
        {"bad gpus", HDR "g,H200,m,dense,pt,8.5,,600,4800,9000\n" ROW700, 0, PFI_ERANGE, 2,
         "gpus must be a positive integer"},
        {"empty file", "", 0, PFI_ENODATA, 0, "empty file"},
        {"only blank lines", "\n\r\n\n", 0, PFI_ENODATA, 0, "empty file"},
        {"header only", HDR, 0, PFI_ENODATA, 0, "no data rows"},
        {"not UTF-8 (Latin-1)", HDR "g\xe9,H200,m,dense,pt,8,,600,4800,9000\n" ROW700, 0,
         PFI_EPARSE, 2, "not UTF-8 text"},
        {"binary NUL", nul_text, sizeof nul_text - 1, PFI_EPARSE, 2, "not UTF-8 text"},
        {"overlong UTF-8", HDR "g\xc0\xaf,H200,m,dense,pt,8,,600,4800,9000\n", 0, PFI_EPARSE, 2,
         "not UTF-8"},
        {"ragged row", HDR "g,H200,m,dense,pt,8,600,4800,9000\n" ROW700, 0, PFI_EPARSE, 2,
         "row has 9 fields, the header has 10"},
        {"unterminated quote", HDR "\"g,H200,m,dense,pt,8,,600,4800,9000\n" ROW700, 0, PFI_EPARSE,
         2, "unterminated quoted field"},
        {"stray quote", HDR "g\"x,H200,m,dense,pt,8,,600,4800,9000\n" ROW700, 0, PFI_EPARSE, 2,
         "stray quote"},
        {"empty group", HDR ",H200,m,dense,pt,8,,600,4800,9000\n" ROW700, 0, PFI_EINVAL, 2,
         "empty group name"},
        /* impossible sweeps (a new user's): each names its line */
        {"power above cap x GPUs", HDR "g,H200,m,dense,pt,8,,200,9999,9000\n" ROW700, 0, PFI_ERANGE,
         2, "above what the cap allows: 200 W x 8 GPUs = 1600 W"},
        {"capped above uncapped",
         HDR ROW700 "g,H200,m,dense,pt,8,,600,4700,9000\n"
                    "g,H200,m,dense,pt,8,,650,5200,9500\n"
                    "h,H200,m,dense,pt,8,,200,1500,9000\n"
                    "h,H200,m,dense,pt,8,,700,1400,10000\n",
         0, PFI_ERANGE, 5, "more than the uncapped run's 1400 W (line 6)"},
        {"absurd magnitude", HDR "g,H200,m,dense,pt,8,,600,4800,1e308\n" ROW700, 0, PFI_ERANGE, 2,
         "implausible magnitude"},
        {"absurd cap", HDR "g,H200,m,dense,pt,8,,1e308,4800,9000\n" ROW700, 0, PFI_ERANGE, 2,
         "implausible magnitude"},
        {"hex float", HDR "g,H200,m,dense,pt,8,,600,0x1p12,9000\n" ROW700, 0, PFI_EPARSE, 2,
         "power_w is not a decimal number (hex floats are not accepted)"},
        {"signed hex float", HDR "g,H200,m,dense,pt,8,,600,4800,+0X1P13\n" ROW700, 0, PFI_EPARSE, 2,
         "throughput_tok_s is not a decimal number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct bad_case *k = &cases[i];
        pfi_sweeps *s;
        pfi_error err;
        size_t len = k->len ? k->len : strlen(k->text);
        int rc = parse(k->text, len, &s, &err);
        if (rc != k->code || err.line != k->line || !strstr(err.msg, k->msg))
            fail_msg("%s: got %d line %ld \"%s\", want %d line %ld \"%s\"", k->what, rc, err.line,
                     err.msg, k->code, k->line, k->msg);
        assert_null(s);
        assert_string_equal(err.file, "t.csv");
    }
}

/* Many groups, rows interleaved (no group's rows together): every run lands
 * in its own group and every name is found, with groups in first-seen order
 * (the name index of curve.c; the "last group" shortcut never applies). */
static void many_interleaved_groups(void **state)
{
    enum { G = 3000 };
    size_t cap = 64 + (size_t)G * 2 * 48, len = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    len += (size_t)snprintf(t + len, cap - len, HDR);
    for (int k = 0; k < 2; k++)
        for (int g = 0; g < G; g++)
            len += (size_t)snprintf(t + len, cap - len, "grp%d,H200,m,dense,pt,8,,%d,%d,%d\n", g,
                                    k ? 700 : 300, k ? 5600 : 2400, k ? 10000 : 7000 + g);
    pfi_sweeps *s;
    pfi_error err;
    assert_int_equal(parse(t, len, &s, &err), PFI_OK);
    free(t);
    assert_int_equal(pfi_sweeps_count(s), G);
    char name[32];
    for (int g = 0; g < G; g++) {
        snprintf(name, sizeof name, "grp%d", g);
        const pfi_group *x = pfi_sweeps_find(s, name);
        assert_non_null(x);
        assert_ptr_equal(x, pfi_sweeps_group(s, (size_t)g));
        assert_int_equal(x->n_runs, 2);
        assert_near(x->runs[0].tput, 7000 + g, 0);
    }
    assert_null(pfi_sweeps_find(s, "grp"));
    assert_null(pfi_sweeps_find(s, "grp3000"));
    pfi_sweeps_destroy(s);
}

/* --allow-implausible (PFI_SWEEPS_ALLOW_IMPLAUSIBLE) accepts what the checks
 * refuse, and a file at the limits passes without it: power exactly cap x
 * GPUs, a capped run equal to the uncapped one. */
static void implausible_escape(void **state)
{
    const char *t = HDR "g,H200,m,dense,pt,8,,200,9999,9000\n" ROW700;
    pfi_csv *c = NULL;
    pfi_error err;
    assert_int_equal(pfi_csv_parse(t, strlen(t), "t.csv", &c, &err), PFI_OK);
    pfi_sweeps *s = NULL;
    assert_int_equal(pfi_sweeps_from_csv(c, 0, &s, &err), PFI_ERANGE);
    assert_null(s);
    assert_int_equal(pfi_sweeps_from_csv_opts(c, 0, PFI_SWEEPS_ALLOW_IMPLAUSIBLE, &s, &err),
                     PFI_OK);
    assert_int_equal(pfi_sweeps_group(s, 0)->n_runs, 2);
    pfi_sweeps_destroy(s);
    pfi_csv_destroy(c);
    const char *edge =
        HDR "g,H200,m,dense,pt,8,,200,1600,9000\n" ROW700 "h,H200,m,dense,pt,8,,600,4000,9500\n"
            "h,H200,m,dense,pt,8,,700,4000,10000\n";
    assert_int_equal(parse(edge, strlen(edge), &s, &err), PFI_OK);
    pfi_sweeps_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_file),          cmocka_unit_test(write_read_roundtrip),
        cmocka_unit_test(bad_inputs),         cmocka_unit_test(many_interleaved_groups),
        cmocka_unit_test(implausible_escape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
