/* The controller's OpenADR 3 VEN: a client of a VTN's REST API.
 *
 *   POST /auth/token     OAuth2 client credentials, form-encoded; the token
 *                        is renewed before its expires_in and on any 401
 *   GET  /programs       once, to resolve --program NAME to its ID
 *   GET  /events?programID=ID&skip=K&limit=50   every page, each poll
 *   GET  /events/{id}    to confirm that an event gone from the list is gone
 *   POST /reports        a reportRequest (pfi_oadr_report_json)
 *
 * A poll either returns the program's whole event list or fails (then the
 * caller keeps the last good list: a VTN that does not answer cancels
 * nothing). A page holding anything but objects fails the poll. The client secret and the access
 * token are never written to a message, a log or the store.
 *
 * Ownership: pfi_ven copies its options; destroy is NULL-safe. One thread
 * at a time per pfi_ven.
 */
#ifndef PFI_VEN_H
#define PFI_VEN_H

#include <stddef.h>

#include <jansson.h>

#include "pfi/error.h"
#include "pfi/openadr.h"

#define PFI_VEN_PAGE 50         /* the spec's largest page */
#define PFI_VEN_MAX_EVENTS 5000 /* a longer list is refused, not truncated */

typedef struct pfi_ven_opts {
    const char *url;     /* the VTN's base URL, no trailing '/' needed */
    const char *program; /* a program's ID or programName */
    const char *client_id;
    const char *client_secret; /* copied; never logged */
    const char *client_name;   /* clientName of reports ("pfi-control" if NULL) */
    double timeout_s;          /* per request (default 10 when 0) */
} pfi_ven_opts;

typedef struct pfi_ven pfi_ven;

int pfi_ven_create(const pfi_ven_opts *o, pfi_ven **out, pfi_error *err);
void pfi_ven_destroy(pfi_ven *v);

/* The program's ID once resolved ("" before the first successful poll). */
const char *pfi_ven_program_id(const pfi_ven *v);

/* Fetches every event of the program into a new array (free with
 * pfi_oadr_events_free); now is for the "0001-01-01" start. */
int pfi_ven_poll(pfi_ven *v, double now, pfi_oadr_event **events, size_t *n, pfi_error *err);

/* GET /events/{id}: *gone = 1 on a 404 (the VTN deleted it); else the event
 * in *out (free with pfi_oadr_event_free). An error (transport, another
 * status, not an event) means "not known": the caller keeps the event. */
int pfi_ven_event_get(pfi_ven *v, const char *id, double now, pfi_oadr_event *out, int *gone,
                      pfi_error *err);

/* Sends one report (not stolen). */
int pfi_ven_report(pfi_ven *v, const json_t *report, pfi_error *err);

/* Counters for /metrics. */
typedef struct pfi_ven_stats {
    unsigned long long polls, poll_errors, tokens, reports, report_errors;
} pfi_ven_stats;
void pfi_ven_get_stats(const pfi_ven *v, pfi_ven_stats *out);

/* How the VTN answers polls: for /v1/status, /healthz and /metrics. */
typedef struct pfi_ven_health {
    double last_ok;       /* wall s of the last good poll; NaN none yet */
    double last_error_at; /* wall s of the last failed poll; NaN none */
    char last_error[256]; /* its message (never the secret) */
    unsigned consecutive_failures;
    int auth_ok; /* 0 once the VTN refused the client credentials, until it takes them */
} pfi_ven_health;
void pfi_ven_get_health(const pfi_ven *v, pfi_ven_health *out);
const char *pfi_ven_url(const pfi_ven *v); /* the base URL, no trailing '/' */

#endif
