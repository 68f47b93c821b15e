#include "pfi/json.h"

#include <math.h>
#include <string.h>

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

int pfi_json_load_object(const char *text, size_t len, const char *what, json_t **out,
                         pfi_error *err)
{
    json_error_t je;
    *out = NULL;
    json_t *r = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!r)
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "%s: malformed JSON at line %d: %s", what,
                             je.line, je.text);
    if (!json_is_object(r)) {
        json_decref(r);
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "%s: not a JSON object", what);
    }
    *out = r;
    return PFI_OK;
}

int pfi_json_load_strict(const char *body, size_t len, size_t max_len, const char *const *allowed,
                         json_t **out, pfi_error *err)
{
    *out = NULL;
    if (len > max_len)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "body larger than %zu bytes", max_len);
    json_error_t je;
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "bad JSON at line %d column %d: %s", je.line,
                             je.column, je.text);
    if (!json_is_object(root)) {
        json_decref(root);
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "the body must be a JSON object");
    }
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        int ok = 0;
        for (size_t i = 0; allowed[i]; i++)
            ok |= strcmp(key, allowed[i]) == 0;
        if (!ok) {
            /* Jansson keys may hold NUL or control bytes: print a safe prefix. */
            char shown[40];
            size_t k = 0;
            for (; key[k] && k < sizeof shown - 1; k++)
                shown[k] = (key[k] >= 0x20 && key[k] < 0x7f) ? key[k] : '?';
            shown[k] = '\0';
            json_decref(root);
            return pfi_error_set(err, PFI_EINVAL, NULL, 0, "unknown key \"%s\"", shown);
        }
    }
    *out = root;
    return PFI_OK;
}
