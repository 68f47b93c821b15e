/* Prometheus instant-query answers in one pass (include/control/pfi/prom_vector.h).
 * Kept over Jansson because it pays in the controller's period
 * (bench/bench_json_choice, json_prom_vector, 2 loaded cores, medians of 7):
 * a vector of 100,000 series (13.2 MB) read in 0.076 s against 1.24 s with
 * Jansson's DOM (16x, 11.7 us a series); parsing is 46 of the period's 80 ms
 * at 10,000 jobs (bench_control_prom), so Jansson would make it ~0.8 s. */
#include "pfi/prom_vector.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/json_escape.h"
#include "pfi/utf8.h"

#define MAX_DEPTH 64

typedef struct parser {
    const char *s, *p, *e;
    pfi_error *err;
    int rc;
    pfi_prom_vec *v;
    const char *const *keep;
    size_t n_keep;
} parser;

static int fail(parser *P, int code, const char *what)
{
    if (P->rc == PFI_OK)
        P->rc = pfi_error_set(P->err, code, NULL, 0, "Prometheus answer, byte %zu: %s",
                              (size_t)(P->p - P->s), what);
    return P->rc;
}

static void ws(parser *P)
{
    while (P->p < P->e && (*P->p == ' ' || *P->p == '\n' || *P->p == '\r' || *P->p == '\t'))
        P->p++;
}

static int expect(parser *P, char c)
{
    if (P->p < P->e && *P->p == c) { /* the usual case: no blank before it */
        P->p++;
        return PFI_OK;
    }
    ws(P);
    if (P->p >= P->e || *P->p != c) {
        char m[32];
        snprintf(m, sizeof m, "expected '%c'", c);
        return fail(P, PFI_EPARSE, m);
    }
    P->p++;
    return PFI_OK;
}

/* Is the next non-blank byte c? Consumes it if so. */
static int take(parser *P, char c)
{
    if (P->p < P->e && *P->p == c) {
        P->p++;
        return 1;
    }
    ws(P);
    if (P->p < P->e && *P->p == c) {
        P->p++;
        return 1;
    }
    return 0;
}

static int grow_text(parser *P, size_t more)
{
    pfi_prom_vec *v = P->v;
    if (v->text_len + more + 1 <= v->text_cap) return PFI_OK;
    size_t c = v->text_cap ? v->text_cap : 4096;
    while (c < v->text_len + more + 1)
        c *= 2;
    char *t = realloc(v->text, c);
    if (!t) return fail(P, PFI_ENOMEM, "out of memory");
    v->text = t;
    v->text_cap = c;
    return PFI_OK;
}

/* A string at P->p (after blanks). Validated; when out is non-NULL its
 * decoded bytes are appended to the vector's text (NUL-terminated) and
 * *out is their offset. raw and raw_len give the undecoded span when it has
 * no escapes (raw is NULL otherwise): keys are compared on it. */
static int string(parser *P, size_t *out, const char **raw, size_t *raw_len)
{
    if (expect(P, '"') != PFI_OK) return P->rc;
    const char *b = P->p;
    int esc = 0;
    size_t start = 0;
    if (out) {
        if (grow_text(P, 0) != PFI_OK) return P->rc;
        start = P->v->text_len;
    }
    for (;;) {
        const char *q = P->p;
        /* the common run: printable ASCII but '"' and '\\' (one load a byte;
         * 8 bytes a word was slower on strings this short) */
        while (q < P->e && pfi_json_plain[(unsigned char)*q])
            q++;
        if (out && q > P->p) {
            if (grow_text(P, (size_t)(q - P->p)) != PFI_OK) return P->rc;
            memcpy(P->v->text + P->v->text_len, P->p, (size_t)(q - P->p));
            P->v->text_len += (size_t)(q - P->p);
        }
        P->p = q;
        if (P->p >= P->e) return fail(P, PFI_EPARSE, "unterminated string");
        unsigned char c = (unsigned char)*P->p;
        if (c == '"') break;
        if (c < 0x20) return fail(P, PFI_EPARSE, "a control character in a string");
        if (c >= 0x80) {
            /* a run of non-ASCII bytes: whole UTF-8 sequences */
            const char *r = P->p;
            while (r < P->e && (unsigned char)*r >= 0x80)
                r++;
            size_t n = (size_t)(r - P->p);
            if (!pfi_utf8_valid(P->p, n, NULL))
                return fail(P, PFI_EPARSE, "a string is not valid UTF-8");
            if (out) {
                if (grow_text(P, n) != PFI_OK) return P->rc;
                memcpy(P->v->text + P->v->text_len, P->p, n);
                P->v->text_len += n;
            }
            P->p += n;
            continue;
        }
        /* an escape */
        esc = 1;
        if (P->e - P->p < 2) return fail(P, PFI_EPARSE, "unterminated string");
        char d[4];
        size_t dn;
        int took = pfi_json_escape(P->p, P->e, d, &dn);
        switch (took) {
        case PFI_JESC_BAD_U:
            return fail(P, PFI_EPARSE, "a bad \\u escape");
        case PFI_JESC_LONE_LOW:
            return fail(P, PFI_EPARSE, "a lone low surrogate");
        case PFI_JESC_NO_LOW:
            return fail(P, PFI_EPARSE, "a high surrogate without its low half");
        case PFI_JESC_NUL:
            return fail(P, PFI_EINVAL, "a NUL character in a string");
        }
        if (took < 0) return fail(P, PFI_EPARSE, "a bad escape");
        P->p += took;
        if (out) {
            if (grow_text(P, dn) != PFI_OK) return P->rc;
            memcpy(P->v->text + P->v->text_len, d, dn);
            P->v->text_len += dn;
        }
    }
    if (raw) {
        *raw = esc ? NULL : b;
        *raw_len = (size_t)(P->p - b);
    }
    P->p++; /* the closing quote */
    if (out) {
        P->v->text[P->v->text_len++] = '\0';
        *out = start;
    }
    return PFI_OK;
}

/* A JSON number (strict grammar); its value when v is non-NULL. */
static int number(parser *P, double *v)
{
    ws(P);
    const char *b = P->p, *q = P->p;
    if (q < P->e && *q == '-') q++;
    if (q >= P->e) return fail(P, PFI_EPARSE, "expected a value");
    if (*q == '0')
        q++;
    else if (*q >= '1' && *q <= '9')
        while (q < P->e && *q >= '0' && *q <= '9')
            q++;
    else
        return fail(P, PFI_EPARSE, "expected a value");
    if (q < P->e && *q == '.') {
        q++;
        if (q >= P->e || *q < '0' || *q > '9') return fail(P, PFI_EPARSE, "a bad number");
        while (q < P->e && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < P->e && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < P->e && (*q == '+' || *q == '-')) q++;
        if (q >= P->e || *q < '0' || *q > '9') return fail(P, PFI_EPARSE, "a bad number");
        while (q < P->e && *q >= '0' && *q <= '9')
            q++;
    }
    P->p = q;
    if (v) {
        char buf[64];
        size_t n = (size_t)(q - b);
        if (n >= sizeof buf) n = sizeof buf - 1;
        memcpy(buf, b, n);
        buf[n] = '\0';
        *v = strtod(buf, NULL);
    }
    return PFI_OK;
}

static int skip(parser *P, int depth);

static int skip_word(parser *P, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(P->e - P->p) < n || memcmp(P->p, w, n) != 0)
        return fail(P, PFI_EPARSE, "expected a value");
    P->p += n;
    return PFI_OK;
}

/* Any value, validated and dropped. */
static int skip(parser *P, int depth)
{
    if (depth > MAX_DEPTH) return fail(P, PFI_EPARSE, "nested too deeply");
    ws(P);
    if (P->p >= P->e) return fail(P, PFI_EPARSE, "expected a value");
    switch (*P->p) {
    case '"':
        return string(P, NULL, NULL, NULL);
    case 't':
        return skip_word(P, "true");
    case 'f':
        return skip_word(P, "false");
    case 'n':
        return skip_word(P, "null");
    case '[':
        P->p++;
        if (take(P, ']')) return PFI_OK;
        do
            if (skip(P, depth + 1) != PFI_OK) return P->rc;
        while (take(P, ','));
        return expect(P, ']');
    case '{':
        P->p++;
        if (take(P, '}')) return PFI_OK;
        do {
            if (string(P, NULL, NULL, NULL) != PFI_OK || expect(P, ':') != PFI_OK ||
                skip(P, depth + 1) != PFI_OK)
                return P->rc;
        } while (take(P, ','));
        return expect(P, '}');
    default:
        return number(P, NULL);
    }
}

static int key_is(const char *raw, size_t n, const char *k)
{
    return raw && strlen(k) == n && memcmp(raw, k, n) == 0;
}

/* Plain decimals ("-12.5", "4") of at most 15 significant digits and 22
 * decimals, the most of what Prometheus writes: the digits are an exact
 * integer m < 2^53 and 10^k is exact, so m / 10^k is the correctly rounded
 * value strtod would give (Clinger's fast path), at a tenth of its cost.
 * 0 for anything else (exponents, NaN, Inf, long digits): strtod reads it. */
static int fast_decimal(const char *s, size_t n, double *out)
{
    static const double P10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    uint64_t m = 0;
    int digits = 0, frac = -1, lead = 1;
    if (i == n) return 0;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '.') {
            if (frac >= 0) return 0;
            frac = 0;
            continue;
        }
        if (c < '0' || c > '9') return 0;
        if (frac >= 0) frac++;
        if (lead && c == '0') continue; /* leading zeros are not significant */
        lead = 0;
        if (++digits > 15) return 0;
        m = m * 10 + (uint64_t)(c - '0');
    }
    if (frac == 0 || frac > 22 || (s[n - 1] == '.') || (s[neg || s[0] == '+'] == '.')) return 0;
    double v = (double)m;
    if (frac > 0) v /= P10[frac];
    *out = neg ? -v : v;
    return 1;
}

/* [<time>, "<value>"] */
static int sample(parser *P, double *v)
{
    if (expect(P, '[') != PFI_OK || number(P, NULL) != PFI_OK || expect(P, ',') != PFI_OK)
        return P->rc;
    ws(P);
    const char *raw;
    size_t n;
    if (P->p < P->e && *P->p != '"') return fail(P, PFI_EINVAL, "a sample's value is not a string");
    if (string(P, NULL, &raw, &n) != PFI_OK) return P->rc;
    char buf[64], *end;
    if (!raw || n == 0 || n >= sizeof buf)
        return fail(P, PFI_EINVAL, "a sample's value is not a number");
    if (!fast_decimal(raw, n, v)) {
        memcpy(buf, raw, n);
        buf[n] = '\0';
        *v = strtod(buf, &end);
        if (*end) return fail(P, PFI_EINVAL, "a sample's value is not a number");
    }
    return expect(P, ']');
}

static int push_row(parser *P)
{
    pfi_prom_vec *v = P->v;
    if (v->n == v->cap) {
        size_t c = v->cap ? 2 * v->cap : 256;
        double *vals = realloc(v->values, c * sizeof *vals);
        if (!vals) return fail(P, PFI_ENOMEM, "out of memory");
        v->values = vals;
        size_t *lab = realloc(v->lab, c * (v->n_labels ? v->n_labels : 1) * sizeof *lab);
        if (!lab) return fail(P, PFI_ENOMEM, "out of memory");
        v->lab = lab;
        v->cap = c;
    }
    for (size_t k = 0; k < v->n_labels; k++)
        v->lab[v->n * v->n_labels + k] = 0;
    v->values[v->n] = NAN;
    v->n++;
    return PFI_OK;
}

/* {"metric":{...},"value":[t,"v"]} */
static int row(parser *P)
{
    if (push_row(P) != PFI_OK || expect(P, '{') != PFI_OK) return P->rc;
    size_t r = P->v->n - 1;
    int have_value = 0;
    if (!take(P, '}')) {
        do {
            const char *raw;
            size_t n;
            if (string(P, NULL, &raw, &n) != PFI_OK || expect(P, ':') != PFI_OK) return P->rc;
            if (key_is(raw, n, "metric")) {
                if (expect(P, '{') != PFI_OK) return P->rc;
                if (take(P, '}')) continue;
                do {
                    const char *lk;
                    size_t ln;
                    if (string(P, NULL, &lk, &ln) != PFI_OK || expect(P, ':') != PFI_OK)
                        return P->rc;
                    size_t k = 0;
                    while (k < P->n_keep && !key_is(lk, ln, P->keep[k]))
                        k++;
                    ws(P);
                    if (P->p < P->e && *P->p != '"')
                        return fail(P, PFI_EINVAL, "a label is not a string");
                    if (k < P->n_keep) {
                        size_t off;
                        if (string(P, &off, NULL, NULL) != PFI_OK) return P->rc;
                        P->v->lab[r * P->v->n_labels + k] = off;
                    } else if (string(P, NULL, NULL, NULL) != PFI_OK) {
                        return P->rc;
                    }
                } while (take(P, ','));
                if (expect(P, '}') != PFI_OK) return P->rc;
            } else if (key_is(raw, n, "value")) {
                if (sample(P, &P->v->values[r]) != PFI_OK) return P->rc;
                have_value = 1;
            } else if (skip(P, 3) != PFI_OK) {
                return P->rc;
            }
        } while (take(P, ','));
        if (expect(P, '}') != PFI_OK) return P->rc;
    }
    if (!have_value)
        return fail(P, PFI_EINVAL, "a series without a \"value\" (not an instant vector)");
    return PFI_OK;
}

/* "result": a vector's array of rows, or a scalar's [t, "v"]. */
static int result(parser *P)
{
    ws(P);
    const char *open = P->p;
    if (expect(P, '[') != PFI_OK) return P->rc;
    ws(P);
    if (P->p < P->e && *P->p != '{' && *P->p != ']') {
        P->p = open; /* the scalar form: [t, "v"] */
        P->v->scalar = 1;
        if (push_row(P) != PFI_OK) return P->rc;
        return sample(P, &P->v->values[0]);
    }
    if (take(P, ']')) return PFI_OK;
    do
        if (row(P) != PFI_OK) return P->rc;
    while (take(P, ','));
    return expect(P, ']');
}

typedef struct top {
    char status[16];
    char type[16];
    int have_result;
    char error[200];
} top;

/* A short string value into buf (truncated), or skipped when not a string. */
static int short_string(parser *P, char *buf, size_t len)
{
    ws(P);
    if (P->p >= P->e || *P->p != '"') return skip(P, 2);
    const char *raw;
    size_t n;
    size_t mark = P->v->text_len;
    size_t off;
    if (string(P, &off, &raw, &n) != PFI_OK) return P->rc;
    snprintf(buf, len, "%s", P->v->text + off);
    P->v->text_len = mark; /* not a label: give the bytes back */
    return PFI_OK;
}

static int data(parser *P, top *t)
{
    if (expect(P, '{') != PFI_OK) return P->rc;
    if (take(P, '}')) return PFI_OK;
    do {
        const char *raw;
        size_t n;
        if (string(P, NULL, &raw, &n) != PFI_OK || expect(P, ':') != PFI_OK) return P->rc;
        if (key_is(raw, n, "resultType")) {
            if (short_string(P, t->type, sizeof t->type) != PFI_OK) return P->rc;
        } else if (key_is(raw, n, "result") && !t->have_result) {
            if (result(P) != PFI_OK) return P->rc;
            t->have_result = 1;
        } else if (skip(P, 2) != PFI_OK) {
            return P->rc;
        }
    } while (take(P, ','));
    return expect(P, '}');
}

int pfi_prom_vec_parse(const char *json, size_t len, const char *const *keep, size_t n_keep,
                       pfi_prom_vec *out, pfi_error *err)
{
    if (n_keep > PFI_PROM_VEC_MAX_LABELS)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "at most %d labels",
                             PFI_PROM_VEC_MAX_LABELS);
    pfi_prom_vec v = {.n_labels = n_keep};
    parser P = {.s = json,
                .p = json,
                .e = json + len,
                .err = err,
                .rc = PFI_OK,
                .v = &v,
                .keep = keep,
                .n_keep = n_keep};
    top t;
    memset(&t, 0, sizeof t);
    /* offset 0 means "absent": the text starts with one unused byte */
    if (grow_text(&P, 1) == PFI_OK) v.text[v.text_len++] = '\0';
    if (P.rc == PFI_OK && expect(&P, '{') == PFI_OK && !take(&P, '}')) {
        do {
            const char *raw;
            size_t n;
            if (string(&P, NULL, &raw, &n) != PFI_OK || expect(&P, ':') != PFI_OK) break;
            if (key_is(raw, n, "status"))
                short_string(&P, t.status, sizeof t.status);
            else if (key_is(raw, n, "error"))
                short_string(&P, t.error, sizeof t.error);
            else if (key_is(raw, n, "data"))
                data(&P, &t);
            else
                skip(&P, 1);
        } while (P.rc == PFI_OK && take(&P, ','));
        if (P.rc == PFI_OK) expect(&P, '}');
    }
    if (P.rc == PFI_OK) {
        ws(&P);
        if (P.p != P.e) fail(&P, PFI_EPARSE, "text after the answer");
    }
    if (P.rc == PFI_OK && strcmp(t.status, "success") != 0)
        pfi_error_set(err, P.rc = PFI_EINVAL, NULL, 0, "the query failed: %s",
                      t.error[0] ? t.error : "no status");
    else if (P.rc == PFI_OK && !t.have_result)
        pfi_error_set(err, P.rc = PFI_EINVAL, NULL, 0, "the answer has no data.result");
    else if (P.rc == PFI_OK && strcmp(t.type, v.scalar ? "scalar" : "vector") != 0)
        pfi_error_set(err, P.rc = PFI_EINVAL, NULL, 0,
                      "the query gives a %s, neither a scalar nor an instant vector",
                      t.type[0] ? t.type : "result of no type");
    if (P.rc != PFI_OK) {
        pfi_prom_vec_free(&v);
        return P.rc;
    }
    pfi_prom_vec_free(out);
    *out = v;
    return PFI_OK;
}

void pfi_prom_vec_free(pfi_prom_vec *v)
{
    if (!v) return;
    free(v->values);
    free(v->lab);
    free(v->text);
    memset(v, 0, sizeof *v);
}
