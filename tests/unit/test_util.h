/* Helpers for cmocka unit tests. */
#ifndef PFI_TEST_UTIL_H
#define PFI_TEST_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

/* Fails the test with both values when |a - b| > tol. */
#define assert_near(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b), t_ = (tol);                                                     \
        if (!(fabs(a_ - b_) <= t_))                                                                \
            fail_msg("%s = %.10g, expected %.10g (tolerance %g)", #a, a_, b_, t_);                 \
    } while (0)

/* Path of a file under the repository or the shared folder. */
static inline const char *test_path(char *buf, size_t len, const char *root, const char *rel)
{
    snprintf(buf, len, "%s/%s", root, rel);
    return buf;
}

/* Writes text to path (replacing it); fails the test when it cannot. */
static inline void test_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

#endif
