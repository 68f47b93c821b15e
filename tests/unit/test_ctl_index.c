/* The controller's hash index: every key put is found at its position, keys
 * sharing a hash are told apart by the caller's equality, absent keys are
 * not found, clearing empties it. */
#include "test_util.h"

#include <string.h>

#include "control/ctl_index.h"

static char names[20000][16];

static int eq(size_t pos, const void *key)
{
    return strcmp(names[pos], key) == 0;
}

static void test_many(void **st)
{
    ctl_index x = {0};
    for (size_t i = 0; i < 20000; i++) {
        snprintf(names[i], sizeof names[i], "job-%zu", i);
        assert_int_equal(ctl_index_put(&x, ctl_hash_str(names[i]), i), 0);
    }
    for (size_t i = 0; i < 20000; i++)
        assert_int_equal(ctl_index_get(&x, ctl_hash_str(names[i]), eq, names[i]), i);
    assert_int_equal(ctl_index_get(&x, ctl_hash_str("job-20000"), eq, "job-20000"), SIZE_MAX);
    ctl_index_clear(&x);
    assert_int_equal(ctl_index_get(&x, ctl_hash_str(names[5]), eq, names[5]), SIZE_MAX);
    ctl_index_free(&x);
}

/* Two keys under one hash (forced): both found, each by its equality. */
static void test_collision(void **st)
{
    ctl_index x = {0};
    snprintf(names[0], sizeof names[0], "a");
    snprintf(names[1], sizeof names[1], "b");
    ctl_index_put(&x, 42, 0);
    ctl_index_put(&x, 42, 1);
    assert_int_equal(ctl_index_get(&x, 42, eq, "b"), 1);
    assert_int_equal(ctl_index_get(&x, 42, eq, "a"), 0);
    assert_int_equal(ctl_index_get(&x, 42, eq, "c"), SIZE_MAX);
    assert_true(ctl_hash_2(1, 2) != ctl_hash_2(2, 1));
    ctl_index_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_many),
                                       cmocka_unit_test(test_collision)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
