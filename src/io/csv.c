/* CSV reading: one pass over the bytes into a flat field array. */
#include "pfi/csv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/fileio.h"
#include "pfi/utf8.h"

struct pfi_csv {
    char *name;
    char **fields; /* rows * cols, row 0 is the header */
    long *lines;   /* source line of each row */
    size_t rows, cols;
    char *store; /* all field text, NUL-separated */
};

static long line_of(const char *buf, size_t off)
{
    long ln = 1;
    for (size_t i = 0; i < off; i++)
        if (buf[i] == '\n') ln++;
    return ln;
}

void pfi_csv_destroy(pfi_csv *c)
{
    if (!c) return;
    free(c->name);
    free(c->fields);
    free(c->lines);
    free(c->store);
    free(c);
}

typedef struct {
    char **fields;
    long *lines;
    size_t nf, capf;
    size_t nrows, caprows;
} grow;

static int push_field(grow *g, char *f)
{
    if (g->nf == g->capf) {
        size_t nc = g->capf ? g->capf * 2 : 64;
        char **nfld = realloc(g->fields, nc * sizeof *nfld);
        if (!nfld) return -1;
        g->fields = nfld;
        g->capf = nc;
    }
    g->fields[g->nf++] = f;
    return 0;
}

static int push_row(grow *g, long line)
{
    if (g->nrows == g->caprows) {
        size_t nc = g->caprows ? g->caprows * 2 : 32;
        long *nl = realloc(g->lines, nc * sizeof *nl);
        if (!nl) return -1;
        g->lines = nl;
        g->caprows = nc;
    }
    g->lines[g->nrows++] = line;
    return 0;
}

/* One field at *pi (quoted or not), unquoted into *pw and NUL-ended;
 * row_fields is the count of fields before it in the row. Advances *pi, *pl
 * (the line) and *pw. */
static int scan_field(const char *buf, size_t len, const char *name, size_t row_fields, size_t *pi,
                      long *pl, char **pw, pfi_error *err)
{
    size_t i = *pi;
    long line = *pl;
    char *w = *pw;
    int rc = PFI_OK;
    if (buf[i] == '"') {
        long qline = line;
        i++;
        for (;;) {
            if (i >= len) {
                rc = pfi_error_set(err, PFI_EPARSE, name, qline, "unterminated quoted field");
                goto out;
            }
            if (buf[i] == '"') {
                if (i + 1 < len && buf[i + 1] == '"') {
                    *w++ = '"';
                    i += 2;
                    continue;
                }
                i++;
                break;
            }
            if (buf[i] == '\n') line++;
            *w++ = buf[i++];
        }
        if (i < len && buf[i] != ',' && buf[i] != '\n' && buf[i] != '\r') {
            rc = pfi_error_set(err, PFI_EPARSE, name, line,
                               "text after a closing quote in field %zu", row_fields + 1);
            goto out;
        }
    } else {
        while (i < len && buf[i] != ',' && buf[i] != '\n' && buf[i] != '\r') {
            if (buf[i] == '"') {
                rc = pfi_error_set(err, PFI_EPARSE, name, line,
                                   "stray quote inside unquoted field %zu", row_fields + 1);
                goto out;
            }
            *w++ = buf[i++];
        }
    }
    *w++ = '\0';
out:
    *pi = i;
    *pl = line;
    *pw = w;
    return rc;
}

int pfi_csv_parse(const char *buf, size_t len, const char *name, pfi_csv **out, pfi_error *err)
{
    *out = NULL;
    name = name ? name : "<input>";
    size_t bad;
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) buf += 3, len -= 3;
    if (!pfi_utf8_valid(buf, len, &bad))
        return pfi_error_set(err, PFI_EPARSE, name, line_of(buf, bad),
                             "not UTF-8 text (bad byte 0x%02x at offset %zu)",
                             (unsigned char)buf[bad], bad);
    pfi_csv *c = calloc(1, sizeof *c);
    grow g = {0};
    if (!c) return pfi_error_set(err, PFI_ENOMEM, name, 0, "out of memory");
    c->name = strdup(name);
    c->store = malloc(len + 1);
    if (!c->name || !c->store) goto nomem;

    /* Fields are unquoted into `store` in place order; each ends with NUL. */
    char *w = c->store;
    int rc = PFI_OK;
    size_t i = 0, row_fields = 0;
    long line = 1, row_line = 1;
    while (i < len) {
        /* At the start of a row: skip blank lines. */
        if (row_fields == 0 && (buf[i] == '\n' || buf[i] == '\r')) {
            if (buf[i] == '\n') line++;
            i++;
            continue;
        }
        if (row_fields == 0) row_line = line;
        char *f = w;
        rc = scan_field(buf, len, name, row_fields, &i, &line, &w, err);
        if (rc != PFI_OK) goto fail;
        if (push_field(&g, f)) goto nomem;
        row_fields++;
        if (i < len && buf[i] == ',') {
            i++;
            if (i == len || buf[i] == '\n' || buf[i] == '\r') {
                /* A trailing comma ends the row with one more, empty field. */
                *w++ = '\0';
                if (push_field(&g, w - 1)) goto nomem;
                row_fields++;
            } else {
                continue;
            }
        }
        /* End of row: CR, LF, CRLF or end of input. */
        if (i < len && buf[i] == '\r') i++;
        if (i < len && buf[i] == '\n') i++, line++;
        if (push_row(&g, row_line)) goto nomem;
        if (g.nrows == 1) {
            c->cols = row_fields;
        } else if (row_fields != c->cols) {
            /* a semicolon file with decimal commas: one header field, ragged rows */
            int semi = c->cols == 1 && strchr(g.fields[0], ';') != NULL;
            rc = pfi_error_set(err, PFI_EPARSE, name, row_line,
                               "row has %zu fields, the header has %zu%s", row_fields, c->cols,
                               semi ? "; the header is separated by ';': pfi reads "
                                      "comma-separated files"
                                    : "");
            goto fail;
        }
        row_fields = 0;
    }
    if (g.nrows == 0) {
        rc = pfi_error_set(err, PFI_ENODATA, name, 0, "empty file");
        goto fail;
    }
    c->fields = g.fields;
    c->lines = g.lines;
    c->rows = g.nrows - 1;
    for (size_t k = 0; k < c->cols; k++)
        if (c->fields[k][0] == '\0') {
            pfi_csv_destroy(c);
            return pfi_error_set(err, PFI_EPARSE, name, 1, "header column %zu has no name", k + 1);
        }
    *out = c;
    return PFI_OK;
nomem:
    rc = pfi_error_set(err, PFI_ENOMEM, name, 0, "out of memory");
fail:
    free(g.fields);
    free(g.lines);
    pfi_csv_destroy(c);
    return rc;
}

int pfi_csv_read_file(const char *path, pfi_csv **out, pfi_error *err)
{
    char *buf;
    size_t len;
    *out = NULL;
    int rc = pfi_file_read_all(path, &buf, &len, err);
    if (rc != PFI_OK) return rc;
    rc = pfi_csv_parse(buf, len, path, out, err);
    free(buf);
    return rc;
}

const char *pfi_csv_name(const pfi_csv *c)
{
    return c->name;
}
size_t pfi_csv_rows(const pfi_csv *c)
{
    return c->rows;
}
size_t pfi_csv_cols(const pfi_csv *c)
{
    return c->cols;
}
const char *pfi_csv_header(const pfi_csv *c, size_t col)
{
    return col < c->cols ? c->fields[col] : NULL;
}

int pfi_csv_col(const pfi_csv *c, const char *name)
{
    for (size_t k = 0; k < c->cols; k++)
        if (strcmp(c->fields[k], name) == 0) return (int)k;
    return -1;
}

/* Why a header that lacks columns was probably written so: a spreadsheet's
 * semicolons (one field holding them all) or ", " between the names. */
static const char *header_hint(const pfi_csv *c)
{
    for (size_t k = 0; k < c->cols; k++) {
        const char *h = c->fields[k];
        if (strchr(h, ';'))
            return "; the header is separated by ';': pfi reads comma-separated files "
                   "(export as CSV with ',' or replace the semicolons)";
        if (h[0] == ' ' || h[0] == '\t' || (h[0] && (h[strlen(h) - 1] == ' ')))
            return "; the header has spaces around its names (\", \" between them): write "
                   "the names separated by ',' alone";
    }
    return "";
}

int pfi_csv_require(const pfi_csv *c, const char *const *names, pfi_error *err)
{
    /* every missing column in one message: fixing them one run at a time is slow */
    char miss[400] = "";
    size_t n = 0, len = 0;
    for (; *names; names++)
        if (pfi_csv_col(c, *names) < 0 && len < sizeof miss) {
            int w = snprintf(miss + len, sizeof miss - len, "%s\"%s\"", n ? ", " : "", *names);
            if (w > 0) len += (size_t)w;
            n++;
        }
    if (n == 0) return PFI_OK;
    return pfi_error_set(err, PFI_EPARSE, c->name, 1, "missing column%s %s%s", n > 1 ? "s" : "",
                         miss, header_hint(c));
}

const char *pfi_csv_field(const pfi_csv *c, size_t row, size_t col)
{
    if (row >= c->rows || col >= c->cols) return NULL;
    return c->fields[(row + 1) * c->cols + col];
}

long pfi_csv_line(const pfi_csv *c, size_t row)
{
    return row < c->rows ? c->lines[row + 1] : 0;
}

int pfi_csv_number(const pfi_csv *c, size_t row, size_t col, int allow_empty, double dflt,
                   double *out, pfi_error *err)
{
    const char *s = pfi_csv_field(c, row, col);
    long ln = pfi_csv_line(c, row);
    const char *colname = pfi_csv_header(c, col);
    if (!s) return pfi_error_set(err, PFI_EINVAL, c->name, ln, "no such field");
    const char *p = s;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0') {
        if (allow_empty) {
            *out = dflt;
            return PFI_OK;
        }
        return pfi_error_set(err, PFI_EPARSE, c->name, ln, "empty %s", colname);
    }
    /* strtod also takes C99 hex floats (0x1p10): no CSV of measurements
     * means that, and a typo that reads as one must not become a value */
    const char *digits = p + (*p == '+' || *p == '-');
    if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
        return pfi_error_set(err, PFI_EPARSE, c->name, ln,
                             "%s is not a decimal number (hex floats are not accepted): \"%.40s\"",
                             colname, s);
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == p || *end != '\0')
        return pfi_error_set(err, PFI_EPARSE, c->name, ln, "%s is not a number: \"%.40s\"", colname,
                             s);
    if (!isfinite(v) || errno == ERANGE)
        return pfi_error_set(err, PFI_EPARSE, c->name, ln, "%s is not finite: \"%.40s\"", colname,
                             s);
    *out = v;
    return PFI_OK;
}

void pfi_csv_put_field(FILE *f, const char *s)
{
    /* Quote only when needed: a comma, quote or newline (RFC 4180). */
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}
