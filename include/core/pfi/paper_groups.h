/* The paper's sweep groups as published (Tables 6, 7, 8, 9 of
 * ../shared/paper; CSV copies in ../shared/data/paper-tables), embedded so the
 * dataset can be rebuilt without the shared folder. Names are exactly the
 * paper's; H100 groups (Table 8 gives none) are the matching H200 group's name
 * with "H200" replaced by "H100".
 *
 * Everything is static const data; nothing allocates.
 */
#ifndef PFI_PAPER_GROUPS_H
#define PFI_PAPER_GROUPS_H

#include <stddef.h>

typedef enum {
    PFI_PAPER_HEADLINE = 0, /* Table 6: the 25 headline groups */
    PFI_PAPER_HELDOUT = 1,  /* Table 7: the 4 held-out validation groups */
    PFI_PAPER_H100 = 2,     /* Table 8: the 6 matched H100 groups */
} pfi_paper_set;

typedef struct pfi_paper_group {
    const char *name;
    pfi_paper_set set;
    const char *platform; /* "H200" or "H100" */
    const char *model;    /* e.g. "Llama-3.1-70B" */
    const char *arch;     /* "dense" or "moe" */
    const char *task;     /* "pt" or "ft" */
    int gpus;
    const char *config;     /* Table 6's config column, "" if none */
    double pfi;             /* published PFI on the group's own grid */
    double pfi_4cap;        /* Table 9's 200/500/600/700 W PFI; 0 if not listed */
    double active_params_b; /* active parameters per token, billions (model cards) */
    int n_runs;             /* runs (caps) of the sweep, as the tables give them */
} pfi_paper_group;

/* All groups, in table order (Table 6, then 7, then 8); *n gets the count. */
const pfi_paper_group *pfi_paper_groups(size_t *n);

/* The group with this exact name, or NULL. */
const pfi_paper_group *pfi_paper_group_find(const char *name);

/* The group's per-GPU caps: 200..700 step 100 for 6 runs, 200/500/600/700 W
 * for 4, 500/600/700 W for the one 3-run group (an assumption: the paper does
 * not name the missing cap); returns the count (<= 6). */
size_t pfi_paper_group_caps(const pfi_paper_group *g, double caps[6]);

#endif
