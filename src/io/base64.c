/* Base64 (include/io/pfi/base64.h). */
#include "pfi/base64.h"

#include <stdlib.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *pfi_base64_encode(const unsigned char *b, size_t n)
{
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)b[i] << 16 | (i + 1 < n ? (unsigned)b[i + 1] << 8 : 0) |
                     (i + 2 < n ? b[i + 2] : 0);
        *o++ = alphabet[v >> 18 & 63];
        *o++ = alphabet[v >> 12 & 63];
        *o++ = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? alphabet[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

static int sextet(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

unsigned char *pfi_base64_decode(const char *s, size_t len, size_t *n)
{
    if (len % 4) return NULL;
    unsigned char *out = malloc(len / 4 * 3 + 1);
    if (!out) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < len; i += 4) {
        int last = i + 4 == len;
        int pad = last && s[i + 3] == '=' ? (s[i + 2] == '=' ? 2 : 1) : 0;
        unsigned v = 0;
        for (int j = 0; j < 4; j++) {
            int x = j >= 4 - pad ? 0 : sextet(s[i + (size_t)j]);
            if (x < 0) {
                free(out);
                return NULL;
            }
            v = v << 6 | (unsigned)x;
        }
        out[k++] = (unsigned char)(v >> 16);
        if (pad < 2) out[k++] = (unsigned char)(v >> 8 & 255);
        if (pad < 1) out[k++] = (unsigned char)(v & 255);
    }
    out[k] = '\0';
    *n = k;
    return out;
}
