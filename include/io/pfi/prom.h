/* A parser for the Prometheus text exposition format (version 0.0.4), as
 * dcgm-exporter and pfid's own /metrics serve it:
 *
 *   # HELP name docstring        (escapes \\ and \n)
 *   # TYPE name counter|gauge|histogram|summary|untyped
 *   # any other comment
 *   name{label="value",...} value [timestamp_ms]
 *
 * Label values take the escapes \\, \" and \n; values are floats, with NaN,
 * +Inf and -Inf; the timestamp is an integer in milliseconds. Blank lines and
 * a trailing \r are tolerated. Errors name the line: a bad metric or label
 * name, an unknown escape, an unterminated label value, a duplicate label, a
 * value that is not a number, a second HELP or TYPE for one name, a TYPE
 * after that name's samples, an unknown type, text that is not UTF-8.
 *
 * Ownership: a pfi_prom_doc owns every string and struct it hands out; they
 * live until pfi_prom_doc_destroy (NULL-safe).
 */
#ifndef PFI_PROM_H
#define PFI_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "pfi/error.h"

typedef struct pfi_prom_label {
    const char *name;
    const char *value; /* unescaped */
} pfi_prom_label;

/* One sample line. */
typedef struct pfi_prom_series {
    const char *name;
    const pfi_prom_label *labels; /* in the order written */
    size_t n_labels;
    double value; /* may be NaN or +-inf */
    int has_timestamp;
    int64_t timestamp_ms;
    long line; /* 1-based source line */
} pfi_prom_series;

/* What the HELP and TYPE lines said about one metric name. */
typedef struct pfi_prom_meta {
    const char *name;
    const char *help; /* unescaped; NULL without a HELP line */
    const char *type; /* "counter", "gauge", ...; NULL without a TYPE line */
} pfi_prom_meta;

typedef struct pfi_prom_doc pfi_prom_doc;

/* Parses buf[0..len) (need not be NUL-terminated); `name` labels errors
 * (a URL or file name). */
int pfi_prom_parse(const char *buf, size_t len, const char *name, pfi_prom_doc **out,
                   pfi_error *err);
void pfi_prom_doc_destroy(pfi_prom_doc *d);

size_t pfi_prom_doc_series_count(const pfi_prom_doc *d);
const pfi_prom_series *pfi_prom_doc_series(const pfi_prom_doc *d, size_t i);
size_t pfi_prom_doc_meta_count(const pfi_prom_doc *d);
const pfi_prom_meta *pfi_prom_doc_meta(const pfi_prom_doc *d, size_t i);
/* The HELP/TYPE entry for a metric name, or NULL. */
const pfi_prom_meta *pfi_prom_doc_find_meta(const pfi_prom_doc *d, const char *name);

/* The value of a series' label, or NULL when it has no such label. */
const char *pfi_prom_series_label(const pfi_prom_series *s, const char *name);

/* True when v is one of DCGM's "blank" sentinels (not a reading: the field is
 * not supported, not found or not permitted), as older dcgm-exporters print. */
int pfi_prom_dcgm_blank(double v);

#endif
