#!/usr/bin/env bash
# GET /v1/jobs/ID/curve (README "HTTP API"): one point per cap level the job
# ran at in steady state, its throughput reports' mean, spread and count and
# its GPUs' total power; a report sent just after a cap change counts at no
# level; the points survive SIGKILL and the job's end (the store's job_points).
# References: Python's statistics module over the reports the test sent, and
# the fake NVML's own power read through /v1/gpus.
. "$(dirname "$0")/pfid_lib.sh"

fake_nvml 2
export FAKE_NVML_JOB=0.8,0.9,0.4,0.6,16000
NV=(--backend nvml --lock-dir "$WORK/locks" --db "$WORK/pfid.db" --interval 0.2 --phase-hold 0.4)
report() { for v in "$@"; do req POST /v1/jobs/llama/throughput "{\"tokens_per_s\":$v}"; [ "$CODE" = 200 ] || fail "report $v: $CODE"; done; }
gpu_power() { req GET /v1/gpus "" no; jq_py "d['gpus'][0]['sample']['power_watts'] + d['gpus'][1]['sample']['power_watts']"; }

pfid_start "$WORK/pfid.log" "${NV[@]}"
req POST /v1/jobs '{"id":"llama","gpus":[0,1],"arch":"dense","task":"pt"}'; expect 201 "register"
training() { req GET /v1/jobs/llama "" no; [ "$(jq_py 'd["phase"]')" = training ]; }
wait_until 10 training || fail "never training: $BODY"
sleep 1 # the level (700 W, uncapped) held for more than 3 samples
P700=$(gpu_power)
report 1000 1010 990 1000
req PUT /v1/gpus/0/limit '{"watts":400,"expires_s":600}'; expect 200 "cap GPU 0"
req PUT /v1/gpus/1/limit '{"watts":400,"expires_s":600}'; expect 200 "cap GPU 1"
report 500 # tokens/s lag a cap change: this one is no level's
sleep 1.2
P400=$(gpu_power)
report 800 820 780
sleep 0.5 # a tick writes the points to the store

check_curve() {
    python3 - "$BODY" "$P700" "$P400" <<'EOF_PY'
import json, statistics, sys
d = json.loads(sys.argv[1]); p700, p400 = float(sys.argv[2]), float(sys.argv[3])
pts = {p["cap_w"]: p for p in d["points"]}
assert d["job"] == "llama" and sorted(pts) == [400.0, 700.0], d
for cap, sent, power in ((700.0, [1000, 1010, 990, 1000], p700), (400.0, [800, 820, 780], p400)):
    p = pts[cap]
    assert p["n"] == len(sent), (cap, p)
    assert abs(p["tokens_per_s"] - statistics.mean(sent)) < 1e-9, (cap, p)
    assert abs(p["tokens_sd"] - statistics.stdev(sent)) < 1e-9, (cap, p)
    assert abs(p["power_w"] - power) < 0.01 * power, (cap, p, power)
    assert p["t_first"] <= p["t_last"], p
print("curve ok: 700 W %.1f W %.1f tok/s sd %.3f; 400 W %.1f W %.1f tok/s sd %.3f" % (
    pts[700.0]["power_w"], pts[700.0]["tokens_per_s"], pts[700.0]["tokens_sd"],
    pts[400.0]["power_w"], pts[400.0]["tokens_per_s"], pts[400.0]["tokens_sd"]))
EOF_PY
}
req GET /v1/jobs/llama/curve "" no; expect 200 "GET curve"
check_curve || fail "curve: $BODY"
ok "two steady points, the report after the cap change in neither"

pfid_stop KILL
[ "$(sqlite3 "$WORK/pfid.db" "SELECT count(*) FROM job_points WHERE job='llama'")" = 2 ] || fail "points not in the store"
pfid_start "$WORK/pfid2.log" "${NV[@]}"
req GET /v1/jobs/llama/curve "" no; expect 200 "GET curve after SIGKILL"
check_curve || fail "curve after restart: $BODY"
req DELETE /v1/jobs/llama; expect 200 "end the job"
req GET /v1/jobs/llama/curve "" no; expect 200 "GET curve of an ended job (from the store)"
check_curve || fail "curve after the end: $BODY"
req GET /v1/jobs/nope/curve "" no; expect 404 "no such job"
req POST /v1/jobs/llama/curve '{}'; expect 405 "POST curve"
ok "the curve survives SIGKILL and the job's end"
pfid_stop TERM
echo PASS
