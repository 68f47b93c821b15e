/* One-pass JSON reading (include/io/pfi/json_scan.h). The rules are
 * Jansson 2.14's load.c, so that a caller reading with this sees what it
 * saw with json_loadb: the same texts refused, the same numbers.
 *
 * Kept over Jansson because it pays in a period the user waits for
 * (bench/bench_json_choice, json_listings, 2 loaded cores, medians of 7):
 * 12,500 nodes' listings (100,000 GPUs, 10,000 jobs, 25 MB) read in 0.27 s
 * against Jansson's DOM 1.80 s, the whole period 0.29 s against 1.82 s
 * (6.2x; the bar of issue 30 is 1.5x). */
#include "pfi/json_scan.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/json_escape.h"
#include "pfi/utf8.h"

#define MAX_DEPTH 2048 /* Jansson's JSON_PARSER_MAX_DEPTH, counted as it does: every value */

static int fail(pfi_jscan *J, const char *what)
{
    if (J->rc != PFI_OK) return J->rc;
    long line = 1;
    const char *bol = J->s;
    for (const char *q = J->s; q < J->p; q++)
        if (*q == '\n') line++, bol = q + 1;
    J->rc = pfi_error_set(J->err, PFI_EPARSE, NULL, 0, "bad JSON at line %ld column %ld: %s", line,
                          (long)(J->p - bol) + 1, what);
    return J->rc;
}

void pfi_jscan_init(pfi_jscan *J, const char *text, size_t len, pfi_error *err)
{
    *J = (pfi_jscan){.s = text, .p = text, .e = text + len, .rc = PFI_OK, .err = err};
}

static void ws(pfi_jscan *J)
{
    while (J->p < J->e && (*J->p == ' ' || *J->p == '\n' || *J->p == '\r' || *J->p == '\t'))
        J->p++;
}

/* Consumes c (after blanks) if it is next. */
static int take(pfi_jscan *J, char c)
{
    if (J->p < J->e && *J->p == c) { /* the usual case: no blank before it */
        J->p++;
        return 1;
    }
    ws(J);
    if (J->p < J->e && *J->p == c) {
        J->p++;
        return 1;
    }
    return 0;
}

/* peek's work, inlined where the library calls it (several times a value:
 * it was a fifth of the reading). */
static inline int kind(pfi_jscan *J)
{
    if (J->rc != PFI_OK) return PFI_JS_NONE;
    if (J->p >= J->e || (unsigned char)*J->p <= ' ') ws(J);
    if (J->depth >= MAX_DEPTH) return fail(J, "maximum parsing depth reached"), PFI_JS_NONE;
    if (J->p >= J->e) return fail(J, "expected a value"), PFI_JS_NONE;
    char c = *J->p;
    switch (c) {
    case '{':
    case '[':
    case '"':
    case 't':
    case 'f':
    case 'n':
        return c;
    default:
        if (c == '-' || (c >= '0' && c <= '9')) return PFI_JS_NUMBER;
        return fail(J, "expected a value"), PFI_JS_NONE;
    }
}

int pfi_jscan_peek(pfi_jscan *J)
{
    return kind(J);
}

int pfi_jscan_top(pfi_jscan *J)
{
    int k = kind(J);
    if (k == PFI_JS_OBJECT || k == PFI_JS_ARRAY || k == PFI_JS_NONE) return k;
    return fail(J, "'[' or '{' expected"), PFI_JS_NONE;
}

static int open(pfi_jscan *J, char c)
{
    if (kind(J) != c)
        return J->rc != PFI_OK ? J->rc : fail(J, c == '{' ? "expected '{'" : "expected '['");
    J->p++;
    J->depth++;
    return PFI_OK;
}

int pfi_jscan_object(pfi_jscan *J)
{
    return open(J, '{');
}
int pfi_jscan_array(pfi_jscan *J)
{
    return open(J, '[');
}

/* After a member or element: ',' (another follows) or the closing byte. */
static int next(pfi_jscan *J, int *first, char close)
{
    if (J->rc != PFI_OK) return 0;
    if (*first) {
        *first = 0;
        if (!take(J, close)) return 1;
    } else if (!take(J, ',')) {
        if (!take(J, close)) {
            fail(J, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
            return 0;
        }
    } else {
        return 1;
    }
    J->depth--;
    return 0;
}

int pfi_jscan_array_next(pfi_jscan *J, int *first)
{
    return next(J, first, ']');
}

int pfi_jscan_object_next(pfi_jscan *J, int *first, char *key, size_t cap, size_t *klen)
{
    if (!next(J, first, '}')) return 0;
    ws(J);
    if (J->p >= J->e || *J->p != '"') return fail(J, "expected a string as a key"), 0;
    if (pfi_jscan_string(J, key, cap, klen) != PFI_OK) return 0;
    if (!take(J, ':')) return fail(J, "expected ':'"), 0;
    return 1;
}

/* Appends n bytes to buf[0..cap-1) at *o (dropping what does not fit). */
static void put(char *buf, size_t cap, size_t *o, const char *src, size_t n)
{
    if (buf && *o + 1 < cap) memcpy(buf + *o, src, n < cap - 1 - *o ? n : cap - 1 - *o);
    *o += n;
}

int pfi_jscan_string(pfi_jscan *J, char *buf, size_t cap, size_t *len)
{
    if (kind(J) != PFI_JS_STRING) return J->rc != PFI_OK ? J->rc : fail(J, "expected a string");
    J->p++;
    size_t o = 0;
    if (!buf) cap = 0;
    { /* the usual string: plain ASCII to the quote */
        const char *q = J->p;
        while (q < J->e && pfi_json_plain[(unsigned char)*q])
            q++;
        if (q < J->e && *q == '"') {
            o = (size_t)(q - J->p);
            if (cap) {
                size_t m = o < cap - 1 ? o : cap - 1;
                memcpy(buf, J->p, m);
                buf[m] = '\0';
            }
            J->p = q + 1;
            if (len) *len = o;
            return PFI_OK;
        }
    }
    for (;;) {
        const char *q = J->p;
        while (q < J->e && pfi_json_plain[(unsigned char)*q])
            q++;
        put(buf, cap, &o, J->p, (size_t)(q - J->p));
        J->p = q;
        if (J->p >= J->e) return fail(J, "premature end of input in a string");
        unsigned char c = (unsigned char)*J->p;
        if (c == '"') break;
        if (c < 0x20) return fail(J, "control character in a string");
        if (c >= 0x80) { /* a run of non-ASCII bytes: whole UTF-8 sequences */
            while (q < J->e && (unsigned char)*q >= 0x80)
                q++;
            if (!pfi_utf8_valid(J->p, (size_t)(q - J->p), NULL))
                return fail(J, "invalid UTF-8 in a string");
            put(buf, cap, &o, J->p, (size_t)(q - J->p));
            J->p = q;
            continue;
        }
        if (J->e - J->p < 2) return fail(J, "premature end of input in a string");
        char d[4];
        size_t dn;
        int took = pfi_json_escape(J->p, J->e, d, &dn);
        switch (took) {
        case PFI_JESC_BAD_U:
            return fail(J, "invalid \\u escape");
        case PFI_JESC_LONE_LOW:
            return fail(J, "invalid Unicode: a lone low surrogate");
        case PFI_JESC_NO_LOW:
            return fail(J, "invalid Unicode: a high surrogate without its low half");
        case PFI_JESC_NUL:
            return fail(J, "\\u0000 is not allowed");
        }
        if (took < 0) return fail(J, "invalid escape");
        J->p += took;
        put(buf, cap, &o, d, dn);
    }
    J->p++; /* the closing quote */
    if (buf && cap) buf[o < cap - 1 ? o : cap - 1] = '\0';
    if (len) *len = o;
    return PFI_OK;
}

static int digit(char c)
{
    return c >= '0' && c <= '9';
}

int pfi_jscan_number(pfi_jscan *J, double *v, int *is_int, long long *iv)
{
    if (kind(J) != PFI_JS_NUMBER) return J->rc != PFI_OK ? J->rc : fail(J, "expected a number");
    const char *b = J->p, *q = J->p, *e = J->e;
    int neg = *q == '-';
    if (neg) q++;
    const char *ib = q; /* the integer part */
    if (q < e && *q == '0')
        q++;
    else if (q < e && digit(*q))
        while (q < e && digit(*q))
            q++;
    else
        return fail(J, "invalid number");
    if (q < e && digit(*q)) return fail(J, "invalid number: a leading zero");
    size_t nint = (size_t)(q - ib);
    int real = 0;
    long exp10 = 0; /* the exponent, saturated: only to know when overflow is possible */
    if (q < e && *q == '.') {
        q++;
        if (q >= e || !digit(*q)) return fail(J, "invalid number");
        while (q < e && digit(*q))
            q++;
        real = 1;
    }
    if (q < e && (*q == 'e' || *q == 'E')) {
        q++;
        int eneg = 0;
        if (q < e && (*q == '+' || *q == '-')) eneg = *q++ == '-';
        if (q >= e || !digit(*q)) return fail(J, "invalid number");
        for (; q < e && digit(*q); q++)
            if (exp10 < 100000) exp10 = exp10 * 10 + (*q - '0');
        if (eneg) exp10 = -exp10;
        real = 1;
    }
    J->p = q;
    if (!real) {
        long long x;
        if (nint <= 18) { /* fits: no check needed */
            unsigned long long m = 0;
            for (const char *d = ib; d < q; d++)
                m = m * 10 + (unsigned)(*d - '0');
            x = neg ? -(long long)m : (long long)m;
        } else {
            char tmp[32];
            if ((size_t)(q - b) >= sizeof tmp)
                return fail(J, neg ? "too big negative integer" : "too big integer");
            memcpy(tmp, b, (size_t)(q - b));
            tmp[q - b] = '\0';
            errno = 0;
            x = strtoll(tmp, NULL, 10);
            if (errno == ERANGE)
                return fail(J, neg ? "too big negative integer" : "too big integer");
        }
        if (is_int) *is_int = 1;
        if (iv) *iv = x;
        if (v) *v = (double)x;
        return PFI_OK;
    }
    if (is_int) *is_int = 0;
    /* strtod for the value, or to find an overflow: the value is below
     * 10^(nint + exp10), so under 10^300 none is possible */
    if (v || (long)nint + exp10 > 300) {
        size_t n = (size_t)(q - b);
        char tmp[64], *t = n < sizeof tmp ? tmp : malloc(n + 1);
        if (!t) {
            J->rc = pfi_error_set(J->err, PFI_ENOMEM, NULL, 0, "out of memory");
            return J->rc;
        }
        memcpy(t, b, n);
        t[n] = '\0';
        errno = 0;
        double x = strtod(t, NULL);
        int over = (x == HUGE_VAL || x == -HUGE_VAL) && errno == ERANGE;
        if (t != tmp) free(t);
        if (over) return fail(J, "real number overflow");
        if (v) *v = x;
    }
    return PFI_OK;
}

int pfi_jscan_literal(pfi_jscan *J, int *which)
{
    int k = kind(J);
    const char *w = k == PFI_JS_TRUE    ? "true"
                    : k == PFI_JS_FALSE ? "false"
                    : k == PFI_JS_NULL  ? "null"
                                        : NULL;
    if (!w) return J->rc != PFI_OK ? J->rc : fail(J, "expected true, false or null");
    size_t n = strlen(w);
    if ((size_t)(J->e - J->p) < n || memcmp(J->p, w, n) != 0) return fail(J, "invalid token");
    J->p += n;
    if (which) *which = k;
    return PFI_OK;
}

int pfi_jscan_skip(pfi_jscan *J)
{
    int first = 1;
    switch (kind(J)) {
    case PFI_JS_NONE:
        return J->rc;
    case PFI_JS_STRING:
        return pfi_jscan_string(J, NULL, 0, NULL);
    case PFI_JS_NUMBER:
        return pfi_jscan_number(J, NULL, NULL, NULL);
    case PFI_JS_ARRAY:
        if (pfi_jscan_array(J) != PFI_OK) return J->rc;
        while (pfi_jscan_array_next(J, &first))
            if (pfi_jscan_skip(J) != PFI_OK) return J->rc;
        return J->rc;
    case PFI_JS_OBJECT:
        if (pfi_jscan_object(J) != PFI_OK) return J->rc;
        while (pfi_jscan_object_next(J, &first, NULL, 0, NULL))
            if (pfi_jscan_skip(J) != PFI_OK) return J->rc;
        return J->rc;
    default:
        return pfi_jscan_literal(J, NULL);
    }
}

int pfi_jscan_finish(pfi_jscan *J)
{
    if (J->rc != PFI_OK) return J->rc;
    ws(J);
    if (J->p != J->e) return fail(J, "end of file expected");
    return PFI_OK;
}
