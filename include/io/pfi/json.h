/* Small Jansson helpers shared by every --json output. */
#ifndef PFI_JSON_H
#define PFI_JSON_H

#include <stdio.h>

#include <jansson.h>

/* A JSON number, or null when v is NaN or infinite: JSON has no inf/NaN and
 * we never print them. */
json_t *pfi_json_num(double v);

/* Sets key to a new reference, ignoring NULL (Jansson's steal semantics). */
void pfi_json_set(json_t *obj, const char *key, json_t *value);

/* Prints v with a newline, compact-ish with stable key order; 0 on success. */
int pfi_json_print(FILE *f, const json_t *v);

#endif
