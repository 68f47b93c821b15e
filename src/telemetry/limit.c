/* Checked power-limit changes (see include/telemetry/pfi/limit.h). */
#include "pfi/limit.h"

#include <math.h>

#define READBACK_TOL_MW 1000.0 /* drivers round to whole watts */

double pfi_limit_in_force_mw(const pfi_gpu_limits *lim)
{
    return lim->current_mw > 0 ? lim->current_mw : lim->enforced_mw;
}

int pfi_limit_set_checked(pfi_backend *b, unsigned gpu, double mw, pfi_gpu_limits *after,
                          pfi_error *err)
{
    pfi_gpu_limits lim;
    if (pfi_backend_limits(b, gpu, &lim) != PFI_OK)
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0, "GPU %u: reading its limits failed: %s",
                             gpu, pfi_backend_last_error(b));
    if (!(mw >= lim.min_mw - 0.5 && mw <= lim.max_mw + 0.5))
        return pfi_error_set(err, PFI_ERANGE, NULL, 0,
                             "%.1f W is outside GPU %u's limit constraints [%.0f, %.0f] W",
                             mw / 1000, gpu, lim.min_mw / 1000, lim.max_mw / 1000);
    int rc = pfi_backend_set_limit(b, gpu, mw);
    if (rc == PFI_ENOTSUP)
        return pfi_error_set(err, PFI_ENOTSUP, NULL, 0, "the %s backend cannot set power limits",
                             pfi_backend_ops_of(b)->name);
    if (rc != PFI_OK)
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0, "GPU %u: setting %.0f W failed: %s",
                             gpu, mw / 1000, pfi_backend_last_error(b));
    if (pfi_backend_limits(b, gpu, &lim) != PFI_OK)
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0,
                             "GPU %u: reading the limit back failed: %s", gpu,
                             pfi_backend_last_error(b));
    if (after) *after = lim;
    double got = pfi_limit_in_force_mw(&lim);
    if (fabs(got - mw) > READBACK_TOL_MW)
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0,
                             "GPU %u: the device reports %.1f W after setting %.1f W", gpu,
                             got / 1000, mw / 1000);
    return PFI_OK;
}
