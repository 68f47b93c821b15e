/* pfi sweep's state file, DIR/sweep-state.json: the GPUs, the limits in
 * force before the sweep (what every exit path restores, and what the next
 * start restores after a crash), and each finished cap's result (what
 * --resume keeps). Written all or nothing before the first cap is set and
 * after each cap. */
#ifndef PFI_SWEEP_STATE_H
#define PFI_SWEEP_STATE_H

#include <stddef.h>

#include "pfi/error.h"
#include "pfi/telemetry.h"
#include "pfi/trace.h"

enum { SWEEP_MAX_GPUS = 64, SWEEP_MAX_CAPS = 64 };

typedef struct sweep_result {
    double cap_w;
    int ok;
    int gpus;
    double start[PFI_PHASE_COUNT];
    size_t samples, training_samples;
    double power_w, power_sem_w, tput, tput_sem;
    pfi_tm_row telemetry; /* group NULL */
    char why[256];        /* when !ok */
} sweep_result;

typedef struct sweep_state {
    int active; /* caps may be set: a start that finds this restores them */
    char backend[16];
    char backend_opts[1024];
    char via_pfid[512]; /* "" unless through pfid */
    unsigned gpus[SWEEP_MAX_GPUS];
    double prior_w[SWEEP_MAX_GPUS]; /* the limit in force before the sweep, W */
    size_t n_gpus;
    sweep_result res[SWEEP_MAX_CAPS];
    size_t n_res;
} sweep_state;

/* PFI_ENOTFOUND when DIR has no state file; PFI_EPARSE naming the file when
 * it is not one of ours. */
int sweep_state_load(const char *dir, sweep_state *s, pfi_error *err);
int sweep_state_save(const char *dir, const sweep_state *s, pfi_error *err);

/* The result of a cap, or NULL. */
sweep_result *sweep_state_find(sweep_state *s, double cap_w);
/* Records r (replacing the cap's earlier result). */
int sweep_state_put(sweep_state *s, const sweep_result *r);

#endif
