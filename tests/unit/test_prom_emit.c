/* The Prometheus text writer: exact output, escaping, non-finite values. */
#include "test_util.h"

#include <string.h>

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
                             "x_ratio 0.3\n");
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_family_and_samples),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_non_finite_skipped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
