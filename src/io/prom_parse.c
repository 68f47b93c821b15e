/* Prometheus text exposition format (0.0.4) parser, one line at a time, with
 * the rules of the reference parser (prometheus/common expfmt): blanks are
 * spaces and tabs, escapes are checked, names are checked.
 *
 * Storage: every string is unescaped into one pool sized from the input
 * (an unescaped string is never longer than its source text, and every line
 * holding a stored string has at least as many unstored bytes as strings),
 * so strings never move; labels and series grow in arrays and get their
 * pointers once parsing is done.
 */
#include "pfi/prom.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pfi/utf8.h"

typedef struct {
    size_t name, value; /* pool offsets */
} label_off;

typedef struct {
    size_t name;
    size_t first_label, n_labels;
    double value;
    int has_ts;
    int64_t ts;
    long line;
} series_off;

typedef struct {
    size_t name;
    size_t help, type; /* pool offsets, NONE when absent */
} meta_off;

struct pfi_prom_doc {
    char *pool;
    size_t pool_len, pool_cap;
    label_off *lo;
    size_t n_lo, cap_lo;
    series_off *so;
    size_t n_so, cap_so;
    meta_off *mo;
    size_t n_mo, cap_mo;
    /* Built at the end. */
    pfi_prom_label *labels;
    pfi_prom_series *series;
    pfi_prom_meta *meta;
};

#define NONE ((size_t)-1)

void pfi_prom_doc_destroy(pfi_prom_doc *d)
{
    if (!d) return;
    free(d->pool);
    free(d->lo);
    free(d->so);
    free(d->mo);
    free(d->labels);
    free(d->series);
    free(d->meta);
    free(d);
}

static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 16;
    void *q = realloc(*p, nc * elem);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

typedef struct {
    pfi_prom_doc *d;
    const char *name;
    pfi_error *err;
    const char *s; /* the current line */
    size_t n, i;   /* its length, the cursor */
    long line;
} parser;

static int fail(parser *p, const char *fmt, const char *what)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, what);
    return pfi_error_set(p->err, PFI_EPARSE, p->name, p->line, "%s (column %zu)", msg, p->i + 1);
}

static void blanks(parser *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t'))
        p->i++;
}

static int at_end(const parser *p)
{
    return p->i >= p->n;
}

/* Appends a string of at most max bytes and returns its offset; the pool
 * was sized so that this cannot overflow (checked anyway). */
static size_t pool_begin(parser *p)
{
    return p->d->pool_len;
}

static int pool_put(parser *p, char c)
{
    if (p->d->pool_len + 1 >= p->d->pool_cap) return -1;
    p->d->pool[p->d->pool_len++] = c;
    return 0;
}

static int pool_end(parser *p)
{
    if (p->d->pool_len >= p->d->pool_cap) return -1;
    p->d->pool[p->d->pool_len++] = '\0';
    return 0;
}

static int is_name_start(char c, int metric)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (metric && c == ':');
}

static int is_name_char(char c, int metric)
{
    return is_name_start(c, metric) || (c >= '0' && c <= '9');
}

/* Reads a metric (metric=1) or label name into the pool. */
static int read_name(parser *p, int metric, size_t *off)
{
    if (at_end(p) || !is_name_start(p->s[p->i], metric))
        return fail(p, "expected a %s name", metric ? "metric" : "label");
    *off = pool_begin(p);
    while (!at_end(p) && is_name_char(p->s[p->i], metric))
        if (pool_put(p, p->s[p->i++]) != 0) return fail(p, "%s", "internal: pool full");
    if (pool_end(p) != 0) return fail(p, "%s", "internal: pool full");
    return PFI_OK;
}

/* Reads a float token: decimal numbers, NaN and +-Inf (any case). */
static int read_value(parser *p, double *v)
{
    size_t st = p->i;
    while (!at_end(p) && p->s[p->i] != ' ' && p->s[p->i] != '\t')
        p->i++;
    size_t len = p->i - st;
    char tok[64];
    if (len == 0) return fail(p, "%s", "expected a value");
    if (len >= sizeof tok) {
        p->i = st;
        return fail(p, "%s", "value too long");
    }
    memcpy(tok, p->s + st, len);
    tok[len] = '\0';
    const char *t = tok;
    int neg = 0;
    if (*t == '+' || *t == '-') neg = *t++ == '-';
    if (strcasecmp(t, "nan") == 0) {
        *v = NAN;
        return PFI_OK;
    }
    if (strcasecmp(t, "inf") == 0 || strcasecmp(t, "infinity") == 0) {
        *v = neg ? -INFINITY : INFINITY;
        return PFI_OK;
    }
    /* Only plain decimal syntax: strtod would also take hex and "nan(...)". */
    int digits = 0;
    for (const char *c = t; *c; c++) {
        if (*c >= '0' && *c <= '9')
            digits = 1;
        else if (!strchr(".eE+-", *c))
            break;
    }
    if (t[strspn(t, "0123456789.eE+-")] != '\0') digits = 0;
    char *end = NULL;
    errno = 0;
    double x = strtod(tok, &end);
    if (digits <= 0 || *end) {
        p->i = st;
        return fail(p, "value '%s' is not a number", tok);
    }
    if (errno == ERANGE && isinf(x)) { /* Go's ParseFloat refuses overflow too */
        p->i = st;
        return fail(p, "value '%s' is out of range", tok);
    }
    *v = x;
    return PFI_OK;
}

static int read_timestamp(parser *p, int64_t *ts)
{
    size_t st = p->i;
    int neg = 0;
    if (!at_end(p) && (p->s[p->i] == '-' || p->s[p->i] == '+')) neg = p->s[p->i++] == '-';
    if (at_end(p) || p->s[p->i] < '0' || p->s[p->i] > '9') {
        p->i = st;
        return fail(p, "%s", "timestamp is not an integer");
    }
    uint64_t acc = 0;
    while (!at_end(p) && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
        unsigned dgt = (unsigned)(p->s[p->i] - '0');
        if (acc > (UINT64_C(9223372036854775807) - dgt) / 10) {
            p->i = st;
            return fail(p, "%s", "timestamp out of range");
        }
        acc = acc * 10 + dgt;
        p->i++;
    }
    if (!at_end(p) && p->s[p->i] != ' ' && p->s[p->i] != '\t') {
        return fail(p, "%s", "timestamp is not an integer");
    }
    *ts = neg ? -(int64_t)acc : (int64_t)acc;
    return PFI_OK;
}

static meta_off *find_meta(pfi_prom_doc *d, const char *name)
{
    for (size_t k = 0; k < d->n_mo; k++)
        if (strcmp(d->pool + d->mo[k].name, name) == 0) return &d->mo[k];
    return NULL;
}

static int comment_line(parser *p)
{
    pfi_prom_doc *d = p->d;
    p->i++; /* '#' */
    blanks(p);
    size_t st = p->i;
    while (!at_end(p) && p->s[p->i] != ' ' && p->s[p->i] != '\t')
        p->i++;
    size_t kl = p->i - st;
    int help = kl == 4 && memcmp(p->s + st, "HELP", 4) == 0;
    int type = kl == 4 && memcmp(p->s + st, "TYPE", 4) == 0;
    if (!help && !type) return PFI_OK; /* a plain comment */
    blanks(p);
    size_t name_off;
    int rc = read_name(p, 1, &name_off);
    if (rc != PFI_OK) return rc;
    if (!at_end(p) && p->s[p->i] != ' ' && p->s[p->i] != '\t')
        return fail(p, "%s", "bad character in metric name");
    blanks(p);
    const char *name = d->pool + name_off;
    meta_off *m = find_meta(d, name);
    if (!m) {
        if (grow((void **)&d->mo, &d->cap_mo, d->n_mo, sizeof *d->mo) != 0)
            return pfi_error_set(p->err, PFI_ENOMEM, p->name, p->line, "out of memory");
        m = &d->mo[d->n_mo++];
        *m = (meta_off){.name = name_off, .help = NONE, .type = NONE};
    }
    if (help) {
        if (m->help != NONE) return fail(p, "second HELP line for %s", name);
        m->help = pool_begin(p);
        while (!at_end(p)) {
            char c = p->s[p->i++];
            if (c == '\\') {
                if (at_end(p)) return fail(p, "%s", "HELP text ends in a lone backslash");
                char e = p->s[p->i++];
                if (e == '\\')
                    c = '\\';
                else if (e == 'n')
                    c = '\n';
                else
                    return fail(p, "%s", "invalid escape in HELP text (only \\\\ and \\n)");
            }
            if (pool_put(p, c) != 0) return fail(p, "%s", "internal: pool full");
        }
        if (pool_end(p) != 0) return fail(p, "%s", "internal: pool full");
        return PFI_OK;
    }
    if (m->type != NONE) return fail(p, "second TYPE line for %s", name);
    for (size_t k = 0; k < d->n_so; k++)
        if (strcmp(d->pool + d->so[k].name, name) == 0)
            return fail(p, "TYPE line for %s after its samples", name);
    st = p->i;
    while (!at_end(p) && p->s[p->i] != ' ' && p->s[p->i] != '\t')
        p->i++;
    size_t tl = p->i - st;
    static const char *const types[] = {"counter", "gauge", "histogram", "summary", "untyped"};
    int ok = 0;
    for (size_t k = 0; k < 5; k++)
        if (tl == strlen(types[k]) && memcmp(p->s + st, types[k], tl) == 0) ok = 1;
    if (!ok) {
        p->i = st;
        return fail(p, "%s", "unknown metric type (counter, gauge, histogram, summary, untyped)");
    }
    blanks(p);
    if (!at_end(p)) return fail(p, "%s", "text after the metric type");
    m->type = pool_begin(p);
    for (size_t k = 0; k < tl; k++)
        if (pool_put(p, p->s[st + k]) != 0) return fail(p, "%s", "internal: pool full");
    if (pool_end(p) != 0) return fail(p, "%s", "internal: pool full");
    return PFI_OK;
}

static int label_value(parser *p, size_t *off)
{
    if (at_end(p) || p->s[p->i] != '"') return fail(p, "%s", "expected '\"' to open a label value");
    p->i++;
    *off = pool_begin(p);
    for (;;) {
        if (at_end(p)) return fail(p, "%s", "unterminated label value");
        char c = p->s[p->i++];
        if (c == '"') break;
        if (c == '\\') {
            if (at_end(p)) return fail(p, "%s", "unterminated label value");
            char e = p->s[p->i++];
            if (e == '\\' || e == '"')
                c = e;
            else if (e == 'n')
                c = '\n';
            else {
                p->i--;
                return fail(p, "%s", "invalid escape in label value (only \\\\, \\\" and \\n)");
            }
        }
        if (pool_put(p, c) != 0) return fail(p, "%s", "internal: pool full");
    }
    if (pool_end(p) != 0) return fail(p, "%s", "internal: pool full");
    return PFI_OK;
}

static int sample_line(parser *p)
{
    pfi_prom_doc *d = p->d;
    series_off so = {.first_label = d->n_lo, .line = p->line};
    int rc = read_name(p, 1, &so.name);
    if (rc != PFI_OK) return rc;
    size_t before = p->i; /* a blank must separate the name or labels from the value */
    blanks(p);
    if (!at_end(p) && p->s[p->i] == '{') {
        p->i++;
        for (;;) {
            blanks(p);
            if (!at_end(p) && p->s[p->i] == '}') {
                p->i++;
                break;
            }
            label_off lo;
            if ((rc = read_name(p, 0, &lo.name)) != PFI_OK) return rc;
            blanks(p);
            if (at_end(p) || p->s[p->i] != '=')
                return fail(p, "%s", "expected '=' after label name");
            p->i++;
            blanks(p);
            if ((rc = label_value(p, &lo.value)) != PFI_OK) return rc;
            for (size_t k = so.first_label; k < d->n_lo; k++)
                if (strcmp(d->pool + d->lo[k].name, d->pool + lo.name) == 0)
                    return fail(p, "duplicate label %s", d->pool + lo.name);
            if (grow((void **)&d->lo, &d->cap_lo, d->n_lo, sizeof *d->lo) != 0)
                return pfi_error_set(p->err, PFI_ENOMEM, p->name, p->line, "out of memory");
            d->lo[d->n_lo++] = lo;
            so.n_labels++;
            blanks(p);
            if (!at_end(p) && p->s[p->i] == ',') {
                p->i++;
                continue;
            }
            if (!at_end(p) && p->s[p->i] == '}') {
                p->i++;
                break;
            }
            return fail(p, "%s", "expected ',' or '}' after a label");
        }
        before = p->i;
        blanks(p);
    }
    if (p->i == before && !at_end(p)) return fail(p, "%s", "bad character after the metric name");
    if ((rc = read_value(p, &so.value)) != PFI_OK) return rc;
    blanks(p);
    if (!at_end(p)) {
        if ((rc = read_timestamp(p, &so.ts)) != PFI_OK) return rc;
        so.has_ts = 1;
        blanks(p);
        if (!at_end(p)) return fail(p, "%s", "text after the timestamp");
    }
    if (grow((void **)&d->so, &d->cap_so, d->n_so, sizeof *d->so) != 0)
        return pfi_error_set(p->err, PFI_ENOMEM, p->name, p->line, "out of memory");
    d->so[d->n_so++] = so;
    return PFI_OK;
}

/* Lays out the public arrays once every offset is final. */
static int finish(pfi_prom_doc *d)
{
    d->labels = malloc((d->n_lo ? d->n_lo : 1) * sizeof *d->labels);
    d->series = malloc((d->n_so ? d->n_so : 1) * sizeof *d->series);
    d->meta = malloc((d->n_mo ? d->n_mo : 1) * sizeof *d->meta);
    if (!d->labels || !d->series || !d->meta) return PFI_ENOMEM;
    for (size_t k = 0; k < d->n_lo; k++)
        d->labels[k] = (pfi_prom_label){d->pool + d->lo[k].name, d->pool + d->lo[k].value};
    for (size_t k = 0; k < d->n_so; k++) {
        const series_off *o = &d->so[k];
        d->series[k] = (pfi_prom_series){.name = d->pool + o->name,
                                         .labels = d->labels + o->first_label,
                                         .n_labels = o->n_labels,
                                         .value = o->value,
                                         .has_timestamp = o->has_ts,
                                         .timestamp_ms = o->ts,
                                         .line = o->line};
    }
    for (size_t k = 0; k < d->n_mo; k++) {
        const meta_off *o = &d->mo[k];
        d->meta[k] = (pfi_prom_meta){d->pool + o->name, o->help == NONE ? NULL : d->pool + o->help,
                                     o->type == NONE ? NULL : d->pool + o->type};
    }
    return PFI_OK;
}

int pfi_prom_parse(const char *buf, size_t len, const char *name, pfi_prom_doc **out,
                   pfi_error *err)
{
    *out = NULL;
    if (!name) name = "metrics";
    size_t bad;
    if (!pfi_utf8_valid(buf, len, &bad)) {
        long line = 1;
        for (size_t k = 0; k < bad; k++)
            if (buf[k] == '\n') line++;
        return pfi_error_set(err, PFI_EPARSE, name, line,
                             "not UTF-8 text (a NUL or invalid byte at offset %zu)", bad);
    }
    pfi_prom_doc *d = calloc(1, sizeof *d);
    if (!d) return pfi_error_set(err, PFI_ENOMEM, name, 0, "out of memory");
    d->pool_cap = len + 2;
    d->pool = malloc(d->pool_cap);
    if (!d->pool) {
        pfi_prom_doc_destroy(d);
        return pfi_error_set(err, PFI_ENOMEM, name, 0, "out of memory");
    }
    parser p = {.d = d, .name = name, .err = err};
    size_t pos = 0;
    int rc = PFI_OK;
    while (pos < len && rc == PFI_OK) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len;
        p.s = buf + pos;
        p.n = end - pos;
        p.i = 0;
        p.line++;
        if (p.n > 0 && p.s[p.n - 1] == '\r') p.n--;
        blanks(&p);
        if (!at_end(&p)) rc = p.s[p.i] == '#' ? comment_line(&p) : sample_line(&p);
        pos = end + 1;
    }
    if (rc == PFI_OK && finish(d) != PFI_OK)
        rc = pfi_error_set(err, PFI_ENOMEM, name, 0, "out of memory");
    if (rc != PFI_OK) {
        pfi_prom_doc_destroy(d);
        return rc;
    }
    *out = d;
    return PFI_OK;
}

size_t pfi_prom_doc_series_count(const pfi_prom_doc *d)
{
    return d ? d->n_so : 0;
}

const pfi_prom_series *pfi_prom_doc_series(const pfi_prom_doc *d, size_t i)
{
    return d && i < d->n_so ? &d->series[i] : NULL;
}

size_t pfi_prom_doc_meta_count(const pfi_prom_doc *d)
{
    return d ? d->n_mo : 0;
}

const pfi_prom_meta *pfi_prom_doc_meta(const pfi_prom_doc *d, size_t i)
{
    return d && i < d->n_mo ? &d->meta[i] : NULL;
}

const pfi_prom_meta *pfi_prom_doc_find_meta(const pfi_prom_doc *d, const char *name)
{
    for (size_t k = 0; d && k < d->n_mo; k++)
        if (strcmp(d->meta[k].name, name) == 0) return &d->meta[k];
    return NULL;
}

const char *pfi_prom_series_label(const pfi_prom_series *s, const char *name)
{
    for (size_t k = 0; s && k < s->n_labels; k++)
        if (strcmp(s->labels[k].name, name) == 0) return s->labels[k].value;
    return NULL;
}

int pfi_prom_dcgm_blank(double v)
{
    /* DCGM_INT64_BLANK = 0x7ffffffffffffff0 (+1 not found, +2 not supported,
     * +3 no permission): all round to ~9.2234e18 as doubles.
     * DCGM_INT32_BLANK = 0x7ffffff0 (+1..+3). DCGM_FP64_BLANK = 2^47 (+1..+3). */
    if (v >= 9.2233720368547748e18) return 1;
    if (v >= 2147483632.0 && v <= 2147483635.0) return 1;
    if (v >= 140737488355328.0 && v <= 140737488355331.0) return 1;
    return 0;
}
