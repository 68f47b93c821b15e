/* OpenADR 3 events as the controller's VEN reads them (3.1.0, and 3.0.1
 * documents), and the report it sends back. Pure parsing with Jansson: no
 * clock (the caller passes now, for the spec's "0001-01-01" start) and no I/O.
 *
 * What is acted on: IMPORT_CAPACITY_LIMIT intervals (the site's maximum
 * import) and IMPORT_CAPACITY_SUBSCRIPTION (the default limit where no limit
 * is scheduled), in the units of the event's payloadDescriptors: KW or W; any
 * other unit, or none, for a payload acted on refuses the event (PFI_EINVAL).
 * Other payload types (PRICE, SIMPLE, EXPORT_...) are read and ignored.
 *
 * Timing rules (User Guide 3.1.0, 7.3-7.4, 8.10):
 *   - an interval without its own intervalPeriod starts where the previous
 *     one ended and lasts the event's default intervalPeriod.duration; its own
 *     start or duration overrides the default;
 *   - P9999Y is an infinite duration; a start in year 0001 is now;
 *   - an interval with N values is N equal sub-intervals;
 *   - a lower priority number wins; a null priority is the lowest.
 * Tolerated, and said in notes: an integer id, a scalar "values", a missing
 * objectType, a time without seconds, CAPACITY_SUBSCRIPTION for
 * IMPORT_CAPACITY_SUBSCRIPTION, a createdDateTime that is not RFC 3339 (never
 * used), an event without intervals (no limit), an event without id (its
 * eventName is used).
 *
 * Ownership: a pfi_oadr_event owns its intervals; pfi_oadr_event_free (and
 * pfi_oadr_events_free) are NULL-safe.
 */
#ifndef PFI_OPENADR_H
#define PFI_OPENADR_H

#include <stddef.h>

#include <jansson.h>

#include "pfi/error.h"
#include "pfi/target.h"

#define PFI_OADR_ID_MAX 128
#define PFI_OADR_MAX_VALUES 10000 /* values in one payload: more is refused */
#define PFI_OADR_MAX_TARGETS 8    /* an event's targets kept; more are noted and ignored */

typedef enum { PFI_OADR_LIMIT, PFI_OADR_SUBSCRIPTION } pfi_oadr_kind;

typedef struct pfi_oadr_interval {
    long id;           /* the interval's id (a sub-interval keeps its parent's) */
    int sub;           /* which of the parent's N values, 0-based */
    int payload;       /* which payload acted on in the parent interval, 0-based */
    double start, end; /* Unix s; end may be INFINITY */
    pfi_oadr_kind kind;
    double value_w; /* the limit, W (converted from the event's units) */
} pfi_oadr_interval;

typedef struct pfi_oadr_event {
    int status;                   /* PFI_OK, or why the event is refused */
    char error[256];              /* the refusal, one sentence */
    char id[PFI_OADR_ID_MAX + 1]; /* the event's id (or its name) */
    char program_id[PFI_OADR_ID_MAX + 1];
    char name[PFI_OADR_ID_MAX + 1]; /* eventName, "" if none */
    long priority;                  /* PFI_TARGET_NO_PRIORITY when null */
    pfi_oadr_interval *iv;          /* intervals acted on, in order */
    size_t n_iv;
    double report_w_per_unit; /* a READING the event asks for: 1000 (KW) or 1 (W); 0 none */
    char notes[768];          /* what was tolerated or ignored, "; "-separated */
    /* Its "targets": 3.1.0's strings, or the string values of 3.0.1's
     * valuesMaps (RESOURCE_NAME, GROUP, ...): the topology maps a resource
     * to a domain (issue 28). */
    char targets[PFI_OADR_MAX_TARGETS][PFI_OADR_ID_MAX + 1];
    size_t n_targets;
} pfi_oadr_event;

/* Reads one event object. On a refusal out->status and out->error say why
 * (and the return is that status); out is always safe to free. */
int pfi_oadr_event_from_json(const json_t *ev, double now, pfi_oadr_event *out);
void pfi_oadr_event_free(pfi_oadr_event *e);

/* Parses text holding one event object or an array of them (a GET /events
 * page). PFI_EPARSE (err: line, column) when it is not JSON, PFI_EINVAL when
 * it is neither; otherwise PFI_OK with *n events, each with its own status.
 * The caller frees with pfi_oadr_events_free. */
int pfi_oadr_events_parse(const char *text, size_t len, double now, pfi_oadr_event **out, size_t *n,
                          pfi_error *err);
void pfi_oadr_events_free(pfi_oadr_event *ev, size_t n);

/* The event's intervals as targets (source OPENADR, kind SITE, the event's
 * priority, ids "oadr:EVENT:INTERVAL.SUB", ".PAYLOAD" added for a second
 * limit in one interval, "#N" for an interval id the event repeats; an
 * event id over 80 characters is cut to 71 and a hash of the whole), at
 * most cap of them written; returns how many there are. Each limit gets
 * its own id: the timeline keeps one target per id. Refused events have
 * none. */
size_t pfi_oadr_event_targets(const pfi_oadr_event *e, pfi_target *out, size_t cap);

/* One interval's measurement for a report. */
typedef struct pfi_oadr_reading {
    long interval_id;
    double start, duration_s;
    double site_w; /* measured mean site power over it, W; NaN when unknown */
} pfi_oadr_reading;

/* A POST /reports body (reportRequest) for event e: a READING of the site
 * power per interval in the units the event asked for (KW by default),
 * resource "site", client name client. New reference, NULL on no memory. */
json_t *pfi_oadr_report_json(const pfi_oadr_event *e, const char *client, const pfi_oadr_reading *r,
                             size_t n);

#endif
