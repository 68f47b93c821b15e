/* The two clocks pfi reads, in seconds as doubles.
 *
 * Wall time (CLOCK_REALTIME) is for timestamps people read, the store's
 * sample times and absolute starts a user gives; durations and expiries run
 * on the boot clock (CLOCK_BOOTTIME: monotonic, and it keeps counting through
 * a suspend), so that a step of the wall clock neither stretches nor cuts a
 * cap. pfi_clock_watch notices such a step so the caller can log it. */
#ifndef PFI_CLOCK_H
#define PFI_CLOCK_H

/* Seconds since the epoch (CLOCK_REALTIME). */
double pfi_clock_wall(void);

/* Seconds since boot (CLOCK_BOOTTIME), never going back. */
double pfi_clock_mono(void);

/* Tracks wall - mono between calls. Zero-initialise; the first call only
 * records. */
typedef struct {
    double offset; /* wall - mono at the last call, s */
    int primed;
} pfi_clock_watch;

/* The wall clock's step since the last call, in seconds (positive: it jumped
 * forward), when its size is over tol_s; 0 otherwise. */
double pfi_clock_watch_step(pfi_clock_watch *w, double tol_s);

#endif
