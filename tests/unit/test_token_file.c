/* The one token-file reader (pfi/token_file.h): each rule, and the FIFO
 * that used to hang pfid's start (issue 27 item 8, issue 30 item 5). */
#include "test_util.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pfi/token_file.h"

static char dir[64];

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/pfi-token-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A file of `len` bytes of text in the test folder, with mode. */
static const char *put(const char *name, const char *text, size_t len, mode_t mode)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

static int rd(const char *path, size_t min_len, unsigned flags, char *out, size_t cap,
              pfi_error *err)
{
    pfi_error_clear(err);
    return pfi_token_file_read(path, min_len, flags, out, cap, err);
}

#define TOK "0123456789abcdef0123"

static void accepts_one_line(void **state)
{
    char tok[64];
    pfi_error err;
    static const char *const ok[] = {TOK,          TOK "\n",   TOK "\r\n",
                                     TOK "  \t\n", TOK "\n\n", TOK "\n  \n"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        const char *p = put("t", ok[i], strlen(ok[i]), 0600);
        assert_int_equal(rd(p, 16, 0, tok, sizeof tok, &err), PFI_OK);
        assert_string_equal(tok, TOK);
    }
    /* 0400 (Kubernetes' defaultMode in contrib) is fine too */
    const char *p = put("t", TOK "\n", strlen(TOK) + 1, 0400);
    assert_int_equal(rd(p, 16, 0, tok, sizeof tok, &err), PFI_OK);
}

static void refuses_group_or_other_access(void **state)
{
    char tok[64];
    pfi_error err;
    static const mode_t bad[] = {0640, 0604, 0620, 0602, 0610, 0601, 0644};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *p = put("t", TOK "\n", strlen(TOK) + 1, bad[i]);
        assert_int_equal(rd(p, 16, 0, tok, sizeof tok, &err), PFI_EINVAL);
        assert_string_equal(err.file, p);
        assert_non_null(strstr(err.msg, "group or others"));
        assert_non_null(strstr(err.msg, "chmod 600"));
        assert_string_equal(tok, "");
    }
}

static void refuses_a_fifo_without_hanging(void **state)
{
    char path[128], link_path[128], tok[64];
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    pfi_error err;
    /* No writer: a blocking open would wait here for ever. */
    assert_int_equal(rd(path, 16, 0, tok, sizeof tok, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "a FIFO"));
    assert_non_null(strstr(err.msg, "regular file"));
    assert_string_equal(err.file, path);
    /* nor through a symbolic link */
    snprintf(link_path, sizeof link_path, "%s/fifo-link", dir);
    assert_int_equal(symlink(path, link_path), 0);
    assert_int_equal(rd(link_path, 16, 0, tok, sizeof tok, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "a FIFO"));
}

static void refuses_other_kinds(void **state)
{
    char tok[64];
    pfi_error err;
    assert_int_equal(rd(dir, 16, 0, tok, sizeof tok, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "a directory"));
    assert_int_equal(rd("/dev/null", 16, 0, tok, sizeof tok, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "character device"));
    char missing[128];
    snprintf(missing, sizeof missing, "%s/missing", dir);
    assert_int_equal(rd(missing, 16, 0, tok, sizeof tok, &err), PFI_EIO);
    assert_non_null(strstr(err.msg, "No such file"));
    assert_string_equal(err.file, missing);
}

/* Kubernetes mounts each key of a Secret as a symbolic link. */
static void follows_a_link_to_a_private_file(void **state)
{
    char link_path[128], tok[64];
    const char *p = put("..data-token", TOK "\n", strlen(TOK) + 1, 0400);
    snprintf(link_path, sizeof link_path, "%s/token", dir);
    assert_int_equal(symlink(p, link_path), 0);
    pfi_error err;
    assert_int_equal(rd(link_path, 16, 0, tok, sizeof tok, &err), PFI_OK);
    assert_string_equal(tok, TOK);
    assert_int_equal(chmod(p, 0444), 0); /* the target's mode is what counts */
    assert_int_equal(rd(link_path, 16, 0, tok, sizeof tok, &err), PFI_EINVAL);
}

static void refuses_a_large_file(void **state)
{
    char big[PFI_TOKEN_FILE_MAX + 2], tok[64];
    memset(big, 'a', sizeof big);
    pfi_error err;
    const char *p = put("t", big, sizeof big, 0600);
    assert_int_equal(rd(p, 16, 0, tok, sizeof tok, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "bytes"));
    /* exactly the bound: read, then refused for its length, not its size */
    p = put("t", big, PFI_TOKEN_FILE_MAX, 0600);
    assert_int_equal(rd(p, 16, 0, tok, sizeof tok, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "4096 characters"));
}

static void refuses_a_second_line(void **state)
{
    char tok[64];
    pfi_error err;
    const char *p = put("t", TOK "\nother\n", strlen(TOK) + 7, 0600);
    assert_int_equal(rd(p, 16, 0, tok, sizeof tok, &err), PFI_EINVAL);
    assert_int_equal(err.line, 1);
    assert_non_null(strstr(err.msg, "more than one line"));
    assert_string_equal(tok, "");
}

static void refuses_what_is_not_printable_ascii(void **state)
{
    char tok[64];
    pfi_error err;
    static const char *const bad[] = {"0123456789 abcdef", " 0123456789abcdef",
                                      "0123456789abcdef\x01", "0123456789abcd\xc3\xa9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *p = put("t", bad[i], strlen(bad[i]), 0600);
        assert_int_equal(rd(p, 16, 0, tok, sizeof tok, &err), PFI_EINVAL);
        assert_non_null(strstr(err.msg, "printable ASCII"));
    }
    const char nul[] = "0123456789abcdef\0tail";
    const char *p = put("t", nul, sizeof nul - 1, 0600);
    assert_int_equal(rd(p, 16, 0, tok, sizeof tok, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "character 17"));
}

static void bounds_the_length(void **state)
{
    char tok[21];
    pfi_error err;
    const char *p = put("t", "short\n", 6, 0600);
    assert_int_equal(rd(p, 16, 0, tok, sizeof tok, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "has 5 characters; it must have 16 to 20"));
    p = put("t", TOK "x\n", strlen(TOK) + 2, 0600); /* 21 > cap - 1 */
    assert_int_equal(rd(p, 16, 0, tok, sizeof tok, &err), PFI_EINVAL);
    p = put("t", TOK "\n", strlen(TOK) + 1, 0600); /* 20: fits */
    assert_int_equal(rd(p, 16, 0, tok, sizeof tok, &err), PFI_OK);
    p = put("t", "", 0, 0600);
    assert_int_equal(rd(p, 1, 0, tok, sizeof tok, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "empty"));
    p = put("t", " \n\n", 3, 0600);
    assert_int_equal(rd(p, 1, 0, tok, sizeof tok, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "empty"));
    p = put("t", "s\n", 2, 0600); /* a client secret may be short */
    assert_int_equal(rd(p, 1, 0, tok, sizeof tok, &err), PFI_OK);
    assert_string_equal(tok, "s");
}

static void root_owned_when_asked(void **state)
{
    char tok[64];
    pfi_error err;
    const char *p = put("t", TOK "\n", strlen(TOK) + 1, 0600);
    if (geteuid() != 0) skip();
    assert_int_equal(rd(p, 16, PFI_TOKEN_ROOT_OWNED, tok, sizeof tok, &err), PFI_OK);
    assert_int_equal(chown(p, 1, 1), 0);
    assert_int_equal(rd(p, 16, 0, tok, sizeof tok, &err), PFI_OK);
    assert_int_equal(rd(p, 16, PFI_TOKEN_ROOT_OWNED, tok, sizeof tok, &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "root's"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accepts_one_line),
        cmocka_unit_test(refuses_group_or_other_access),
        cmocka_unit_test(refuses_a_fifo_without_hanging),
        cmocka_unit_test(refuses_other_kinds),
        cmocka_unit_test(follows_a_link_to_a_private_file),
        cmocka_unit_test(refuses_a_large_file),
        cmocka_unit_test(refuses_a_second_line),
        cmocka_unit_test(refuses_what_is_not_printable_ascii),
        cmocka_unit_test(bounds_the_length),
        cmocka_unit_test(root_owned_when_asked),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
