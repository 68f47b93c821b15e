/* Prometheus text format writer (see include/io/pfi/prom_emit.h). */
#include "pfi/prom_emit.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *type_name(pfi_prom_type t)
{
    switch (t) {
    case PFI_PROM_GAUGE:
        return "gauge";
    case PFI_PROM_COUNTER:
        return "counter";
    default:
        return "untyped";
    }
}

#ifndef NDEBUG
/* [a-zA-Z_:][a-zA-Z0-9_:]* for metrics; labels the same without ':'. */
static int valid_name(const char *s, int colon_ok)
{
    if (!*s || (*s >= '0' && *s <= '9')) return 0;
    for (; *s; s++) {
        char c = *s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || (colon_ok && c == ':')))
            return 0;
    }
    return 1;
}
#endif

void pfi_prom_family(FILE *f, const char *name, pfi_prom_type type, const char *help)
{
    assert(valid_name(name, 1));
    fprintf(f, "# HELP %s ", name);
    for (const char *p = help; *p; p++) {
        if (*p == '\\')
            fputs("\\\\", f);
        else if (*p == '\n')
            fputs("\\n", f);
        else
            fputc(*p, f);
    }
    fprintf(f, "\n# TYPE %s %s\n", name, type_name(type));
}

void pfi_prom_escape_label(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\\\", f);
        else if (*s == '"')
            fputs("\\\"", f);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

int pfi_prom_sample(FILE *f, const char *name, const char *const *labels, double value)
{
    if (!isfinite(value)) return 0;
    fputs(name, f);
    if (labels && labels[0]) {
        fputc('{', f);
        for (size_t i = 0; labels[i]; i += 2) {
            assert(valid_name(labels[i], 0) && labels[i + 1]);
            if (i) fputc(',', f);
            fprintf(f, "%s=\"", labels[i]);
            pfi_prom_escape_label(f, labels[i + 1]);
            fputc('"', f);
        }
        fputc('}', f);
    }
    /* The shortest text that reads back as the same double (what the Go
     * client's FormatFloat(v, 'g', -1) gives): 15 digits when they suffice,
     * else 17. Integers print without an exponent up to 1e15. */
    char txt[40];
    if (value == floor(value) && fabs(value) < 1e15)
        snprintf(txt, sizeof txt, "%.0f", value);
    else {
        snprintf(txt, sizeof txt, "%.15g", value);
        if (strtod(txt, NULL) != value) snprintf(txt, sizeof txt, "%.17g", value);
    }
    fprintf(f, " %s\n", txt);
    return 1;
}
