#include "pfi/fileio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int pfi_file_read_all(const char *path, char **buf, size_t *len, pfi_error *err)
{
    *buf = NULL;
    *len = 0;
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) return pfi_error_set(err, PFI_EIO, path, 0, "cannot open: %s", strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    if (!b) {
        if (!is_stdin) fclose(f);
        return pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    }
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                if (!is_stdin) fclose(f);
                return pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
            }
            b = nb;
        }
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    int failed = ferror(f);
    int e = errno;
    if (!is_stdin) fclose(f);
    if (failed) {
        free(b);
        return pfi_error_set(err, PFI_EIO, path, 0, "read failed: %s", strerror(e));
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return PFI_OK;
}

int pfi_file_write_atomic(const char *path, int (*write)(FILE *f, void *ctx), void *ctx,
                          pfi_error *err)
{
    /* Renaming over a device, a pipe or a terminal would replace it (as
     * root, /dev/stdout itself, a link to one): only regular files are
     * replaced. */
    struct stat pre;
    if (stat(path, &pre) == 0 && !S_ISREG(pre.st_mode))
        return pfi_error_set(err, PFI_EINVAL, path, 0,
                             "not a regular file: refusing to replace it");
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp) return pfi_error_set(err, PFI_ENOMEM, path, 0, "out of memory");
    snprintf(tmp, n, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return pfi_error_set(err, PFI_EIO, path, 0, "cannot create: %s", strerror(e));
    }
    /* mkstemp makes the file 0600; give it the mode a plain fopen would have
     * (or the mode of the file it replaces), so rebuilt data stays readable. */
    struct stat st;
    mode_t mode;
    if (stat(path, &st) == 0) {
        mode = st.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    (void)fchmod(fd, mode);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        free(tmp);
        return pfi_error_set(err, PFI_EIO, path, 0, "cannot open: %s", strerror(errno));
    }
    int rc = write(f, ctx);
    if (rc == PFI_OK && (fflush(f) != 0 || fsync(fileno(f)) != 0 || ferror(f)))
        rc = pfi_error_set(err, PFI_EIO, path, 0, "write failed: %s", strerror(errno));
    if (fclose(f) != 0 && rc == PFI_OK)
        rc = pfi_error_set(err, PFI_EIO, path, 0, "write failed: %s", strerror(errno));
    if (rc == PFI_OK && rename(tmp, path) != 0)
        rc = pfi_error_set(err, PFI_EIO, path, 0, "cannot rename into place: %s", strerror(errno));
    if (rc != PFI_OK) unlink(tmp);
    free(tmp);
    return rc;
}
