/* Throughput from a training program's log lines (`pfi sweep`): a POSIX
 * extended regex whose first parenthesised group (or, without one, the whole
 * match) is the number of tokens/s. Thousands separators (`6,842`) are
 * allowed in the number. Presets:
 *
 *   hf          the Hugging Face Trainer's logged dicts:
 *               {'loss': 2.1, ..., 'tokens_per_second': 131072.5, ...}
 *               ('train_tokens_per_second' too, single or double quotes)
 *   torchtitan  torchtitan's step lines: "step: 10  loss: 7.9 ... tps: 6,842"
 *               (older releases print "wps:")
 *
 * Ownership: _create returns a matcher freed by _destroy (NULL-safe).
 */
#ifndef PFI_TPUT_LINE_H
#define PFI_TPUT_LINE_H

#include <stddef.h>

#include "pfi/error.h"

typedef struct pfi_tput_matcher pfi_tput_matcher;

/* spec: "hf", "torchtitan", or a regex. A regex that does not compile is
 * PFI_EINVAL with the regcomp message. */
int pfi_tput_matcher_create(const char *spec, pfi_tput_matcher **out, pfi_error *err);
void pfi_tput_matcher_destroy(pfi_tput_matcher *m);

/* 1 with *tok_s when line[0..len) holds a throughput (finite, >= 0), else 0.
 * The line need not be NUL-terminated; a NUL byte ends it. */
int pfi_tput_matcher_match(const pfi_tput_matcher *m, const char *line, size_t len, double *tok_s);

#endif
