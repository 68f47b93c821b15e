/* The token-file reader (include/io/pfi/token_file.h). Self-contained but
 * for pfi_error_set: the Slurm plugin, built apart from pfi's libraries,
 * compiles this file and core's error.c into itself. */
#include "pfi/token_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *file_kind(mode_t m)
{
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISDIR(m)) return "a directory";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

/* The file's bytes (at most PFI_TOKEN_FILE_MAX) into buf, after the checks
 * on what was opened; *n their count. */
static int read_checked(const char *path, unsigned flags, char *buf, size_t *n, pfi_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return pfi_error_set(err, PFI_EIO, path, 0, "cannot open the token file: %s",
                             strerror(errno));
    struct stat st;
    int rc = PFI_OK;
    if (fstat(fd, &st) != 0)
        rc =
            pfi_error_set(err, PFI_EIO, path, 0, "cannot stat the token file: %s", strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc =
            pfi_error_set(err, PFI_EINVAL, path, 0,
                          "the token file is %s; it must be a regular file", file_kind(st.st_mode));
    else if (st.st_mode & (S_IRWXG | S_IRWXO))
        rc = pfi_error_set(err, PFI_EINVAL, path, 0,
                           "the token file is accessible by group or others (mode %04o); "
                           "chmod 600 it",
                           (unsigned)(st.st_mode & 07777));
    else if ((flags & PFI_TOKEN_ROOT_OWNED) && st.st_uid != 0)
        rc = pfi_error_set(err, PFI_EINVAL, path, 0,
                           "the token file belongs to uid %u; it must be root's",
                           (unsigned)st.st_uid);
    else if (st.st_size > PFI_TOKEN_FILE_MAX)
        rc = pfi_error_set(err, PFI_EINVAL, path, 0,
                           "the token file has %lld bytes, more than a token's %d",
                           (long long)st.st_size, PFI_TOKEN_FILE_MAX);
    *n = 0;
    /* One byte more than allowed: a file that grew after fstat is caught. */
    while (rc == PFI_OK && *n <= PFI_TOKEN_FILE_MAX) {
        ssize_t r = read(fd, buf + *n, PFI_TOKEN_FILE_MAX + 1 - *n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0)
            rc = pfi_error_set(err, PFI_EIO, path, 0, "cannot read the token file: %s",
                               strerror(errno));
        if (r <= 0) break;
        *n += (size_t)r;
    }
    if (rc == PFI_OK && *n > PFI_TOKEN_FILE_MAX)
        rc = pfi_error_set(err, PFI_EINVAL, path, 0, "the token file has more than %d bytes",
                           PFI_TOKEN_FILE_MAX);
    close(fd);
    return rc;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* The token's length in buf (n bytes) by the file's rules. */
static int parse(const char *path, const char *buf, size_t n, size_t min_len, size_t cap,
                 size_t *len, pfi_error *err)
{
    size_t eol = 0;
    while (eol < n && buf[eol] != '\n')
        eol++;
    for (size_t i = eol; i < n; i++)
        if (buf[i] != '\n' && !is_blank(buf[i]))
            return pfi_error_set(err, PFI_EINVAL, path, 1,
                                 "the token file has more than one line; it must hold the "
                                 "token alone");
    size_t l = eol;
    while (l > 0 && is_blank(buf[l - 1]))
        l--;
    if (l == 0) return pfi_error_set(err, PFI_EINVAL, path, 1, "the token file is empty");
    for (size_t i = 0; i < l; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c <= 0x20 || c >= 0x7f)
            return pfi_error_set(err, PFI_EINVAL, path, 1,
                                 "character %zu of the token is %s; a token is printable "
                                 "ASCII without spaces",
                                 i + 1, c == ' ' || c == '\t' ? "a blank" : "not printable ASCII");
    }
    if (l < min_len || l >= cap)
        return pfi_error_set(err, PFI_EINVAL, path, 1,
                             "the token has %zu characters; it must have %zu to %zu", l,
                             min_len ? min_len : 1, cap ? cap - 1 : 0);
    *len = l;
    return PFI_OK;
}

int pfi_token_file_read(const char *path, size_t min_len, unsigned flags, char *out, size_t cap,
                        pfi_error *err)
{
    if (cap) out[0] = '\0';
    char buf[PFI_TOKEN_FILE_MAX + 1];
    size_t n = 0, len = 0;
    int rc = read_checked(path, flags, buf, &n, err);
    if (rc == PFI_OK) rc = parse(path, buf, n, min_len, cap, &len, err);
    if (rc == PFI_OK) {
        memcpy(out, buf, len);
        out[len] = '\0';
    }
    /* volatile: the clearing of a buffer about to die is not optimised out */
    volatile char *v = buf;
    for (size_t i = 0; i < n; i++)
        v[i] = 0;
    return rc;
}
