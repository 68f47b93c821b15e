/* Shared pieces of the pfi subcommands: each lives in cmd_<name>.c and is
 * listed in pfi.c's table. Subcommands stay thin: parse flags, call core,
 * print. */
#ifndef PFI_CLI_H
#define PFI_CLI_H

#include <stddef.h>
#include <stdio.h>

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

/* ---- Options: one table per command, one parser ----
 * Each subcommand lists its options once, in a table of pfi_cli_opt; the
 * parser (getopt_long underneath, so abbreviations, --opt=value and options
 * after arguments work as before) reads argv by it, and --help prints the
 * same table, so what --help lists is what is accepted. A setter turns one
 * argument into dst and returns -1 to refuse it; the parser then prints
 * `bad` (a printf format given the argument) as a usage error. */
typedef struct pfi_cli_opt pfi_cli_opt;
struct pfi_cli_opt {
    const char *name; /* long name, without "--" */
    char short_name;  /* or 0 */
    const char *arg;  /* its argument in --help ("W"); NULL for a flag */
    int (*set)(const pfi_cli_opt *o, const char *arg);
    void *dst;
    const char *bad;  /* NULL: "bad --NAME 'ARG'" */
    const char *help; /* one line of --help */
    double lo, hi;    /* bounds, for the setters that say so */
};

typedef struct pfi_cli_spec {
    const char *cmd;   /* "index" */
    const char *usage; /* what follows "Usage: pfi index " */
    const char *about; /* a few lines: what the command does */
    const pfi_cli_opt *opts;
    size_t n_opts;
    int stop_at_arg;  /* options end at the first argument (sweep's COMMAND) */
    const char *page; /* the man page --help points to; NULL: "pfi-CMD(1)" */
} pfi_cli_spec;

#define PFI_CLI_N(a) (sizeof(a) / sizeof((a)[0]))
/* A table row: long name, argument name (NULL: a flag), setter, dst, the
 * refusal's format (NULL: the default), help line; _R adds bounds, _S a
 * short letter. */
#define PFI_OPT(name, arg, set, dst, bad, help)                                                    \
    {                                                                                              \
        name, 0, arg, set, dst, bad, help, 0, 0                                                    \
    }
#define PFI_OPT_R(name, arg, set, dst, bad, help, lo, hi)                                          \
    {                                                                                              \
        name, 0, arg, set, dst, bad, help, lo, hi                                                  \
    }
#define PFI_OPT_S(name, sh, arg, set, dst, bad, help)                                              \
    {                                                                                              \
        name, sh, arg, set, dst, bad, help, 0, 0                                                   \
    }

/* Parses argv by s. Returns -1 when the command goes on, with *first the
 * index of its first argument; else the exit status to return (--help
 * printed: 0; a usage error printed: 2), having freed what list options
 * had allocated. A setter returns 0 (taken), -1 (refused: the parser
 * prints `bad`), -2 (refused, it printed why: usage error) or an exit
 * status > 0 (it printed why). */
int pfi_cli_parse(const pfi_cli_spec *s, int argc, char **argv, int *first);
/* The help text: usage, about, the options, and "See pfi-CMD(1)." */
void pfi_cli_help(const pfi_cli_spec *s, FILE *f);

/* Setters. dst's type is in the name's comment. */
int pfi_cli_set_flag(const pfi_cli_opt *o, const char *arg);    /* int: 1 */
int pfi_cli_set_bits(const pfi_cli_opt *o, const char *arg);    /* unsigned: |= lo */
int pfi_cli_set_str(const pfi_cli_opt *o, const char *arg);     /* const char * */
int pfi_cli_set_num(const pfi_cli_opt *o, const char *arg);     /* double, in [lo, hi] */
int pfi_cli_set_pos(const pfi_cli_opt *o, const char *arg);     /* double, > 0 */
int pfi_cli_set_nonneg(const pfi_cli_opt *o, const char *arg);  /* double, >= 0 */
int pfi_cli_set_ull(const pfi_cli_opt *o, const char *arg);     /* unsigned long long, [lo, hi] */
int pfi_cli_set_size(const pfi_cli_opt *o, const char *arg);    /* size_t, [lo, hi] */
int pfi_cli_set_uint(const pfi_cli_opt *o, const char *arg);    /* unsigned, [lo, hi] */
int pfi_cli_set_doubles(const pfi_cli_opt *o, const char *arg); /* pfi_cli_list */

/* A comma-separated list of numbers (malloc'd; a repeated option replaces). */
typedef struct pfi_cli_list {
    double *v;
    size_t n;
} pfi_cli_list;

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
/* pfi control run (cmd_control_run.c), called by pfi_cmd_control. */
int pfi_cmd_control_run(int argc, char **argv);

#endif
