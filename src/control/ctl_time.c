/* RFC 3339 times and ISO 8601 durations (include/control/pfi/ctl_time.h).
 * Hand-written because libc has no RFC 3339 parser (strptime has no
 * fractions or offsets and timegm is not POSIX); the calendar arithmetic is
 * Howard Hinnant's days_from_civil. */
#include "pfi/ctl_time.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long long)doe - 719468;
}

static int leap(long y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Reads exactly n digits at *p into *v. */
static int digits(const char **p, int n, long *v)
{
    long x = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i])) return -1;
        x = x * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *v = x;
    return 0;
}

static int bad_time(pfi_error *err, const char *s, const char *why)
{
    return pfi_error_set(err, PFI_EPARSE, NULL, 0, "'%.64s' is not an RFC 3339 date-time: %s", s,
                         why);
}

int pfi_time_parse(const char *s, double now, double *unix_s, unsigned *flags, pfi_error *err)
{
    unsigned fl = 0;
    const char *p = s;
    long y, mo, d, h = 0, mi = 0, sec = 0;
    if (!s) return bad_time(err, "", "missing");
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' || digits(&p, 2, &d))
        return bad_time(err, s, "expected YYYY-MM-DD first");
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12) return bad_time(err, s, "month out of range");
    if (d < 1 || d > mdays[mo - 1] + (mo == 2 && leap(y)))
        return bad_time(err, s, "day out of range");
    if (y == 1 && *p == '\0') {
        *unix_s = now;
        if (flags) *flags = PFI_TIME_NOW;
        return PFI_OK;
    }
    if (*p != 'T' && *p != 't' && *p != ' ') return bad_time(err, s, "expected 'T' after the date");
    p++;
    if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi))
        return bad_time(err, s, "expected HH:MM after the date");
    double frac = 0;
    if (*p == ':') {
        p++;
        if (digits(&p, 2, &sec)) return bad_time(err, s, "expected two digits of seconds");
        if (*p == '.') {
            const char *f = ++p;
            double scale = 0.1;
            while (isdigit((unsigned char)*p)) {
                frac += (*p - '0') * scale;
                scale /= 10;
                p++;
            }
            if (p == f) return bad_time(err, s, "no digits after the decimal point");
        }
    } else {
        fl |= PFI_TIME_NO_SECONDS;
    }
    if (h > 23 || mi > 59 || sec > 60) return bad_time(err, s, "time of day out of range");
    long off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        long oh, om;
        if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om) || oh > 23 || om > 59)
            return bad_time(err, s, "bad UTC offset (expected +HH:MM)");
        off = sign * (oh * 3600 + om * 60);
    } else {
        return bad_time(err, s, "missing UTC offset ('Z' or +HH:MM)");
    }
    if (*p != '\0') return bad_time(err, s, "trailing characters");
    if (y == 1) {
        *unix_s = now;
        fl |= PFI_TIME_NOW;
    } else {
        long long days = days_from_civil(y, (unsigned)mo, (unsigned)d);
        *unix_s = (double)(days * 86400 + h * 3600 + mi * 60 + sec - off) + frac;
    }
    if (flags) *flags = fl;
    return PFI_OK;
}

static int bad_duration(pfi_error *err, const char *s, const char *why)
{
    return pfi_error_set(err, PFI_EPARSE, NULL, 0, "'%.64s' is not an ISO 8601 duration: %s", s,
                         why);
}

int pfi_duration_parse(const char *s, double *seconds, unsigned *flags, pfi_error *err)
{
    /* Designators in the order ISO 8601 requires, before and after 'T'. */
    static const char date_des[] = "YMWD", time_des[] = "HMS";
    static const double date_s[] = {365 * 86400.0, 30 * 86400.0, 7 * 86400.0, 86400.0};
    static const double time_s[] = {3600.0, 60.0, 1.0};
    unsigned fl = 0;
    if (!s || (s[0] != 'P' && s[0] != 'p'))
        return bad_duration(err, s ? s : "", "must start with 'P'");
    const char *p = s + 1;
    int in_time = 0, parts = 0, next = 0;
    double total = 0, years = 0;
    while (*p) {
        if (*p == 'T' || *p == 't') {
            if (in_time) return bad_duration(err, s, "a second 'T'");
            in_time = 1;
            next = 0;
            p++;
            if (!*p) return bad_duration(err, s, "nothing after 'T'");
            continue;
        }
        if (!isdigit((unsigned char)*p)) return bad_duration(err, s, "expected a number");
        char *end;
        double v = strtod(p, &end);
        if (!isfinite(v) || v < 0) return bad_duration(err, s, "bad number");
        /* strtod would take exponents and hex; durations have only digits and one '.' or ','. */
        for (const char *q = p; q < end; q++)
            if (!isdigit((unsigned char)*q) && *q != '.') return bad_duration(err, s, "bad number");
        const char *des = in_time ? time_des : date_des;
        const double *mul = in_time ? time_s : date_s;
        const char *hit = *end ? strchr(des + next, toupper((unsigned char)*end)) : NULL;
        if (!hit) return bad_duration(err, s, "a part out of order or without a designator");
        size_t k = (size_t)(hit - des);
        if (!in_time && k == 0) years += v;
        if (!in_time && k == 1 && v > 0) fl |= PFI_TIME_MONTHS;
        total += v * mul[k];
        next = (int)k + 1;
        parts++;
        p = end + 1;
    }
    if (parts == 0) return bad_duration(err, s, "no parts");
    if (years >= 9999) {
        total = INFINITY;
        fl |= PFI_TIME_INFINITE;
    }
    *seconds = total;
    if (flags) *flags = fl;
    return PFI_OK;
}

void pfi_time_format(double t, char *buf, size_t len)
{
    long long z = (long long)floor(t);
    long long days = z >= 0 ? z / 86400 : -((-z + 86399) / 86400);
    long long rem = z - days * 86400;
    /* civil_from_days (Hinnant). */
    long long zz = days + 719468;
    long long era = (zz >= 0 ? zz : zz - 146096) / 146097;
    unsigned doe = (unsigned)(zz - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long y = (long long)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    unsigned d = doy - (153 * mp + 2) / 5 + 1;
    unsigned m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    snprintf(buf, len, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ", y, m, d, rem / 3600, rem / 60 % 60,
             rem % 60);
}

void pfi_duration_format(double seconds, char *buf, size_t len)
{
    if (seconds == floor(seconds))
        snprintf(buf, len, "PT%.0fS", seconds);
    else
        snprintf(buf, len, "PT%.3fS", seconds);
}
