/* Checked power-limit changes (see include/telemetry/pfi/limit.h). */
#include "pfi/limit.h"

#include <math.h>

#define READBACK_TOL_W 1.0 /* drivers round to whole watts */

double pfi_limit_in_force_w(const pfi_gpu_limits *lim)
{
    return lim->current_w > 0 ? lim->current_w : lim->enforced_w;
}

int pfi_limit_set_checked(pfi_backend *b, unsigned gpu, double w, pfi_gpu_limits *after,
                          pfi_error *err)
{
    pfi_gpu_limits lim;
    if (pfi_backend_limits(b, gpu, &lim) != PFI_OK)
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0, "GPU %u: reading its limits failed: %s",
                             gpu, pfi_backend_last_error(b));
    if (!(w >= lim.min_w - 0.0005 && w <= lim.max_w + 0.0005))
        return pfi_error_set(err, PFI_ERANGE, NULL, 0,
                             "%.1f W is outside GPU %u's limit constraints [%.0f, %.0f] W", w, gpu,
                             lim.min_w, lim.max_w);
    int rc = pfi_backend_set_limit(b, gpu, w);
    if (rc == PFI_ENOTSUP)
        return pfi_error_set(err, PFI_ENOTSUP, NULL, 0, "the %s backend cannot set power limits",
                             pfi_backend_ops_of(b)->name);
    if (rc != PFI_OK)
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0, "GPU %u: setting %.0f W failed: %s", gpu,
                             w, pfi_backend_last_error(b));
    if (pfi_backend_limits(b, gpu, &lim) != PFI_OK)
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0,
                             "GPU %u: reading the limit back failed: %s", gpu,
                             pfi_backend_last_error(b));
    if (after) *after = lim;
    double got = pfi_limit_in_force_w(&lim);
    if (fabs(got - w) > READBACK_TOL_W)
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0,
                             "GPU %u: the device reports %.1f W after setting %.1f W", gpu, got, w);
    return PFI_OK;
}
