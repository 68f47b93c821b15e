#!/usr/bin/env bash
# The controller's target API refuses what an operator gets wrong (issue 27
# item 13): re-posting a live target's id is 409 naming it (the 900 s,
# 6,180 W event is kept), PUT /v1/targets/ID (pfi control target add
# --replace) replaces it; a target already ended and a duration of 1e308 are
# 400 with the reason; `target list` says which are active, scheduled,
# ended. One pfid (sim backend, 2 GPUs), the controller polling it.
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"

cat >"$WORK/jobs.csv" <<CSV
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,warmup_s,startup_s
0,a,0.8,0.9,0.4,0.6,16000,0.2,0.2
1,a,0.8,0.9,0.4,0.6,16000,0.2,0.2
CSV
node_start 0 2 "$WORK/jobs.csv"
ctl_start "$WORK/ctl.log" --db "$WORK/ctl.db" --period 0.5 --agents "${NODES[0]}" --agent-timeout-s 0.5
NOW=$(date +%s)
C=(--url "$CTL_URL" --token-file "$TOKEN_FILE")

creq POST /v1/targets "{\"id\":\"ev\",\"site_power_w\":6180,\"start\":$NOW,\"duration_s\":900}"
expect 201 "a 900 s, 6180 W target"
creq POST /v1/targets "{\"id\":\"ev\",\"site_power_w\":5000,\"start\":$NOW,\"duration_s\":60}"
expect 409 "the same id re-posted while it runs"
[[ "$(jq_py 'd["error"]')" == *"target ev is active"*"6180 W"* ]] || fail "the 409 does not name the live target: $BODY"
creq GET /v1/targets "" no
[ "$(jq_py '[(t["limit_w"], t["duration_s"]) for t in d["targets"] if t["id"] == "ev"] == [(6180, 900)]')" = True ] ||
    fail "the live target was changed: $BODY"
ok "the live target is kept: 6180 W for 900 s"

"$PFI_BIN" control target add "${C[@]}" --id ev --site-power-w 5000 --duration-s 60 >"$WORK/add.out" 2>&1 && fail "target add over a live id succeeded"
grep -q "409.*--replace\|409.*PUT /v1/targets/ev" "$WORK/add.out" || fail "target add: $(cat "$WORK/add.out")"
"$PFI_BIN" control target add "${C[@]}" --id ev --site-power-w 5000 --duration-s 60 --replace >"$WORK/rep.out" 2>&1 ||
    fail "target add --replace: $(cat "$WORK/rep.out")"
creq GET /v1/targets "" no
[ "$(jq_py '[(t["limit_w"], t["duration_s"]) for t in d["targets"] if t["id"] == "ev"] == [(5000, 60)]')" = True ] ||
    fail "--replace did not replace: $BODY"
ok "pfi control target add --replace (PUT /v1/targets/ev) replaces it"
creq PUT /v1/targets/ev "{\"id\":\"other\",\"site_power_w\":5000,\"start\":$NOW,\"duration_s\":60}"
expect 400 "PUT with a body id that is not the path's"

creq POST /v1/targets "{\"id\":\"old\",\"site_power_w\":5000,\"start\":$((NOW - 3600)),\"duration_s\":600}"
expect 400 "a target that ended 50 min ago"
[[ "$(jq_py 'd["error"]')" == *"ended"* ]] || fail "no reason: $BODY"
creq POST /v1/targets "{\"id\":\"huge\",\"site_power_w\":5000,\"start\":$NOW,\"duration_s\":1e308}"
expect 400 "a duration of 1e308 s"
[[ "$(jq_py 'd["error"]')" == *"31 days"* ]] || fail "no reason: $BODY"
creq POST /v1/targets "{\"id\":\"month\",\"site_power_w\":5000,\"start\":$NOW,\"duration_s\":2678401}"
expect 400 "31 days and a second"

creq POST /v1/targets "{\"id\":\"later\",\"site_power_w\":5000,\"start\":$((NOW + 3600)),\"duration_s\":60}"
expect 201 "a target in an hour"
creq POST /v1/targets "{\"id\":\"blip\",\"site_power_w\":9000,\"start\":$(date +%s.%N),\"duration_s\":2}"
expect 201 "a 2 s target"
sleep 2.5
creq POST /v1/targets "{\"id\":\"blip\",\"site_power_w\":9000,\"start\":$(date +%s),\"duration_s\":30}"
expect 201 "an ended target's id is free again"
creq DELETE /v1/targets/blip; expect 200 "delete it"
creq POST /v1/targets "{\"id\":\"gone\",\"site_power_w\":9000,\"start\":$(date +%s.%N),\"duration_s\":2}"
expect 201 "another 2 s target"
sleep 2.5
"$PFI_BIN" control target list --url "$CTL_URL" >"$WORK/list.out" || fail "target list"
cat "$WORK/list.out"
head -1 "$WORK/list.out" | grep -q " state " || fail "no state column"
grep -Eq '^ev +api +site +active ' "$WORK/list.out" || fail "ev is not active"
grep -Eq '^later +api +site +scheduled ' "$WORK/list.out" || fail "later is not scheduled"
grep -Eq '^gone +api +site +ended ' "$WORK/list.out" || fail "gone is not marked ended"
ok "target list: active, scheduled, ended"
