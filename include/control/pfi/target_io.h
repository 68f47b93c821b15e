/* Targets in and out of text: the JSON body of POST /v1/targets, a target
 * as JSON, and the schedule file (--schedule).
 *
 *   POST /v1/targets {"id"?, "site_power_w" | "gpu_power_w", "start",
 *                     "duration_s", "ramp_w_per_s"?, "domain"?}
 * start is an RFC 3339 date-time or Unix seconds; 0 < duration_s <= 31 days
 * (PFI_TARGET_MAX_DURATION_S: a grid event is hours; 1e308 is a typo);
 * an id is 1-128 characters of [A-Za-z0-9._:@+-]; domain (null or absent:
 * the site) names a topology domain (whether it exists is the controller's
 * check). Strict: an unknown,
 * duplicate or mistyped key, both or neither of the two powers, is
 * PFI_EINVAL (PFI_EPARSE for malformed JSON) with one sentence in err.
 *
 * Schedule file: CSV with a header naming start, duration_s (the same bound), and
 * site_power_w or gpu_power_w (one of them set on each row); optional id
 * (default "line-N"), ramp_w_per_s and domain (empty: the site). Errors name the file and line.
 */
#ifndef PFI_TARGET_IO_H
#define PFI_TARGET_IO_H

#include <stddef.h>

#include <jansson.h>

#include "pfi/error.h"
#include "pfi/target.h"

#define PFI_TARGET_MAX_BODY 65536
#define PFI_TARGET_MAX_DURATION_S (31.0 * 86400)

/* True when id may name a target (safe in a URL path and a label). */
int pfi_target_id_valid(const char *id);
/* True when d can name a topology domain (pfi/topology.h's rule). */
int pfi_target_domain_valid(const char *d);

/* Parses a POST /v1/targets body into *out (source API, priority none).
 * *has_id tells whether the body named one (else out->id is ""). */
int pfi_target_parse_json(const char *body, size_t len, pfi_target *out, int *has_id,
                          pfi_error *err);

/* {"id","source","kind","limit_w","start","end","duration_s","ramp_w_per_s",
 *  "priority","default","domain"}: domain null for the site; end and duration_s null when
 * open-ended. New reference. */
json_t *pfi_target_to_json(const pfi_target *t);

/* "active" (start <= now < end), "scheduled" (now < start) or "ended". */
const char *pfi_target_state(const pfi_target *t, double now);

/* Reads a schedule file into a malloc'd array (caller frees) of *n targets
 * with source SCHEDULE. */
int pfi_schedule_read(const char *path, pfi_target **out, size_t *n, pfi_error *err);

#endif
