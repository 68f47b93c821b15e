/* The report's tables, built once as text cells and written both as CSV
 * (tables/ID.csv) and as HTML. Columns named paper_* hold the paper's value
 * (from its tables as CSV) and diff_* ours minus the paper's. Private to
 * src/report. */
#ifndef PFI_REPORT_TABLES_H
#define PFI_REPORT_TABLES_H

#include <stddef.h>
#include <stdio.h>

#include "pfi/csv.h"
#include "pfi/error.h"
#include "rdata.h"

#define RP_MAX_COLS 28
#define RP_MAX_TABLES 16

typedef struct rp_table {
    const char *id; /* file name without .csv */
    char title[200];
    char note[700];
    size_t ncol, nrow;
    const char *head[RP_MAX_COLS];
    char **cell;      /* nrow * ncol malloc'd strings; "" when undefined */
    size_t used, cap; /* cells filled, allocated */
} rp_table;

typedef struct rp_tables {
    rp_table t[RP_MAX_TABLES];
    size_t n;
} rp_tables;

/* Builds every table d has data for; paper_dir (may be NULL) holds the
 * paper's tables as CSV. */
int rp_tables_build(const rd_data *d, const char *paper_dir, rp_tables *out, pfi_error *err);
void rp_tables_free(rp_tables *t);
int rp_table_write_csv(FILE *f, const rp_table *t);
/* The paper's Spearman rho of a telemetry feature with PFI (Figs. 5/14), NaN
 * where it is not known. */
double rp_paper_rho(int feature);

/* ---- between tables.c and tables_paper.c ---- */

/* The paper's tables as CSV (NULL where not read). */
typedef struct rp_paper {
    pfi_csv *t6, *t7, *t8, *t9, *t3, *t10;
} rp_paper;

/* The next table of ts, with the NULL-ended column names head. */
rp_table *rp_table_new(rp_tables *ts, const char *id, const char *title, const char *const *head);
/* Appends one cell, printf-style. */
int rp_cell(rp_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* v with dec decimals, or an empty cell when undefined. */
void rp_num(rp_table *t, int has, double v, int dec);
/* v in %.3g, or an empty cell when undefined. */
void rp_gnum(rp_table *t, int has, double v);

/* The tables set beside the paper's (tables_paper.c). */
void rp_table6(const rd_data *d, const rp_paper *pp, rp_tables *ts);
void rp_table7(const rd_data *d, const rp_paper *pp, rp_tables *ts);
void rp_table8(const rd_data *d, const rp_paper *pp, rp_tables *ts);
void rp_table9(const rd_data *d, const rp_paper *pp, rp_tables *ts);
void rp_tables10_11(const rd_data *d, const rp_paper *pp, int is_paper, rp_tables *ts);
void rp_table3(const rd_data *d, const rp_paper *pp, rp_tables *ts);
void rp_differences(const rd_data *d, const rp_paper *pp, rp_tables *ts);

#endif
