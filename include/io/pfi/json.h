/* Small Jansson helpers shared by every --json output. */
#ifndef PFI_JSON_H
#define PFI_JSON_H

#include <stdio.h>

#include <jansson.h>

#include "pfi/error.h"

/* A JSON number, or null when v is NaN or infinite: JSON has no inf/NaN and
 * we never print them. */
json_t *pfi_json_num(double v);

/* Sets key to a new reference, ignoring NULL (Jansson's steal semantics). */
void pfi_json_set(json_t *obj, const char *key, json_t *value);

/* Parses body (len bytes, at most max_len) as a JSON object whose keys are
 * all in `allowed` (NULL-ended) and none repeated: the strict request bodies
 * of pfid's and pfi control's APIs (a typo must not pass silently). *out is a
 * new reference. PFI_EPARSE for malformed JSON (line, column), PFI_EINVAL
 * for a body too large, not an object, or an unknown key (named, printable). */
int pfi_json_load_strict(const char *body, size_t len, size_t max_len, const char *const *allowed,
                         json_t **out, pfi_error *err);

/* Parses text as a JSON object, duplicate keys refused: *out a new
 * reference. PFI_EPARSE, the message led by `what`, for malformed JSON
 * ("WHAT: malformed JSON at line L: ...") or another value ("WHAT: not a
 * JSON object"). For documents that carry no key list of their own. */
int pfi_json_load_object(const char *text, size_t len, const char *what, json_t **out,
                         pfi_error *err);

/* Prints v with a newline, compact-ish with stable key order; 0 on success. */
int pfi_json_print(FILE *f, const json_t *v);

#endif
