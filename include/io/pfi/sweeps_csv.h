/* sweeps.csv (DESIGN.md, "Data") to pfi_sweeps. */
#ifndef PFI_SWEEPS_CSV_H
#define PFI_SWEEPS_CSV_H

#include <stdio.h>

#include "pfi/csv.h"
#include "pfi/curve.h"

/* Columns every sweeps.csv has; power_sem_w and throughput_sem_tok_s are optional. */
extern const char *const pfi_sweeps_csv_columns[];

/* Builds and finalizes sweeps from a parsed table (see pfi_sweeps_finalize for
 * tdp_w). Every bad field is an error naming the file and line, and so is an
 * implausible run (PFI_ERANGE), which a PFI would silently turn into nonsense:
 *   - power_w above cap_w x gpus (1% slack for averaging): a cap bounds power;
 *   - a capped run drawing more than its group's uncapped run (1% slack);
 *   - magnitudes no GPU job has: cap_w or power_w / gpus above 10 kW,
 *     throughput_tok_s above 1e12.
 * (Hex floats such as 0x1p10 are not numbers in a CSV: pfi_csv_number.) */
int pfi_sweeps_from_csv(const pfi_csv *c, double tdp_w, pfi_sweeps **out, pfi_error *err);

/* Reads, parses and validates a sweeps.csv file ("-" = standard input). */
int pfi_sweeps_read(const char *path, double tdp_w, pfi_sweeps **out, pfi_error *err);

/* The same with flags: PFI_SWEEPS_ALLOW_IMPLAUSIBLE skips the plausibility
 * checks above (the CLI's --allow-implausible, for data that really is so). */
enum { PFI_SWEEPS_ALLOW_IMPLAUSIBLE = 1 << 0 };
int pfi_sweeps_from_csv_opts(const pfi_csv *c, double tdp_w, unsigned flags, pfi_sweeps **out,
                             pfi_error *err);
int pfi_sweeps_read_opts(const char *path, double tdp_w, unsigned flags, pfi_sweeps **out,
                         pfi_error *err);

/* Writes sweeps as sweeps.csv text (with the SEM columns). */
int pfi_sweeps_write(FILE *f, const pfi_sweeps *s);

/* The same a row at a time (runs that are not yet a finalized sweeps, e.g.
 * pfi trace's): the header, then rows; a value that is not finite is left
 * empty. */
void pfi_sweeps_write_header(FILE *f);
void pfi_sweeps_write_row(FILE *f, const char *group, const pfi_group_meta *m, const pfi_run *r);

#endif
