/* pfi allocate --topology (issue 28): a topology file whose leaves list
 * sweep group names ("jobs"), its tree set on the allocation problem, each
 * domain's power and limit printed. */
#ifndef PFI_ALLOC_TOPO_H
#define PFI_ALLOC_TOPO_H

#include <stddef.h>

#include <jansson.h>

#include "alloc_cli.h"
#include "pfi/alloc.h"
#include "pfi/topology.h"

/* Loads path; every job it lists must be a group of cv and every job
 * allocated (jobs[0..n), by name) must sit in a leaf. Prints its notes on
 * stderr. PFI_EXIT_OK, or the exit status after printing the error. */
int pfi_cli_alloc_topo_load(const char *path, const pfi_cli_curves *cv, const pfi_alloc_job *jobs,
                            size_t n, pfi_topo **out);
/* Sets t's tree on prob (each job in its leaf, other_load_w as fixed power)
 * and gives the root's limit less all the fixed power: what the jobs may
 * draw (INFINITY when the root has no limit). */
int pfi_cli_alloc_topo_set(const pfi_topo *t, const pfi_alloc_job *jobs, size_t n,
                           pfi_alloc_problem *prob, double *jobs_limit_w, pfi_error *err);
/* After a run: the "domains" array, and the table. */
json_t *pfi_cli_alloc_topo_json(const pfi_topo *t, const pfi_alloc_problem *prob);
void pfi_cli_alloc_topo_print(const pfi_topo *t, const pfi_alloc_problem *prob);

#endif
