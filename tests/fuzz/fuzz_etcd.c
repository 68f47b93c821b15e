/* libFuzzer target: etcd's gateway answers (range, lease, txn) and the HA
 * shared state's values (targets, caps, state, a job) as the controller
 * reads them. An accepted answer's keys and values are NUL-terminated and
 * its targets valid; a refusal says why. Never a crash or a leak. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "control/ctl_ha.h"
#include "pfi/etcd.h"

static void check(int rc, const pfi_error *err)
{
    if (rc != PFI_OK && !err->msg[0]) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    pfi_error err;
    pfi_etcd_range r;
    pfi_error_clear(&err);
    int rc = pfi_etcd_parse_range(s, size, &r, &err);
    check(rc, &err);
    for (size_t i = 0; rc == PFI_OK && i < r.n; i++)
        if (strlen(r.kvs[i].value) > r.kvs[i].value_len || !r.kvs[i].key) __builtin_trap();
    pfi_etcd_range_free(&r);
    long long id, ttl, rev;
    int ok;
    pfi_error_clear(&err);
    rc = pfi_etcd_parse_lease(s, size, &id, &ttl, &err);
    check(rc, &err);
    if (rc == PFI_OK && ttl < 0) __builtin_trap();
    pfi_error_clear(&err);
    check(pfi_etcd_parse_txn(s, size, &ok, &rev, &r, &err), &err);
    pfi_etcd_range_free(&r);

    pfi_target *ts;
    size_t n;
    pfi_error_clear(&err);
    rc = ctl_ha_parse_targets(s, size, &ts, &n, &err);
    check(rc, &err);
    for (size_t i = 0; rc == PFI_OK && i < n; i++)
        if (pfi_target_validate(&ts[i], NULL) != PFI_OK) __builtin_trap();
    if (rc == PFI_OK) free(ts);
    ctl_ha_cap *caps;
    pfi_error_clear(&err);
    rc = ctl_ha_parse_caps(s, size, &caps, &n, &err);
    check(rc, &err);
    for (size_t i = 0; rc == PFI_OK && i < n; i++)
        if (!(caps[i].watts > 0)) __builtin_trap();
    if (rc == PFI_OK) free(caps);
    double b, t;
    pfi_error_clear(&err);
    rc = ctl_ha_parse_state(s, size, &b, &t, &err);
    check(rc, &err);
    if (rc == PFI_OK && !isfinite(t)) __builtin_trap();
    ctl_ha_job j;
    pfi_error_clear(&err);
    rc = ctl_ha_parse_job(s, size, &j, &err);
    check(rc, &err);
    if (rc == PFI_OK) free(j.pts);
    return 0;
}
