#!/usr/bin/env bash
# The control loop on loopback: 4 pfid (sim backend, 4 GPUs each), a job
# spanning two nodes, a GPU target at 70% of the uncapped power through the
# API. Asserted from the agents' own readings: under the target within 3
# periods and after; one cap for a job across its nodes; SIGKILL of an agent
# (counted at its maximum, the others cut deeper, still under); SIGKILL and
# restart of the controller (the caps stay, it resumes from its store); the
# target deleted: every GPU back at its prior limit. Also: the token on every
# write, /metrics through promtool, no token in logs, metrics or store.
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"

PERIOD=0.5
four_nodes

ctl_start "$WORK/ctl.log" --db "$WORK/ctl.db" --period $PERIOD --policy pfi \
    --agents "${NODES[0]},${NODES[1]},${NODES[2]},${NODES[3]}" --agent-timeout-s 0.5

# --- the API's token ---
T='{"gpu_power_w":1000,"start":0,"duration_s":1}'
creq POST /v1/targets "$T" no; expect 401 "POST /v1/targets without a token"
creq POST /v1/targets "$T" bad; expect 401 "POST /v1/targets with a wrong token"
creq DELETE /v1/targets/x "" no; expect 401 "DELETE without a token"
creq POST /v1/targets '{"gpu_power_w":1000,"start":0}'; expect 400 "a target without duration"
creq GET /metrics "" no; expect 200 "GET /metrics needs no token"

wait_until 15 python3 -c "import sys; sys.exit(0 if $(sum_power) > 8000 else 1)" || fail "the jobs never reached full power"
sleep 1
U=$(sum_power)
LIMIT=$(python3 -c "print(round(0.7 * $U))")
echo "uncapped GPU power $U W; target $LIMIT W"

# --- a target: under it within 3 periods, and after ---
# 600 s, deleted at the end: a slow machine must not see it end mid-test
DUR=600
END=$(python3 -c "import time; print(int(time.time()) + $DUR)")
creq POST /v1/targets "{\"id\":\"dr-1\",\"gpu_power_w\":$LIMIT,\"start\":$(date +%s),\"duration_s\":$DUR}"
expect 201 "POST a target at 70%"
sleep $(python3 -c "print(3 * $PERIOD)")
under_after 3 || fail "over the target after 3 periods"
ok "under $LIMIT W from 3 periods after the step, for 3 s"

CAPS=$(span_caps)
one_cap $CAPS || fail "the job across nodes 0 and 1 has different caps: $CAPS"
ok "one cap for the job spanning two nodes (${CAPS%% *} W)"
PORT=${NODES[2]##*:}
req GET /v1/gpus "" no
EXP=$(jq_py 'd["gpus"][0]["cap"]["expires_at"]')
python3 -c "import sys; sys.exit(0 if $EXP <= $END + 61 + 1 else 1)" || fail "a cap expires at $EXP, after the target's end $END + margin"
ok "caps expire by the target's end plus the margin"

# --- SIGKILL of an agent: counted at its maximum (4 x 700 W), the others cut deeper ---
kill -KILL "${NODE_PID[3]}"
wait "${NODE_PID[3]}" 2>/dev/null || true
sleep $(python3 -c "print(4 * $PERIOD + 0.5)")
LIVE=$(sum_power)
python3 -c "import sys; sys.exit(0 if $LIVE + 2800 <= $LIMIT + 1 else 1)" ||
    fail "with node 3 dead: live $LIVE W + 2800 W counted > $LIMIT W"
creq GET /v1/status "" no
[ "$(jq_py 'd["agents_up"]')" = 3 ] || fail "agents_up: $BODY"
ok "node 3 killed: live $LIVE W + its 2800 W maximum under $LIMIT W"
node_restart 3 4 "$WORK/jobs3.csv"
wait_until 5 bash -c "curl -sf ${NODES[3]}/healthz" || fail "node 3 did not come back"
sleep $(python3 -c "print(3 * $PERIOD)")
under_after 2 || fail "over after node 3 came back"
creq GET /v1/status "" no
[ "$(jq_py 'd["agents_up"]')" = 4 ] || fail "node 3 did not rejoin: $BODY"
ok "node 3 back (its pfid re-applied its caps from its store): rejoined, still under"

# --- SIGKILL and restart of the controller mid-event: the caps stay ---
kill -KILL "$CTL_PID"
wait "$CTL_PID" 2>/dev/null || true
sleep 1
N_CAPPED=$(gpu_state | awk '$5 == 1' | wc -l)
[ "$N_CAPPED" = 16 ] || fail "$N_CAPPED of 16 GPUs still capped after the controller died"
under_after 2 || fail "over while the controller is dead"
ok "controller killed: the 16 GPUs stay capped, still under"
ctl_start "$WORK/ctl2.log" --db "$WORK/ctl.db" --period $PERIOD --policy pfi \
    --agents "${NODES[0]},${NODES[1]},${NODES[2]},${NODES[3]}" --agent-timeout-s 0.5
grep -q "resumed: " "$WORK/ctl2.log" || fail "no resume: $(cat "$WORK/ctl2.log")"
sleep $(python3 -c "print(3 * $PERIOD)")
under_after 2 || fail "over after the controller's restart"
creq GET /v1/status "" no
[ "$(jq_py 'd["target"]["id"]')" = dr-1 ] || fail "the restarted controller lost the target: $BODY"
ok "controller restarted: resumed dr-1 from its store, still under"

# --- /metrics ---
curl -s "$CTL_URL/metrics" >"$WORK/metrics.txt"
if command -v promtool >/dev/null; then
    promtool check metrics <"$WORK/metrics.txt" 2>&1 | grep -v "^$" | grep -iv "counter" >"$WORK/promtool.txt" || true
    [ ! -s "$WORK/promtool.txt" ] || fail "promtool: $(cat "$WORK/promtool.txt")"
fi
grep -q '^pfi_control_gpu_budget_watts ' "$WORK/metrics.txt" || fail "no budget metric"
grep -q 'pfi_control_job_cap_watts{job_id="span"}' "$WORK/metrics.txt" || fail "no per-job cap"
ok "/metrics"

# --- the target deleted: every GPU back at its prior limit ---
creq DELETE /v1/targets/dr-1; expect 200 "DELETE dr-1"
creq DELETE /v1/targets/dr-1; expect 404 "DELETE dr-1 again"
back() { [ "$(gpu_state | awk '$4 != 700 || $5 != 0' | wc -l)" = 0 ]; }
wait_until 5 back || fail "not every GPU back at 700 W: $(gpu_state)"
ok "target deleted: all 16 GPUs back at 700 W (their prior limit), uncapped"

# --- no secret in logs, metrics or the store ---
for f in "$WORK/ctl.log" "$WORK/ctl2.log" "$WORK/metrics.txt"; do
    if grep -q "$TOKEN" "$f"; then fail "the token is in $f"; fi
done
if sqlite3 "$WORK/ctl.db" .dump | grep -q "$TOKEN"; then fail "the token is in the store"; fi
ok "the token is in no log, metric or store row"
[ "$(sqlite3 "$WORK/ctl.db" 'SELECT count(*) FROM periods WHERE target = "dr-1"')" -gt 5 ] || fail "periods not stored"
ok "periods stored"
