/* The report's outputs from the computed analysis: report.html (one
 * self-contained page) and summary.json. Private to src/report. */
#ifndef PFI_REPORT_PAGE_H
#define PFI_REPORT_PAGE_H

#include <stdio.h>

#include "pfi/report.h"
#include "rdata.h"
#include "tables.h"

typedef struct rp_page {
    const rd_data *d;
    const rp_tables *tables;
    const pfi_report_opts *o;
    const char *dir;            /* the folder being written: figures/ are read from it */
    int fig_ok[PFI_PLOT_COUNT]; /* figures drawn */
} rp_page;

int rp_page_write_html(FILE *f, void *page);    /* rp_page * */
int rp_page_write_summary(FILE *f, void *page); /* rp_page * */

#endif
