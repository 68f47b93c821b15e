/* JSON string escapes and plain bytes (json_escape.h). */
#include "pfi/json_escape.h"

const unsigned char pfi_json_plain[256] = {
#define R8(x) x, x, x, x, x, x, x, x
    R8(0), R8(0), R8(0), R8(0),                                  /* 0x00-0x1f: control characters */
    1,     1,     0,     1,     1, 1, 1, 1, R8(1), R8(1), R8(1), /* 0x20-0x3f: '"' at 0x22 */
    R8(1), R8(1), R8(1), 1,     1, 1, 1, 0, 1,     1,     1,     /* 0x40-0x5f: '\\' at 0x5c */
    R8(1), R8(1), R8(1), R8(1),                                  /* 0x60-0x7f */
#undef R8
};

static int hex4(const char *p, unsigned *out)
{
    unsigned x = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        x <<= 4;
        if (c >= '0' && c <= '9')
            x |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            x |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            x |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = x;
    return 0;
}

static size_t put_utf8(char *d, unsigned cp)
{
    if (cp < 0x80) return d[0] = (char)cp, 1;
    if (cp < 0x800) {
        d[0] = (char)(0xC0 | (cp >> 6));
        d[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (char)(0xE0 | (cp >> 12));
        d[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        d[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    d[0] = (char)(0xF0 | (cp >> 18));
    d[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    d[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    d[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

int pfi_json_escape(const char *p, const char *e, char d[4], size_t *dn)
{
    *dn = 1;
    if (e - p < 2) return PFI_JESC_BAD;
    switch (p[1]) {
    case '"':
        d[0] = '"';
        return 2;
    case '\\':
        d[0] = '\\';
        return 2;
    case '/':
        d[0] = '/';
        return 2;
    case 'b':
        d[0] = '\b';
        return 2;
    case 'f':
        d[0] = '\f';
        return 2;
    case 'n':
        d[0] = '\n';
        return 2;
    case 'r':
        d[0] = '\r';
        return 2;
    case 't':
        d[0] = '\t';
        return 2;
    case 'u':
        break;
    default:
        return PFI_JESC_BAD;
    }
    unsigned cp, lo;
    int took = 6;
    if (e - p < 6 || hex4(p + 2, &cp)) return PFI_JESC_BAD_U;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return PFI_JESC_LONE_LOW;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (e - p < 12 || p[6] != '\\' || p[7] != 'u' || hex4(p + 8, &lo) || lo < 0xDC00 ||
            lo > 0xDFFF)
            return PFI_JESC_NO_LOW;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        took = 12;
    }
    if (cp == 0) return PFI_JESC_NUL;
    *dn = put_utf8(d, cp);
    return took;
}
