/* See pfi/group_key.h. */
#include "pfi/group_key.h"

#include <stdlib.h>
#include <string.h>

char *pfi_group_key(const char *name, const char *platform)
{
    if (!name) return NULL;
    size_t pl = platform ? strlen(platform) : 0, len = strlen(name);
    char *out = malloc(len + 1), *o = out;
    if (!out) return NULL;
    for (const char *p = name; *p;) {
        if (pl && strncmp(p, platform, pl) == 0) {
            *o++ = '*';
            p += pl;
        } else {
            *o++ = *p++;
        }
    }
    *o = 0;
    return out;
}
