/* For the store's unit tests (pfid's and the controller's): a temporary
 * folder per test, as cmocka set-up and tear-down (test_db_unit_test(f) runs
 * f between them with the database's path in test_db_path) or by hand,
 * whole files read into memory, and the schema-1 store fixture
 * (tests/data/store-v1/) copied to a path. Header-only like test_util.h:
 * each tests/unit/test_*.c is its own program. */
#ifndef PFI_TEST_STORE_FIXTURE_H
#define PFI_TEST_STORE_FIXTURE_H

#include "test_util.h"

#include <stdlib.h>
#include <unistd.h>

/* A new temporary folder (dir, "/tmp/pfi-test-store-XXXXXX" made unique)
 * and the store's path in it (path, dir/pfid.db, not created); 0 or -1. */
static inline int store_fixture_dir(char dir[64], char path[128])
{
    snprintf(dir, 64, "/tmp/pfi-test-store-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(path, 128, "%s/pfid.db", dir);
    return 0;
}

/* Removes the store at path with SQLite's files beside it, then dir. */
static inline void store_fixture_remove(const char *dir, const char *path)
{
    char p[192];
    const char *suffix[] = {"", "-wal", "-shm", "-journal"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
    rmdir(dir);
}

static char test_db_dir[64];
static char test_db_path[128];

/* A new folder for the test; the database file is not made (the code under
 * test creates it, or the test writes its own bytes there first). */
static inline int test_db_setup(void **state)
{
    (void)state;
    return store_fixture_dir(test_db_dir, test_db_path);
}

static inline int test_db_teardown(void **state)
{
    (void)state;
    store_fixture_remove(test_db_dir, test_db_path);
    return 0;
}

#define test_db_unit_test(f) cmocka_unit_test_setup_teardown(f, test_db_setup, test_db_teardown)

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
