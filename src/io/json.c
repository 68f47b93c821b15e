#include "pfi/json.h"

#include <math.h>

json_t *pfi_json_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

void pfi_json_set(json_t *obj, const char *key, json_t *value)
{
    if (value) json_object_set_new(obj, key, value);
}

int pfi_json_print(FILE *f, const json_t *v)
{
    /* 12 significant digits: exact enough for any measurement, free of
     * binary-to-decimal noise like 1.2200000000000002. */
    if (json_dumpf(v, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) != 0)
        return -1;
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}
