/* A one-pass JSON reader without a DOM: the caller walks the text value by
 * value, reads the members it wants and skips the rest (validated). For
 * large documents of which a few fields are used (pfid's listings read by
 * the controller every period: Jansson spent ~6.5 us per GPU object
 * building values that were thrown away).
 *
 * It accepts exactly what Jansson's json_loadb(text, len, 0) accepts, and
 * reads values as Jansson does: an object or array at the top, nothing but
 * blanks after it; strings valid UTF-8 without "\u0000"; numbers in JSON's
 * grammar, an integer token (no '.', 'e' or 'E') an int64 converted to
 * double (so "-0" is +0, as json_number_value gives) and refused past
 * int64, a real token strtod's value and refused when it overflows;
 * nesting at most 2048 values deep. One difference: a NUL byte is refused
 * wherever it is (Jansson skips one after a token it reads one byte past,
 * such as a number). Duplicate keys are the caller's: Jansson
 * keeps the last, so a caller that wants its view must too.
 *
 * Errors are sticky: the first one is kept in J->rc and J->err
 * (PFI_EPARSE, "bad JSON at line L column C: what"), and every later call
 * returns 0 or an error without moving. A scanner is a plain struct on the
 * caller's stack; it owns nothing.
 */
#ifndef PFI_JSON_SCAN_H
#define PFI_JSON_SCAN_H

#include <stddef.h>

#include "pfi/error.h"

typedef struct pfi_jscan {
    const char *s, *p, *e; /* the text, the cursor, its end */
    int rc;                /* PFI_OK, or the first error */
    int depth;             /* containers open */
    pfi_error *err;        /* may be NULL */
} pfi_jscan;

/* What the next value is, by its first byte. */
enum {
    PFI_JS_NONE = 0, /* an error (J->rc) */
    PFI_JS_OBJECT = '{',
    PFI_JS_ARRAY = '[',
    PFI_JS_STRING = '"',
    PFI_JS_NUMBER = '0',
    PFI_JS_TRUE = 't',
    PFI_JS_FALSE = 'f',
    PFI_JS_NULL = 'n',
};

void pfi_jscan_init(pfi_jscan *J, const char *text, size_t len, pfi_error *err);

/* The kind of the next value (blanks skipped, nothing consumed); PFI_JS_NONE
 * with an error where no value can start or nesting is too deep. */
int pfi_jscan_peek(pfi_jscan *J);
/* The same for the top value, which must be an object or an array. */
int pfi_jscan_top(pfi_jscan *J);

/* Consumes '{' or '['. Then each call of _next says whether another member
 * or element follows (1; for an object its key is decoded into key, at most
 * cap - 1 bytes and a NUL, *klen its full length, and the ':' is consumed)
 * or the container ended (0, its closing byte consumed) or an error (0, J->rc).
 * first must start at 1 and is the caller's. */
int pfi_jscan_object(pfi_jscan *J);
int pfi_jscan_object_next(pfi_jscan *J, int *first, char *key, size_t cap, size_t *klen);
int pfi_jscan_array(pfi_jscan *J);
int pfi_jscan_array_next(pfi_jscan *J, int *first);

/* A string decoded into buf (may be NULL: validated only), at most cap - 1
 * bytes and a NUL; *len (may be NULL) its full decoded length. */
int pfi_jscan_string(pfi_jscan *J, char *buf, size_t cap, size_t *len);

/* A number: *v its value (as above), *is_int whether the token is an
 * integer (then *iv its value; both may be NULL). */
int pfi_jscan_number(pfi_jscan *J, double *v, int *is_int, long long *iv);

/* true, false or null; *which (may be NULL) which one (PFI_JS_TRUE...). */
int pfi_jscan_literal(pfi_jscan *J, int *which);

/* Any value, validated and dropped. */
int pfi_jscan_skip(pfi_jscan *J);

/* Only blanks are left; PFI_EPARSE otherwise. Returns J->rc. */
int pfi_jscan_finish(pfi_jscan *J);

#endif
