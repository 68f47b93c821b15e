/* The schema-1 store fixture (tests/data/store-v1/) for the store's unit
 * tests: whole files read into memory and the fixture copied to a path. */
#ifndef PFI_TEST_STORE_FIXTURE_H
#define PFI_TEST_STORE_FIXTURE_H

#include "test_util.h"

/* The whole file, malloc'd; *len its size. */
static inline char *store_fixture_slurp(const char *p, size_t *len)
{
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Copies tests/data/store-v1/pfid-v1.db to dst. */
static inline void store_fixture_copy_v1(const char *dst)
{
    char src[512];
    test_path(src, sizeof src, PFI_SOURCE_DIR, "tests/data/store-v1/pfid-v1.db");
    size_t n;
    char *buf = store_fixture_slurp(src, &n);
    FILE *f = fopen(dst, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
    free(buf);
}

#endif
