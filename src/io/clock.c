/* The wall and boot clocks (pfi/clock.h). */
#include <math.h>
#include <time.h>

#include "pfi/clock.h"

static double read_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double pfi_clock_wall(void)
{
    return read_clock(CLOCK_REALTIME);
}

double pfi_clock_mono(void)
{
#ifdef CLOCK_BOOTTIME
    return read_clock(CLOCK_BOOTTIME);
#else
    return read_clock(CLOCK_MONOTONIC);
#endif
}

double pfi_clock_watch_step(pfi_clock_watch *w, double tol_s)
{
    double off = pfi_clock_wall() - pfi_clock_mono();
    double step = w->primed ? off - w->offset : 0;
    w->offset = off;
    w->primed = 1;
    return fabs(step) > tol_s ? step : 0;
}
