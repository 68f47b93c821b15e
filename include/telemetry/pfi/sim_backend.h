/* The sim backend's own controls (the generic ones are in backend.h).
 *
 * Options (pfi_backend_open("sim", opts, ...)): comma-separated key=value,
 *   gpus=N       simulated H200s (1-1024, default 8)
 *   jobs=FILE    a jobs file (below); without it every GPU idles
 *   noise=F      relative Gaussian noise on power and throughput (default 0)
 *   seed=S       the noise's seed (default 1)
 *
 * Jobs file: CSV with a header; one row places one job on one GPU for a
 * time window (seconds since the backend opened):
 *   gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu
 * and optional columns
 *   clock_spread (0), floor_mhz (0), extra_w (0), start_s (0), warmup_s (0),
 *   startup_s (0), duration_s (0 = runs until the end), fb_mib (60000).
 * The model columns (the first five and the next three) are pfi_job_model's
 * (gpumodel.h). A job goes through
 * the paper's phases: warmup_s with the framebuffer under 10 GiB (2127 MiB)
 * and no kernels, startup_s loaded (fb_mib) but idle (both at 118.4 W and the
 * maximum SM clock, as the probe's GPU with a CUDA context), then training through
 * pfi_gpumodel_eval at the GPU's power limit for duration_s. Two rows whose
 * windows overlap on one GPU are an error.
 */
#ifndef PFI_SIM_BACKEND_H
#define PFI_SIM_BACKEND_H

#include "pfi/backend.h"

/* Pins the sim's clock at t_s seconds since open (for tests); a negative t_s
 * goes back to the monotonic clock. PFI_EINVAL when b is not a sim backend. */
int pfi_sim_set_time(pfi_backend *b, double t_s);

#endif
