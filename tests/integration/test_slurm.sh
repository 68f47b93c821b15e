#!/usr/bin/env bash
# Slurm integration on a real single-node Slurm (tests/integration/
# slurm_lib.sh): how the GPUs of a job's GRES allocation reach its steps,
# the SPANK plugin (contrib/slurm/spank_pfi.c) and the prolog/epilog scripts
# registering jobs with a pfid on the sim backend.
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/slurm_lib.sh"
slurm_need
slurm_write_conf
slurm_start
ok "munged, slurmctld and slurmd up (ports $SLURMCTLD_PORT, $SLURMD_PORT)"

# --- how GRES GPU indices reach a job: two jobs of 2 GPUs share the node ---
# Without device cgroups (task/none), CUDA_VISIBLE_DEVICES and SLURM_STEP_GPUS
# hold the gres.conf indices of the step's devices; a batch job's
# SLURM_JOB_GPUS those of the job. The second job must get 2,3, not 0,1.
srun --gres=gpu:2 sleep 6 &
SRUN1=$!
PIDS+=("$SRUN1")
first_running() { [ "$(squeue -h -t R -o %i | wc -l)" -ge 1 ]; }
wait_until 15 first_running || fail "the first job did not start"
ENV2=$(timeout 20 srun --gres=gpu:2 env) || fail "second srun"
grep -qx 'CUDA_VISIBLE_DEVICES=2,3' <<<"$ENV2" || fail "second job's CUDA_VISIBLE_DEVICES: $(grep CUDA <<<"$ENV2")"
grep -qx 'SLURM_STEP_GPUS=2,3' <<<"$ENV2" || fail "second job's SLURM_STEP_GPUS: $(grep GPUS <<<"$ENV2")"
wait "$SRUN1" || fail "first srun"
ok "concurrent srun --gres=gpu:2 jobs: GPUs 0,1 and 2,3"
JOB=$(sbatch --parsable --gres=gpu:3 -o "$WORK/batch.out" --wrap 'env; srun --gres=gpu:1 env | sed s/^/step:/')
batch_done() { [ -z "$(job_state "$JOB")" ] || [ "$(job_state "$JOB")" = COMPLETED ]; }
wait_until 20 batch_done || fail "batch job $JOB did not finish"
grep -qx 'SLURM_JOB_GPUS=0,1,2' "$WORK/batch.out" || fail "batch SLURM_JOB_GPUS: $(cat "$WORK/batch.out")"
grep -qx 'step:SLURM_STEP_GPUS=0' "$WORK/batch.out" || fail "step SLURM_STEP_GPUS"
grep -qx 'step:SLURM_JOB_GPUS=0,1,2' "$WORK/batch.out" || fail "a step sees the job's SLURM_JOB_GPUS"
ok "sbatch --gres=gpu:3: SLURM_JOB_GPUS=0,1,2, a step of 1 GPU SLURM_STEP_GPUS=0"
echo "PASS"
