/* A secret read from a file: the bearer tokens of pfid and pfi control, the
 * VTN client secret, the Slurm plugin's token. One reader, one set of rules:
 *
 *   - the file is opened without blocking (O_NONBLOCK: a FIFO or a device
 *     given by mistake is refused, it cannot hang a start) and judged by
 *     fstat of what was opened, never by a stat of the path before it (no
 *     window to swap the file). A symbolic link is followed: Kubernetes
 *     mounts each key of a Secret as one (token -> ..data/token), and what
 *     counts is the file it leads to;
 *   - a regular file, not readable, writable or executable by group or
 *     others (a token others can read is no secret), at most
 *     PFI_TOKEN_FILE_MAX bytes; with PFI_TOKEN_ROOT_OWNED also root's;
 *   - one line: the token, then at most a newline (LF or CRLF) and trailing
 *     blanks, which are dropped; anything on a later line is refused;
 *   - printable ASCII without spaces (0x21-0x7e), min_len to cap - 1
 *     characters.
 *
 * Every refusal names the file (err->file; err->line 1 for the contents) and
 * says what to change. The bytes read are cleared before return.
 */
#ifndef PFI_TOKEN_FILE_H
#define PFI_TOKEN_FILE_H

#include <stddef.h>

#include "pfi/error.h"

#define PFI_TOKEN_FILE_MAX 4096

enum { PFI_TOKEN_ROOT_OWNED = 1 };

/* Reads the token at path into out (cap bytes, NUL-terminated). PFI_EIO when
 * the file cannot be opened or read, PFI_EINVAL when it breaks a rule. */
int pfi_token_file_read(const char *path, size_t min_len, unsigned flags, char *out, size_t cap,
                        pfi_error *err);

#endif
