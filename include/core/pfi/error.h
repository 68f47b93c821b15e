/* Status codes and error details shared by every pfi module.
 *
 * Functions return int: PFI_OK (0) or a negative PFI_E* code. Details (file,
 * line, a sentence) go into a pfi_error the caller owns and passes in; any
 * function taking a pfi_error * accepts NULL when the caller wants only the code.
 */
#ifndef PFI_ERROR_H
#define PFI_ERROR_H

#include <stddef.h>

enum {
    PFI_OK = 0,
    PFI_EINVAL = -1,       /* bad argument or bad input data */
    PFI_ENOMEM = -2,       /* allocation failed */
    PFI_EIO = -3,          /* file or socket I/O failed */
    PFI_EPARSE = -4,       /* malformed input text */
    PFI_ERANGE = -5,       /* value outside its allowed range */
    PFI_ENOTSUP = -6,      /* the action is not supported: nothing happened */
    PFI_ENOTFOUND = -7,    /* no such group, job, device or field */
    PFI_EUNDEFINED = -8,   /* the quantity is mathematically undefined here */
    PFI_ENODATA = -9,      /* too few data points for the computation */
    PFI_EINFEASIBLE = -10, /* constraints cannot all be met */
    PFI_ESTATE = -11,      /* not allowed in the current state (e.g. read-only) */
    PFI_EBACKEND = -12,    /* a telemetry backend or library call failed */
};

typedef struct pfi_error {
    int code;       /* the status returned alongside */
    char file[256]; /* input file the error is about, "" if none */
    long line;      /* 1-based line in file, 0 if none */
    char msg[512];  /* one sentence, no trailing newline */
} pfi_error;

/* A static, never-NULL description of a status code. */
const char *pfi_strerror(int code);

/* Fills err (if non-NULL) and returns code, so callers can write
 * `return pfi_error_set(err, PFI_EPARSE, path, line, "bad %s", x);`. */
int pfi_error_set(pfi_error *err, int code, const char *file, long line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Clears err to PFI_OK with empty fields. */
void pfi_error_clear(pfi_error *err);

/* Writes "file:line: msg" (or the parts present) into buf. */
void pfi_error_format(const pfi_error *err, char *buf, size_t len);

#endif
