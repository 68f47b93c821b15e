#!/usr/bin/env bash
# GET /v1/jobs/ID/curve (issue 11, item 11): what pfid has seen of a job's
# power/throughput curve. A two-GPU modelled job on the sim backend runs at
# 700 W (uncapped), 500 W and 300 W; the test plays the trainer and reports
# the tokens/s of the GPU model's curve (`pfi model`) with a known spread.
# Each point's power must be the model's total power at that cap (the sim
# draws it independently of the reports), its tokens/s and spread those
# reported in steady state, and the reports made before training or while a
# cap was settling must count nowhere. The points are in the store
# (job_points): they survive a restart and a SIGKILL, and outlive the job.
. "$(dirname "$0")/pfid_lib.sh"
: "${PFI_BIN:?}"
JOB=compute=0.85,sm=0.9,dram=0.25,tensor=0.6,tput=16000
"$PFI_BIN" model --job "$JOB" --cap 700,500,300 --gpus 2 --json >"$WORK/model.json" ||
    fail "pfi model"
model() { # model CAP KEY
    python3 -c "import json,sys; print(next(p for p in json.load(open('$WORK/model.json'))['points'] if p['cap_w']==$1)['$2'])"
}
cat >"$WORK/jobs.csv" <<'EOF2'
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,warmup_s,startup_s
0,llm,0.85,0.9,0.25,0.6,16000,1.5,0.5
1,llm,0.85,0.9,0.25,0.6,16000,1.5,0.5
EOF2
DB=$WORK/pfid.db
pfid_start "$WORK/pfid.log" --backend sim --sim-gpus 2 --sim-jobs "$WORK/jobs.csv" \
    --db "$DB" --interval 0.2 --phase-hold 0.4
req POST /v1/jobs '{"id":"llm","gpus":[0,1],"arch":"dense","task":"pt"}'; expect 201 "register"
# Before training: not a point.
req POST /v1/jobs/llm/throughput '{"tokens_per_s":1}'; expect 200 "a report in warmup"
req GET /v1/jobs/llm/curve "" no; expect 200 "the curve"
[ "$(jq_py 'd["points"] == [] and d["running"] and not d["steady"]')" = True ] || fail "warmup: $BODY"

steady_at() {
    req GET /v1/jobs/llm/curve "" no
    [ "$(jq_py "d['steady'] and d['level_w'] == $1")" = True ]
}
# report CAP: the model's tokens/s at CAP times 1.01, 0.99, 1.01, 0.99 (mean
# the model's, sd 0.01 * sqrt(4/3) of it), a tick apart.
report() {
    local t
    t=$(model "$1" tput_total)
    for f in 1.01 0.99 1.01 0.99; do
        req POST /v1/jobs/llm/throughput "{\"tokens_per_s\":$(python3 -c "print($t * $f)")}"
        [ "$CODE" = 200 ] || fail "report: $CODE $BODY"
        sleep 0.25
    done
}
wait_until 15 steady_at 700 || fail "not steady at 700 W: $BODY"
report 700
for cap in 500 300; do
    for g in 0 1; do
        req PUT /v1/gpus/$g/limit "{\"watts\":$cap,\"expires_s\":300}"; expect 200 "GPU $g to $cap W"
    done
    # Right after the cap: settling, not a point (a report made now still
    # measures the old limit's steps).
    req POST /v1/jobs/llm/throughput '{"tokens_per_s":1}'; expect 200 "a report while settling"
    wait_until 10 steady_at $cap || fail "not steady at $cap W: $BODY"
    report $cap
done
# Back to 700 W: two more reports join the 700 W point.
for g in 0 1; do req DELETE /v1/gpus/$g/limit; expect 200 "lift GPU $g"; done
req POST /v1/jobs/llm/throughput '{"tokens_per_s":1}'; expect 200 "a report while settling"
wait_until 10 steady_at 700 || fail "not steady at 700 W again: $BODY"
T700=$(model 700 tput_total)
for f in 1.01 0.99; do
    req POST /v1/jobs/llm/throughput "{\"tokens_per_s\":$(python3 -c "print($T700 * $f)")}"
    sleep 0.25
done
req GET /v1/jobs/llm/curve "" no; expect 200 "the curve"
LIVE=$BODY
python3 - "$LIVE" "$WORK/model.json" <<'PY' || fail "the curve"
import json, math, sys
d = json.loads(sys.argv[1])
m = {p["cap_w"]: p for p in json.load(open(sys.argv[2]))["points"]}
pts = d["points"]
assert [p["cap_w"] for p in pts] == [300, 500, 700], pts
for p in pts:
    want = m[p["cap_w"]]
    n = 6 if p["cap_w"] == 700 else 4
    sd = want["tput_total"] * 0.01 * math.sqrt(n / (n - 1))  # +-1% around the mean
    assert p["n"] == n, (p, n)
    assert abs(p["power_w"] - want["power_total_w"]) < 1e-6, (p, want["power_total_w"])
    assert abs(p["tokens_per_s"] - want["tput_total"]) < 1e-6 * want["tput_total"], (p, want["tput_total"])
    assert abs(p["tokens_sd"] - sd) < 1e-6 * sd, (p, sd)
    assert p["t_first"] < p["t_last"]
    print("ok: %3.0f W: %.1f W (model %.1f), %.0f tokens/s sd %.0f over %d reports"
          % (p["cap_w"], p["power_w"], want["power_total_w"], p["tokens_per_s"], p["tokens_sd"], p["n"]))
# the throughput lost per watt shed, off the curve, as the model has it
r = pts[0]["tokens_per_s"] / pts[2]["tokens_per_s"]
assert abs(r - m[300]["tput_total"] / m[700]["tput_total"]) < 1e-6, r
PY
ok "one point per cap level, powers of the GPU model's curve"

# The store has them (written whole, at most once a tick, and at shutdown).
pfid_stop TERM
[ "$RC" = 0 ] || fail "pfid exit $RC"
python3 - "$LIVE" "$DB" <<'PY' || fail "job_points"
import json, sqlite3, sys
d = json.loads(sys.argv[1])
rows = sqlite3.connect(sys.argv[2]).execute(
    "SELECT cap_w, power_w, tokens_per_s, tokens_sd, n, t_first, t_last FROM job_points "
    "WHERE job='llm' ORDER BY cap_w").fetchall()
want = [tuple(p[k] for k in ("cap_w", "power_w", "tokens_per_s", "tokens_sd", "n", "t_first", "t_last"))
        for p in d["points"]]
assert len(rows) == 3, rows
for r, w in zip(rows, want):
    assert all(abs(a - b) <= 1e-9 * max(1, abs(b)) for a, b in zip(r, w)), (r, w)
PY
ok "job_points holds the curve"
# After a restart the running job's curve goes on from the store.
pfid_start "$WORK/pfid2.log" --backend sim --sim-gpus 2 --sim-jobs "$WORK/jobs.csv" \
    --db "$DB" --interval 0.2 --phase-hold 0.4
req GET /v1/jobs/llm/curve "" no; expect 200 "the curve after a restart"
[ "$(jq_py '[(p["cap_w"], p["n"]) for p in d["points"]]')" = "[(300.0, 4), (500.0, 4), (700.0, 6)]" ] ||
    fail "after restart: $BODY"
# Reports then a SIGKILL: the sampler's tick has written them (a point waits
# at most an interval in memory, even when no report follows).
wait_until 15 steady_at 700 || fail "not steady at 700 W after the restart: $BODY"
for f in 1.01 0.99; do
    req POST /v1/jobs/llm/throughput "{\"tokens_per_s\":$(python3 -c "print($T700 * $f)")}"
    sleep 0.25
done
sleep 0.6
pfid_stop KILL
[ "$(sqlite3 "$DB" "SELECT n FROM job_points WHERE job='llm' AND cap_w=700")" = 8 ] ||
    fail "reports before a SIGKILL not stored: $(sqlite3 "$DB" "SELECT cap_w, n FROM job_points")"
ok "reports made before a SIGKILL are in job_points"
pfid_start "$WORK/pfid3.log" --backend sim --sim-gpus 2 --sim-jobs "$WORK/jobs.csv" \
    --db "$DB" --interval 0.2 --phase-hold 0.4
# The spread of one report at the limit in force: GET /v1/jobs' tokens_sd
# and its gauge, the SD of the current level's reports. A fresh level,
# 400 W: after 100 alone, none; after 100, 110, 90 (mean 100, squared
# deviations 0 + 100 + 100 over n - 1 = 2), exactly 10.
for g in 0 1; do
    req PUT /v1/gpus/$g/limit '{"watts":400,"expires_s":300}'; expect 200 "GPU $g to 400 W"
done
wait_until 10 steady_at 400 || fail "not steady at 400 W: $BODY"
req POST /v1/jobs/llm/throughput '{"tokens_per_s":100}'; expect 200 "report 100"
req GET /v1/jobs/llm "" no; expect 200 "the job"
[ "$(jq_py 'd["tokens_sd"] is None and "tokens_sd" in d')" = True ] || fail "one report: $BODY"
req GET /metrics "" no
grep -q '^pfi_job_throughput_sd_tokens_per_second' <<<"$BODY" && fail "an SD of one report: $BODY"
for t in 110 90; do req POST /v1/jobs/llm/throughput "{\"tokens_per_s\":$t}"; expect 200 "report $t"; done
req GET /v1/jobs/llm "" no; expect 200 "the job"
[ "$(jq_py 'abs(d["tokens_sd"] - 10) < 1e-9')" = True ] || fail "tokens_sd: $BODY"
req GET /v1/jobs "" no; expect 200 "the jobs"
[ "$(jq_py 'abs(d["jobs"][0]["tokens_sd"] - 10) < 1e-9')" = True ] || fail "jobs' tokens_sd: $BODY"
req GET /metrics "" no
grep -q '^# HELP pfi_job_throughput_sd_tokens_per_second ' <<<"$BODY" || fail "no HELP"
[ "$(awk '$1 == "pfi_job_throughput_sd_tokens_per_second{job_id=\"llm\"}" { print $2 }' <<<"$BODY")" = 10 ] ||
    fail "the SD gauge: $(grep throughput_sd <<<"$BODY")"
ok "tokens_sd and its gauge: the SD of one report at the limit in force (10)"
req DELETE /v1/jobs/llm; expect 200 "end the job"
req GET /v1/jobs/llm/curve "" no; expect 200 "an ended job's curve"
[ "$(jq_py 'not d["running"] and len(d["points"]) == 4')" = True ] || fail "ended: $BODY"
req GET /v1/jobs/nope/curve "" no; expect 404 "no such job"
req POST /v1/jobs/llm/curve '{}'; expect 405 "POST on a curve"
echo PASS
