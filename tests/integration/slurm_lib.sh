# A real single-node Slurm for integration tests (sourced after pfid_lib.sh,
# not run: no test_ prefix). munged, slurmctld and slurmd run in the
# foreground under $WORK/slurm, on 127.0.0.1 with ports that were free a
# moment ago, with select/cons_tres, proctrack/linuxproc, task/none and a
# gres.conf of 4 GPUs whose File= entries are character devices made here
# (major 195, NVIDIA's). Everything is stopped by PID at exit.
#
# Needs root (mknod, SlurmUser=root) and Debian's slurm-wlm and munge; where
# these are missing the test is skipped (exit 77), which is the only case
# where Slurm cannot run at all. A daemon that is installed but does not come
# up is a failure, with its log.

SLURM_SKIP=77

slurm_need() {
    local b
    [ "$(id -u)" -eq 0 ] || { echo "SKIP: the Slurm test needs root (mknod, SlurmUser=root)"; exit $SLURM_SKIP; }
    for b in munged slurmctld slurmd srun sbatch scancel squeue sinfo scontrol; do
        command -v "$b" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "$b" >/dev/null 2>&1 ||
            { echo "SKIP: $b not found: install Debian's slurm-wlm and munge (scripts/install-deps.sh)"; exit $SLURM_SKIP; }
    done
    PATH=$PATH:/usr/sbin
}

SD=$WORK/slurm
SLURM_DAEMON_PIDS=()

# slurm_write_conf [EXTRA_LINE...]: slurm.conf, gres.conf and an empty
# plugstack.conf in $SD; extra lines go at the end of slurm.conf.
slurm_write_conf() {
    mkdir -p "$SD"/{munge,state,spool,log,dev}
    chmod 700 "$SD" "$SD/munge"
    [ -e "$SD/dev/nvidia0" ] || for i in 0 1 2 3; do mknod "$SD/dev/nvidia$i" c 195 "$i"; done
    : "${SLURMCTLD_PORT:=$(free_port)}"
    : "${SLURMD_PORT:=$(free_port)}"
    [ -e "$SD/plugstack.conf" ] || : >"$SD/plugstack.conf"
    cat >"$SD/slurm.conf" <<EOF
ClusterName=pfitest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$SLURMCTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SD/munge/socket
StateSaveLocation=$SD/state
SlurmdSpoolDir=$SD/spool
SlurmctldPidFile=$SD/slurmctld.pid
SlurmdPidFile=$SD/slurmd.pid
SlurmctldLogFile=$SD/log/slurmctld.log
SlurmdLogFile=$SD/log/slurmd.log
SlurmdDebug=debug
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
PlugStackConfig=$SD/plugstack.conf
GresTypes=gpu
KillWait=2
MinJobAge=300
NodeName=pfinode NodeAddr=127.0.0.1 NodeHostname=$(hostname) CPUs=$(nproc) RealMemory=500 Gres=gpu:4 State=UNKNOWN
PartitionName=debug Nodes=pfinode Default=YES MaxTime=INFINITE State=UP
EOF
    local l
    for l in "$@"; do echo "$l" >>"$SD/slurm.conf"; done
    echo "NodeName=pfinode Name=gpu File=$SD/dev/nvidia[0-3]" >"$SD/gres.conf"
    export SLURM_CONF=$SD/slurm.conf
}

slurm_logs() {
    local f
    for f in "$SD"/log/*.log; do echo "--- $f (last 30 lines)" >&2; tail -n 30 "$f" >&2; done
}

# slurm_start: munged, slurmctld and slurmd; waits until the node is idle.
slurm_start() {
    if [ ! -e "$SD/munge/munge.key" ]; then
        dd if=/dev/urandom of="$SD/munge/munge.key" bs=1024 count=1 status=none
        chmod 400 "$SD/munge/munge.key"
    fi
    # --force: munged refuses a socket under a world-writable /tmp otherwise.
    munged -F --force --socket="$SD/munge/socket" --key-file="$SD/munge/munge.key" \
        --log-file="$SD/log/munged.log" --pid-file="$SD/munge/munged.pid" \
        --seed-file="$SD/munge/seed" 2>>"$SD/log/munged.log" &
    MUNGED_PID=$!
    SLURM_DAEMON_PIDS+=("$MUNGED_PID")
    wait_until 10 test -S "$SD/munge/socket" || { slurm_logs; fail "munged did not start"; }
    # The ports were free when slurm_write_conf asked; a test running beside
    # this one may have bound one since, and slurmctld then exits ("Address
    # already in use"): both daemons move to fresh ports and it starts again.
    local try
    for try in 1 2 3; do
        slurmctld -D -i -f "$SD/slurm.conf" 2>>"$SD/log/slurmctld.log" &
        SLURMCTLD_PID=$!
        wait_until 15 ctld_up_or_gone
        kill -0 "$SLURMCTLD_PID" 2>/dev/null && break
        wait "$SLURMCTLD_PID" 2>/dev/null || true
        tail -n 5 "$SD/log/slurmctld.log" | grep -q 'Address already in use' || break
        SLURMCTLD_PORT=$(free_port)
        SLURMD_PORT=$(free_port)
        sed -i "s/^SlurmctldPort=.*/SlurmctldPort=$SLURMCTLD_PORT/; s/^SlurmdPort=.*/SlurmdPort=$SLURMD_PORT/" \
            "$SD/slurm.conf"
        echo "slurm_start: slurmctld's port was taken; again on $SLURMCTLD_PORT (try $((try + 1)))" >&2
    done
    SLURM_DAEMON_PIDS+=("$SLURMCTLD_PID")
    slurmd_start
}

# slurmctld answers, or has exited.
ctld_up_or_gone() {
    ! kill -0 "$SLURMCTLD_PID" 2>/dev/null || scontrol ping 2>/dev/null | grep -q 'is UP'
}

# scontrol's state of the node (sinfo may say "mixed" for a while after a
# job with GRES ends, with nothing allocated).
node_state() { scontrol show node pfinode 2>/dev/null | grep -o 'State=[A-Z+_]*' | head -n1; }
node_idle() { [ "$(node_state)" = State=IDLE ]; }

slurmd_start() {
    slurmd -D -f "$SD/slurm.conf" -N pfinode 2>>"$SD/log/slurmd.log" &
    SLURMD_PID=$!
    SLURM_DAEMON_PIDS+=("$SLURMD_PID")
    wait_until 30 node_idle || { slurm_logs; fail "the Slurm node did not become idle within 30 s"; }
}

# slurmd_restart: a new slurmd, which reads plugstack.conf and the
# Prolog/Epilog lines again (it decides at start whether to run them).
slurmd_restart() {
    # Not while a job completes: its epilog would be lost with the old slurmd.
    wait_until 30 node_idle || { slurm_logs; fail "the Slurm node not idle before a slurmd restart: $(node_state)"; }
    kill -TERM "$SLURMD_PID"
    wait "$SLURMD_PID" 2>/dev/null || true
    scontrol reconfigure >/dev/null
    slurmd_start
}

# Cancels what is left, waits for the jobs to end (their slurmstepd
# processes with them), then stops the daemons by PID, newest first.
slurm_stop() {
    [ ${#SLURM_DAEMON_PIDS[@]} -eq 0 ] && return 0
    if [ -n "${SLURMCTLD_PID:-}" ] && kill -0 "$SLURMCTLD_PID" 2>/dev/null; then
        scancel --quiet --user=root 2>/dev/null || true
        no_jobs() { [ -z "$(squeue -h -t R,CG,PD 2>/dev/null)" ]; }
        wait_until 15 no_jobs || echo "slurm_stop: jobs still there: $(squeue -h)" >&2
    fi
    local i p
    for ((i = ${#SLURM_DAEMON_PIDS[@]} - 1; i >= 0; i--)); do
        p=${SLURM_DAEMON_PIDS[$i]}
        kill -TERM "$p" 2>/dev/null || continue
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    SLURM_DAEMON_PIDS=()
}

trap '[ "$FAILS" -eq 0 ] || slurm_logs; slurm_stop; cleanup' EXIT

# job_state ID: the job's state as squeue prints it ("" once it is gone).
job_state() { squeue -h -j "$1" -o %T 2>/dev/null || true; }
