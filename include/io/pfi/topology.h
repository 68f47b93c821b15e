/* A site's power distribution tree (issue 28): utility feeds, switchboards,
 * PDUs, racks, each a domain with a rating, and at the leaves what it feeds.
 * One file format for `pfi control run --topology` (leaves list `agents`,
 * the --agents URLs, or `nodes`, the agents' reported hostnames) and for
 * `pfi allocate --topology` (leaves list `jobs`, sweep group names).
 *
 * File (JSON), one domain:
 *   {"name": "rack-1",          required, 1-64 of [A-Za-z0-9._:@-], unique
 *    "limit_w": 150000,         optional (pure grouping): its rating, W, > 0
 *    "other_load_w": 2000,      optional: load it carries that cannot move, W, >= 0
 *    "other_load_query": "...", optional: a PromQL query giving that load, W
 *    "openadr": {"program": "...", "resource": "..."},   optional, either key:
 *                               a VTN program or resource whose events target
 *                               this domain
 *    "children": [ ... ],       an inner domain
 *    "agents": [ "http://..." ] | "nodes": [ "node-001" ] | "jobs": [ "g1" ]
 *                               a leaf: exactly one of the three
 *   }
 * A domain has children or members, not both; every leaf has at least one
 * member. Errors (PFI_EINVAL, err names the file and the JSON path, e.g.
 * "site.json: $.children[1].children[0].limit_w: ..."): an unknown key, a
 * wrong type, a limit that is not a finite positive number, a name used
 * twice, a member in two leaves, a depth over PFI_TOPO_MAX_DEPTH, leaves of
 * different member kinds. A child rated above its parent is allowed and
 * noted (pfi_topo_note), since oversubscription is the point. Text that is
 * not JSON (or repeats a key) is PFI_EPARSE with the line; a file that cannot
 * be read, PFI_EIO.
 *
 * Ownership: a pfi_topo owns every string it returns; they live until
 * destroy (NULL-safe). Read-only after parsing, so several threads may read
 * one.
 */
#ifndef PFI_TOPOLOGY_H
#define PFI_TOPOLOGY_H

#include <stddef.h>

#include "pfi/error.h"

#define PFI_TOPO_MAX_DEPTH 16
#define PFI_TOPO_NONE ((size_t)-1) /* the root's parent; "no domain" */

typedef enum {
    PFI_TOPO_MEMBER_NONE, /* an inner domain */
    PFI_TOPO_AGENTS,
    PFI_TOPO_NODES,
    PFI_TOPO_JOBS
} pfi_topo_member_kind;

typedef struct pfi_topo pfi_topo;

/* Domains are numbered in pre-order: 0 is the root, a parent comes before
 * its children, and a domain's subtree is the range [i, i + size). */
typedef struct pfi_topo_domain {
    const char *name;
    size_t parent;                /* PFI_TOPO_NONE for the root */
    size_t depth;                 /* 0 for the root */
    size_t subtree_end;           /* one past the last domain of its subtree */
    double limit_w;               /* INFINITY when the file gives none */
    double other_load_w;          /* 0 when none */
    const char *other_load_query; /* NULL when none */
    const char *openadr_program;  /* NULL when none */
    const char *openadr_resource; /* NULL when none */
    const char *const *members;   /* a leaf's members, n_members of them */
    size_t n_members;
} pfi_topo_domain;

/* Parses text (len bytes; its name for errors). */
int pfi_topo_parse(const char *text, size_t len, const char *name, pfi_topo **out, pfi_error *err);
/* Reads and parses a file (errors name it). */
int pfi_topo_load(const char *path, pfi_topo **out, pfi_error *err);
/* A one-domain tree: root `name` with limit_w (INFINITY for none) and the
 * given members (copied): the site without --topology. */
int pfi_topo_single(const char *name, double limit_w, pfi_topo_member_kind kind,
                    const char *const *members, size_t n, pfi_topo **out, pfi_error *err);
void pfi_topo_destroy(pfi_topo *t);

size_t pfi_topo_domains(const pfi_topo *t);
const pfi_topo_domain *pfi_topo_domain_at(const pfi_topo *t, size_t i);
pfi_topo_member_kind pfi_topo_member_kind_of(const pfi_topo *t);
/* The domain of that name, or PFI_TOPO_NONE. */
size_t pfi_topo_find(const pfi_topo *t, const char *name);
/* The leaf that lists member, or PFI_TOPO_NONE. */
size_t pfi_topo_leaf_of(const pfi_topo *t, const char *member);
/* 1 when domain a is d or one of d's ancestors. */
int pfi_topo_contains(const pfi_topo *t, size_t a, size_t d);

/* Notes found while parsing (a child rated above its parent), one line
 * each naming the path; NULL past the last. */
const char *pfi_topo_note(const pfi_topo *t, size_t i);

#endif
