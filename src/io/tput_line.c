/* Throughput from log lines (see include/io/pfi/tput_line.h). */
#include "pfi/tput_line.h"

#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name, *re;
} presets[] = {
    {"hf", "['\"](train_)?tokens_per_second['\"]: *([0-9][0-9.eE+-]*)"},
    {"torchtitan", "(tps|wps): *([0-9][0-9,]*(\\.[0-9]+)?)"},
};

struct pfi_tput_matcher {
    regex_t re;
    int group; /* the submatch holding the number */
};

int pfi_tput_matcher_create(const char *spec, pfi_tput_matcher **out, pfi_error *err)
{
    *out = NULL;
    const char *re = spec;
    int group = -1;
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(spec, presets[i].name) == 0) {
            re = presets[i].re;
            group = 2; /* both presets put the number in their second group */
        }
    pfi_tput_matcher *m = calloc(1, sizeof *m);
    if (!m) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int rc = regcomp(&m->re, re, REG_EXTENDED);
    if (rc != 0) {
        char msg[256];
        regerror(rc, &m->re, msg, sizeof msg);
        free(m);
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "throughput regex '%s': %s", spec, msg);
    }
    m->group = group >= 0 ? group : m->re.re_nsub >= 1 ? 1 : 0;
    *out = m;
    return PFI_OK;
}

void pfi_tput_matcher_destroy(pfi_tput_matcher *m)
{
    if (!m) return;
    regfree(&m->re);
    free(m);
}

int pfi_tput_matcher_match(const pfi_tput_matcher *m, const char *line, size_t len, double *tok_s)
{
    char buf[4096];
    if (len >= sizeof buf) len = sizeof buf - 1; /* a log line longer than this is cut */
    memcpy(buf, line, len);
    buf[len] = '\0';
    regmatch_t sub[10];
    if (regexec(&m->re, buf, 10, sub, 0) != 0) return 0;
    regmatch_t g = sub[m->group];
    if (g.rm_so < 0) return 0;
    /* the number without its thousands separators */
    char num[64];
    size_t k = 0;
    for (regoff_t i = g.rm_so; i < g.rm_eo && k + 1 < sizeof num; i++)
        if (buf[i] != ',') num[k++] = buf[i];
    num[k] = '\0';
    char *end;
    double v = strtod(num, &end);
    if (end == num || *end != '\0' || !isfinite(v) || v < 0) return 0;
    *tok_s = v;
    return 1;
}
