/* libFuzzer target: what the controller reads over HTTP: pfid's GET
 * /v1/gpus, GET /v1/jobs and GET /v1/jobs/ID/curve answers, and Prometheus'
 * /api/v1/query answers (--site-meter's one number; --cluster-from
 * prometheus's vectors, read as job memberships and as per-node/per-job
 * aggregates into a cluster view). pfid's listings are also read by the
 * Jansson reader the one-pass one replaced (tests/unit/cluster_ref.h): the
 * same status and, accepted, the same view bit for bit (a NUL byte, which
 * Jansson may skip, is refused). Accepted listings hold what the planner
 * may use as it is (job GPU counts in range, ids bounded); an accepted query
 * a finite number; an accepted vector labels that are NUL-terminated inside
 * its text, a view only jobs with GPUs; refused ones a message. Never a
 * crash or a leak. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/cluster_ref.h"
#include "pfi/cluster.h"
#include "pfi/prom_cluster.h"
#include "pfi/prom_query.h"
#include "pfi/prom_vector.h"

static void same_as_jansson(const char *text, size_t size,
                            int (*fresh)(const char *, size_t, pfi_cl_node *, pfi_error *),
                            int (*ref)(const char *, size_t, pfi_cl_node *, pfi_error *))
{
    pfi_cl_node a = {0}, b = {0};
    pfi_error ea, eb; /* not NULL: the old reader's status needs its pfi_error */
    int ra = fresh(text, size, &a, &ea), rb = ref(text, size, &b, &eb);
    int nul_skipped = ra == PFI_EPARSE && rb != PFI_EPARSE && memchr(text, '\0', size);
    if (!nul_skipped && (ra != rb || (ra == PFI_OK && !ref_cl_same(&a, &b, NULL, 0))))
        __builtin_trap();
    pfi_cl_node_clear(&a);
    pfi_cl_node_clear(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    same_as_jansson((const char *)data, size, pfi_cl_parse_gpus, ref_cl_parse_gpus);
    same_as_jansson((const char *)data, size, pfi_cl_parse_jobs, ref_cl_parse_jobs);
    pfi_cl_node node = {0};
    pfi_error err;
    pfi_error_clear(&err);
    if (pfi_cl_parse_gpus((const char *)data, size, &node, &err) != PFI_OK && !err.msg[0])
        __builtin_trap();
    pfi_error_clear(&err);
    if (pfi_cl_parse_jobs((const char *)data, size, &node, &err) == PFI_OK) {
        for (size_t i = 0; i < node.n_jobs; i++) {
            const pfi_cl_job *j = &node.jobs[i];
            if (j->n_gpus == 0 || j->n_gpus > PFI_CL_JOB_GPUS || strlen(j->id) == 0 ||
                strlen(j->id) > PFI_CL_ID_MAX ||
                (!isnan(j->sla_floor) && !(j->sla_floor > 0 && j->sla_floor <= 1)))
                __builtin_trap();
        }
    } else if (!err.msg[0]) {
        __builtin_trap();
    }
    pfi_cl_node_clear(&node);
    pfi_cl_point *pts;
    size_t np;
    pfi_error_clear(&err);
    if (pfi_cl_parse_curve((const char *)data, size, &pts, &np, &err) == PFI_OK) {
        for (size_t i = 0; i < np; i++)
            if (!(pts[i].cap_w > 0 && pts[i].power_w > 0 && pts[i].tput >= 0 &&
                  pts[i].tput_sd >= 0 && isfinite(pts[i].tput + pts[i].power_w + pts[i].cap_w)))
                __builtin_trap();
        free(pts);
    } else if (!err.msg[0]) {
        __builtin_trap();
    }
    double v;
    pfi_error_clear(&err);
    if (pfi_prom_query_parse((const char *)data, size, &v, &err) == PFI_OK) {
        if (!isfinite(v)) __builtin_trap();
    } else if (!err.msg[0]) {
        __builtin_trap();
    }
    pfi_prom_vec a[PFI_PC_NQ];
    memset(a, 0, sizeof a);
    size_t nl;
    const char *const *l = pfi_pc_query_labels(PFI_PC_MEMBERS, &nl);
    pfi_error_clear(&err);
    if (pfi_prom_vec_parse((const char *)data, size, l, nl, &a[PFI_PC_MEMBERS], &err) == PFI_OK) {
        const pfi_prom_vec *m = &a[PFI_PC_MEMBERS];
        for (size_t i = 0; i < m->n; i++)
            for (size_t k = 0; k < nl; k++) {
                size_t o = m->lab[i * nl + k];
                if (o >= m->text_len || (o && strlen(m->text + o) >= m->text_len - o))
                    __builtin_trap();
            }
        /* the same rows as every other query's (their first label is
         * instance or job_id, as members' instance) */
        for (int q = 0; q < PFI_PC_NQ; q++) {
            if (q == PFI_PC_MEMBERS) continue;
            const char *const *lq = pfi_pc_query_labels((pfi_pc_query)q, &nl);
            if (pfi_prom_vec_parse((const char *)data, size, lq, nl, &a[q], NULL) != PFI_OK)
                __builtin_trap(); /* the same text cannot be refused for other labels */
        }
        pfi_pc_view view = {0};
        if (pfi_pc_view_build(a, &view, &err) == PFI_OK) {
            for (size_t i = 0; i < view.n_members; i++)
                if (view.members[i].node >= view.n_nodes || view.members[i].job >= view.n_jobs ||
                    view.members[i].n_gpus == 0 || view.members[i].n_gpus > PFI_CL_JOB_GPUS)
                    __builtin_trap();
            pfi_pc_view_clear(&view);
        }
    } else if (!err.msg[0]) {
        __builtin_trap();
    }
    for (int q = 0; q < PFI_PC_NQ; q++)
        pfi_prom_vec_free(&a[q]);
    return 0;
}
