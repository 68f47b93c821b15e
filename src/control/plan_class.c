/* Jobs of one class pool their measured points (plan_curve.h): a job's
 * class points are, per 5 W cap, the mean over the other jobs of the class
 * (and the class's stored points) of T / Tmax and P / Pmax, with the spread
 * between them. A job's own points are compared with the others' first:
 * one that disagrees beyond both spreads (3 SD) is split out. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan_curve.h"

#define SPLIT_Z 3.0

typedef struct mpt {
    size_t job; /* SIZE_MAX: a stored point of the class */
    long bucket;
    double x, y, v;
} mpt;

/* A job of a class, for sorting by class (ties by index: stable). */
typedef struct cls_ix {
    const char *cls;
    size_t i;
} cls_ix;

static int by_class(const void *a, const void *b)
{
    const cls_ix *x = a, *y = b;
    int c = strcmp(x->cls, y->cls);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

static int by_bucket(const void *a, const void *b)
{
    const mpt *x = a, *y = b;
    return (x->bucket > y->bucket) - (x->bucket < y->bucket);
}

static long bucket_of(double cap)
{
    return lround(cap / 5);
}

/* The member points of jobs idx[0..k) (one class) and its stored points. */
static size_t member_points(const pfi_plan_job *jobs, const size_t *idx, size_t k, mpt *out)
{
    size_t m = 0;
    const pfi_plan_obs *stored = NULL;
    size_t n_stored = 0;
    for (size_t a = 0; a < k; a++) {
        const pfi_plan_job *j = &jobs[idx[a]];
        if (!stored && j->n_class_obs) stored = j->class_obs, n_stored = j->n_class_obs;
        double pmax = isfinite(j->pmax_w) && j->pmax_w > 0 ? j->pmax_w : NAN;
        if (!(j->tmax > 0) || !isfinite(pmax)) continue;
        for (size_t o = 0; o < j->n_obs; o++) {
            const pfi_plan_obs *ob = &j->obs[o];
            if (!(ob->power_w > 0) || !(ob->tput >= 0) || !isfinite(ob->cap_w)) continue;
            double sd = isfinite(ob->tput_sd) && ob->tput_sd > 0 ? ob->tput_sd / j->tmax : 0;
            out[m++] = (mpt){idx[a], bucket_of(ob->cap_w), ob->power_w / pmax, ob->tput / j->tmax,
                             sd * sd};
        }
    }
    for (size_t o = 0; o < n_stored; o++) {
        const pfi_plan_obs *ob = &stored[o];
        if (!(ob->power_w > 0) || !(ob->tput >= 0) || !isfinite(ob->cap_w)) continue;
        double sd = isfinite(ob->tput_sd) && ob->tput_sd > 0 ? ob->tput_sd : 0;
        out[m++] = (mpt){SIZE_MAX, bucket_of(ob->cap_w), ob->power_w, ob->tput, sd * sd};
    }
    qsort(out, m, sizeof *out, by_bucket);
    return m;
}

/* Job i's class points from the member points pts[0..m) (by bucket) into
 * out; *split when its own disagree. Returns how many. */
static size_t job_points(const pfi_plan_job *j, size_t i, const mpt *pts, size_t m,
                         plan_cls_pt *out, int *split)
{
    size_t n = 0;
    *split = 0;
    int has_own = 0;
    for (size_t s = 0; s < m;) {
        size_t e = s;
        double k = 0, sy = 0, syy = 0, sx = 0, sv = 0, own_y = NAN, own_v = 0;
        for (; e < m && pts[e].bucket == pts[s].bucket; e++) {
            if (pts[e].job == i) {
                own_y = pts[e].y;
                own_v = pts[e].v;
                continue;
            }
            k++;
            sy += pts[e].y;
            syy += pts[e].y * pts[e].y;
            sx += pts[e].x;
            sv += pts[e].v;
        }
        long b = pts[s].bucket;
        s = e;
        if (isfinite(own_y)) has_own = 1;
        if (k == 0) continue;
        double y = sy / k, vb = PLAN_CLASS_SD * PLAN_CLASS_SD;
        if (k >= 2) vb = fmax(vb, (syy - sy * sy / k) / (k - 1));
        double var = vb * (1 + 1 / k) + sv / (k * k);
        if (isfinite(own_y)) {
            if (fabs(own_y - y) > SPLIT_Z * sqrt(var + own_v)) *split = 1;
            continue; /* its own point stands at this cap */
        }
        out[n++] = (plan_cls_pt){(double)b * 5, sx / k, y, sqrt(var)};
    }
    /* No point of its own yet: the class must agree with its estimate. */
    if (!has_own && isfinite(j->pfi) && n) {
        double r = 0, c = 0;
        for (size_t q = 0; q < n; q++)
            if (out[q].y < 1 && out[q].x < 1) r += (1 - out[q].x) / (1 - out[q].y), c++;
        double sd = isfinite(j->pfi_sd) && j->pfi_sd > 0 ? j->pfi_sd : PLAN_PRIOR_SD;
        if (c && fabs(r / c - j->pfi) > SPLIT_Z * sqrt(sd * sd + PLAN_PRIOR_BW * PLAN_PRIOR_BW))
            *split = 1;
    }
    if (*split) n = 0;
    return n;
}

int plan_class_pool(const pfi_plan_job *jobs, size_t n, plan_cls_pt **buf, plan_cls_pt **cls,
                    size_t *n_cls, int *split)
{
    *buf = NULL;
    memset(n_cls, 0, n * sizeof *n_cls);
    memset(split, 0, n * sizeof *split);
    for (size_t i = 0; i < n; i++)
        cls[i] = NULL;
    size_t *idx = malloc((n + 1) * sizeof *idx), k = 0;
    cls_ix *ci = malloc((n + 1) * sizeof *ci);
    if (!idx || !ci) {
        free(idx);
        free(ci);
        return PFI_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        if (jobs[i].job_class && jobs[i].job_class[0]) ci[k++] = (cls_ix){jobs[i].job_class, i};
    qsort(ci, k, sizeof *ci, by_class);
    for (size_t a = 0; a < k; a++)
        idx[a] = ci[a].i;
    free(ci);
    plan_cls_pt *out = NULL;
    size_t *off = malloc((n + 1) * sizeof *off), used = 0, cap = 0;
    mpt *mp = NULL;
    int rc = off ? PFI_OK : PFI_ENOMEM;
    for (size_t s = 0, e; rc == PFI_OK && s < k; s = e) {
        size_t pts = 0;
        for (e = s; e < k && strcmp(jobs[idx[e]].job_class, jobs[idx[s]].job_class) == 0; e++)
            pts += jobs[idx[e]].n_obs + jobs[idx[e]].n_class_obs;
        mpt *q = realloc(mp, (pts + 1) * sizeof *q);
        if (!q) {
            rc = PFI_ENOMEM;
            break;
        }
        mp = q;
        size_t m = member_points(jobs, idx + s, e - s, mp), buckets = 0;
        for (size_t t = 0; t < m; t++)
            buckets += t == 0 || mp[t].bucket != mp[t - 1].bucket;
        /* each job of the class gets at most one point per bucket */
        if (used + buckets * (e - s) > cap) {
            size_t want = 2 * (used + buckets * (e - s)) + 16;
            plan_cls_pt *o = realloc(out, want * sizeof *o);
            if (!o) {
                rc = PFI_ENOMEM;
                break;
            }
            out = o;
            cap = want;
        }
        for (size_t a = s; a < e; a++) {
            size_t i = idx[a];
            off[i] = used;
            n_cls[i] = job_points(&jobs[i], i, mp, m, out + used, &split[i]);
            used += n_cls[i];
        }
    }
    for (size_t i = 0; rc == PFI_OK && i < n; i++)
        cls[i] = n_cls[i] ? out + off[i] : NULL;
    free(off);
    free(mp);
    free(idx);
    if (rc != PFI_OK) {
        free(out);
        memset(n_cls, 0, n * sizeof *n_cls);
        return rc;
    }
    *buf = out;
    return PFI_OK;
}
