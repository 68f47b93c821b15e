#include "pfi/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *pfi_strerror(int code)
{
    switch (code) {
    case PFI_OK:
        return "success";
    case PFI_EINVAL:
        return "invalid argument or input";
    case PFI_ENOMEM:
        return "out of memory";
    case PFI_EIO:
        return "input/output error";
    case PFI_EPARSE:
        return "malformed input";
    case PFI_ERANGE:
        return "value out of range";
    case PFI_ENOTSUP:
        return "not supported";
    case PFI_ENOTFOUND:
        return "not found";
    case PFI_EUNDEFINED:
        return "undefined";
    case PFI_ENODATA:
        return "not enough data";
    case PFI_EINFEASIBLE:
        return "infeasible";
    case PFI_ESTATE:
        return "not allowed in the current state";
    case PFI_EBACKEND:
        return "backend failure";
    default:
        return "unknown error";
    }
}

int pfi_error_set(pfi_error *err, int code, const char *file, long line, const char *fmt, ...)
{
    if (!err) return code;
    err->code = code;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    err->line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

void pfi_error_clear(pfi_error *err)
{
    if (!err) return;
    memset(err, 0, sizeof *err);
}

void pfi_error_format(const pfi_error *err, char *buf, size_t len)
{
    if (!err || !len) return;
    const char *msg = err->msg[0] ? err->msg : pfi_strerror(err->code);
    if (err->file[0] && err->line > 0)
        snprintf(buf, len, "%s:%ld: %s", err->file, err->line, msg);
    else if (err->file[0])
        snprintf(buf, len, "%s: %s", err->file, msg);
    else
        snprintf(buf, len, "%s", msg);
}
