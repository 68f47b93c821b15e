/* The services' log (pfi/log.h). */
#include <stdarg.h>
#include <stdio.h>

#include "pfi/log.h"

static const char *log_prog = "pfi";

void pfi_log_init(const char *prog)
{
    if (prog && *prog) log_prog = prog;
}

void pfi_log(const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* One write per line so that lines from threads do not interleave. */
    fprintf(stderr, "%s: %s\n", log_prog, buf);
}
