/* The store's cap rows (see include/io/pfi/store.h; shared parts in
 * store_int.h). */
#include "pfi/store.h"

#include <sqlite3.h>

#include "store_int.h"

int pfi_store_cap_put(pfi_store *s, const pfi_store_cap *cap, pfi_error *err)
{
    if (s->readonly) return store_refuse_write(s, err);
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = s->st[ST_CAP_PUT];
    sqlite3_bind_int64(st, 1, cap->gpu);
    sqlite3_bind_double(st, 2, cap->watts);
    sqlite3_bind_double(st, 3, cap->set_at);
    sqlite3_bind_double(st, 4, cap->expires_at);
    sqlite3_bind_double(st, 5, cap->prior_w);
    int rc = store_step_done(s, ST_CAP_PUT, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int pfi_store_cap_delete(pfi_store *s, unsigned gpu, pfi_error *err)
{
    if (s->readonly) return store_refuse_write(s, err);
    pthread_mutex_lock(&s->mu);
    sqlite3_bind_int64(s->st[ST_CAP_DEL], 1, gpu);
    int rc = store_step_done(s, ST_CAP_DEL, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* A cap row whose GPU cannot be read is skipped; any other unusable value
 * comes back as NaN for the agent to act on safely (restore, never keep). */
static int cap_row(pfi_store *s, sqlite3_stmt *st, void *item, pfi_error *err)
{
    (void)err;
    pfi_store_cap *c = item;
    sqlite3_int64 g = sqlite3_column_int64(st, 0);
    if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || g < 0 || g > 1000000) {
        store_bad_row(s, "caps", NULL, "no usable GPU index");
        return PFI_EPARSE;
    }
    c->gpu = (unsigned)g;
    c->watts = store_num_col(st, 1);
    c->set_at = store_num_col(st, 2);
    c->expires_at = store_num_col(st, 3);
    c->prior_w = store_num_col(st, 4);
    return PFI_OK;
}

int pfi_store_caps(pfi_store *s, pfi_store_cap **out, size_t *n, pfi_error *err)
{
    return store_collect(s, ST_CAPS, NULL, sizeof **out, cap_row, "reading caps", (void **)out, n,
                         err);
}
