/* The controller's hash index (src/control/ctl_index.h). */
#include "ctl_index.h"

#include <stdlib.h>
#include <string.h>

uint64_t ctl_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

uint64_t ctl_hash_2(uint64_t a, uint64_t b)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 8; i++)
        h = (h ^ ((a >> (8 * i)) & 0xff)) * 1099511628211ULL;
    for (int i = 0; i < 8; i++)
        h = (h ^ ((b >> (8 * i)) & 0xff)) * 1099511628211ULL;
    return h;
}

static void insert(struct ctl_slot *s, size_t cap, uint64_t h, size_t pos1)
{
    size_t i = (size_t)h & (cap - 1);
    while (s[i].pos1)
        i = (i + 1) & (cap - 1);
    s[i].h = h;
    s[i].pos1 = pos1;
}

int ctl_index_put(ctl_index *x, uint64_t h, size_t pos)
{
    if (2 * (x->n + 1) > x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        struct ctl_slot *s = calloc(cap, sizeof *s);
        if (!s) return -1;
        for (size_t i = 0; i < x->cap; i++)
            if (x->s[i].pos1) insert(s, cap, x->s[i].h, x->s[i].pos1);
        free(x->s);
        x->s = s;
        x->cap = cap;
    }
    insert(x->s, x->cap, h, pos + 1);
    x->n++;
    return 0;
}

size_t ctl_index_get(const ctl_index *x, uint64_t h, int (*eq)(size_t pos, const void *ctx),
                     const void *ctx)
{
    if (!x->cap) return SIZE_MAX;
    for (size_t i = (size_t)h & (x->cap - 1); x->s[i].pos1; i = (i + 1) & (x->cap - 1))
        if (x->s[i].h == h && eq(x->s[i].pos1 - 1, ctx)) return x->s[i].pos1 - 1;
    return SIZE_MAX;
}

void ctl_index_clear(ctl_index *x)
{
    if (x->s) memset(x->s, 0, x->cap * sizeof *x->s);
    x->n = 0;
}

void ctl_index_free(ctl_index *x)
{
    free(x->s);
    memset(x, 0, sizeof *x);
}

void *ctl_grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return p;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(p, c * elem);
    if (q) *cap = c;
    return q;
}
