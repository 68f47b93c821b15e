/* A CSV table read whole into memory (RFC 4180: quoted fields, "" escapes,
 * CRLF or LF, newlines inside quotes). The first row is the header.
 *
 * Ownership: a pfi_csv owns every string it returns; they live until
 * pfi_csv_destroy (NULL-safe). Input must be UTF-8 text without NUL bytes;
 * a UTF-8 byte-order mark is skipped; blank lines are skipped.
 */
#ifndef PFI_CSV_H
#define PFI_CSV_H

#include <stddef.h>
#include <stdio.h>

#include "pfi/error.h"

typedef struct pfi_csv pfi_csv;

/* Parses buf (len bytes, need not be NUL-terminated); `name` labels errors. */
int pfi_csv_parse(const char *buf, size_t len, const char *name, pfi_csv **out, pfi_error *err);
/* Reads and parses a file; "-" reads standard input. */
int pfi_csv_read_file(const char *path, pfi_csv **out, pfi_error *err);
void pfi_csv_destroy(pfi_csv *c);

const char *pfi_csv_name(const pfi_csv *c);
size_t pfi_csv_rows(const pfi_csv *c); /* data rows, header excluded */
size_t pfi_csv_cols(const pfi_csv *c);
const char *pfi_csv_header(const pfi_csv *c, size_t col);
/* Column index of a header name, or -1. */
int pfi_csv_col(const pfi_csv *c, const char *name);
/* Checks that each of the NULL-terminated names is a column; the error names
 * the first missing one. */
int pfi_csv_require(const pfi_csv *c, const char *const *names, pfi_error *err);
const char *pfi_csv_field(const pfi_csv *c, size_t row, size_t col);
long pfi_csv_line(const pfi_csv *c, size_t row); /* 1-based source line of a row */

/* Parses a field as a finite number. An empty field gives `dflt` when
 * allow_empty, else an error; text, NaN and inf are errors naming the file,
 * line and column. */
int pfi_csv_number(const pfi_csv *c, size_t row, size_t col, int allow_empty, double dflt,
                   double *out, pfi_error *err);

/* Writes one field, quoted when it holds a comma, quote or newline. */
void pfi_csv_put_field(FILE *f, const char *s);

#endif
