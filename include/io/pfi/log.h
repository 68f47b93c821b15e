/* One log for pfi's services: a line on stderr, prefixed with the program's
 * name ("pfid: ", "pfi control: "), written in one call so that lines from
 * several threads never interleave. systemd's journal adds the time. */
#ifndef PFI_LOG_H
#define PFI_LOG_H

/* The prefix of every line; the string must outlive the program (a literal).
 * Default "pfi". */
void pfi_log_init(const char *prog);

void pfi_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
