/* All-or-nothing file writes: the file appears only when the writer succeeds,
 * with an ordinary mode, and a failure leaves nothing behind. */
#include "test_util.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pfi/fileio.h"

static int write_ok(FILE *f, void *ctx)
{
    fputs((const char *)ctx, f);
    return PFI_OK;
}

static int write_fails(FILE *f, void *ctx)
{
    fputs("half a table", f);
    return PFI_EIO;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

static void atomic_write(void **state)
{
    char dir[] = "/tmp/pfi-fileio-XXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.csv", dir);
    mode_t old = umask(022);
    pfi_error err = {0};

    assert_int_equal(pfi_file_write_atomic(path, write_fails, NULL, &err), PFI_EIO);
    assert_int_equal(count_entries(dir), 0); /* no partial file, no temporary */

    assert_int_equal(pfi_file_write_atomic(path, write_ok, "a,b\n", &err), PFI_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    char *buf;
    size_t len;
    assert_int_equal(pfi_file_read_all(path, &buf, &len, &err), PFI_OK);
    assert_string_equal(buf, "a,b\n");
    free(buf);

    /* A failed rewrite keeps the old content; a replacement keeps the mode. */
    assert_int_equal(pfi_file_write_atomic(path, write_fails, NULL, &err), PFI_EIO);
    assert_int_equal(pfi_file_read_all(path, &buf, &len, &err), PFI_OK);
    assert_string_equal(buf, "a,b\n");
    free(buf);
    chmod(path, 0640);
    assert_int_equal(pfi_file_write_atomic(path, write_ok, "c\n", &err), PFI_OK);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(count_entries(dir), 1);

    /* A folder that does not exist: an error naming the path. */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/no/such/dir.csv", dir);
    assert_int_equal(pfi_file_write_atomic(bad, write_ok, "x", &err), PFI_EIO);
    assert_string_equal(err.file, bad);
    umask(old);
    unlink(path);
    rmdir(dir);
}

/* A pipe (or a device, or /dev/stdout, a link to one) is never replaced by a
 * rename: before the guard, `--telemetry /dev/stdout` as root replaced
 * /dev/stdout with a regular file. A FIFO stands in for the device here. */
static void atomic_write_not_regular(void **state)
{
    char dir[] = "/tmp/pfi-fileio-XXXXXX", fifo[256];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pfi_error err = {0};
    assert_int_equal(pfi_file_write_atomic(fifo, write_ok, "x", &err), PFI_EINVAL);
    assert_non_null(strstr(err.msg, "not a regular file"));
    struct stat st;
    assert_int_equal(stat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(count_entries(dir), 1);
    unlink(fifo);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(atomic_write),
                                       cmocka_unit_test(atomic_write_not_regular)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
