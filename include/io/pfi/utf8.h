/* UTF-8 validation for every text input (CSV, Prometheus pages): a reader
 * refuses bytes that are not text before it parses them. */
#ifndef PFI_UTF8_H
#define PFI_UTF8_H

#include <stddef.h>

/* True when buf[0..len) is valid UTF-8 without NUL bytes (no overlong forms,
 * surrogates or code points past U+10FFFF); *bad_off (may be NULL) gets the
 * offset of the first bad byte. */
int pfi_utf8_valid(const char *buf, size_t len, size_t *bad_off);

#endif
