#!/usr/bin/env bash
# The VEN under a VTN's faults (issue 27 items 11 and 12), against the test
# VTN (tests/vtn/vtn.py): a wrong client secret makes /healthz 503 and shows
# in /v1/status and /metrics; a step down served ahead is cut before its
# start (a period plus --cut-ramp-s) and its report carries the mean
# measured inside the interval (at or under the limit, where the old VEN
# counted the pre-cut reading for a whole period); an events page of
# non-objects is a failed poll that keeps the event, as is a [] page while
# GET /events/{id} still serves it; a 404 by id cancels it, and the
# cancelled event is reported for the part that ran. One pfid (sim, 4 GPUs).
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"
: "${PFI_SHARED_DIR:?}"

cat >"$WORK/jobs.csv" <<CSV
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,warmup_s,startup_s
0,a,0.8,0.9,0.4,0.6,16000,0.2,0.2
1,a,0.8,0.9,0.4,0.6,16000,0.2,0.2
2,b,0.5,0.7,0.5,0.3,9000,0.2,0.2
3,b,0.5,0.7,0.5,0.3,9000,0.2,0.2
CSV
node_start 0 4 "$WORK/jobs.csv"
register 0 a '[0,1]'
register 0 b '[2,3]'
vtn_start
VARGS=(--vtn "$VURL" --program dc-flex --vtn-client-id ven-1 --vtn-poll-s 0.5)

# --- a wrong secret: /healthz 503 with the reason, /v1/status and /metrics say it ---
printf 'wrong-%s\n' "$SECRET" >"$WORK/bad"
chmod 600 "$WORK/bad"
ctl_start "$WORK/ctl-bad.log" --db "$WORK/ctl-bad.db" --period 0.5 --agents "${NODES[0]}" \
    "${VARGS[@]}" --vtn-client-secret-file "$WORK/bad"
bad_seen() { creq GET /healthz "" no; [ "$CODE" = 503 ]; }
wait_until 10 bad_seen || fail "/healthz with a refused secret: $CODE $BODY"
[[ "$BODY" == *"refuses the client credentials"* ]] || fail "no reason: $BODY"
ok "a refused secret: /healthz 503 ($(jq_py 'd["reasons"][0]' | cut -c1-60)...)"
if grep -q "$SECRET" "$WORK/resp" "$WORK/ctl-bad.log"; then fail "the secret was printed"; fi
creq GET /v1/status "" no
[ "$(jq_py 'd["vtn"]["auth_ok"]')" = False ] && [ "$(jq_py 'd["vtn"]["url"]')" = "$VURL" ] &&
    [ "$(jq_py 'd["vtn"]["consecutive_failures"] >= 1 and d["vtn"]["last_success"] is None')" = True ] ||
    fail "/v1/status vtn: $BODY"
ok "/v1/status vtn: auth_ok false, $(jq_py 'd["vtn"]["consecutive_failures"]') failure(s), no success"
curl -s "$CTL_URL/metrics" | grep -q '^pfi_control_vtn_auth_ok 0$' || fail "no pfi_control_vtn_auth_ok 0"
kill "$CTL_PID"; wait "$CTL_PID" 2>/dev/null || true

# --- the right secret; a step down 6 s ahead, 4 s long ---
ctl_start "$WORK/ctl.log" --db "$WORK/ctl.db" --period 1 --agents "${NODES[0]}" --agent-timeout-s 0.5 \
    "${VARGS[@]}" --vtn-client-secret-file "$WORK/secret" --cut-ramp-s 1
full() { python3 -c "import sys; sys.exit(0 if $(sum_power) > 2000 else 1)"; }
wait_until 20 full || fail "the GPUs never drew full power: $(sum_power)"
sleep 1
creq GET /healthz "" no; expect 200 "/healthz with the right secret"
U=$(sum_power)
LIMIT=$(python3 -c "print(round(0.7 * $U))")
START=$(($(date +%s) + 6))
event() { # ID START DURATION LIMIT_W
    python3 - "$@" <<'PY'
import json, sys, time
eid, start, dur, lim = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
print(json.dumps({"createdDateTime": "2025-01-01T00:00:00Z", "modificationDateTime": "2025-01-01T00:00:00Z",
    "objectType": "EVENT", "programID": "prog-1", "id": eid, "priority": 1,
    "intervalPeriod": {"start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start)), "duration": dur},
    "payloadDescriptors": [{"objectType": "EVENT_PAYLOAD_DESCRIPTOR", "payloadType": "IMPORT_CAPACITY_LIMIT", "units": "KW"}],
    "reportDescriptors": [{"payloadType": "READING", "readingType": "DIRECT_READ", "units": "KW"}],
    "intervals": [{"id": 0, "payloads": [{"type": "IMPORT_CAPACITY_LIMIT", "values": [lim / 1000]}]}]}))
PY
}
serve() { printf '[%s]\n' "$(IFS=,; echo "$*")" >"$WORK/ev.tmp"; mv "$WORK/ev.tmp" "$WORK/events.json"; }
serve "$(event step "$START" PT4S "$LIMIT")"
python3 -c "import time; time.sleep(max(0, $START + 0.3 - time.time()))"
AT=$(sum_power)
python3 -c "import sys; sys.exit(0 if $AT <= $LIMIT * 1.01 else 1)" ||
    fail "0.3 s into the step the GPUs draw $AT W > the $LIMIT W limit (not cut ahead)"
ok "0.3 s into the step: $AT W under its $LIMIT W limit (uncapped $U W): cut ahead"
reported() { grep -q '"eventID": "step"' "$WORK/reports.jsonl" 2>/dev/null; }
wait_until 15 reported || fail "no report for the step: $(grep -i report "$WORK/ctl.log")"
KW=$(grep '"eventID": "step"' "$WORK/reports.jsonl" | head -1 |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["resources"][0]["intervals"][0]["payloads"][0]["values"][0])')
python3 -c "import sys; sys.exit(0 if $KW * 1000 <= $LIMIT * 1.01 else 1)" ||
    fail "the report says $KW kW against the $LIMIT W limit"
ok "the step's report: $KW kW, at or under the $(python3 -c "print($LIMIT / 1000)") kW limit"

# --- a long event; the list glitches; then it is deleted ---
serve "$(event long "$(date +%s)" PT10M "$(python3 -c "print(0.9 * $U)")")"
has_long() { creq GET /v1/targets "" no; [ "$(jq_py 'any(t["id"].startswith("oadr:long:") for t in d["targets"])')" = True ]; }
wait_until 10 has_long || fail "the long event never became a target: $BODY"
sleep 2
echo '[1,2]' >"$WORK/list.json"
failing() { creq GET /healthz "" no; [ "$CODE" = 503 ]; }
wait_until 10 failing || fail "/healthz ok after polls of [1,2]: $BODY"
[[ "$BODY" == *"polls failed in a row"* ]] || fail "no reason: $BODY"
has_long || fail "a page of [1,2] cancelled the event: $BODY"
ok "a page of [1,2]: failed polls (/healthz 503), the event kept"
echo '[]' >"$WORK/list.json"
wait_until 10 bash -c "grep -q 'VTN event long missing from the list but still served by id: kept' '$WORK/ctl.log'" ||
    fail "a [] page was not checked by id: $(tail -5 "$WORK/ctl.log")"
sleep 1
has_long || fail "a [] page cancelled the event while GET /events/long serves it: $BODY"
creq GET /healthz "" no; expect 200 "/healthz after good polls again"
ok "a [] page while the event is served by id: kept"
serve
rm -f "$WORK/list.json"
gone() { ! has_long; }
wait_until 10 gone || fail "the deleted event was not cancelled: $BODY"
ok "GET /events/long 404: cancelled"
long_reported() { grep -q '"eventID": "long"' "$WORK/reports.jsonl" 2>/dev/null; }
wait_until 5 long_reported || fail "the cancelled event was not reported: $(grep -i report "$WORK/ctl.log")"
grep '"eventID": "long"' "$WORK/reports.jsonl" | head -1 | python3 -c '
import json, sys
iv = json.load(sys.stdin)["resources"][0]["intervals"][0]
d = iv["intervalPeriod"]["duration"]
assert d != "PT10M" and iv["payloads"][0]["values"], iv
print("ok: the cancelled event reported over the part that ran:", d, iv["payloads"][0]["values"][0], "kW")' ||
    fail "the cancelled event's report"
grep -q '"status": 400\|"status": 500' "$WORK/vtn.log" && fail "the VTN refused a body: $(grep '"status": 400\|"status": 500' "$WORK/vtn.log" | head -2)"
ok "every body the VTN received was valid"
