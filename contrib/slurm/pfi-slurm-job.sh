#!/usr/bin/env bash
# pfi-slurm-job.sh prolog|epilog: registers a Slurm job with the node's pfid
# (prolog) and ends it (epilog), for sites that do not load SPANK plugins.
# slurm.conf: Prolog=/usr/local/lib/pfi/pfi-prolog  Epilog=/usr/local/lib/pfi/pfi-epilog
# (two one-line wrappers: exec pfi-slurm-job.sh prolog|epilog; see docs/slurm.md).
#
# Reads, as slurmd gives them to a prolog: SLURM_JOB_ID, SLURM_JOB_GPUS (the
# job's GRES GPU indices on this node) and SLURM_JOB_COMMENT, whose words
# pfi-sla=F, pfi-arch=dense|moe, pfi-task=pt|ft, pfi-exempt and pfi-class=NAME
# set the job's options (other words are left alone: a comment is free text).
# The class (jobs expected to share a power curve) is by default
# array-SLURM_ARRAY_JOB_ID for an array's tasks (a prolog is not given the
# job name: SLURM_JOB_NAME is PrologSlurmctld's only, slurm.conf(5)). PFI_SLA,
# PFI_ARCH, PFI_TASK and PFI_EXEMPT=1 in the environment are defaults that the
# comment overrides (slurmd passes a prolog only its own variables, so these
# are a site's or a wrapper's, not the job's).
#
# Configuration: the file $PFI_SLURM_CONF (default /etc/default/pfi-slurm), a
# shell fragment that may set PFI_URL (http://127.0.0.1:9477), PFI_TOKEN_FILE
# (/etc/pfi/token), PFI_STATE_DIR (/var/spool/pfi-slurm), PFI_TIMEOUT (2 s),
# PFI_RETRY (5 s), PFI_ALLOW_EXEMPT (0) and PFI_LOG_FILE (none: syslog).
#
# It always exits 0: a pfid problem must never drain the node or hold a job
# beyond one PFI_TIMEOUT. When pfid cannot be reached, the registration is
# queued in PFI_STATE_DIR/pending/ID and a detached retry (its PID in
# PFI_STATE_DIR/retry/ID) posts it until pfid answers or the epilog removes
# the file; an end that cannot be delivered goes to PFI_STATE_DIR/ended/ID and
# the next prolog delivers it first. The token goes to curl on its standard
# input: never in argv, the environment or a log.
set -u
umask 077

PFI_SLURM_CONF=${PFI_SLURM_CONF:-/etc/default/pfi-slurm}
# shellcheck disable=SC1090
[ -r "$PFI_SLURM_CONF" ] && . "$PFI_SLURM_CONF"
PFI_URL=${PFI_URL:-http://127.0.0.1:9477}
PFI_TOKEN_FILE=${PFI_TOKEN_FILE:-/etc/pfi/token}
PFI_STATE_DIR=${PFI_STATE_DIR:-/var/spool/pfi-slurm}
PFI_TIMEOUT=${PFI_TIMEOUT:-2}
PFI_RETRY=${PFI_RETRY:-5}
PFI_ALLOW_EXEMPT=${PFI_ALLOW_EXEMPT:-0}

log() {
    if [ -n "${PFI_LOG_FILE:-}" ]; then
        printf '%s pfi-slurm: %s\n' "$(date '+%F %T')" "$*" >>"$PFI_LOG_FILE"
    else
        logger -t pfi-slurm -- "$*" 2>/dev/null || true
    fi
}

# http METHOD PATH [BODY]: prints the HTTP status (000: pfid not reached).
# pfid's reply body is left in $REPLY_FILE.
http() {
    local token
    if [ ! -O "$PFI_TOKEN_FILE" ] || [ -n "$(find "$PFI_TOKEN_FILE" -perm /077 2>/dev/null)" ]; then
        log "the token file $PFI_TOKEN_FILE must be root's and mode 600"
        echo 000
        return
    fi
    token=$(tr -d ' \r\n' <"$PFI_TOKEN_FILE")
    local args=(-s -o "$REPLY_FILE" -w '%{http_code}' --max-time "$PFI_TIMEOUT" -X "$1" -H @-)
    [ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
    printf 'Authorization: Bearer %s\n' "$token" | curl "${args[@]}" "$PFI_URL$2" 2>/dev/null || true
}

answered() { [ "$1" -ge 200 ] && [ "$1" -lt 500 ]; }

valid_sla() {
    [[ $1 =~ ^[0-9]*\.?[0-9]+$ ]] && awk -v v="$1" 'BEGIN { exit !(v > 0 && v <= 1) }'
}

# The registration body from the job's variables; empty without GPUs.
job_body() {
    local gpus=${SLURM_JOB_GPUS:-}
    [ -n "$gpus" ] || return 0
    if ! [[ $gpus =~ ^[0-9]+(,[0-9]+)*$ ]]; then
        log "job $SLURM_JOB_ID: cannot read SLURM_JOB_GPUS '$gpus'"
        return 0
    fi
    local sla=${PFI_SLA:-} arch=${PFI_ARCH:-} task=${PFI_TASK:-} exempt=${PFI_EXEMPT:-0} w cls=
    local comment=${SLURM_JOB_COMMENT:-}
    for w in ${comment//,/ }; do
        case $w in
        pfi-sla=*) sla=${w#pfi-sla=} ;;
        pfi-arch=*) arch=${w#pfi-arch=} ;;
        pfi-task=*) task=${w#pfi-task=} ;;
        pfi-exempt) exempt=1 ;;
        pfi-class=*) cls=${w#pfi-class=} ;;
        esac
    done
    # the jobs expected to share a power curve: by default an array's tasks
    if [ -n "$cls" ] && ! [[ $cls =~ ^[A-Za-z0-9._:@+-]{1,64}$ ]]; then
        log "job $SLURM_JOB_ID: pfi-class '$cls' ignored"
        cls=
    fi
    if [ -z "$cls" ] && [ -n "${SLURM_ARRAY_JOB_ID:-}" ]; then cls="array-$SLURM_ARRAY_JOB_ID"; fi
    local body="{\"id\":\"$SLURM_JOB_ID\",\"gpus\":[$gpus]"
    if [ -n "$sla" ]; then
        if valid_sla "$sla"; then body+=",\"sla_floor\":$sla"; else log "job $SLURM_JOB_ID: pfi-sla '$sla' ignored (not in (0, 1])"; fi
    fi
    case $arch in dense | moe) body+=",\"arch\":\"$arch\"" ;; "") ;; *) log "job $SLURM_JOB_ID: pfi-arch '$arch' ignored" ;; esac
    case $task in pt | ft) body+=",\"task\":\"$task\"" ;; "") ;; *) log "job $SLURM_JOB_ID: pfi-task '$task' ignored" ;; esac
    if [ "$exempt" = 1 ]; then
        if [ "$PFI_ALLOW_EXEMPT" = 1 ]; then body+=",\"exempt\":true"; else log "job $SLURM_JOB_ID: pfi-exempt ignored: not allowed here (PFI_ALLOW_EXEMPT)"; fi
    fi
    if [ -n "$cls" ]; then body+=",\"class\":\"$cls\""; fi
    printf '%s}' "$body"
}

# post BODY: 0 when pfid answered (whatever it said, logged), 1 when not reached.
post() {
    local code
    code=$(http POST /v1/jobs "$1")
    case $code in
    201) log "job $SLURM_JOB_ID registered with pfid: $1" ;;
    409) grep -q 'already registered' "$REPLY_FILE" || log "job $SLURM_JOB_ID: pfid refused (HTTP 409): $(head -c 200 "$REPLY_FILE")" ;;
    *) answered "$code" || return 1
       log "job $SLURM_JOB_ID: pfid refused the registration (HTTP $code): $(head -c 200 "$REPLY_FILE")" ;;
    esac
    return 0
}

deliver_ends() {
    local f id code
    for f in "$PFI_STATE_DIR"/ended/*; do
        [ -f "$f" ] || continue
        id=${f##*/}
        [[ $id =~ ^[0-9]+$ ]] || continue
        code=$(http DELETE "/v1/jobs/$id")
        answered "$code" || return 0
        rm -f "$f"
        log "job $id: its queued end delivered (HTTP $code)"
    done
}

retry_loop() {
    local pending=$1 pidfile=$2
    while [ -f "$pending" ]; do
        sleep "$PFI_RETRY"
        [ -f "$pending" ] || break
        if post "$(cat "$pending" 2>/dev/null)"; then
            rm -f "$pending"
            break
        fi
    done
    rm -f "$pidfile"
}

[ -n "${SLURM_JOB_ID:-}" ] && [[ $SLURM_JOB_ID =~ ^[0-9]+$ ]] || { log "no SLURM_JOB_ID: run me as slurmd's Prolog or Epilog"; exit 0; }
mkdir -p "$PFI_STATE_DIR/pending" "$PFI_STATE_DIR/ended" "$PFI_STATE_DIR/retry" 2>/dev/null
REPLY_FILE=$(mktemp "$PFI_STATE_DIR/reply.XXXXXX" 2>/dev/null || mktemp)
trap 'rm -f "$REPLY_FILE"' EXIT

case ${1:-} in
prolog)
    body=$(job_body)
    [ -n "$body" ] || exit 0
    deliver_ends
    if ! post "$body"; then
        pending=$PFI_STATE_DIR/pending/$SLURM_JOB_ID
        printf '%s' "$body" >"$pending.tmp" && mv "$pending.tmp" "$pending"
        log "job $SLURM_JOB_ID: pfid at $PFI_URL not reachable; registration queued, retried every $PFI_RETRY s"
        # Detached (its own session, no inherited descriptors) so that
        # slurmd does not wait for it; it ends when the epilog removes the
        # queue file or once pfid has answered.
        pidfile=$PFI_STATE_DIR/retry/$SLURM_JOB_ID
        export -f retry_loop post http answered log
        export PFI_URL PFI_TOKEN_FILE PFI_TIMEOUT PFI_RETRY REPLY_FILE SLURM_JOB_ID
        export PFI_LOG_FILE=${PFI_LOG_FILE:-}
        trap - EXIT # the retry uses REPLY_FILE and removes it
        setsid bash -c 'echo $$ >"$2"; retry_loop "$1" "$2"; rm -f "$REPLY_FILE"' _ "$pending" "$pidfile" \
            </dev/null >/dev/null 2>&1 &
        # Until the loop has its own session (it writes its PID then), it is
        # in the prolog's process group, which slurmd may kill as the prolog
        # exits: wait for it, 2 s at most.
        for _ in $(seq 100); do [ -s "$pidfile" ] && break; sleep 0.02; done
    fi
    ;;
epilog)
    [ -n "${SLURM_JOB_GPUS:-}" ] || exit 0
    rm -f "$PFI_STATE_DIR/pending/$SLURM_JOB_ID"
    code=$(http DELETE "/v1/jobs/$SLURM_JOB_ID")
    case $code in
    200) log "job $SLURM_JOB_ID ended with pfid" ;;
    404) ;;
    *) if answered "$code"; then
           log "job $SLURM_JOB_ID: pfid refused the end (HTTP $code): $(head -c 200 "$REPLY_FILE")"
       else
           : >"$PFI_STATE_DIR/ended/$SLURM_JOB_ID"
           log "job $SLURM_JOB_ID: pfid not reachable; its end is queued"
       fi ;;
    esac
    ;;
*) echo "usage: pfi-slurm-job.sh prolog|epilog (run by slurmd)" >&2 ;;
esac
exit 0
