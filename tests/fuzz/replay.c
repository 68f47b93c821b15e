/* Replays a fuzzer's corpus outside libFuzzer: links with one fuzz_X.c and
 * feeds LLVMFuzzerTestOneInput every file named on the command line (or found
 * in a folder named there), so the normal and sanitizer builds run each
 * corpus as a ctest case. A fuzzer's own checks end in __builtin_trap, which
 * fails the test; a corpus that is missing or empty fails it too, so a case
 * cannot pass by replaying nothing. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: cannot open\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else {
                buf = nb;
            }
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: %s: out of memory\n", path);
        return -1;
    }
    /* an exact-size copy, so ASan sees a read past the input's end */
    uint8_t *exact = malloc(n ? n : 1);
    if (exact) memcpy(exact, buf, n);
    free(buf);
    if (!exact) return -1;
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int replay_path(const char *path, size_t *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: not found\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (replay_file(path) != 0) return -1;
        (*count)++;
        return 0;
    }
    DIR *d = opendir(path);
    if (!d) return -1;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *sub = malloc(len);
        if (!sub) {
            rc = -1;
            break;
        }
        snprintf(sub, len, "%s/%s", path, e->d_name);
        rc = replay_path(sub, count);
        free(sub);
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    size_t count = 0;
    for (int i = 1; i < argc; i++)
        if (replay_path(argv[i], &count) != 0) return 1;
    if (count == 0) {
        fprintf(stderr, "replay: no corpus files given\n");
        return 1;
    }
    printf("replay: %zu input(s) ran clean\n", count);
    return 0;
}
