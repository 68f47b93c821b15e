#!/usr/bin/env bash
# Slurm integration on a real single-node Slurm (tests/integration/
# slurm_lib.sh): how the GPUs of a job's GRES allocation reach its steps,
# the SPANK plugin (contrib/slurm/spank_pfi.c) and the prolog/epilog scripts
# registering jobs with a pfid on the sim backend.
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/slurm_lib.sh"
slurm_need
[ -n "${PFI_SPANK_PLUGIN:-}" ] && [ -f "$PFI_SPANK_PLUGIN" ] ||
    fail "PFI_SPANK_PLUGIN not set: the plugin was not built (libslurm-dev's slurm/spank.h missing?)"

# pfid on the sim backend, on a port fixed in plugstack.conf (it is
# restarted on the same port below).
PFID_PORT=$(free_port)
SIM=(--backend sim --sim-gpus 4 --db "$WORK/pfid.db" --interval 0.2 --listen "127.0.0.1:$PFID_PORT")
pfid_start "$WORK/pfid1.log" "${SIM[@]}"
slurm_write_conf
echo "required $PFI_SPANK_PLUGIN url=http://127.0.0.1:$PFID_PORT token_file=$TOKEN_FILE" \
    "state_dir=$WORK/pfi-slurm timeout=1 retry=0.5 allow_exempt" >"$SD/plugstack.conf"
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

# --- the SPANK plugin ---
# job_gpus ID: the GPU indices Slurm gave job ID on the node, from
# scontrol's detailed view ("GRES=gpu:2(IDX:0-1)"), as a Python list.
job_gpus() {
    scontrol show job -d "$1" | grep -o 'IDX:[0-9,-]*' | head -n1 | sed 's/IDX://' |
        python3 -c 'import sys; r=[]
for p in sys.stdin.read().strip().split(","):
    a,_,b=p.partition("-"); r+=range(int(a),int(b or a)+1)
print(r)'
}
# pfid_job ID: sets BODY to pfid's view of job ID; fails when not listed.
pfid_job() { req GET "/v1/jobs/$1" "" no; [ "$CODE" = 200 ]; }
pfid_gone() { req GET "/v1/jobs/$1" "" no; [ "$CODE" = 404 ]; }

set +e
srun --pfi-sla=1.5 true 2>"$WORK/badsla.err"; rc=$?
set -e
[ $rc -ne 0 ] && grep -q -- "--pfi-sla must be a number in (0, 1]" "$WORK/badsla.err" ||
    fail "srun --pfi-sla=1.5 not refused clearly: $(cat "$WORK/badsla.err")"
ok "srun --pfi-sla=1.5 refused: $(grep -o 'pfi-sla must[^,]*' "$WORK/badsla.err" | head -n1)"

# 10 s: long enough to be listed in /metrics after the JSON checks on a slow
# (ASan) build, where 4 s ended the job before /metrics was read
srun --job-name=srun-sla --gres=gpu:2 --pfi-sla=0.8 --pfi-arch=dense sh -c 'env >'"$WORK/srun.env"'; sleep 10' &
SRUN=$!
PIDS+=("$SRUN")
srun_id() { squeue -h -n srun-sla -o %i | grep -q .; }
wait_until 15 srun_id || fail "srun job not listed by squeue"
SJOB=$(squeue -h -n srun-sla -o %i)
wait_until 10 pfid_job "$SJOB" || fail "srun job $SJOB never listed by pfid: $BODY"
[ "$(jq_py 'd["gpus"]')" = "$(job_gpus "$SJOB")" ] || fail "job $SJOB: pfid GPUs $(jq_py 'd["gpus"]') != Slurm's $(job_gpus "$SJOB")"
[ "$(jq_py 'd["arch"]')" = dense ] && [ "$(jq_py 'd["sla_floor"]')" = 0.8 ] &&
    [ "$(jq_py 'd["exempt"]')" = False ] || fail "arch, SLA floor, exempt: $BODY"
[ "$(jq_py 'd["class"]')" = None ] || fail "job $SJOB: a class where none was given: $BODY"
req GET /metrics "" no
grep -qx "pfi_job_sla_floor_ratio{job_id=\"$SJOB\"} 0.8" <<<"$BODY" || fail "/metrics lacks job $SJOB's SLA floor"
grep -qx "pfi_job_exempt{job_id=\"$SJOB\"} 0" <<<"$BODY" || fail "/metrics lacks job $SJOB's exempt flag"
pfid_job "$SJOB"
ok "srun job $SJOB listed by pfid on GPUs $(jq_py 'd["gpus"]') (Slurm: $(job_gpus "$SJOB")), SLA floor 0.8 (JSON, /metrics)"
wait "$SRUN" || fail "srun exited non-zero"
wait_until 10 pfid_gone "$SJOB" || fail "srun job $SJOB still listed after it ended: $BODY"
ok "srun job $SJOB gone from pfid after it ended"

BJOB=$(sbatch --parsable --gres=gpu:1 --pfi-task=ft --pfi-exempt --pfi-class=nightly.7 -o /dev/null --wrap 'sleep 3')
wait_until 15 pfid_job "$BJOB" || fail "batch job $BJOB never listed by pfid"
[ "$(jq_py 'd["gpus"]')" = "$(job_gpus "$BJOB")" ] || fail "job $BJOB GPUs: $BODY"
[ "$(jq_py 'd["task"]')" = ft ] && [ "$(jq_py 'd["exempt"]')" = True ] &&
    [ "$(jq_py 'd["sla_floor"]')" = None ] && [ "$(jq_py 'd["class"]')" = nightly.7 ] ||
    fail "task, exempt, no SLA floor, --pfi-class: $BODY"
ok "sbatch job $BJOB listed by pfid on GPUs $(jq_py 'd["gpus"]'), exempt"
wait_until 15 pfid_gone "$BJOB" || fail "batch job $BJOB still listed after it ended: $BODY"
ok "sbatch job $BJOB gone after it ended"

CJOB=$(sbatch --parsable --gres=gpu:4 -o /dev/null --wrap 'sleep 120')
wait_until 15 pfid_job "$CJOB" || fail "job $CJOB never listed by pfid"
[ "$(jq_py 'd["gpus"]')" = "[0, 1, 2, 3]" ] || fail "job $CJOB GPUs: $BODY"
scancel "$CJOB"
wait_until 15 pfid_gone "$CJOB" || fail "cancelled job $CJOB still listed: $BODY"
ok "scancel'ed job $CJOB listed on 4 GPUs, then gone"

# --- pfid down when a job starts: the job is not held up, and registers
# when pfid comes back ---
pfid_stop TERM
T0=$SECONDS
DJOB=$(sbatch --parsable --gres=gpu:2 -o /dev/null --wrap 'sleep 15')
running() { [ "$(job_state "$DJOB")" = RUNNING ]; }
wait_until 10 running || fail "job $DJOB did not start while pfid was down"
# RUNNING is slurmctld's view; the node's prolog may still be on its way.
wait_until 10 test -f "$WORK/pfi-slurm/pending/$DJOB" || fail "no queued registration for $DJOB"
ok "job $DJOB running $((SECONDS - T0)) s after sbatch with pfid down, its registration queued"
pfid_start "$WORK/pfid2.log" "${SIM[@]}"
wait_until 10 pfid_job "$DJOB" || fail "job $DJOB not registered after pfid came back"
[ "$(jq_py 'd["gpus"]')" = "$(job_gpus "$DJOB")" ] || fail "job $DJOB GPUs: $BODY"
[ ! -f "$WORK/pfi-slurm/pending/$DJOB" ] || fail "queue file left after the registration"
ok "job $DJOB registered by the retry once pfid was back"
scancel "$DJOB"
wait_until 15 pfid_gone "$DJOB" || fail "job $DJOB still listed after scancel"
ok "job $DJOB gone after scancel"

# --- the token: never in Slurm's logs nor in a job's environment ---
! grep -rqF "$TOKEN" "$SD/log" "$WORK/srun.env" || fail "the token leaked into Slurm's logs or a job's environment"
grep -q "pfi: job $SJOB registered with pfid" "$SD/log/slurmd.log" || fail "no registration in slurmd's log"
ok "token in no log nor environment; registrations logged"

# --- the prolog/epilog scripts, without the plugin ---
: >"$SD/plugstack.conf"
cat >"$WORK/pfi-slurm.conf" <<EOF
PFI_URL=http://127.0.0.1:$PFID_PORT
PFI_TOKEN_FILE=$TOKEN_FILE
PFI_STATE_DIR=$WORK/pfi-slurm-sh
PFI_TIMEOUT=1
PFI_RETRY=0.5
PFI_ALLOW_EXEMPT=1
PFI_LOG_FILE=$WORK/pfi-slurm-sh.log
EOF
for w in prolog epilog; do
    printf '#!/bin/sh\nPFI_SLURM_CONF=%s exec %s %s\n' "$WORK/pfi-slurm.conf" \
        "$PFI_SOURCE_DIR/contrib/slurm/pfi-slurm-job.sh" "$w" >"$SD/$w"
    chmod 755 "$SD/$w"
done
slurm_write_conf "Prolog=$SD/prolog" "Epilog=$SD/epilog"
slurmd_restart
PJOB=$(sbatch --parsable --gres=gpu:2 --comment "nightly run pfi-sla=0.5 pfi-arch=moe,pfi-task=pt pfi-exempt pfi-class=sweep-3" \
    -o /dev/null --wrap 'sleep 4')
wait_until 15 pfid_job "$PJOB" || fail "prolog: job $PJOB never listed by pfid: $(cat "$WORK/pfi-slurm-sh.log" 2>/dev/null)"
[ "$(jq_py 'd["gpus"]')" = "$(job_gpus "$PJOB")" ] && [ "$(jq_py 'd["sla_floor"]')" = 0.5 ] &&
    [ "$(jq_py 'd["arch"]')" = moe ] && [ "$(jq_py 'd["task"]')" = pt ] &&
    [ "$(jq_py 'd["exempt"]')" = True ] && [ "$(jq_py 'd["class"]')" = sweep-3 ] || fail "prolog: job $PJOB: $BODY"
ok "prolog: job $PJOB listed on GPUs $(jq_py 'd["gpus"]') with the --comment's SLA 0.5, moe, pt, exempt"
wait_until 15 pfid_gone "$PJOB" || fail "epilog: job $PJOB still listed after it ended"
ok "epilog: job $PJOB gone after it ended"
pfid_stop TERM
QJOB=$(sbatch --parsable --gres=gpu:1 -o /dev/null --wrap 'sleep 30')
qrunning() { [ "$(job_state "$QJOB")" = RUNNING ]; }
wait_until 10 qrunning || fail "prolog: job $QJOB did not start while pfid was down"
wait_until 10 test -s "$WORK/pfi-slurm-sh/retry/$QJOB" || fail "prolog: no retry for $QJOB: $(cat "$WORK/pfi-slurm-sh.log")"
[ -f "$WORK/pfi-slurm-sh/pending/$QJOB" ] || fail "prolog: no queued registration for $QJOB"
RETRY_PID=$(cat "$WORK/pfi-slurm-sh/retry/$QJOB")
ok "prolog: job $QJOB running with pfid down, registration queued (retry PID $RETRY_PID)"
pfid_start "$WORK/pfid3.log" "${SIM[@]}"
wait_until 10 pfid_job "$QJOB" || fail "prolog: job $QJOB not registered after pfid came back"
wait_until 5 bash -c "! kill -0 $RETRY_PID" || fail "prolog: the retry process $RETRY_PID is still running"
scancel "$QJOB"
wait_until 15 pfid_gone "$QJOB" || fail "epilog: cancelled job $QJOB still listed"
ok "prolog: job $QJOB registered by the retry, which then exited; gone after scancel"
! grep -qF "$TOKEN" "$WORK/pfi-slurm-sh.log" || fail "the token is in the scripts' log"
echo "PASS"
