/* The Prometheus text writer: exact output, escaping, non-finite values. */
#include "test_util.h"

#include <string.h>

#include "pfi/prom.h"
#include "pfi/prom_emit.h"

static char *buf;
static size_t len;

static FILE *open_buf(void)
{
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    return f;
}

static void test_family_and_samples(void **state)
{
    FILE *f = open_buf();
    pfi_prom_family(f, "pfi_gpu_power_watts", PFI_PROM_GAUGE, "GPU power draw.");
    const char *l0[] = {"gpu", "0", "uuid", "GPU-1", NULL};
    assert_int_equal(pfi_prom_sample(f, "pfi_gpu_power_watts", l0, 690.5), 1);
    assert_int_equal(pfi_prom_sample(f, "pfi_gpu_power_watts", NULL, 700), 1);
    pfi_prom_family(f, "pfi_gpu_energy_joules_total", PFI_PROM_COUNTER, "Energy.");
    const char *l1[] = {"gpu", "1", NULL};
    /* an integer beyond 2^32 prints exactly, not as 1.23456789012e+12 */
    assert_int_equal(pfi_prom_sample(f, "pfi_gpu_energy_joules_total", l1, 1234567890123.0), 1);
    pfi_prom_family(f, "x_ratio", PFI_PROM_UNTYPED, "");
    /* shortest exact text: 0.3 is "0.3"; 0.1 + 0.2 is not 0.3 and says so */
    assert_int_equal(pfi_prom_sample(f, "x_ratio", NULL, 0.3), 1);
    assert_int_equal(pfi_prom_sample(f, "x_ratio", NULL, 0.1 + 0.2), 1);
    fclose(f);
    assert_string_equal(buf, "# HELP pfi_gpu_power_watts GPU power draw.\n"
                             "# TYPE pfi_gpu_power_watts gauge\n"
                             "pfi_gpu_power_watts{gpu=\"0\",uuid=\"GPU-1\"} 690.5\n"
                             "pfi_gpu_power_watts 700\n"
                             "# HELP pfi_gpu_energy_joules_total Energy.\n"
                             "# TYPE pfi_gpu_energy_joules_total counter\n"
                             "pfi_gpu_energy_joules_total{gpu=\"1\"} 1234567890123\n"
                             "# HELP x_ratio \n"
                             "# TYPE x_ratio untyped\n"
                             "x_ratio 0.3\n"
                             "x_ratio 0.30000000000000004\n");
    free(buf);
}

static void test_escaping(void **state)
{
    FILE *f = open_buf();
    pfi_prom_family(f, "m", PFI_PROM_GAUGE, "a \\ b\nc \"q\"");
    const char *l[] = {"job", "a\\b\"c\"\nd", NULL};
    pfi_prom_sample(f, "m", l, 1);
    fclose(f);
    /* HELP escapes \ and newline only; label values also escape the quote. */
    assert_string_equal(buf, "# HELP m a \\\\ b\\nc \"q\"\n"
                             "# TYPE m gauge\n"
                             "m{job=\"a\\\\b\\\"c\\\"\\nd\"} 1\n");
    free(buf);
}

static void test_non_finite_skipped(void **state)
{
    FILE *f = open_buf();
    assert_int_equal(pfi_prom_sample(f, "m", NULL, NAN), 0);
    assert_int_equal(pfi_prom_sample(f, "m", NULL, INFINITY), 0);
    assert_int_equal(pfi_prom_sample(f, "m", NULL, -2.5), 1);
    fclose(f);
    assert_string_equal(buf, "m -2.5\n");
    free(buf);
}

/* What the emitter writes, the parser (include/io/pfi/prom.h, the dcgm
 * backend's) reads back unchanged: awkward label values and help text. */
static void test_round_trip(void **state)
{
    static const char *const values[] = {"plain",
                                         "back\\slash",
                                         "quo\"te",
                                         "new\nline",
                                         "all \\ \" \n three",
                                         "",
                                         "utf-8 \xc2\xb0"
                                         "C"};
    const size_t nv = sizeof values / sizeof values[0];
    FILE *f = open_buf();
    pfi_prom_family(f, "rt_metric", PFI_PROM_COUNTER, "help with \\ and \n inside");
    for (size_t i = 0; i < nv; i++) {
        char idx[8];
        snprintf(idx, sizeof idx, "%zu", i);
        const char *l[] = {"i", idx, "v", values[i], NULL};
        pfi_prom_sample(f, "rt_metric", l, 1e12 + (double)i + 0.25);
    }
    fclose(f);
    pfi_prom_doc *d;
    pfi_error err;
    if (pfi_prom_parse(buf, len, "emitted", &d, &err) != PFI_OK) fail_msg("%s", err.msg);
    assert_int_equal(pfi_prom_doc_series_count(d), nv);
    const pfi_prom_meta *m = pfi_prom_doc_find_meta(d, "rt_metric");
    assert_non_null(m);
    assert_string_equal(m->type, "counter");
    assert_string_equal(m->help, "help with \\ and \n inside");
    for (size_t i = 0; i < nv; i++) {
        const pfi_prom_series *x = pfi_prom_doc_series(d, i);
        assert_string_equal(pfi_prom_series_label(x, "v"), values[i]);
        assert_true(x->value == 1e12 + (double)i + 0.25); /* exact */
    }
    pfi_prom_doc_destroy(d);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_family_and_samples),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_non_finite_skipped),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
