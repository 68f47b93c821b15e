#!/usr/bin/env bash
# The live PFI estimate from uncapped telemetry only (docs/pfid.md, "Estimate basis
# and curve points"), through the nvml backend (test_pfid_estimate_capped
# runs on the sim): the fake NVML's cap slows the clocks and sets the
# power-cap clock event, and the model uses the clock fraction, which a cap
# would move. Capping the job's GPUs leaves the estimate where it was, with
# "last_uncapped", a fixed estimate_at and a growing age, even once the
# window holds nothing but capped samples; lifting the cap makes it
# "uncapped" again.
. "$(dirname "$0")/pfid_lib.sh"

fake_nvml 2
export FAKE_NVML_JOB=0.8,0.9,0.4,0.6,16000
cat >"$WORK/model.json" <<'EOF_M'
{"format":"pfi-model","version":1,"kind":"ols","features":["dram_copy_product","clock_frac_boost"],
 "intercept":0.93,"coefficients":[0.047,0.2],"boost_mhz":1980,"n_train":25,"r2_in":0.67,"rmse_in":0.2}
EOF_M
pfid_start "$WORK/pfid.log" --backend nvml --lock-dir "$WORK/locks" --state-dir "$WORK/state" --db "$WORK/pfid.db" \
    --interval 0.2 --phase-hold 0.4 --window 10 --model "$WORK/model.json"
req POST /v1/jobs '{"id":"llama","gpus":[0,1],"arch":"dense","task":"pt"}'; expect 201 "register"
est() { req GET /v1/jobs/llama "" no; E=$(jq_py 'd["pfi_estimate"]'); B=$(jq_py 'd["estimate_basis"]'); A=$(jq_py 'd["estimate_age_s"]'); AT=$(jq_py 'd["estimate_at"]'); [ "$E" != None ]; }
wait_until 10 est || fail "no estimate: $BODY"
sleep 1
est
E0=$E
[ "$B" = uncapped ] || fail "basis before the cap: $B"
python3 -c "import sys; assert 0 <= float(sys.argv[1]) < 1, sys.argv[1]" "$A" || fail "age while uncapped: $A"
ok "uncapped estimate $E0"

req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; expect 200 "cap GPU 0"
req PUT /v1/gpus/1/limit '{"watts":300,"expires_s":600}'; expect 200 "cap GPU 1"
sleep 0.5
est
AT0=$AT # the last uncapped sample's time: it stays while capped
sleep 10.5 # longer than the window: only capped samples are left in it
est
[ "$B" = last_uncapped ] || fail "basis while capped: $B ($BODY)"
python3 -c "
import sys; e, e0, a = map(float, sys.argv[1:])
assert e == e0, ('estimate moved under the cap', e0, e)
assert a > 10, ('age', a)" "$E" "$E0" "$A" || fail "estimate under the cap: $E (was $E0), age $A"
[ "$AT" = "$AT0" ] || fail "estimate_at moved under the cap: $AT0 -> $AT"
req GET /metrics "" no
python3 - "$BODY" "$AT" <<'PY' || fail "timestamp metric: $(grep estimate_timestamp <<<"$BODY")"
import sys
line = next(l for l in sys.argv[1].splitlines()
            if l.startswith('pfi_job_pfi_estimate_timestamp_seconds{job_id="llama"}'))
assert abs(float(line.split()[-1]) - float(sys.argv[2])) < 1e-3, (line, sys.argv[2])
PY
ok "capped for longer than the window: estimate still $E, basis last_uncapped, age ${A}s"

req DELETE /v1/gpus/0/limit; expect 200 "uncap GPU 0"
req DELETE /v1/gpus/1/limit; expect 200 "uncap GPU 1"
back() { est && [ "$B" = uncapped ]; }
wait_until 5 back || fail "basis after the cap: $B"
python3 -c "import sys; e, e0 = map(float, sys.argv[1:]); assert abs(e - e0) < 0.01, (e, e0)" "$E" "$E0" || fail "uncapped again: $E vs $E0"
ok "uncapped again: basis uncapped, estimate $E"
pfid_stop TERM
echo PASS
