/* The pieces of a JSON string that both one-pass readers share
 * (json_scan.h for pfid's listings, prom_vector.c for Prometheus' answers):
 * which bytes stand for themselves, and the decoding of one escape. Each
 * reader keeps its own messages for what this refuses. */
#ifndef PFI_JSON_ESCAPE_H
#define PFI_JSON_ESCAPE_H

#include <stddef.h>

/* pfi_json_plain[c]: printable ASCII that stands for itself in a string
 * (not '"', '\\' or a control character). */
extern const unsigned char pfi_json_plain[256];

/* Why an escape is refused. */
enum {
    PFI_JESC_BAD = -1,      /* not one of \" \\ \/ \b \f \n \r \t \uXXXX */
    PFI_JESC_BAD_U = -2,    /* \u without four hex digits */
    PFI_JESC_LONE_LOW = -3, /* a low surrogate first */
    PFI_JESC_NO_LOW = -4,   /* a high surrogate not followed by \u and a low one */
    PFI_JESC_NUL = -5,      /* \u0000 */
};

/* Decodes the escape at p (p[0] == '\\', p < e) into d as UTF-8 (*dn bytes,
 * 1-4; a surrogate pair is one code point). Returns the bytes it takes
 * (2, 6 or 12), or a PFI_JESC_* code. */
int pfi_json_escape(const char *p, const char *e, char d[4], size_t *dn);

#endif
