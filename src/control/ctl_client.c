/* pfi_ctl_call and token files (include/control/pfi/ctl_client.h). */
#include "pfi/ctl_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pfi/fileio.h"
#include "pfi/http_client.h"

int pfi_ctl_call(const char *base, const char *method, const char *path, const char *token,
                 const char *body, double timeout_s, long *status, char **answer, pfi_error *err)
{
    *answer = NULL;
    CURL *h = pfi_http_handle();
    if (!h) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "cannot start libcurl");
    char url[2048];
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/')
        n--;
    snprintf(url, sizeof url, "%.*s%s", (int)n, base, path);
    pfi_http_buf b = {0};
    pfi_http_req r = {.method = method,
                      .url = url,
                      .bearer = token,
                      .body = body,
                      .timeout_s = timeout_s,
                      .user_agent = "pfi-control/" PFI_VERSION};
    int rc = pfi_http_do(h, &r, status, &b, err);
    curl_easy_cleanup(h);
    if (rc == PFI_OK)
        *answer = b.data;
    else
        pfi_http_buf_free(&b);
    return rc;
}

int pfi_ctl_read_token(const char *path, size_t min_len, char *out, size_t cap, pfi_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return pfi_error_set(err, PFI_EIO, path, 0, "cannot read the token file");
    if (st.st_mode & 077)
        return pfi_error_set(err, PFI_EINVAL, path, 0,
                             "the token file is accessible by group or others (chmod 600 it)");
    char *buf;
    size_t len;
    int rc = pfi_file_read_all(path, &buf, &len, err);
    if (rc != PFI_OK) return rc;
    size_t k = 0;
    while (k < len && buf[k] != '\n' && buf[k] != '\r')
        k++;
    int ok = k >= min_len && k > 0 && k < cap;
    for (size_t i = 0; ok && i < k; i++)
        ok = buf[i] > 0x20 && buf[i] < 0x7f;
    if (ok) {
        memcpy(out, buf, k);
        out[k] = '\0';
    }
    memset(buf, 0, len);
    free(buf);
    if (!ok)
        return pfi_error_set(err, PFI_EINVAL, path, 1,
                             "expected one line of %zu or more printable characters",
                             min_len ? min_len : 1);
    return PFI_OK;
}
