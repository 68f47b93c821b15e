/* The dcgm backend: scrapes a dcgm-exporter /metrics URL with libcurl and
 * maps its DCGM_FI_* series to pfi_gpu_sample through the GPU field table. Read-only: set_limit is
 * PFI_ENOTSUP (dcgm-exporter cannot change anything).
 *
 * Options: "URL" or "url=URL[,timeout_ms=N][,cache_ms=N][,collect_ms=N]
 * [,stale_after=K]". http, https and file URLs are accepted (file:// for
 * tests and for saved scrapes). One scrape serves every GPU: a sample()
 * reuses the last scrape while it is younger than cache_ms (default 500), so
 * sampling all GPUs once per interval costs one HTTP request. timeout_ms
 * (default 2000) bounds a scrape.
 *
 * GPUs are keyed by the "gpu" label (the device index). Under MIG the
 * exporter writes every series once per GPU instance (GPU_I_ID), and the
 * device-wide fields (power, energy, limits, clocks, temperature, clock
 * events) repeat the whole GPU's value in each: they are taken once per GPU
 * (its UUID), from the first instance, unless a series without MIG labels
 * gives them; the instance-scoped fields (utilisation, framebuffer,
 * profiling) of an instance are not the GPU's and are left out.
 *
 * Age: the exporter measures every collect_ms (its -c, default 30000) and
 * serves the same page in between. A field's measurement time is its series'
 * timestamp when the page has one, else when the page's content last
 * changed; a field older than stale_after (default 3) collect intervals is
 * stale: its bit is cleared, and a GPU with nothing fresh left is an error
 * of the sample. pfi_backend_sample_age gives the age of the last sample.
 *
 * A NaN or infinite value, or a DCGM "blank" sentinel (dcgm-exporter up to
 * 4.x prints e.g. 9223372036854775794 for a field the GPU does not support),
 * leaves the field's bit clear.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend_impl.h"
#include "pfi/gpu_field.h"
#include "pfi/http_client.h"
#include "pfi/prom.h"

#define MAX_BODY (32u << 20) /* a scrape larger than this is refused */
#define MAX_GPUS 1024

/* The series pfi reads are the GPU field table's DCGM names and aliases
 * (gpu_field.h), converted to SI by its factors. */

/* The limit series (W), for limits(). */
enum { L_MIN, L_MAX, L_DEF, L_CUR, L_ENF, N_LIM };
static const char *const limit_names[N_LIM] = {
    "DCGM_FI_DEV_POWER_MGMT_LIMIT_MIN", "DCGM_FI_DEV_POWER_MGMT_LIMIT_MAX",
    "DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF", "DCGM_FI_DEV_POWER_MGMT_LIMIT",
    "DCGM_FI_DEV_ENFORCED_POWER_LIMIT"};

/* The fields that describe the whole device, repeated by every MIG instance. */
#define DEVICE_FIELDS                                                                              \
    ((1u << PFI_GF_POWER) | (1u << PFI_GF_ENERGY) | (1u << PFI_GF_LIMIT) |                         \
     (1u << PFI_GF_SM_CLOCK) | (1u << PFI_GF_MEM_CLOCK) | (1u << PFI_GF_TEMP) |                    \
     (1u << PFI_GF_CLOCK_EVENTS))

typedef struct {
    int present;
    pfi_gpu_sample s;
    double t[PFI_GF_COUNT]; /* Unix s a field was measured */
    double lim[N_LIM];
    unsigned lim_valid; /* bit per L_* */
    pfi_gpu_info info;
    double age_s; /* of the last sample(): its oldest fresh field, NaN none */
} dcgm_gpu;

typedef struct {
    char url[1024];
    long timeout_ms, cache_ms, collect_ms, stale_after;
    CURL *curl;
    pfi_http_buf body;  /* the last scrape, its memory reused */
    double scraped_at;  /* monotonic seconds, < 0 never */
    uint64_t page_hash; /* of the last body, to see when the page changes */
    double page_t;      /* Unix s the page's content last changed */
    unsigned n;         /* max gpu label + 1 */
    dcgm_gpu *gpus;     /* MAX_GPUS entries */
} dcgm_state;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* FNV-1a: the page is compared, not authenticated. */
static uint64_t hash(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

static int gpu_index(const char *v, unsigned *out)
{
    if (!v || !*v) return 0;
    char *end;
    long g = strtol(v, &end, 10);
    if (*end || g < 0 || g >= MAX_GPUS) return 0;
    *out = (unsigned)g;
    return 1;
}

static void set_field(pfi_gpu_sample *s, const pfi_gpu_field_desc *d, double v)
{
    /* dcgm-exporter passes NVML's clocks event reasons mask on */
    if (d->field == PFI_GF_CLOCK_EVENTS)
        v = v >= 0 && v < 18446744073709551616.0 ? pfi_clock_events_from_nvml((uint64_t)v) : 0;
    else
        v *= d->dcgm_to_si;
    pfi_gpu_sample_set(s, d->field, v);
}

/* Maps a parsed scrape onto the per-GPU table; page_t is when its content
 * appeared (the measurement time of a series without a timestamp).
 * PFI_ENODATA when it holds no DCGM series with a gpu label. */
static int map_scrape(const pfi_prom_doc *doc, dcgm_gpu *gpus, unsigned *n, double page_t)
{
    /* age_s is the last sample()'s: it outlives a scrape that limits() or
     * info() made since. */
    for (unsigned g = 0; g < MAX_GPUS; g++) {
        double age = gpus[g].age_s;
        memset(&gpus[g], 0, sizeof gpus[g]);
        gpus[g].age_s = age;
    }
    *n = 0;
    size_t used = 0;
    for (size_t k = 0; k < pfi_prom_doc_series_count(doc); k++) {
        const pfi_prom_series *se = pfi_prom_doc_series(doc, k);
        if (strncmp(se->name, "DCGM_FI_", 8) != 0) continue;
        unsigned g;
        if (!gpu_index(pfi_prom_series_label(se, "gpu"), &g)) continue;
        int mig = pfi_prom_series_label(se, "GPU_I_ID") != NULL; /* a GPU instance */
        dcgm_gpu *d = &gpus[g];
        if (!d->present) {
            d->present = 1;
            const char *m = pfi_prom_series_label(se, "modelName");
            if (!m) m = pfi_prom_series_label(se, "model_name");
            const char *u = pfi_prom_series_label(se, "UUID");
            if (!u) u = pfi_prom_series_label(se, "gpu_uuid");
            snprintf(d->info.name, sizeof d->info.name, "%s", m ? m : "");
            snprintf(d->info.uuid, sizeof d->info.uuid, "%s", u ? u : "");
        }
        if (g + 1 > *n) *n = g + 1;
        used++;
        double v = se->value;
        if (!isfinite(v) || pfi_prom_dcgm_blank(v)) continue;
        const pfi_gpu_field_desc *fd = pfi_gpu_field_by_dcgm(se->name);
        /* Under MIG: a device-wide field once per GPU (the first instance's,
         * unless a GPU-level series says it), never an instance's own. */
        if (fd && mig &&
            (!((DEVICE_FIELDS >> fd->field) & 1u) || pfi_gpu_sample_has(&d->s, fd->field)))
            fd = NULL;
        if (fd) {
            set_field(&d->s, fd, v);
            d->t[fd->field] = se->has_timestamp ? (double)se->timestamp_ms / 1000.0 : page_t;
        }
        for (int l = 0; l < N_LIM; l++)
            if (strcmp(se->name, limit_names[l]) == 0 && !(mig && (d->lim_valid & (1u << l)))) {
                d->lim[l] = v;
                d->lim_valid |= 1u << l;
            }
    }
    return used ? PFI_OK : PFI_ENODATA;
}

/* Scrapes and maps; with b->lock held. */
static int scrape(pfi_backend *b, pfi_error *err)
{
    dcgm_state *s = b->priv;
    pfi_http_req r = {.url = s->url,
                      .timeout_s = (double)s->timeout_ms / 1000.0,
                      .user_agent = "pfid/" PFI_VERSION,
                      .file_and_redirects = 1};
    pfi_error herr = {0};
    long status = 0;
    if (pfi_http_do(s->curl, &r, &status, &s->body, &herr) != PFI_OK || status >= 400) {
        if (status >= 400)
            pfi_backend_set_error(b, "dcgm: cannot scrape %s: HTTP %ld", s->url, status);
        else
            pfi_backend_set_error(b, "dcgm: cannot scrape: %s", herr.msg);
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0, "%s", b->last_error);
    }
    pfi_prom_doc *doc = NULL;
    pfi_error perr = {0};
    int rc = pfi_prom_parse(s->body.data, s->body.len, s->url, &doc, &perr);
    if (rc != PFI_OK) {
        char msg[600];
        pfi_error_format(&perr, msg, sizeof msg);
        pfi_backend_set_error(b, "dcgm: %s", msg);
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0, "%s", b->last_error);
    }
    /* The exporter serves the same page until its next collect: a page
     * that changed is as old as this scrape. */
    uint64_t h = hash(s->body.data, s->body.len);
    if (s->scraped_at < 0 || h != s->page_hash) s->page_t = wall_s();
    s->page_hash = h;
    rc = map_scrape(doc, s->gpus, &s->n, s->page_t);
    pfi_prom_doc_destroy(doc);
    if (rc != PFI_OK) {
        pfi_backend_set_error(b,
                              "dcgm: %s has no DCGM_FI_* series with a gpu label (is it a "
                              "dcgm-exporter?)",
                              s->url);
        return pfi_error_set(err, PFI_EBACKEND, NULL, 0, "%s", b->last_error);
    }
    s->scraped_at = mono_s();
    return PFI_OK;
}

static void dcgm_close(pfi_backend *b)
{
    if (!b) return;
    dcgm_state *s = b->priv;
    if (s) {
        if (s->curl) curl_easy_cleanup(s->curl);
        pfi_http_buf_free(&s->body);
        free(s->gpus);
        free(s);
    }
    pfi_backend_free(b);
}

static int parse_opts(dcgm_state *s, const char *opts, pfi_error *err)
{
    s->timeout_ms = 2000;
    s->cache_ms = 500;
    s->collect_ms = 30000; /* dcgm-exporter's default -c */
    s->stale_after = 3;
    if (!opts || !*opts)
        return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                             "dcgm: no URL (e.g. http://127.0.0.1:9400/metrics)");
    if (strncmp(opts, "url=", 4) != 0) {
        snprintf(s->url, sizeof s->url, "%s", opts);
        return PFI_OK;
    }
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", opts);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *end;
        if (strncmp(tok, "url=", 4) == 0) {
            snprintf(s->url, sizeof s->url, "%s", tok + 4);
        } else if (strncmp(tok, "timeout_ms=", 11) == 0) {
            s->timeout_ms = strtol(tok + 11, &end, 10);
            if (end == tok + 11 || *end || s->timeout_ms < 1 || s->timeout_ms > 600000)
                return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                     "dcgm: %s is not a timeout from 1 to 600000 ms", tok);
        } else if (strncmp(tok, "cache_ms=", 9) == 0) {
            s->cache_ms = strtol(tok + 9, &end, 10);
            if (end == tok + 9 || *end || s->cache_ms < 0 || s->cache_ms > 3600000)
                return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                     "dcgm: %s is not a cache age from 0 to 3600000 ms", tok);
        } else if (strncmp(tok, "collect_ms=", 11) == 0) {
            s->collect_ms = strtol(tok + 11, &end, 10);
            if (end == tok + 11 || *end || s->collect_ms < 1 || s->collect_ms > 3600000)
                return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                     "dcgm: %s is not a collect interval from 1 to 3600000 ms",
                                     tok);
        } else if (strncmp(tok, "stale_after=", 12) == 0) {
            s->stale_after = strtol(tok + 12, &end, 10);
            if (end == tok + 12 || *end || s->stale_after < 1 || s->stale_after > 1000)
                return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                     "dcgm: %s is not a number of collect intervals from 1 to "
                                     "1000",
                                     tok);
        } else {
            return pfi_error_set(err, PFI_EINVAL, NULL, 0,
                                 "dcgm: unknown option '%s' (url=, timeout_ms=, cache_ms=, "
                                 "collect_ms=, stale_after=)",
                                 tok);
        }
    }
    if (!s->url[0]) return pfi_error_set(err, PFI_EINVAL, NULL, 0, "dcgm: empty url=");
    return PFI_OK;
}

static int dcgm_init(pfi_backend **out, const char *opts, pfi_error *err)
{
    *out = NULL;
    dcgm_state *s = calloc(1, sizeof *s);
    pfi_backend *b = s ? pfi_backend_alloc(&pfi_backend_dcgm_ops, s) : NULL;
    if (!b) {
        free(s);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "dcgm: out of memory");
    }
    s->scraped_at = -1;
    int rc = parse_opts(s, opts, err);
    if (rc != PFI_OK) goto fail;
    s->gpus = calloc(MAX_GPUS, sizeof *s->gpus);
    for (unsigned g = 0; s->gpus && g < MAX_GPUS; g++)
        s->gpus[g].age_s = NAN; /* no sample yet */
    s->curl = pfi_http_handle();
    s->body.max = MAX_BODY;
    if (!s->gpus || !s->curl) {
        rc = pfi_error_set(err, PFI_EBACKEND, NULL, 0, "dcgm: cannot initialise libcurl");
        goto fail;
    }
    /* The first scrape proves the endpoint and finds the GPUs. */
    rc = scrape(b, err);
    if (rc != PFI_OK) goto fail;
    *out = b;
    return PFI_OK;
fail:
    dcgm_close(b);
    return rc;
}

/* Rescrapes when the cached scrape is too old; with b->lock held. */
static int fresh(pfi_backend *b)
{
    dcgm_state *s = b->priv;
    if (s->scraped_at >= 0 && (mono_s() - s->scraped_at) * 1000.0 < (double)s->cache_ms)
        return PFI_OK;
    return scrape(b, NULL);
}

static dcgm_gpu *gpu_of(pfi_backend *b, unsigned gpu, int *rc)
{
    dcgm_state *s = b->priv;
    if ((*rc = fresh(b)) != PFI_OK) return NULL;
    if (gpu >= MAX_GPUS || !s->gpus[gpu].present) {
        pfi_backend_set_error(b, "dcgm: no GPU %u in the scrape of %s", gpu, s->url);
        *rc = PFI_ENOTFOUND;
        return NULL;
    }
    return &s->gpus[gpu];
}

static int dcgm_count(pfi_backend *b, unsigned *n)
{
    pthread_mutex_lock(&b->lock);
    *n = ((dcgm_state *)b->priv)->n;
    pthread_mutex_unlock(&b->lock);
    return PFI_OK;
}

static int dcgm_info(pfi_backend *b, unsigned gpu, pfi_gpu_info *out)
{
    int rc;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&b->lock);
    dcgm_gpu *g = gpu_of(b, gpu, &rc);
    if (g) *out = g->info;
    pthread_mutex_unlock(&b->lock);
    return rc;
}

static int dcgm_sample(pfi_backend *b, unsigned gpu, pfi_gpu_sample *out)
{
    int rc;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&b->lock);
    dcgm_gpu *g = gpu_of(b, gpu, &rc);
    if (g) {
        const dcgm_state *s = b->priv;
        *out = g->s;
        double now = wall_s(), limit = (double)s->stale_after * (double)s->collect_ms / 1000.0;
        double oldest = -INFINITY, stalest = 0;
        for (int f = 0; f < PFI_GF_COUNT; f++) {
            if (!pfi_gpu_sample_has(out, (pfi_gpu_field)f)) continue;
            double age = now - g->t[f];
            if (age > limit) {
                out->valid &= ~(1u << f);
                stalest = fmax(stalest, age);
            } else {
                oldest = fmax(oldest, age);
            }
        }
        g->age_s = isfinite(oldest) ? fmax(oldest, 0) : NAN;
        if (!out->valid && stalest > 0) {
            pfi_backend_set_error(b,
                                  "dcgm: GPU %u: the exporter's data are %.0f s old, stale past "
                                  "%ld collect intervals of %.0f s",
                                  gpu, stalest, s->stale_after, s->collect_ms / 1000.0);
            rc = PFI_EBACKEND;
        }
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

static int dcgm_sample_age(pfi_backend *b, unsigned gpu, double *age_s)
{
    dcgm_state *s = b->priv;
    pthread_mutex_lock(&b->lock);
    int ok = gpu < MAX_GPUS && s->gpus[gpu].present && isfinite(s->gpus[gpu].age_s);
    *age_s = ok ? s->gpus[gpu].age_s : NAN;
    pthread_mutex_unlock(&b->lock);
    return ok ? PFI_OK : PFI_ENODATA;
}

static int dcgm_limits(pfi_backend *b, unsigned gpu, pfi_gpu_limits *out)
{
    int rc;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&b->lock);
    dcgm_gpu *g = gpu_of(b, gpu, &rc);
    if (g) {
        unsigned need = (1u << L_MIN) | (1u << L_MAX) | (1u << L_DEF);
        if ((g->lim_valid & need) != need) {
            pfi_backend_set_error(b,
                                  "dcgm: GPU %u: the exporter does not publish "
                                  "DCGM_FI_DEV_POWER_MGMT_LIMIT_MIN/MAX/DEF",
                                  gpu);
            rc = PFI_ENOTSUP;
        } else {
            out->min_w = g->lim[L_MIN];
            out->max_w = g->lim[L_MAX];
            out->default_w = g->lim[L_DEF];
            out->enforced_w = g->lim_valid & (1u << L_ENF)   ? g->lim[L_ENF]
                              : g->lim_valid & (1u << L_CUR) ? g->lim[L_CUR]
                                                             : g->lim[L_DEF];
            out->current_w = g->lim_valid & (1u << L_CUR) ? g->lim[L_CUR] : out->enforced_w;
        }
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

static int dcgm_set_limit(pfi_backend *b, unsigned gpu, double w)
{
    pthread_mutex_lock(&b->lock);
    pfi_backend_set_error(b, "dcgm: the dcgm backend is read-only (GPU %u, %.0f W not set)", gpu,
                          w);
    pthread_mutex_unlock(&b->lock);
    return PFI_ENOTSUP;
}

static const char *dcgm_last_error(const pfi_backend *b)
{
    return b->last_error;
}

const pfi_backend_ops pfi_backend_dcgm_ops = {
    .name = "dcgm",
    .init = dcgm_init,
    .close = dcgm_close,
    .last_error = dcgm_last_error,
    .count = dcgm_count,
    .info = dcgm_info,
    .sample = dcgm_sample,
    .limits = dcgm_limits,
    .set_limit = dcgm_set_limit,
    .throughput = NULL,
    .sample_age = dcgm_sample_age,
};
