/* pfi sweep's command line (see its --help, sweep_opts.c). */
#ifndef PFI_SWEEP_OPTS_H
#define PFI_SWEEP_OPTS_H

#include <stddef.h>

#include "sweep_state.h"
#include "trace_cli.h"

typedef struct sweep_opts {
    double *caps; /* malloc'd; free with sweep_opts_free */
    size_t n_caps;
    unsigned gpus[SWEEP_MAX_GPUS];
    size_t n_gpus;
    const char *out, *backend, *backend_opts, *via_pfid, *token_file, *tput_re, *lock_dir;
    double duration, cooldown, interval, tput_scale, tput_timeout, release_timeout, hold;
    long tput_port; /* -1: none */
    pfi_cli_meta meta;
    int resume, dry_run, json;
    char **argv; /* the command */
} sweep_opts;

/* PFI_EXIT_OK, -1 after --help, or the exit status of a usage error
 * (printed). */
int sweep_opts_parse(int argc, char **argv, sweep_opts *o);
void sweep_opts_free(sweep_opts *o);

#endif
