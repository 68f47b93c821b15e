#!/usr/bin/env bash
# One controller per store, and caps that carry their owner (issue 27 items
# 9 and 14), against tests/integration/fake_pfid.py, an agent whose GPU 1 is
# held by another controller: a second controller on the store refuses to
# start naming the first one's pid; the owner id is made once and kept in
# the store; every cap call carries Pfi-Owner and Pfi-Epoch: 0; pfid's 409
# naming another owner makes that GPU not ours (counted at its measured
# power, tried again every period, said once in the log, in /v1/status
# "conflicts" and pfi_control_cap_conflicts); `pfi control status` with no
# event says so (no "limit 0 W", no "nan"); a dead agent keeps its GPUs in
# /v1/status after a restart; pfi_control_period_seconds.
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"

python3 "$PFI_SOURCE_DIR/tests/integration/fake_pfid.py" --port-file "$WORK/agent.port" \
    --log "$WORK/calls.jsonl" 2>"$WORK/agent.err" &
AGENT_PID=$!
PIDS+=($AGENT_PID)
wait_until 10 test -s "$WORK/agent.port" || fail "the fake agent did not start: $(cat "$WORK/agent.err")"
AGENT=http://127.0.0.1:$(cat "$WORK/agent.port")
touch "$WORK/calls.jsonl"

PORT=0
ctl_start "$WORK/ctl.log" --db "$WORK/ctl.db" --agents "$AGENT" --period 0.3
FIRST=$CTL_PID

# --- a second controller on the store: refused, naming the holder ---
RC=0
"$PFI_BIN" control run --listen 127.0.0.1:0 --token-file "$TOKEN_FILE" --db "$WORK/ctl.db" \
    --agents "$AGENT" 2>"$WORK/ctl-second.log" || RC=$?
[ "$RC" = 1 ] || fail "a second controller on the store: exit $RC, expected 1: $(cat "$WORK/ctl-second.log")"
grep -q "in use by another pfi control (pid $FIRST)" "$WORK/ctl-second.log" ||
    fail "the refusal does not name pid $FIRST: $(cat "$WORK/ctl-second.log")"
ok "a second controller on the store refused, naming pid $FIRST"

# --- no event: said so, never "nan" ---
sleep 1
OUT=$("$PFI_BIN" control status --url "$CTL_URL")
echo "$OUT" | grep -q "site       no event" || fail "status with no event: $OUT"
if echo "$OUT" | grep -qi "nan\|limit 0 W"; then fail "status with no event prints nan or limit 0 W: $OUT"; fi
ok "pfi control status with no event: no event, no nan"

creq GET /v1/status "" no
OWNER=$(jq_py 'd["owner"]')
[[ "$OWNER" =~ ^ctl-[0-9a-f]{16}$ ]] || fail "owner id: '$OWNER'"

# --- an event: GPU 0 is ours, GPU 1 another controller's ---
creq POST /v1/targets "{\"id\":\"dr\",\"gpu_power_w\":800,\"start\":$(date +%s),\"duration_s\":600}"
expect 201 "POST a target of 800 W"
sleep 3
creq GET /v1/status "" no
python3 - "$BODY" "$AGENT" <<'PY' || fail "status during the conflict: $BODY"
import json, sys
d = json.loads(sys.argv[1])
assert d["conflicts"] == [{"agent": sys.argv[2], "gpu": 1, "owner": "other-ctl", "epoch": 0, "job": "j"}], d["conflicts"]
j = d["jobs"][0]
assert j["gpus"] == 1, j            # GPU 1 is not planned
assert d["fixed_w"] >= 400, d       # it counts at its measured power
assert d["agents"][0]["cannot_cap"] is False, d["agents"]
PY
ok "GPU 1 counted as another controller's: conflict listed, not planned, the agent still takes caps"
python3 - "$WORK/calls.jsonl" "$OWNER" <<'PY' || fail "the cap calls: $(cat "$WORK/calls.jsonl")"
import json, sys
calls = [json.loads(l) for l in open(sys.argv[1])]
assert calls and all(c["owner"] == sys.argv[2] and c["epoch"] == "0" for c in calls), calls
g1 = [c for c in calls if c["gpu"] == 1]
assert len(g1) >= 3, g1             # tried again every period
assert all(c["watts"] <= 400 for c in g1 if c["watts"]), g1  # never above its owner's cap
PY
ok "every cap call carries Pfi-Owner $OWNER and Pfi-Epoch 0; GPU 1 tried every period"
[ "$(grep -c 'held by controller other-ctl' "$WORK/ctl.log")" = 1 ] ||
    fail "the conflict is not logged once: $(cat "$WORK/ctl.log")"
ok "the conflict logged once"
M=$(curl -s "$CTL_URL/metrics")
echo "$M" | grep -q '^pfi_control_cap_conflicts 1$' || fail "pfi_control_cap_conflicts: $M"
echo "$M" | grep -Eq '^pfi_control_period_seconds [0-9.e+-]+$' || fail "pfi_control_period_seconds: $M"
ok "pfi_control_cap_conflicts 1 and pfi_control_period_seconds in /metrics"

# --- restart with the agent dead: same owner, its 2 GPUs from the store ---
kill -TERM "$CTL_PID"
wait "$CTL_PID" 2>/dev/null || true
kill -KILL "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
ctl_start "$WORK/ctl2.log" --db "$WORK/ctl.db" --agents "$AGENT" --period 0.3 --agent-timeout-s 0.5
sleep 1.5
creq GET /v1/status "" no
[ "$(jq_py 'd["owner"]')" = "$OWNER" ] || fail "the owner changed over a restart: $BODY"
[ "$(jq_py 'd["agents"][0]["gpus"]')" = 2 ] || fail "the dead agent's GPUs after a restart: $BODY"
ok "restarted: the same owner; the dead agent's 2 GPUs kept from the store"
kill -TERM "$CTL_PID"
wait "$CTL_PID" 2>/dev/null || true

RC=0
"$PFI_BIN" control run --listen 127.0.0.1:0 --token-file "$TOKEN_FILE" --db "$WORK/ctl.db" \
    --agents "$AGENT" --owner 'bad owner' 2>"$WORK/ctl-bad.log" || RC=$?
[ "$RC" != 0 ] && grep -q -- "--owner" "$WORK/ctl-bad.log" || fail "--owner 'bad owner': $RC $(cat "$WORK/ctl-bad.log")"
ok "--owner with a space refused"
