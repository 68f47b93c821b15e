/* The GPU field table walked row by row: what every field must have for the
 * backends, the store, pfid's metrics and the aggregates to work from it
 * alone (adding a field is one row: this test says what the row needs). */
#include "test_util.h"

#include <string.h>

#include "pfi/gpu_field.h"
#include "pfi/telemetry.h"

/* The DCGM field names in dcgm-exporter's own field lists and pages
 * (/work/shared/data/dcgm-exporter), read as one text. */
static char *shared_dcgm_text(void)
{
    static const char *files[] = {"default-counters.csv", "dcp-metrics-included.csv",
                                  "datadog_dcgm_fixture_T4_excerpt.prom",
                                  "issue512_h100_mig_metrics_excerpt.prom", "README.md"};
    size_t cap = 1 << 20, len = 0;
    char *all = calloc(1, cap);
    assert_non_null(all);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[512], rel[128];
        snprintf(rel, sizeof rel, "data/dcgm-exporter/%s", files[i]);
        FILE *f = fopen(test_path(p, sizeof p, PFI_SHARED_DIR, rel), "r");
        if (!f) fail_msg("cannot read %s", p);
        len += fread(all + len, 1, cap - 1 - len, f);
        fclose(f);
    }
    return all;
}

/* A name as a whole word of text (not a prefix of a longer field name). */
static int has_word(const char *text, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = strstr(text, w); p; p = strstr(p + 1, w)) {
        char after = p[n];
        if (!(after == '_' || (after >= 'A' && after <= 'Z') || (after >= '0' && after <= '9')))
            return 1;
    }
    return 0;
}

/* Names not (yet) in the shared lists, with their ids from DCGM's
 * dcgm_fields.h (NVIDIA/DCGM): the new name of field 112 and the NVLink byte
 * counters, which dcgm-exporter's default lists leave out. */
static const struct {
    const char *name;
    int id;
} from_dcgm_fields_h[] = {
    {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", 112},
    {"DCGM_FI_PROF_NVLINK_TX_BYTES", 1011},
    {"DCGM_FI_PROF_NVLINK_RX_BYTES", 1012},
};

static void test_every_row(void **state)
{
    (void)state;
    char *shared = shared_dcgm_text();
    static const char *units[] = {"W", "J", "Hz", "ratio", "C", "B", "B/s", "bits"};
    int tm_seen[PFI_TM_NFIELDS] = {0};
    for (int f = 0; f < PFI_GF_COUNT; f++) {
        const pfi_gpu_field_desc *d = &pfi_gpu_fields[f];
        assert_int_equal(d->field, f); /* indexed by field */
        assert_ptr_equal(pfi_gpu_field_get((pfi_gpu_field)f), d);
        assert_non_null(d->name);
        assert_non_null(d->nvml_source);
        int unit_ok = 0;
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
            unit_ok |= d->unit && strcmp(d->unit, units[u]) == 0;
        if (!unit_ok) fail_msg("%s: unit '%s' is not an SI unit pfi uses", d->name, d->unit);
        /* DCGM names: in the shared lists, or listed above with their id. */
        const char *names[2] = {d->dcgm_name, d->dcgm_alias};
        assert_non_null(d->dcgm_name);
        for (int k = 0; k < 2; k++) {
            if (!names[k]) continue;
            assert_ptr_equal(pfi_gpu_field_by_dcgm(names[k]), d);
            int known = has_word(shared, names[k]);
            for (size_t i = 0; i < sizeof from_dcgm_fields_h / sizeof from_dcgm_fields_h[0]; i++)
                if (strcmp(from_dcgm_fields_h[i].name, names[k]) == 0) {
                    assert_int_equal(from_dcgm_fields_h[i].id, d->dcgm_id);
                    known = 1;
                }
            if (!known) fail_msg("%s: DCGM name %s is in no field list", d->name, names[k]);
        }
        assert_true(d->dcgm_id > 0);
        assert_true(d->dcgm_to_si > 0 && d->si_to_prom > 0 && d->si_to_tm > 0);
        /* Unique names, store columns, DCGM names and ids, metric families. */
        for (int g = 0; g < f; g++) {
            const pfi_gpu_field_desc *e = &pfi_gpu_fields[g];
            if (strcmp(d->name, e->name) == 0) fail_msg("JSON key %s twice", d->name);
            if (strcmp(d->store_column, e->store_column) == 0)
                fail_msg("store column %s twice", d->store_column);
            if (strcmp(d->dcgm_name, e->dcgm_name) == 0) fail_msg("%s twice", d->dcgm_name);
            assert_int_not_equal(d->dcgm_id, e->dcgm_id);
            if (d->prom_name && e->prom_name && strcmp(d->prom_name, e->prom_name) == 0)
                fail_msg("family %s twice", d->prom_name);
        }
        /* A store column is a plain SQL identifier. */
        assert_true(strspn(d->store_column, "abcdefghijklmnopqrstuvwxyz_0123456789") ==
                    strlen(d->store_column));
        if (d->prom_name) {
            assert_true(strncmp(d->prom_name, "pfi_gpu_", 8) == 0);
            assert_non_null(d->prom_help);
            /* The JSON key is the family without its prefix (pfid's API). */
            assert_string_equal(d->name, d->prom_name + 8);
        }
        /* Only bit masks are INTEGER columns; they convert with factor 1. */
        assert_int_equal(d->store_integer, strcmp(d->unit, "bits") == 0);
        if (d->tm_field >= 0) {
            assert_true(d->tm_field < PFI_TM_NFIELDS);
            assert_false(tm_seen[d->tm_field]);
            tm_seen[d->tm_field] = 1;
            /* The row maps to the telemetry column of the same DCGM field. */
            assert_string_equal(pfi_tm_field_name((pfi_tm_field)d->tm_field), d->dcgm_name);
        }
    }
    /* Every telemetry.csv column is fed by some field. */
    for (int k = 0; k < PFI_TM_NFIELDS; k++)
        if (!tm_seen[k]) fail_msg("telemetry column %s has no GPU field", pfi_tm_field_name(k));
    assert_null(pfi_gpu_field_get(PFI_GF_COUNT));
    assert_null(pfi_gpu_field_by_dcgm("DCGM_FI_DEV_NOPE"));
    free(shared);
}

/* The factors, against units worked out by hand: DCGM -> SI -> telemetry.csv
 * gives DCGM's value back (up to rounding), and the known values. */
static void test_factors(void **state)
{
    (void)state;
    assert_near(pfi_gpu_fields[PFI_GF_ENERGY].dcgm_to_si, 1e-3, 0);     /* mJ */
    assert_near(pfi_gpu_fields[PFI_GF_SM_CLOCK].dcgm_to_si, 1e6, 0);    /* MHz */
    assert_near(pfi_gpu_fields[PFI_GF_UTIL_GPU].dcgm_to_si, 0.01, 0);   /* percent */
    assert_near(pfi_gpu_fields[PFI_GF_FB_USED].dcgm_to_si, 1048576, 0); /* MiB */
    assert_near(pfi_gpu_fields[PFI_GF_POWER].dcgm_to_si, 1, 0);         /* W */
    assert_near(pfi_gpu_fields[PFI_GF_PCIE_TX].dcgm_to_si, 1, 0);       /* bytes/s */
    for (int f = 0; f < PFI_GF_COUNT; f++) {
        const pfi_gpu_field_desc *d = &pfi_gpu_fields[f];
        if (d->tm_field < 0) continue;
        double dcgm = 57.0, back = dcgm * d->dcgm_to_si * d->si_to_tm;
        if (fabs(back - dcgm) > 1e-12 * dcgm) fail_msg("%s: 57 -> %.17g", d->name, back);
    }
    /* The exported units: watts, joules, hertz, ratios, bytes (factor 1). */
    for (int f = 0; f < PFI_GF_COUNT; f++)
        assert_near(pfi_gpu_fields[f].si_to_prom, 1, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row),
        cmocka_unit_test(test_factors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
