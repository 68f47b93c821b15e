/* Lock files that name their holder: a taken lock holds our PID and a
 * CLOEXEC descriptor; a second take (another process, or another open file
 * description in this one) is refused with the holder's PID and leaves the
 * file alone; the kernel frees the lock when its holder dies; a probe neither
 * creates the file nor writes to it, and releases a free lock at once; a
 * NO_PID lock never touches the file's content (pfid's SQLite store). */
#include "test_util.h"

#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pfi/fileio.h"
#include "pfi/lockfile.h"

typedef struct {
    char dir[64];
    char path[128];
} fixture;

static int setup(void **state)
{
    fixture *x = calloc(1, sizeof *x);
    strcpy(x->dir, "/tmp/pfi-lockfile-XXXXXX");
    if (!mkdtemp(x->dir)) return -1;
    snprintf(x->path, sizeof x->path, "%s/x.lock", x->dir);
    *state = x;
    return 0;
}

static int teardown(void **state)
{
    fixture *x = *state;
    unlink(x->path);
    rmdir(x->dir);
    free(x);
    return 0;
}

/* The file's whole content ("" when missing). */
static const char *content(const char *path)
{
    static char buf[256];
    char *all = NULL;
    size_t n = 0;
    buf[0] = '\0';
    if (pfi_file_read_all(path, &all, &n, NULL) == PFI_OK) snprintf(buf, sizeof buf, "%s", all);
    free(all);
    return buf;
}

/* Holds path's lock through an open file description of our own, as another
 * process would. */
static int hold(const char *path)
{
    int f = open(path, O_RDWR);
    assert_true(f >= 0);
    assert_int_equal(flock(f, LOCK_EX | LOCK_NB), 0);
    return f;
}

static void taken_holds_our_pid_cloexec(void **state)
{
    fixture *x = *state;
    test_write_file(x->path, "999999 an older, longer holder's line\n");
    int fd = -2;
    long holder = -1;
    pfi_error err = {0};
    assert_int_equal(pfi_lockfile_take(x->path, 0, &fd, &holder, &err), PFI_OK);
    assert_true(fd >= 0);
    assert_int_equal(holder, 0);
    int fdflags = fcntl(fd, F_GETFD);
    assert_true(fdflags >= 0 && (fdflags & FD_CLOEXEC));
    char want[32];
    snprintf(want, sizeof want, "%ld\n", (long)getpid());
    assert_string_equal(content(x->path), want);
    pfi_lockfile_release(fd);
    pfi_lockfile_release(-1); /* a no-op */
}

static void created_with_mode(void **state)
{
    fixture *x = *state;
    mode_t old = umask(022);
    struct stat st;
    int fd;
    assert_int_equal(pfi_lockfile_take(x->path, 0, &fd, NULL, NULL), PFI_OK);
    assert_int_equal(stat(x->path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    pfi_lockfile_release(fd);
    unlink(x->path);
    assert_int_equal(pfi_lockfile_take(x->path, PFI_LOCKFILE_PRIVATE, &fd, NULL, NULL), PFI_OK);
    assert_int_equal(stat(x->path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    pfi_lockfile_release(fd);
    umask(old);
}

/* A child takes the lock and waits; we are refused with its PID, and the
 * file still names it; once the child is gone the lock is ours. */
static void refused_names_holder_until_it_dies(void **state)
{
    fixture *x = *state;
    int ready[2], go[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(go), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(ready[0]), close(go[1]);
        int fd;
        char c = pfi_lockfile_take(x->path, 0, &fd, NULL, NULL) == PFI_OK ? 'y' : 'n';
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) < 0) _exit(2);
        _exit(0); /* dies holding the lock: the kernel frees it */
    }
    close(ready[1]), close(go[0]); /* a child that dies early ends our reads */
    char c = 0;
    assert_int_equal(read(ready[0], &c, 1), 1);
    assert_int_equal(c, 'y');

    char want[32];
    snprintf(want, sizeof want, "%ld\n", (long)child);
    int fd = -2;
    long holder = 0;
    pfi_error err = {0};
    assert_int_equal(pfi_lockfile_take(x->path, 0, &fd, &holder, &err), PFI_ESTATE);
    assert_int_equal(fd, -1);
    assert_int_equal(holder, child);
    assert_int_equal(err.code, PFI_ESTATE);
    assert_string_equal(err.file, x->path);
    assert_string_equal(content(x->path), want); /* the refused take wrote nothing */
    /* a probe is refused the same way, and writes nothing either */
    holder = 0;
    assert_int_equal(pfi_lockfile_take(x->path, PFI_LOCKFILE_PROBE, &fd, &holder, &err),
                     PFI_ESTATE);
    assert_int_equal(fd, -1);
    assert_int_equal(holder, child);
    assert_string_equal(content(x->path), want);

    assert_int_equal(write(go[1], "x", 1), 1);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(pfi_lockfile_take(x->path, 0, &fd, &holder, &err), PFI_OK);
    assert_true(fd >= 0);
    pfi_lockfile_release(fd);
    close(ready[0]), close(go[1]);
}

/* flock locks are per open file description: a second take within one
 * process conflicts with the first, and a PID that is not one reads as 0. */
static void second_open_in_process_refused(void **state)
{
    fixture *x = *state;
    int fd1, fd2 = -2;
    long holder = 0;
    assert_int_equal(pfi_lockfile_take(x->path, 0, &fd1, NULL, NULL), PFI_OK);
    assert_int_equal(pfi_lockfile_take(x->path, 0, &fd2, &holder, NULL), PFI_ESTATE);
    assert_int_equal(fd2, -1);
    assert_int_equal(holder, (long)getpid());
    pfi_lockfile_release(fd1);

    const char *junk[] = {"", "abc\n", "12x\n", "-5\n", "0\n"};
    for (size_t i = 0; i < sizeof junk / sizeof *junk; i++) {
        test_write_file(x->path, junk[i]);
        int h = hold(x->path);
        holder = -1;
        assert_int_equal(pfi_lockfile_take(x->path, 0, &fd2, &holder, NULL), PFI_ESTATE);
        assert_int_equal(holder, 0);
        close(h);
    }
}

static void probe_creates_and_writes_nothing(void **state)
{
    fixture *x = *state;
    int fd = -2;
    long holder = -1;
    pfi_error err = {0};
    /* missing file, and a missing folder: free, nothing created */
    assert_int_equal(pfi_lockfile_take(x->path, PFI_LOCKFILE_PROBE, &fd, &holder, &err), PFI_OK);
    assert_int_equal(fd, -1);
    assert_int_equal(holder, 0);
    assert_int_equal(access(x->path, F_OK), -1);
    char deep[192];
    snprintf(deep, sizeof deep, "%s/no/x.lock", x->dir);
    assert_int_equal(pfi_lockfile_take(deep, PFI_LOCKFILE_PROBE, &fd, NULL, &err), PFI_OK);
    assert_int_equal(access(x->path, F_OK), -1);
    /* a free file: its content stays and the lock is released at once */
    test_write_file(x->path, "4242\n");
    fd = -2;
    assert_int_equal(pfi_lockfile_take(x->path, PFI_LOCKFILE_PROBE, &fd, NULL, &err), PFI_OK);
    assert_int_equal(fd, -1);
    assert_string_equal(content(x->path), "4242\n");
    int h = hold(x->path);
    close(h);
}

/* pfid's store: the file is SQLite's; nothing is written to or read from it. */
static void no_pid_leaves_content(void **state)
{
    fixture *x = *state;
    test_write_file(x->path, "SQLite format 3");
    int fd, fd2;
    long holder = -1;
    assert_int_equal(pfi_lockfile_take(x->path, PFI_LOCKFILE_NO_PID, &fd, NULL, NULL), PFI_OK);
    assert_string_equal(content(x->path), "SQLite format 3");
    pfi_lockfile_release(fd);
    test_write_file(x->path, "123\n");
    int h = hold(x->path);
    assert_int_equal(pfi_lockfile_take(x->path, PFI_LOCKFILE_NO_PID, &fd2, &holder, NULL),
                     PFI_ESTATE);
    assert_int_equal(holder, 0);
    close(h);
}

static void open_failure_names_path(void **state)
{
    fixture *x = *state;
    char deep[192];
    snprintf(deep, sizeof deep, "%s/no/x.lock", x->dir);
    int fd = -2;
    pfi_error err = {0};
    assert_int_equal(pfi_lockfile_take(deep, 0, &fd, NULL, &err), PFI_EIO);
    assert_int_equal(fd, -1);
    assert_string_equal(err.file, deep);
    assert_non_null(strstr(err.msg, "cannot open for locking"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(taken_holds_our_pid_cloexec, setup, teardown),
        cmocka_unit_test_setup_teardown(created_with_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(refused_names_holder_until_it_dies, setup, teardown),
        cmocka_unit_test_setup_teardown(second_open_in_process_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(probe_creates_and_writes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(no_pid_leaves_content, setup, teardown),
        cmocka_unit_test_setup_teardown(open_failure_names_path, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
