/* Private to io: the per-format readers behind pfi_trace_parse (trace_read.h),
 * which picks one from the first line. Each appends its runs to set. */
#ifndef PFI_IO_TRACE_FORMATS_H
#define PFI_IO_TRACE_FORMATS_H

#include <stddef.h>

#include "pfi/error.h"
#include "pfi/trace_read.h"

/* Wide CSV and the h200-probe trace (trace_csv.c). */
int pfi_trace_csv_parse(const char *buf, size_t len, const char *name, pfi_trace_set *set,
                        pfi_error *err);
/* Concatenated dcgm-exporter pages (trace_prom.c). */
int pfi_trace_prom_parse(const char *buf, size_t len, const char *name, pfi_trace_set *set,
                         pfi_error *err);

#endif
