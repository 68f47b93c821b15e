/* One HTTP call to a pfi control (or any JSON API): what the operator
 * commands `pfi control status|plan|target` use. */
#ifndef PFI_CTL_CLIENT_H
#define PFI_CTL_CLIENT_H

#include <stddef.h>

#include "pfi/error.h"

/* method on base + path with an optional bearer token and JSON body; the
 * answer's status and malloc'd body (caller frees). PFI_EIO when nothing
 * answered. */
int pfi_ctl_call(const char *base, const char *method, const char *path, const char *token,
                 const char *body, double timeout_s, long *status, char **answer, pfi_error *err);

#endif
