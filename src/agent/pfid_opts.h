/* pfid's command line (pfid_opts.c; private to pfid). */
#ifndef PFID_OPTS_H
#define PFID_OPTS_H

#include "agent.h"

/* Sets o's defaults, then the options of argv, then checks them together
 * (the required ones, those that need another). Returns -1 when pfid is to
 * start; else the exit status: 0 after --help or --version (printed), 2 after
 * a usage error (said on stderr, with "Try 'pfid --help'."). */
int pfid_opts_parse(int argc, char **argv, agent_opts *o);

#endif
