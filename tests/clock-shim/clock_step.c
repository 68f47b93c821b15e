/* An LD_PRELOAD shim that steps the wall clock of the process it is loaded
 * into, as an NTP step or an operator's `date -s` would: CLOCK_REALTIME
 * (clock_gettime, gettimeofday, time) reads the real time plus the seconds
 * written in the file CLOCK_STEP_FILE names (0 when unset, unreadable or
 * malformed). The file is read again at most every 20 ms, so a test steps
 * the clock of a running process by rewriting it. The boot and monotonic
 * clocks are left alone: that is what the test checks pfid relies on
 * (tests/integration/test_pfid_cap_clock.sh). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

typedef int (*clock_fn)(clockid_t, struct timespec *);

static clock_fn real_clock(void)
{
    static clock_fn fn;
    if (!fn) fn = (clock_fn)dlsym(RTLD_NEXT, "clock_gettime");
    return fn;
}

static double step_s(void)
{
    static double step, read_at = -1;
    struct timespec m;
    if (real_clock()(CLOCK_MONOTONIC, &m) != 0) return step;
    double now = (double)m.tv_sec + (double)m.tv_nsec * 1e-9;
    if (read_at >= 0 && now - read_at < 0.02) return step;
    read_at = now;
    const char *path = getenv("CLOCK_STEP_FILE");
    FILE *f = path ? fopen(path, "r") : NULL;
    double v = 0;
    if (f) {
        if (fscanf(f, "%lf", &v) != 1) v = 0;
        fclose(f);
    }
    step = v;
    return step;
}

static void add(struct timespec *ts, double s)
{
    long long ns = (long long)ts->tv_nsec + (long long)(s * 1e9);
    long long sec = (long long)ts->tv_sec + ns / 1000000000LL;
    ns %= 1000000000LL;
    if (ns < 0) {
        ns += 1000000000LL;
        sec--;
    }
    ts->tv_sec = (time_t)sec;
    ts->tv_nsec = (long)ns;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
    int rc = real_clock()(id, ts);
    if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) add(ts, step_s());
    return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    (void)tz;
    struct timespec ts;
    int rc = clock_gettime(CLOCK_REALTIME, &ts);
    if (rc == 0) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return rc;
}

time_t time(time_t *t)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (t) *t = ts.tv_sec;
    return ts.tv_sec;
}
