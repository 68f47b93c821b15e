/* Whole-file reads and all-or-nothing writes. */
#ifndef PFI_FILEIO_H
#define PFI_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "pfi/error.h"

/* Reads a whole file ("-" = standard input) into a malloc'd, NUL-terminated
 * buffer the caller frees; *len excludes the terminator. */
int pfi_file_read_all(const char *path, char **buf, size_t *len, pfi_error *err);

/* Writes a file all-or-nothing: `write` fills a temporary file in the same
 * folder, which is renamed over `path` only when write returns PFI_OK and the
 * data reached the disk. On failure no file (and no partial file) is left. */
int pfi_file_write_atomic(const char *path, int (*write)(FILE *f, void *ctx), void *ctx,
                          pfi_error *err);

#endif
