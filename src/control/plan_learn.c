/* The learn policy inside the plan (src/control/plan_learn.h). */
#include "plan_learn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_index.h"

#define LEVEL_BAND 0.02 /* the level holds while the budget is within [L, L (1 + band)] */
#define LEVEL_DROP 0.01 /* a new level: the budget less this share */

typedef struct lj {
    char *id;
    uint64_t key;
    size_t idx;         /* the job's position in the last sync */
    unsigned long gen;  /* the last sync that listed it */
    pfi_live_job set;   /* what the loop was last given */
    int primed;         /* its learned points were fed */
    int prior_fed;      /* its prior points were fed */
    pfi_alloc_out last; /* its share of the last proposal */
} lj;

struct plan_learn {
    pfi_live *live;
    lj *e;
    size_t n, cap;
    ctl_index by_id, by_key;
    uint64_t next_key;
    unsigned long gen;
    pfi_live_share *sh;
    pfi_live_reading *rd;
    size_t cap_sh, cap_rd;
    double level, last_t;
    size_t hold, held; /* periods per round; proposals reused since the last made */
    int dirty;         /* the job set or a range moved since the last proposal */
    int proposed;      /* a proposal has been made */
};

typedef struct {
    const plan_learn *l;
    const char *id;
    uint64_t key;
} eq_ctx;

static int id_eq(size_t pos, const void *x)
{
    const eq_ctx *k = x;
    return strcmp(k->l->e[pos].id, k->id) == 0;
}

static int key_eq(size_t pos, const void *x)
{
    const eq_ctx *k = x;
    return k->l->e[pos].key == k->key;
}

int plan_learn_create(const pfi_live_opts *o, size_t hold, plan_learn **out, pfi_error *err)
{
    *out = NULL;
    plan_learn *l = calloc(1, sizeof *l);
    if (!l) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    int rc = pfi_live_create(o, &l->live, err);
    if (rc != PFI_OK) {
        free(l);
        return rc;
    }
    l->level = l->last_t = NAN;
    l->hold = hold ? hold : 1;
    *out = l;
    return PFI_OK;
}

void plan_learn_destroy(plan_learn *l)
{
    if (!l) return;
    pfi_live_destroy(l->live);
    for (size_t i = 0; i < l->n; i++)
        free(l->e[i].id);
    free(l->e);
    ctl_index_free(&l->by_id);
    ctl_index_free(&l->by_key);
    free(l->sh);
    free(l->rd);
    free(l);
}

double plan_learn_level(const plan_learn *l)
{
    return l ? l->level : NAN;
}

static int index_entry(plan_learn *l, size_t pos)
{
    if (ctl_index_put(&l->by_id, ctl_hash_str(l->e[pos].id), pos)) return -1;
    return ctl_index_put(&l->by_key, ctl_hash_2(l->e[pos].key, 0), pos);
}

/* The entry of id, created (with a new key) when absent; NULL on no memory. */
static lj *entry(plan_learn *l, const char *id, int *created)
{
    eq_ctx k = {.l = l, .id = id};
    size_t pos = ctl_index_get(&l->by_id, ctl_hash_str(id), id_eq, &k);
    *created = 0;
    if (pos != SIZE_MAX) return &l->e[pos];
    lj *arr = ctl_grow(l->e, &l->cap, l->n + 1, sizeof *arr);
    if (!arr) return NULL;
    l->e = arr;
    lj *x = &l->e[l->n];
    memset(x, 0, sizeof *x);
    x->id = strdup(id);
    if (!x->id) return NULL;
    x->key = ++l->next_key;
    if (index_entry(l, l->n)) {
        free(x->id);
        return NULL;
    }
    l->n++;
    *created = 1;
    return x;
}

static int changed(const pfi_live_job *a, const pfi_live_job *b)
{
    /* Each set starts an epoch, so only a move of 1% counts: a measured
     * point's running mean moves the plan's curve a little every period. */
    double r = 0.01;
    if (fabs(a->pmax_w - b->pmax_w) > r * b->pmax_w || fabs(a->tmax - b->tmax) > r * b->tmax ||
        fabs(a->floor_w - b->floor_w) > r * b->floor_w)
        return 1;
    /* a live estimate moves a little from tick to tick: only a real change counts */
    if (isnan(a->pfi_hat) != isnan(b->pfi_hat) || a->class_id != b->class_id) return 1;
    return !isnan(a->pfi_hat) && fabs(a->pfi_hat - b->pfi_hat) > 0.02;
}

static int good(const pfi_plan_obs *o)
{
    return o->power_w > 0 && o->power_w <= PFI_ALLOC_MAX_W && o->tput >= 0 &&
           o->tput <= PFI_ALLOC_MAX_TPUT && o->tput_sd >= 0 && isfinite(o->tput_sd) &&
           !isinf(o->cap_w);
}

/* Queues point o of job key as a reading at t. */
static int queue(plan_learn *l, size_t *k, uint64_t key, const pfi_plan_obs *o, double t, int prior)
{
    if (!good(o)) return 0;
    pfi_live_reading *r = ctl_grow(l->rd, &l->cap_rd, *k + 1, sizeof *r);
    if (!r) return -1;
    l->rd = r;
    r[(*k)++] = (pfi_live_reading){.id = key,
                                   .power_w = o->power_w,
                                   .cap_w = o->cap_w,
                                   .tput = o->tput,
                                   .tput_sd = o->tput_sd,
                                   .t_s = t,
                                   .prior = prior};
    return 0;
}

int plan_learn_sync(plan_learn *l, const pfi_plan_job *jobs, size_t n,
                    const pfi_alloc_problem *prob, double now_s, pfi_error *err)
{
    l->gen++;
    size_t k = 0;
    /* a period's reading counts only at the end of a round (the caps of the
     * round's first periods are still moving) */
    int round_end = l->held + 1 >= l->hold;
    /* points from before this period must not count as this round's measurement */
    double before = isfinite(l->last_t) ? l->last_t : now_s;
    for (size_t i = 0; i < n; i++) {
        const pfi_plan_job *j = &jobs[i];
        int created;
        lj *x = entry(l, j->id, &created);
        if (!x) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        x->idx = i;
        x->gen = l->gen;
        double pm, tm, fl;
        pfi_alloc_problem_job_range(prob, i, &pm, &tm, &fl);
        pfi_live_job s = {.id = x->key,
                          .pmax_w = pm,
                          .tmax = tm,
                          .floor_w = fl > 0 ? (fl < pm ? fl : pm) : pm,
                          .pfi_hat = isfinite(j->pfi) ? j->pfi : NAN,
                          /* the class's name hashed: two names that collide
                           * pool only while their readings agree */
                          .class_id =
                              j->job_class && j->job_class[0] ? ctl_hash_str(j->job_class) | 1 : 0};
        if (created || changed(&s, &x->set)) {
            int rc = pfi_live_job_set(l->live, &s, err);
            if (rc != PFI_OK) return rc;
            x->set = s;
            l->dirty = 1;
        }
        /* Readings are tokens/s: they mean something only against a known Tmax. */
        if (!(isfinite(j->tmax) && j->tmax > 0)) continue;
        int rc = 0;
        if (!x->primed) {
            for (size_t o = 0; o < j->n_obs && !rc; o++)
                rc = queue(l, &k, x->key, &j->obs[o], before, 0);
            x->primed = 1;
        }
        if (!x->prior_fed && j->n_prior) {
            for (size_t o = 0; o < j->n_prior && !rc; o++)
                rc = queue(l, &k, x->key, &j->prior[o], before, 1);
            x->prior_fed = 1;
        }
        if (!rc && round_end && j->reading.power_w > 0)
            rc = queue(l, &k, x->key, &j->reading, now_s, 0);
        if (rc) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    /* The jobs that left. */
    size_t m = 0;
    int gone = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->e[i].gen == l->gen) {
            l->e[m++] = l->e[i];
            continue;
        }
        pfi_live_job_remove(l->live, l->e[i].key, NULL);
        free(l->e[i].id);
        gone = 1;
    }
    l->n = m;
    l->dirty |= gone;
    if (gone) {
        ctl_index_clear(&l->by_id);
        ctl_index_clear(&l->by_key);
        for (size_t i = 0; i < l->n; i++)
            if (index_entry(l, i)) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    return k ? pfi_live_observe(l->live, l->rd, k, err) : PFI_OK;
}

int plan_learn_propose(plan_learn *l, double budget_w, double floor_total_w, double now_s,
                       pfi_alloc_out *out, size_t n, pfi_error *err)
{
    size_t nj = pfi_live_jobs(l->live);
    if (nj == 0) return PFI_OK;
    if (nj != n)
        return pfi_error_set(err, PFI_ERANGE, NULL, 0, "learn: %zu jobs synced, %zu planned", nj,
                             n);
    double was = l->level;
    if (!(l->level <= budget_w) || l->level < budget_w / (1 + LEVEL_BAND))
        l->level = budget_w * (1 - LEVEL_DROP);
    if (l->level < floor_total_w) l->level = floor_total_w < budget_w ? floor_total_w : budget_w;
    if (l->proposed && !l->dirty && l->level == was && l->held + 1 < l->hold) {
        /* inside a round: the round's proposal again */
        l->held++;
        for (size_t i = 0; i < l->n; i++)
            out[l->e[i].idx] = l->e[i].last;
        return PFI_OK;
    }
    pfi_live_share *sh = ctl_grow(l->sh, &l->cap_sh, n, sizeof *sh);
    if (!sh) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    l->sh = sh;
    if (isfinite(l->last_t) && now_s < l->last_t) now_s = l->last_t; /* a clock step back */
    int rc = pfi_live_propose(l->live, l->level, now_s, sh, n, err);
    if (rc == PFI_EINFEASIBLE && l->level < budget_w) {
        /* the loop's floors sit up to 1% off the plan's (above): the whole budget */
        l->level = budget_w;
        rc = pfi_live_propose(l->live, l->level, now_s, sh, n, err);
    }
    if (rc != PFI_OK) return rc;
    l->last_t = now_s;
    for (size_t s = 0; s < n; s++) {
        eq_ctx k = {.l = l, .key = sh[s].id};
        size_t pos = ctl_index_get(&l->by_key, ctl_hash_2(sh[s].id, 0), key_eq, &k);
        if (pos == SIZE_MAX) continue;
        lj *x = &l->e[pos];
        x->last = (pfi_alloc_out){.power_w = sh[s].power_w,
                                  .cap_w = NAN,
                                  .tput = sh[s].tput_est,
                                  .at_floor = sh[s].power_w <= x->set.floor_w * (1 + 1e-9)};
        out[x->idx] = x->last;
    }
    l->held = 0;
    l->dirty = 0;
    l->proposed = 1;
    return PFI_OK;
}

int plan_learn_tree(plan_learn *l, const pfi_alloc_domain *d, size_t nd, const pfi_alloc_span *s,
                    size_t ns, pfi_error *err)
{
    if (nd == 0) return pfi_live_set_tree(l->live, NULL, 0, NULL, 0, err);
    uint64_t *key = malloc((l->n ? l->n : 1) * sizeof *key);
    pfi_live_span *ls = malloc((ns ? ns : 1) * sizeof *ls);
    if (!key || !ls) {
        free(key), free(ls);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    for (size_t i = 0; i < l->n; i++)
        if (l->e[i].idx < l->n) key[l->e[i].idx] = l->e[i].key;
    size_t k = 0;
    for (size_t j = 0; j < ns; j++)
        if (s[j].job < l->n) ls[k++] = (pfi_live_span){key[s[j].job], s[j].domain, s[j].share};
    int rc = pfi_live_set_tree(l->live, d, nd, ls, k, err);
    free(key), free(ls);
    return rc;
}
