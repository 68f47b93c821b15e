/* A hash index from 64-bit key hashes to array positions (private to
 * src/control/): the controller looks jobs, learned points and held caps up
 * by id every period, and at 10,000 jobs on 100,000 GPUs a linear search per
 * lookup would cost seconds. Open addressing, grown at half load; the caller
 * confirms a hit with its own equality (two keys may share a hash). */
#ifndef PFI_CTL_INDEX_H
#define PFI_CTL_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct ctl_index {
    struct ctl_slot {
        uint64_t h;
        size_t pos1; /* position + 1; 0 = empty */
    } * s;
    size_t cap, n;
} ctl_index;

/* FNV-1a of a string, and of two integers. */
uint64_t ctl_hash_str(const char *s);
uint64_t ctl_hash_2(uint64_t a, uint64_t b);

/* Adds (h, pos); -1 on no memory. */
int ctl_index_put(ctl_index *x, uint64_t h, size_t pos);
/* Calls eq(pos, ctx) for each position under h until it returns non-zero;
 * returns that position or SIZE_MAX. */
size_t ctl_index_get(const ctl_index *x, uint64_t h, int (*eq)(size_t pos, const void *ctx),
                     const void *ctx);
/* p (an array of *cap elements of elem bytes) with room for need of them,
 * doubling (from 16); NULL on no memory (p is then unchanged). */
void *ctl_grow(void *p, size_t *cap, size_t need, size_t elem);

/* Empties it (keeps the memory), frees it. */
void ctl_index_clear(ctl_index *x);
void ctl_index_free(ctl_index *x);

#endif
