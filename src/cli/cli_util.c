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

/* A comma-separated list of finite numbers; with `reductions`, each may end
 * in '%' (divided by 100) and must land in [0, 1). Hex floats are refused. */
static int parse_list(const char *s, int reductions, double **out, size_t *n)
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
        char *end;
        errno = 0;
        v[i] = strtod(p, &end);
        int bad = end == p || errno || !isfinite(v[i]);
        if (reductions) {
            if (!bad && *end == '%') {
                v[i] /= 100;
                end++;
            }
            bad |= (d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) || !(v[i] >= 0 && v[i] < 1);
        }
        if (bad || (*end != ',' && *end != '\0')) {
            free(v);
            return -1;
        }
        p = end + (*end == ',');
    }
    *out = v;
    *n = cap;
    return 0;
}

int pfi_cli_parse_doubles(const char *s, double **out, size_t *n)
{
    return parse_list(s, 0, out, n);
}

int pfi_cli_parse_reductions(const char *s, double **out, size_t *n)
{
    return parse_list(s, 1, out, n);
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
