/* UTF-8 validation (utf8.h). */
#include "pfi/utf8.h"

int pfi_utf8_valid(const char *buf, size_t len, size_t *bad_off)
{
    const unsigned char *s = (const unsigned char *)buf;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        size_t need;
        unsigned min;
        if (c == 0) goto bad;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            need = 1, min = 0x80, c &= 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            need = 2, min = 0x800, c &= 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            need = 3, min = 0x10000, c &= 0x07;
        } else {
            goto bad;
        }
        if (i + need >= len) goto bad;
        for (size_t k = 1; k <= need; k++) {
            if ((s[i + k] & 0xC0) != 0x80) goto bad;
            c = (c << 6) | (s[i + k] & 0x3F);
        }
        /* Overlong forms, surrogates and code points past U+10FFFF are not UTF-8. */
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) goto bad;
        i += need + 1;
    }
    return 1;
bad:
    if (bad_off) *bad_off = i;
    return 0;
}
