/* Shared by the benchmarks: a monotonic clock, CPU time and sorting for medians. */
#ifndef PFI_BENCH_UTIL_H
#define PFI_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of the process, all threads: on a shared machine the wall
 * clock also counts others' work, this does not (as much). */
static inline double bench_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts t[0..n) in place and returns the median (upper middle for even n). */
static inline double bench_median(double *t, size_t n)
{
    qsort(t, n, sizeof t[0], bench_cmp);
    return t[n / 2];
}

#endif
