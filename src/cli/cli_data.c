/* Where pfi finds its embedded dataset (data/paper-h200 of the source tree,
 * share/pfi/paper-h200 once installed). The order, first that exists:
 * --data, $PFI_DATA_DIR, beside the executable (<bindir>/../share/pfi: an
 * installed pfi, also under a DESTDIR or a moved prefix), the source tree
 * (the executable is <tree>/<build>/pfi), the compiled-in install folder,
 * ./data. The source tree comes before the compiled-in folder so that a
 * build tree never reads an older installed copy. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#ifndef PFI_DATADIR
#define PFI_DATADIR "/usr/local/share/pfi"
#endif
#ifndef PFI_BIN_TO_DATADIR
#define PFI_BIN_TO_DATADIR "../share/pfi"
#endif

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The folder of the running executable; -1 when /proc/self/exe is unreadable. */
static int exe_dir(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = 0;
    char *s = strrchr(exe, '/');
    if (!s) return -1;
    *s = 0;
    return snprintf(out, len, "%s", exe) < (int)len ? 0 : -1;
}

int pfi_cli_source_tree(char *out, size_t len)
{
    char dir[PATH_MAX];
    if (exe_dir(dir, sizeof dir)) return -1;
    char *s = strrchr(dir, '/');
    if (!s) return -1;
    *s = 0;
    return snprintf(out, len, "%s", dir) < (int)len ? 0 : -1;
}

int pfi_cli_data_dir(const char *given, char *out, size_t len)
{
    const char *env = getenv("PFI_DATA_DIR");
    if (given && *given) return snprintf(out, len, "%s", given) < (int)len ? 0 : -1;
    if (env && *env) return snprintf(out, len, "%s", env) < (int)len ? 0 : -1;
    char dir[PATH_MAX], cand[PATH_MAX + 64];
    if (exe_dir(dir, sizeof dir) == 0) {
        snprintf(cand, sizeof cand, "%s/" PFI_BIN_TO_DATADIR "/paper-h200", dir);
        if (is_dir(cand)) return snprintf(out, len, "%s", cand) < (int)len ? 0 : -1;
    }
    if (pfi_cli_source_tree(dir, sizeof dir) == 0) {
        snprintf(cand, sizeof cand, "%s/data/paper-h200", dir);
        if (is_dir(cand)) return snprintf(out, len, "%s", cand) < (int)len ? 0 : -1;
    }
    if (is_dir(PFI_DATADIR "/paper-h200"))
        return snprintf(out, len, "%s", PFI_DATADIR "/paper-h200") < (int)len ? 0 : -1;
    return snprintf(out, len, "data/paper-h200") < (int)len ? 0 : -1;
}
