#!/usr/bin/env bash
# Caps expire on the boot clock (issue 27 item 3), against the fake NVML,
# with pfid's wall clock stepped by an LD_PRELOAD shim (tests/clock-shim):
# a forward step of an hour releases nothing early, a backward one keeps no
# 5 s cap longer than 5 s, each step is logged; a cap recorded before pfid
# went down keeps its expiry across a restart whatever the wall clock did
# meanwhile, and is restored after a reboot (another boot id); the
# PFID_TEST_CLOCK hook still moves expiry time forward; and a 1 s cap ends
# on time (issue 30 item 8: an expiry 2 s late fails here).
. "$(dirname "$0")/pfid_lib.sh"

: "${PFI_CLOCK_SHIM:?PFI_CLOCK_SHIM not set (clock-step not built)}"
fake_nvml 2
DB=$WORK/pfid.db
STATE=$WORK/state
STEP=$WORK/step
SKIP=$WORK/skip
echo 0 >"$STEP"
echo 0 >"$SKIP"
NV=(--backend nvml --lock-dir "$WORK/locks" --state-dir "$STATE" --db "$DB" --interval 0.2)
# The shim is not instrumented: an ASan pfid must not insist on coming first.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
shimmed() { LD_PRELOAD=$PFI_CLOCK_SHIM CLOCK_STEP_FILE=$STEP PFID_TEST_CLOCK=$SKIP "$@"; }
now() { date +%s.%N; }
since() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$1" "$(now)"; }
at() { [ "$(dev_limit "$1")" = "$2" ]; }
# released_after GPU T0 LIMIT: waits (LIMIT s at most) for GPU's 700 W; prints the seconds since T0.
released_after() {
    local end=$((SECONDS + $3))
    while [ $SECONDS -le $end ]; do
        at "$1" 700000 && { since "$2"; return 0; }
        sleep 0.05
    done
    echo never
}

# The shim works: a process sees the step, the boot clock does not move.
echo 3600 >"$STEP"
real=$(date +%s)
seen=$(shimmed date +%s)
[ $((seen - real)) -ge 3599 ] && [ $((seen - real)) -le 3601 ] || fail "the shim does not step the wall clock ($seen vs $real)"
echo 0 >"$STEP"

pfid_start_shimmed() {
    local log=$1
    shift
    # exec: the pid is pfid's own, for pfid_stop and the cleanup.
    (
        export LD_PRELOAD=$PFI_CLOCK_SHIM CLOCK_STEP_FILE=$STEP PFID_TEST_CLOCK=$SKIP
        exec "$PFID_BIN" --listen 127.0.0.1:0 --token-file "$TOKEN_FILE" "$@" 2>"$log"
    ) &
    PFID_PID=$!
    PIDS+=("$PFID_PID")
    await_listening "$log" "$PFID_PID" pfid
    PORT=${LISTEN_URL##*:}
}

# --- on time: a 1 s cap ends between 1 and 2.5 s ---
pfid_start_shimmed "$WORK/pfid.log" "${NV[@]}"
T0=$(now)
req PUT /v1/gpus/1/limit '{"watts":300,"expires_s":1}'; expect 200 "a 1 s cap"
T=$(released_after 1 "$T0" 10)
[ "$T" != never ] && python3 -c "import sys; sys.exit(not (0.9 <= $T <= 2.5))" || fail "a 1 s cap ended after $T s"
ok "a 1 s cap ends on time ($T s)"

# --- a forward step releases nothing early ---
T0=$(now)
req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":5}'; expect 200 "a 5 s cap"
sleep 1
echo 3600 >"$STEP"
wait_until 5 grep -q "the wall clock stepped by +3600" "$WORK/pfid.log" || fail "the forward step was not logged: $(cat "$WORK/pfid.log")"
sleep 1
at 0 300000 || fail "a forward step of 1 h released a 5 s cap after $(since "$T0") s"
T=$(released_after 0 "$T0" 15)
[ "$T" != never ] && python3 -c "import sys; sys.exit(not (4.5 <= $T <= 6.5))" || fail "the 5 s cap ended after $T s"
ok "a forward step of 1 h: the 5 s cap still ends at $T s"

# --- a backward step keeps no cap longer ---
T0=$(now)
req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":5}'; expect 200 "a 5 s cap"
sleep 1
echo -3600 >"$STEP"
wait_until 5 grep -q "the wall clock stepped by -7200" "$WORK/pfid.log" || fail "the backward step was not logged"
T=$(released_after 0 "$T0" 15)
[ "$T" != never ] && python3 -c "import sys; sys.exit(not (4.5 <= $T <= 6.5))" || fail "after a backward step the 5 s cap ended after $T s"
ok "a backward step of 2 h: the 5 s cap ends at $T s"

# --- across a restart: the wall clock jumps an hour while pfid is down ---
echo 0 >"$STEP"
req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; expect 200 "a 600 s cap"
pfid_stop KILL
echo 3600 >"$STEP"
pfid_start_shimmed "$WORK/restart.log" "${NV[@]}"
at 0 300000 || fail "a wall step of 1 h while pfid was down ended a 600 s cap: $(cat "$WORK/restart.log")"
req GET /v1/gpus "" no
LEFT=$(jq_py "round(d['gpus'][0]['cap']['expires_at'] - $(shimmed date +%s))")
[ "$LEFT" -ge 580 ] && [ "$LEFT" -le 601 ] || fail "the recovered cap expires in $LEFT s"
ok "a cap recovered after a wall step keeps its expiry ($LEFT s left)"

# --- the test hook moves expiry time forward on the boot clock ---
echo 700 >"$SKIP"
wait_until 5 at 0 700000 || fail "PFID_TEST_CLOCK did not expire the cap"
echo 0 >"$SKIP"
ok "PFID_TEST_CLOCK still moves expiry time"

# --- after a reboot a recovered cap is restored ---
req PUT /v1/gpus/1/limit '{"watts":300,"expires_s":600}'; expect 200 "a 600 s cap on GPU 1"
pfid_stop KILL
f=$(ls "$STATE"/gpu-*01.json)
python3 - "$f" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["cap"]["boot_id"] = "00000000-0000-4000-8000-000000000000"
json.dump(d, open(sys.argv[1], "w"))
EOF
pfid_start_shimmed "$WORK/reboot.log" "${NV[@]}"
at 1 700000 || fail "a cap from another boot was re-applied: $(dev_limit 1)"
grep -q "GPU 1: the cap of 300 W was recorded before a reboot" "$WORK/reboot.log" || fail "not logged: $(cat "$WORK/reboot.log")"
pfid_stop TERM
[ "$RC" = 0 ] || fail "exit $RC"
ok "a cap recorded in another boot is restored"
echo PASS
