/* See rd_load_matched and rd_match in rdata.h: Table 8, the same jobs swept
 * on two GPU generations (paper Appendix D.2). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pfi/group_key.h"
#include "pfi/quantile.h"
#include "pfi/stats.h"
#include "pfi/sweeps_csv.h"
#include "rdata.h"

int rd_load_matched(rd_data *d, const char *sweeps, pfi_error *err)
{
    if (!sweeps) return PFI_OK;
    return pfi_sweeps_read(sweeps, 0, &d->other, err);
}

static int same_job(const rd_group *r, const char *key_b)
{
    char *ka = pfi_group_key(r->g->name, r->g->meta.platform);
    int same = ka && strcmp(ka, key_b) == 0;
    free(ka);
    return same;
}

/* Rank agreement, the largest difference and the median relative one, as
 * the paper states them under Table 8 (rho 0.943, 0.16, 3.5%). */
static void match_stats(rd_data *d)
{
    size_t m = 0;
    double *a = malloc((d->npairs + 1) * sizeof *a), *b = malloc((d->npairs + 1) * sizeof *b);
    double *rel = malloc((d->npairs + 1) * sizeof *rel);
    if (a && b && rel) {
        d->match_max_abs = 0;
        for (size_t i = 0; i < d->npairs; i++) {
            const rd_pair *p = &d->pairs[i];
            if (!p->has) continue;
            a[m] = p->pfi_a;
            b[m] = p->pfi_b;
            rel[m] = fabs(p->pfi_b - p->pfi_a) / p->pfi_a;
            if (fabs(p->pfi_b - p->pfi_a) > d->match_max_abs)
                d->match_max_abs = fabs(p->pfi_b - p->pfi_a);
            m++;
        }
        double pv = 0;
        d->has_match_stats = m >= 3 && pfi_stats_spearman(a, b, m, &d->match_rho, &pv) == PFI_OK;
        if (d->has_match_stats) d->match_median_rel = pfi_quantile_select(rel, m, 0.5);
    }
    free(a);
    free(b);
    free(rel);
}

int rd_match(rd_data *d, pfi_error *err)
{
    if (!d->other) return PFI_OK;
    size_t nb = pfi_sweeps_count(d->other), unmatched = 0;
    d->pairs = calloc(nb ? nb : 1, sizeof *d->pairs);
    if (!d->pairs) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    for (size_t j = 0; j < nb; j++) {
        const pfi_group *gb = pfi_sweeps_group(d->other, j);
        char *kb = pfi_group_key(gb->name, gb->meta.platform);
        if (!kb) return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
        const rd_group *ra = NULL;
        for (size_t i = 0; i < d->ng + d->nh && !ra; i++)
            if (same_job(&d->grp[i], kb)) ra = &d->grp[i];
        free(kb);
        if (!ra) {
            unmatched++;
            continue;
        }
        pfi_index_result ib;
        rd_pair *p = &d->pairs[d->npairs++];
        p->a = ra;
        p->b = gb;
        p->pfi_a = ra->idx.pfi;
        p->has = ra->idx.has_pfi && pfi_index_group(gb, PFI_METHOD_RATIO, NULL, &ib) == PFI_OK &&
                 ib.has_pfi;
        p->pfi_b = p->has ? ib.pfi : 0;
    }
    if (unmatched)
        rd_note(d,
                "Table 8: %zu of the %zu groups of the other GPU's sweeps have no group of "
                "the same name (platform aside) here and are left out.",
                unmatched, nb);
    match_stats(d);
    return PFI_OK;
}
