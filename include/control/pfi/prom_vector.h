/* An answer of Prometheus' instant query API (GET/POST /api/v1/query) as
 * rows: each sample's value and the labels the caller asked for. This is
 * what `pfi control run --cluster-from prometheus` reads every period, tens
 * of thousands of rows at 100,000 GPUs, so it is a single pass over the text
 * (a full JSON validator that keeps only what it is asked for) rather than a
 * DOM: Jansson spends most of a period's budget building objects that are
 * thrown away.
 *
 * Accepted: {"status":"success","data":{"resultType":"vector","result":
 * [{"metric":{...},"value":[<time>,"<value>"]},...]}} and the scalar form
 * ("result":[<time>,"<value>"], one row without labels). Keys may come in any
 * order; keys it does not use are skipped (after being validated). Values are
 * as Prometheus wrote them: "NaN", "+Inf" and "-Inf" give NaN and infinities.
 * Label values are decoded (escapes, \uXXXX, surrogate pairs) and must be
 * valid UTF-8.
 *
 * Ownership: a pfi_prom_vec owns its memory; pfi_prom_vec_free releases it
 * and leaves it empty (NULL-safe).
 */
#ifndef PFI_PROM_VECTOR_H
#define PFI_PROM_VECTOR_H

#include <stddef.h>

#include "pfi/error.h"

#define PFI_PROM_VEC_MAX_LABELS 8

typedef struct pfi_prom_vec {
    size_t n;        /* rows */
    size_t n_labels; /* labels kept per row (the caller's list) */
    int scalar;      /* the answer was a scalar */
    double *values;  /* [n] */
    size_t *lab;     /* [n * n_labels]: offsets into text, 0 = the row lacks it */
    char *text;      /* the labels' values, NUL-terminated */
    size_t text_len, text_cap, cap;
} pfi_prom_vec;

/* Parses an answer, keeping for each row the labels named in keep[0..n_keep)
 * (at most PFI_PROM_VEC_MAX_LABELS). An answer whose status is not "success"
 * is PFI_EINVAL with Prometheus' error; text that is not JSON, or not that
 * shape, PFI_EPARSE/PFI_EINVAL naming the byte offset. out is replaced only
 * on success. */
int pfi_prom_vec_parse(const char *json, size_t len, const char *const *keep, size_t n_keep,
                       pfi_prom_vec *out, pfi_error *err);

/* Row i's value of label k (keep[k]), or NULL when the row lacks it. */
static inline const char *pfi_prom_vec_label(const pfi_prom_vec *v, size_t i, size_t k)
{
    size_t o = v->lab[i * v->n_labels + k];
    return o ? v->text + o : NULL;
}

void pfi_prom_vec_free(pfi_prom_vec *v);

#endif
