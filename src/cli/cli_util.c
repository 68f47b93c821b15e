#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pfi_cli_fail(const char *cmd, const pfi_error *err)
{
    char buf[1024];
    pfi_error_format(err, buf, sizeof buf);
    fprintf(stderr, "pfi %s: %s\n", cmd, buf);
    return PFI_EXIT_DATA;
}

int pfi_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "pfi %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'pfi %s --help'.\n", cmd);
    return PFI_EXIT_USAGE;
}

int pfi_cli_parse_doubles(const char *s, double **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        if (*p == ',') cap++;
    double *v = malloc(cap * sizeof *v);
    if (!v) return -1;
    const char *p = s;
    for (size_t i = 0; i < cap; i++) {
        char *end;
        errno = 0;
        v[i] = strtod(p, &end);
        if (end == p || errno || !isfinite(v[i]) || (*end != ',' && *end != '\0')) {
            free(v);
            return -1;
        }
        p = end + (*end == ',');
    }
    *out = v;
    *n = cap;
    return 0;
}

int pfi_cli_parse_reductions(const char *s, double **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        if (*p == ',') cap++;
    double *v = malloc(cap * sizeof *v);
    if (!v) return -1;
    const char *p = s;
    for (size_t i = 0; i < cap; i++) {
        const char *d = p + (*p == '+' || *p == '-');
        if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) { /* no hex floats */
            free(v);
            return -1;
        }
        char *end;
        errno = 0;
        v[i] = strtod(p, &end);
        int pct = end != p && *end == '%';
        if (pct) {
            v[i] /= 100;
            end++;
        }
        if (end == p || errno || !isfinite(v[i]) || (*end != ',' && *end != '\0') ||
            !(v[i] >= 0 && v[i] < 1)) {
            free(v);
            return -1;
        }
        p = end + (*end == ',');
    }
    *out = v;
    *n = cap;
    return 0;
}

int pfi_cli_parse_double(const char *s, double *out)
{
    double *v;
    size_t n;
    if (pfi_cli_parse_doubles(s, &v, &n)) return -1;
    int ok = n == 1;
    if (ok) *out = v[0];
    free(v);
    return ok ? 0 : -1;
}

int pfi_cli_parse_ulong(const char *s, unsigned long long *out)
{
    if (!s || !*s || *s == '-' || *s == '+') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || errno) return -1;
    *out = v;
    return 0;
}

int pfi_cli_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    return n > 8 ? 8 : (int)n;
}
