/* Base64 (RFC 4648, the standard alphabet with '=' padding): figures in
 * the report's data: URIs, and the keys and values of etcd's JSON gateway.
 *
 * Ownership: the caller owns what the functions return (free). */
#ifndef PFI_BASE64_H
#define PFI_BASE64_H

#include <stddef.h>

/* The encoding of b[0..n), NUL-terminated, malloc'd; NULL on no memory. */
char *pfi_base64_encode(const unsigned char *b, size_t n);

/* Decodes s (len characters; padding required, no whitespace) into a
 * malloc'd buffer, NUL-terminated for text, of *n bytes. NULL when s is
 * not base64 or on no memory. */
unsigned char *pfi_base64_decode(const char *s, size_t len, size_t *n);

#endif
