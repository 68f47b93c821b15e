#!/usr/bin/env bash
# pfid on its real NVML path, against the fake libnvidia-ml.so.1: GPM
# features and the live PFI estimate from a model file, caps that a lying or
# failing driver cannot fake, and crash recovery where the device keeps its
# limit across processes (FAKE_NVML_STATE), as a real driver does.
. "$(dirname "$0")/pfid_lib.sh"

: "${PFI_FAKE_NVML_DIR:?PFI_FAKE_NVML_DIR not set (fake-nvml not built)}"
export PFI_NVML_LIB=$PFI_FAKE_NVML_DIR/libnvidia-ml.so.1
export FAKE_NVML_GPUS=2
export FAKE_NVML_UUID_TAG; FAKE_NVML_UUID_TAG=$(printf %x $$) # cards of its own (the GPU lock is machine-wide)
export FAKE_NVML_JOB=0.8,0.9,0.4,0.6,16000 # compute_frac, sm, dram, tensor ratio, tok/s
export FAKE_NVML_STATE=$WORK/nvml-state
DB=$WORK/pfid.db
# A one-feature predictor in the pfi-model format (include/io/pfi/model_json.h).
cat >"$WORK/model.json" <<'EOF'
{"format":"pfi-model","version":1,"kind":"ols","features":["dram_copy_product"],
 "intercept":0.93,"coefficients":[0.047],"boost_mhz":1980,"n_train":25,"r2_in":0.67,"rmse_in":0.2}
EOF
# Cap expiry on an injectable clock (src/agent/cap_clock.c): time moves by
# rewriting this file, not by sleeping.
export PFID_TEST_CLOCK=$WORK/clock
echo 0 >"$PFID_TEST_CLOCK"
NV=(--backend nvml --lock-dir "$WORK/locks" --state-dir "$WORK/state" --db "$DB" --interval 0.2 --phase-hold 1 --model "$WORK/model.json")

# The device's limit of GPU g in mW as the fake driver holds it (what the
# next process, or nvidia-smi, would see).
dev_limit() { awk -v g="$1" '$1 == g { print $2 }' "$FAKE_NVML_STATE"; }

pfid_start "$WORK/pfid1.log" "${NV[@]}"
grep -q "model .*model.json: dram_copy_product" "$WORK/pfid1.log" || fail "model not loaded: $(cat "$WORK/pfid1.log")"
req GET /v1/gpus "" no; expect 200 "GET /v1/gpus"
[ "$(jq_py 'd["gpus"][0]["name"]')" = "NVIDIA H200" ] || fail "name: $BODY"
# GPM metrics are rates between two GPM samples: present from the second tick.
gpm_read() { req GET /v1/gpus "" no; [ "$(jq_py "d['gpus'][0]['sample']['sm_active_ratio'] is not None")" = True ]; }
wait_until 5 gpm_read || fail "no GPM fields: $BODY"
for k in sm_active_ratio tensor_active_ratio dram_active_ratio sm_occupancy_ratio nvlink_tx_bytes_per_second; do
    [ "$(jq_py "d['gpus'][0]['sample']['$k'] is not None")" = True ] || fail "GPM field $k missing: $BODY"
done
ok "GPM fields read through NVML"

req POST /v1/jobs '{"id":"llama","gpus":[0,1],"arch":"dense","task":"pt"}'; expect 201 "register"
training() { req GET /v1/jobs/llama "" no; [ "$(jq_py 'd["pfi_estimate"] is not None')" = True ]; }
wait_until 15 training || fail "no PFI estimate: $BODY"
# estimate = 0.93 + 0.047 * dram_copy_product (the model's own formula)
python3 -c "
import json,sys
d=json.loads(sys.argv[1]); x=d['features']['dram_copy_product']; e=d['pfi_estimate']
assert abs(e-(0.93+0.047*x))<1e-9, (e,x)
assert abs(x - d['telemetry']['DCGM_FI_PROF_DRAM_ACTIVE']*d['telemetry']['DCGM_FI_DEV_MEM_COPY_UTIL'])<1e-6, x
print('ok: pfi_estimate %.4f = 0.93 + 0.047 x %.3f' % (e, x))" "$BODY" || fail "estimate"
req GET /metrics "" no
grep -q '^pfi_job_pfi_estimate{job_id="llama"} ' <<<"$BODY" || fail "no estimate series"
printf '%s\n' "$BODY" | promtool check metrics || fail "promtool check metrics"
ok "promtool check metrics (nvml)"

# --- caps through the driver ---
req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; expect 200 "cap GPU 0 at 300 W"
[ "$(jq_py 'd["enforced_w"]')" = 300.0 ] || fail "read-back: $BODY"
[ "$(dev_limit 0)" = 300000 ] || fail "device limit $(dev_limit 0), expected 300000"
req PUT /v1/gpus/1/limit '{"watts":250,"expires_s":60}'; expect 200 "cap GPU 1 at 250 W for 60 s"
[ "$(dev_limit 1)" = 250000 ] || fail "device limit GPU 1"
pfid_stop KILL
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] || fail "store corrupt after SIGKILL"
[ "$(dev_limit 0)" = 300000 ] && [ "$(dev_limit 1)" = 250000 ] || fail "caps vanished with the process?"
echo 61 >"$PFID_TEST_CLOCK" # GPU 1's cap expires while no pfid runs: the card stays at 250 W
[ "$(dev_limit 1)" = 250000 ] || fail "GPU 1 changed with no pfid running"
pfid_start "$WORK/pfid2.log" "${NV[@]}"
[ "$(dev_limit 1)" = 700000 ] || fail "expired cap not restored on the device after restart: $(dev_limit 1)"
[ "$(dev_limit 0)" = 300000 ] || fail "unexpired cap not enforced after restart: $(dev_limit 0)"
req GET /v1/gpus "" no
[ "$(jq_py 'd["gpus"][0]["cap"]["watts"]')" = 300.0 ] || fail "cap not tracked after restart: $BODY"
ok "SIGKILL + restart: expired cap restored on the device, unexpired still enforced"
pfid_stop TERM
[ "$RC" = 0 ] || fail "exit status $RC"
[ "$(dev_limit 0)" = 700000 ] || fail "SIGTERM did not restore GPU 0"
ok "SIGTERM restored the device"

# --- a driver that says yes but does nothing: read-back catches it ---
FAKE_NVML_SET_IGNORE=1 pfid_start "$WORK/pfid3.log" "${NV[@]}"
req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; expect 502 "set ignored by the driver"
# The backend's or pfid's own read-back, whichever notices first.
grep -Eq "reads 700000 mW|reports 700.0 W after setting 300.0 W" <<<"$BODY" || fail "message: $BODY"
[ "$(sqlite3 "$DB" 'SELECT count(*) FROM caps')" = 0 ] || fail "a cap that did not happen was recorded"
pfid_stop TERM

# --- a driver that fails the call ---
FAKE_NVML_FAIL=nvmlDeviceSetPowerManagementLimit pfid_start "$WORK/pfid4.log" "${NV[@]}"
req PUT /v1/gpus/1/limit '{"watts":300,"expires_s":600}'; expect 502 "set fails in the driver"
# The device still reads its prior limit: nothing changed, so nothing is
# recorded and nothing is retried (test_pfid_cap_faults).
[ "$(sqlite3 "$DB" 'SELECT count(*) FROM caps WHERE gpu=1')" = 0 ] || fail "record of a cap that did not happen"
pfid_stop TERM
[ "$RC" = 0 ] || fail "exit $RC"
# A cap that did happen, then a driver that refuses the restore: the record
# stays for the next start (test_pfid_signals covers the exit status).
export FAKE_NVML_CTL=$WORK/nvml-ctl
: >"$FAKE_NVML_CTL"
pfid_start "$WORK/pfid4b.log" "${NV[@]}"
req PUT /v1/gpus/1/limit '{"watts":300,"expires_s":600}'; expect 200 "cap GPU 1"
echo "fail nvmlDeviceSetPowerManagementLimit" >"$FAKE_NVML_CTL"
req GET /metrics "" no
pfid_stop TERM
[ "$RC" = 3 ] || fail "exit $RC after a refused restore"
[ "$(sqlite3 "$DB" 'SELECT count(*) FROM caps WHERE gpu=1')" = 1 ] || fail "record dropped at shutdown though restore failed"
ok "a failing driver never loses the cap record"
: >"$FAKE_NVML_CTL"
# A healthy driver at the next start restores the prior limit from the record.
pfid_start "$WORK/pfid5.log" "${NV[@]}"
[ "$(dev_limit 1)" = 700000 ] || fail "GPU 1 not at its prior limit after restart: $(dev_limit 1)"
[ "$(sqlite3 "$DB" 'SELECT count(*) FROM caps')" = 0 ] || fail "record kept after restore"
pfid_stop TERM
unset FAKE_NVML_CTL
ok "next start with a working driver restored the prior limit"

# --- no library: a clear message, exit 1 ---
set +e
PFI_NVML_LIB=$WORK/nope.so "$PFID_BIN" "${NV[@]}" --listen 127.0.0.1:0 --token-file "$TOKEN_FILE" 2>"$WORK/nolib.log"
rc=$?
set -e
[ $rc = 1 ] || fail "missing NVML: exit $rc"
grep -q "cannot load" "$WORK/nolib.log" || fail "missing NVML message: $(cat "$WORK/nolib.log")"
ok "missing NVML library refused with a message"
echo PASS
