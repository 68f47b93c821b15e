# Helpers for pfid's integration tests (sourced, not run: no test_ prefix).
# Everything binds to 127.0.0.1 on ports the kernel picks; every process
# started here is killed on exit, whatever happens.
set -euo pipefail

: "${PFID_BIN:?PFID_BIN not set (run through ctest)}"
WORK=$(mktemp -d /tmp/pfid-it-XXXXXX)
PIDS=()
FAILS=0

# A command that failed under set -e (not through fail()) is said too, and
# its work dir kept, so no failure is silent.
cleanup() {
    local rc=$? p
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ "$FAILS" -eq 0 ]; then
        echo "FAIL: exited with status $rc after the last ok: a command failed under set -e" >&2
        FAILS=1
    fi
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    if [ "$FAILS" -eq 0 ] && [ -z "${KEEP_WORK:-}" ]; then rm -rf "$WORK"; else echo "work dir kept: $WORK" >&2; fi
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); exit 1; }
ok() { echo "ok: $*"; }

# A private token file.
TOKEN_FILE=$WORK/token
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TOKEN_FILE"
chmod 600 "$TOKEN_FILE"
TOKEN=$(cat "$TOKEN_FILE")

# await_listening LOG PID WHAT: waits (10 s at most) for the "listening on"
# line a server (pfid, pfi control) writes to LOG; sets LISTEN_URL to its
# http://ADDR:PORT. Fails, showing LOG, if PID exits first or time runs out.
await_listening() {
    local log=$1 pid=$2 what=$3 i
    for i in $(seq 100); do
        if grep -q 'listening on' "$log" 2>/dev/null; then
            LISTEN_URL=$(grep -o 'listening on http://[^ ]*:[0-9]*' "$log" | tail -n1 | sed 's/listening on //')
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; fail "$what exited at start"; }
        sleep 0.1
    done
    cat "$log" >&2
    fail "$what did not start listening within 10 s"
}

# pfid_start LOG ARGS...: starts pfid on 127.0.0.1:0, waits for its
# "listening" line, sets PFID_PID and PORT.
pfid_start() {
    local log=$1
    shift
    "$PFID_BIN" --listen 127.0.0.1:0 --token-file "$TOKEN_FILE" "$@" 2>"$log" &
    PFID_PID=$!
    PIDS+=("$PFID_PID")
    await_listening "$log" "$PFID_PID" pfid
    PORT=${LISTEN_URL##*:}
}

# pfid_stop SIGNAL: sends the signal and waits (10 s at most) for the exit;
# sets RC to pfid's exit status.
pfid_stop() {
    kill -"$1" "$PFID_PID"
    local i
    for i in $(seq 100); do
        kill -0 "$PFID_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$PFID_PID" 2>/dev/null && fail "pfid did not exit within 10 s of SIG$1"
    RC=0
    wait "$PFID_PID" || RC=$?
}

# req METHOD PATH [BODY] [AUTH]: AUTH "yes" sends the token, "bad" a wrong
# one, anything else none. Sets CODE and BODY. To $REQ_HOST:$PORT
# (127.0.0.1 unless set: a netns host's address).
req() {
    local method=$1 path=$2 body=${3:-} auth=${4:-yes}
    local args=(-s -o "$WORK/resp" -w '%{http_code}' --max-time 10 -X "$method")
    [ "$auth" = yes ] && args+=(-H "Authorization: Bearer $TOKEN")
    [ "$auth" = bad ] && args+=(-H "Authorization: Bearer wrong-token-0123456789")
    [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
    CODE=$(curl "${args[@]}" "http://${REQ_HOST:-127.0.0.1}:$PORT$path") || CODE=000
    BODY=$(cat "$WORK/resp" 2>/dev/null || true)
}

# reqo OWNER EPOCH METHOD PATH [BODY]: req with the token, Pfi-Owner and
# Pfi-Epoch ("-": left out).
reqo() {
    local owner=$1 epoch=$2 method=$3 path=$4 body=${5:-}
    local args=(-s -o "$WORK/resp" -w '%{http_code}' --max-time 10 -X "$method" -H "Authorization: Bearer $TOKEN")
    [ "$owner" != - ] && args+=(-H "Pfi-Owner: $owner")
    [ "$epoch" != - ] && args+=(-H "Pfi-Epoch: $epoch")
    [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
    CODE=$(curl "${args[@]}" "http://${REQ_HOST:-127.0.0.1}:$PORT$path") || CODE=000
    BODY=$(cat "$WORK/resp" 2>/dev/null || true)
}

# tick_sums DB SINCE: "t summed_power_w" of each sampler tick after SINCE
# (Unix s) in pfid's store, oldest first.
tick_sums() {
    python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=5)
for t, s in db.execute("SELECT t, SUM(power_w) FROM samples WHERE t > ? GROUP BY t ORDER BY t", (float(sys.argv[2]),)):
    print(t, s)
PY
}

# held_after DB SINCE LIMIT: the ticks after SINCE go over LIMIT (+1 W) at
# most until the first tick that was over (the one the ceiling acts on): one
# interval. Prints "over_ticks first_over last_tick max_after".
held_after() {
    tick_sums "$1" "$2" | python3 -c "
import sys
rows = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
over = [t for t, s in rows if s > $3 + 1]
first = over[0] if over else None
after = [s for t, s in rows if first is None or t > first]
bad = [t for t in over if t != first]
print(len(over), first, rows[-1][0] if rows else None, max(after) if after else None)
sys.exit(1 if bad or not rows else 0)"
}

# held_throughout DB SINCE LIMIT WHAT: no tick after SINCE goes over LIMIT
# (+1 W), not even the first (a ceiling recovered at start); sets MAXA to
# the most any tick drew.
held_throughout() {
    local r nover first last
    r=$(held_after "$1" "$2" "$3") || fail "$4 (over ticks, first, last, max after): $r"
    read -r nover first last MAXA <<<"$r"
    [ "$nover" = 0 ] || fail "$4, $nover tick(s) over: $r"
}

# expect CODE WHAT: the last req's status must be CODE.
expect() {
    [ "$CODE" = "$1" ] || fail "$2: HTTP $CODE, expected $1 (body: $BODY)"
    ok "$2 -> $1"
}

# jq_py EXPR: evaluates a Python expression over the last body parsed as `d`.
jq_py() {
    python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print($1)" <<<"$BODY"
}

# wait_until SECONDS CMD...: retries CMD every 0.2 s until it succeeds.
wait_until() {
    local limit=$1
    shift
    local end=$((SECONDS + limit))
    while [ $SECONDS -lt $end ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    return 1
}

# free_port: a port that was free a moment ago (for servers that cannot
# take port 0 and report it).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# fake_nvml N: pfid's nvml backend on the fake libnvidia-ml.so.1
# (tests/fake-nvml) with N GPUs whose limits persist in $FAKE_NVML_STATE, as
# a driver keeps them across processes, and whose behaviour changes while
# pfid runs through nvml_ctl (FAKE_NVML_CTL). dev_limit G: GPU G's limit in
# mW as the fake driver holds it (what the next process would see).
fake_nvml() {
    : "${PFI_FAKE_NVML_DIR:?PFI_FAKE_NVML_DIR not set (fake-nvml not built)}"
    export PFI_NVML_LIB=$PFI_FAKE_NVML_DIR/libnvidia-ml.so.1
    export FAKE_NVML_GPUS=$1
    export FAKE_NVML_STATE=$WORK/nvml-state
    export FAKE_NVML_CTL=$WORK/nvml-ctl
    # Cards of this test's own: pfid's per-GPU lock is by UUID, machine-wide.
    export FAKE_NVML_UUID_TAG
    FAKE_NVML_UUID_TAG=$(printf '%x' $$)
    : >"$FAKE_NVML_CTL"
}
dev_limit() { awk -v g="$1" '$1 == g { print $2 }' "$FAKE_NVML_STATE"; }
# nvml_ctl LINE...: what the fake driver does from now on ("fail RULE",
# "revert GPU", "external GPU MW"; none: back to normal). The counter line
# makes every call a change the fake sees, even a repeated "revert".
NVML_CTL_N=0
nvml_ctl() {
    NVML_CTL_N=$((NVML_CTL_N + 1))
    { printf '%s\n' "$@"; echo "# $NVML_CTL_N"; } >"$FAKE_NVML_CTL.tmp"
    mv "$FAKE_NVML_CTL.tmp" "$FAKE_NVML_CTL"
}
