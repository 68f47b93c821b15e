/* Times and durations as OpenADR 3 writes them, and as the controller's
 * targets take them: RFC 3339 date-times and ISO 8601 durations, to Unix
 * seconds. Pure functions: no clock (the caller passes "now").
 *
 * Leniency is explicit: what was tolerated is reported in *flags, so the
 * caller can say it (a VEN "says what it tolerated").
 */
#ifndef PFI_CTL_TIME_H
#define PFI_CTL_TIME_H

#include "pfi/error.h"

enum {
    PFI_TIME_NOW = 1u << 0,        /* the spec's "0001-01-01" start: means now */
    PFI_TIME_NO_SECONDS = 1u << 1, /* "2024-01-01T13:37Z": seconds left out (tolerated) */
    PFI_TIME_INFINITE = 1u << 2,   /* duration P9999Y: no end */
    PFI_TIME_MONTHS = 1u << 3,     /* duration with months (discouraged; 30 days each) */
};

/* RFC 3339 "YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)" ('t', ' ' and 'z'
 * accepted) to Unix seconds. A start in year 1 means now: *unix_s = now and
 * PFI_TIME_NOW is set; a bare date "0001-01-01" is accepted for it too.
 * PFI_EPARSE (err says why) for anything else, including a time without a
 * date ("14:13:26") or an out-of-range field (month 13, Feb 30, hour 24). */
int pfi_time_parse(const char *s, double now, double *unix_s, unsigned *flags, pfi_error *err);

/* ISO 8601 duration "PnYnMnWnDTnHnMnS" (each part optional, at least one,
 * decimals allowed, e.g. PT30M, PT0S, P1W, P0Y0M0DT1H0M0S) to seconds. A year
 * is 365 days, a month 30 (PFI_TIME_MONTHS). 9999 years or more is infinity
 * (*seconds = INFINITY, PFI_TIME_INFINITE). PFI_EPARSE for anything else. */
int pfi_duration_parse(const char *s, double *seconds, unsigned *flags, pfi_error *err);

/* Writes t (Unix seconds) as "YYYY-MM-DDTHH:MM:SSZ" into buf (>= 21 bytes),
 * whole seconds (rounded down). */
void pfi_time_format(double t, char *buf, size_t len);

/* Writes seconds as "PTnS" (whole, or to the millisecond) into buf. */
void pfi_duration_format(double seconds, char *buf, size_t len);

#endif
