/* Shared pieces of the pfi subcommands: each lives in cmd_<name>.c and is
 * listed in pfi.c's table. Subcommands stay thin: parse flags, call core,
 * print. */
#ifndef PFI_CLI_H
#define PFI_CLI_H

#include <stddef.h>

#include "pfi/error.h"

typedef struct pfi_cli_cmd {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} pfi_cli_cmd;

/* Exit codes: 0 ok, 1 bad input data or a failed computation, 2 bad usage. */
enum { PFI_EXIT_OK = 0, PFI_EXIT_DATA = 1, PFI_EXIT_USAGE = 2 };

/* Prints "pfi CMD: file:line: message" to stderr and returns PFI_EXIT_DATA. */
int pfi_cli_fail(const char *cmd, const pfi_error *err);
/* Prints "pfi CMD: message" and a --help hint to stderr; returns PFI_EXIT_USAGE. */
int pfi_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parses "200,500,700" into a malloc'd array; -1 on a bad list. */
int pfi_cli_parse_doubles(const char *s, double **out, size_t *n);
/* Power reductions, one unit everywhere (allocate --reduction, simulate
 * --reductions): each a fraction in [0, 1) such as 0.3, or a percent with
 * its sign such as 30%; stored as the fraction. Comma-separated; -1 on a
 * malformed list or a value outside [0, 1). */
int pfi_cli_parse_reductions(const char *s, double **out, size_t *n);
/* Parses one finite number; -1 on anything else (lists included). */
int pfi_cli_parse_double(const char *s, double *out);
/* Parses a whole non-negative integer; -1 on anything else. */
int pfi_cli_parse_ulong(const char *s, unsigned long long *out);
/* The source tree pfi was built in (the executable is <tree>/<build>/pfi);
 * -1 when the executable's path is unknown. */
int pfi_cli_source_tree(char *out, size_t len);
/* The embedded dataset's folder (paper-h200): `given` (--data), else
 * $PFI_DATA_DIR, else the installed share/pfi beside the executable, the
 * source tree, the compiled-in install folder, ./data (cli_data.c). */
int pfi_cli_data_dir(const char *given, char *out, size_t len);
/* Worker threads for parallel loops: online CPUs, at most 8. */
int pfi_cli_threads(void);

int pfi_cmd_index(int argc, char **argv);
int pfi_cmd_model(int argc, char **argv);
int pfi_cmd_dataset(int argc, char **argv);
int pfi_cmd_stats(int argc, char **argv);
int pfi_cmd_corr(int argc, char **argv);
int pfi_cmd_fit(int argc, char **argv);
int pfi_cmd_predict(int argc, char **argv);
int pfi_cmd_compare(int argc, char **argv);
int pfi_cmd_allocate(int argc, char **argv);
int pfi_cmd_simulate(int argc, char **argv);
int pfi_cmd_trace(int argc, char **argv);
int pfi_cmd_export(int argc, char **argv);
int pfi_cmd_sweep(int argc, char **argv);
int pfi_cmd_report(int argc, char **argv);
int pfi_cmd_plot(int argc, char **argv);
int pfi_cmd_control(int argc, char **argv);

#endif
