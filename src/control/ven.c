/* The VEN's REST calls (include/control/pfi/ven.h). */
#include "pfi/ven.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "pfi/http_client.h"

struct pfi_ven {
    char *url, *program, *client_id, *secret, *client_name;
    char program_id[PFI_OADR_ID_MAX + 1];
    char *token;        /* access token, NULL until fetched */
    double token_until; /* monotonic s when to renew */
    double timeout_s;
    CURL *h;
    pfi_ven_stats st;
};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wipes then frees a secret. */
static void free_secret(char *s)
{
    if (!s) return;
    volatile char *p = s;
    while (*p)
        *p++ = 0;
    free(s);
}

int pfi_ven_create(const pfi_ven_opts *o, pfi_ven **out, pfi_error *err)
{
    *out = NULL;
    if (!o->url || !o->program || !o->client_id || !o->client_secret || !o->url[0] ||
        !o->program[0] || !o->client_id[0] || !o->client_secret[0])
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "a VEN needs a VTN URL, a program, a client id and a secret");
    if (strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0, "--vtn must be an http:// or https:// URL");
    pfi_ven *v = calloc(1, sizeof *v);
    if (!v) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    v->url = strdup(o->url);
    size_t n = v->url ? strlen(v->url) : 0;
    while (n > 0 && v->url[n - 1] == '/')
        v->url[--n] = '\0';
    v->program = strdup(o->program);
    v->client_id = strdup(o->client_id);
    v->secret = strdup(o->client_secret);
    v->client_name = strdup(o->client_name ? o->client_name : "pfi-control");
    v->timeout_s = o->timeout_s > 0 ? o->timeout_s : 10;
    v->h = pfi_http_handle();
    if (!v->url || !v->program || !v->client_id || !v->secret || !v->client_name || !v->h) {
        pfi_ven_destroy(v);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    *out = v;
    return PFI_OK;
}

void pfi_ven_destroy(pfi_ven *v)
{
    if (!v) return;
    if (v->h) curl_easy_cleanup(v->h);
    free(v->url);
    free(v->program);
    free(v->client_id);
    free_secret(v->secret);
    free_secret(v->token);
    free(v->client_name);
    free(v);
}

const char *pfi_ven_program_id(const pfi_ven *v)
{
    return v->program_id;
}

void pfi_ven_get_stats(const pfi_ven *v, pfi_ven_stats *out)
{
    *out = v->st;
}

/* POST /auth/token. */
static int fetch_token(pfi_ven *v, pfi_error *err)
{
    char *id = curl_easy_escape(v->h, v->client_id, 0), *sec = curl_easy_escape(v->h, v->secret, 0);
    size_t n = (id ? strlen(id) : 0) + (sec ? strlen(sec) : 0) + 80;
    char *body = malloc(n);
    if (!id || !sec || !body) {
        curl_free(id);
        if (sec) memset(sec, 0, strlen(sec));
        curl_free(sec);
        free(body);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    snprintf(body, n, "grant_type=client_credentials&client_id=%s&client_secret=%s", id, sec);
    memset(sec, 0, strlen(sec));
    curl_free(sec);
    curl_free(id);
    char url[2048];
    snprintf(url, sizeof url, "%s/auth/token", v->url);
    long status;
    pfi_http_buf b = {0};
    pfi_http_req r = {.method = "POST",
                      .url = url,
                      .body = body,
                      .content_type = "application/x-www-form-urlencoded",
                      .timeout_s = v->timeout_s,
                      .user_agent = "pfi-control/" PFI_VERSION};
    int rc = pfi_http_do(v->h, &r, &status, &b, err);
    memset(body, 0, strlen(body));
    free(body);
    if (rc != PFI_OK) {
        pfi_http_buf_free(&b);
        return rc;
    }
    if (status != 200) {
        pfi_http_buf_free(&b);
        return pfi_error_set(err, PFI_EIO, NULL, 0,
                             "POST %s: HTTP %ld (client id or secret refused?)", url, status);
    }
    json_t *o = json_loadb(b.data, b.len, 0, NULL);
    memset(b.data, 0, b.len);
    pfi_http_buf_free(&b);
    const json_t *tok = json_object_get(o, "access_token"), *ty = json_object_get(o, "token_type");
    const json_t *exp = json_object_get(o, "expires_in");
    if (!json_is_string(tok) || !json_string_length(tok) || json_string_length(tok) > 4096 ||
        (ty && (!json_is_string(ty) || strcasecmp(json_string_value(ty), "Bearer") != 0))) {
        json_decref(o);
        return pfi_error_set(err, PFI_EPARSE, NULL, 0,
                             "POST %s: the answer has no Bearer access_token", url);
    }
    free_secret(v->token);
    v->token = strdup(json_string_value(tok));
    /* Renew at 90% of its life (an hour when the VTN does not say). */
    double life = json_is_integer(exp) && json_integer_value(exp) > 0
                      ? (double)json_integer_value(exp)
                      : 3600;
    v->token_until = mono() + 0.9 * life;
    json_decref(o);
    if (!v->token) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    v->st.tokens++;
    return PFI_OK;
}

/* One authenticated call; a 401 fetches a new token and tries once more. */
static int call(pfi_ven *v, const char *method, const char *url, const char *body, long *status,
                pfi_http_buf *out, pfi_error *err)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int rc;
        if (!v->token || mono() >= v->token_until)
            if ((rc = fetch_token(v, err)) != PFI_OK) return rc;
        pfi_http_req r = {.method = method,
                          .url = url,
                          .bearer = v->token,
                          .body = body,
                          .timeout_s = v->timeout_s,
                          .user_agent = "pfi-control/" PFI_VERSION};
        rc = pfi_http_do(v->h, &r, status, out, err);
        if (rc != PFI_OK) {
            pfi_http_buf_free(out);
            return rc;
        }
        if (*status != 401) return PFI_OK;
        pfi_http_buf_free(out);
        free_secret(v->token);
        v->token = NULL;
    }
    return pfi_error_set(err, PFI_EIO, NULL, 0, "%s %s: HTTP 401 with a fresh token", method, url);
}

/* GET url, parsed as a JSON array. */
static int get_array(pfi_ven *v, const char *url, json_t **out, pfi_error *err)
{
    long status;
    pfi_http_buf b = {0};
    int rc = call(v, "GET", url, NULL, &status, &b, err);
    if (rc != PFI_OK) return rc;
    if (status != 200) {
        pfi_http_buf_free(&b);
        return pfi_error_set(err, PFI_EIO, NULL, 0, "GET %s: HTTP %ld", url, status);
    }
    json_error_t je;
    *out = json_loadb(b.data, b.len, 0, &je);
    pfi_http_buf_free(&b);
    if (!*out || !json_is_array(*out)) {
        json_decref(*out);
        *out = NULL;
        return pfi_error_set(err, PFI_EPARSE, NULL, 0, "GET %s: not a JSON array", url);
    }
    return PFI_OK;
}

/* --program as an ID or a programName, from GET /programs (paged). */
static int resolve_program(pfi_ven *v, pfi_error *err)
{
    for (size_t skip = 0; skip < PFI_VEN_MAX_EVENTS; skip += PFI_VEN_PAGE) {
        char url[2048];
        snprintf(url, sizeof url, "%s/programs?skip=%zu&limit=%d", v->url, skip, PFI_VEN_PAGE);
        json_t *a;
        int rc = get_array(v, url, &a, err);
        if (rc != PFI_OK) return rc;
        size_t i, n = json_array_size(a);
        json_t *p;
        json_array_foreach(a, i, p)
        {
            const json_t *id = json_object_get(p, "id"), *nm = json_object_get(p, "programName");
            int hit = (json_is_string(id) && strcmp(json_string_value(id), v->program) == 0) ||
                      (json_is_string(nm) && strcmp(json_string_value(nm), v->program) == 0);
            if (hit && json_is_string(id) && json_string_length(id) <= PFI_OADR_ID_MAX) {
                snprintf(v->program_id, sizeof v->program_id, "%s", json_string_value(id));
                json_decref(a);
                return PFI_OK;
            }
        }
        json_decref(a);
        if (n < PFI_VEN_PAGE) break;
    }
    return pfi_error_set(err, PFI_ENOTFOUND, NULL, 0, "the VTN has no program '%s'", v->program);
}

int pfi_ven_poll(pfi_ven *v, double now, pfi_oadr_event **events, size_t *n, pfi_error *err)
{
    *events = NULL;
    *n = 0;
    v->st.polls++;
    int rc = PFI_OK;
    if (!v->program_id[0] && (rc = resolve_program(v, err)) != PFI_OK) goto fail;
    char *pid = curl_easy_escape(v->h, v->program_id, 0);
    if (!pid) {
        rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        goto fail;
    }
    json_t *all = json_array();
    for (size_t skip = 0;; skip += PFI_VEN_PAGE) {
        char url[2048];
        snprintf(url, sizeof url, "%s/events?programID=%s&skip=%zu&limit=%d", v->url, pid, skip,
                 PFI_VEN_PAGE);
        json_t *page;
        if ((rc = get_array(v, url, &page, err)) != PFI_OK) break;
        size_t k = json_array_size(page);
        json_array_extend(all, page);
        json_decref(page);
        if (json_array_size(all) > PFI_VEN_MAX_EVENTS) {
            rc = pfi_error_set(err, PFI_ERANGE, NULL, 0, "the VTN lists more than %d events",
                               PFI_VEN_MAX_EVENTS);
            break;
        }
        if (k < PFI_VEN_PAGE) break;
    }
    curl_free(pid);
    if (rc == PFI_OK) {
        size_t k = json_array_size(all);
        pfi_oadr_event *ev = calloc(k ? k : 1, sizeof *ev);
        if (!ev) rc = pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        for (size_t i = 0; ev && i < k; i++) {
            pfi_oadr_event_from_json(json_array_get(all, i), now, &ev[i]);
            /* A VTN filters by programID; an event of another program is not ours. */
            if (ev[i].status == PFI_OK && strcmp(ev[i].program_id, v->program_id) != 0) {
                pfi_oadr_event_free(&ev[i]);
                ev[i].status = PFI_ENOTFOUND;
                snprintf(ev[i].error, sizeof ev[i].error, "of another program");
            }
        }
        if (ev) {
            *events = ev;
            *n = k;
        }
    }
    json_decref(all);
    if (rc == PFI_OK) return PFI_OK;
fail:
    v->st.poll_errors++;
    return rc;
}

int pfi_ven_report(pfi_ven *v, const json_t *report, pfi_error *err)
{
    char *body = json_dumps(report, JSON_COMPACT | JSON_REAL_PRECISION(12));
    if (!body) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    char url[2048];
    snprintf(url, sizeof url, "%s/reports", v->url);
    long status;
    pfi_http_buf b = {0};
    int rc = call(v, "POST", url, body, &status, &b, err);
    free(body);
    if (rc == PFI_OK) {
        if (status != 200 && status != 201)
            rc = pfi_error_set(err, PFI_EIO, NULL, 0, "POST %s: HTTP %ld %.200s", url, status,
                               b.data ? b.data : "");
        pfi_http_buf_free(&b);
    }
    if (rc == PFI_OK)
        v->st.reports++;
    else
        v->st.report_errors++;
    return rc;
}
