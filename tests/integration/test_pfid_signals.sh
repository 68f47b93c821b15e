#!/usr/bin/env bash
# Stopping restores, and says so when it cannot (docs/pfid.md, "Cap safety"): every
# catchable terminating signal restores the caps and exits 0; SIGHUP reloads
# the model instead; a restore the device refuses is exit 3 with a line naming
# the GPU and the watts, and /healthz is 503 with its reasons meanwhile (a
# restore failing, the store failing, a GPU that cannot be read).
. "$(dirname "$0")/pfid_lib.sh"

fake_nvml 2
DB=$WORK/pfid.db
NV=(--backend nvml --lock-dir "$WORK/locks" --state-dir "$WORK/state" --db "$DB" --interval 0.2)
caps() { sqlite3 "$DB" 'SELECT count(*) FROM caps'; }

# --- every terminating signal restores ---
for sig in TERM INT QUIT USR1 USR2 ALRM VTALRM PROF XCPU IO PWR RTMIN RTMAX; do
    pfid_start "$WORK/sig-$sig.log" "${NV[@]}"
    req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; [ "$CODE" = 200 ] || fail "cap before SIG$sig: $CODE $BODY"
    [ "$(dev_limit 0)" = 300000 ] || fail "cap not on the device before SIG$sig"
    pfid_stop "$sig"
    [ "$RC" = 0 ] || fail "SIG$sig: exit $RC: $(cat "$WORK/sig-$sig.log")"
    [ "$(dev_limit 0)" = 700000 ] || fail "SIG$sig left GPU 0 at $(dev_limit 0) mW"
    [ "$(caps)" = 0 ] || fail "SIG$sig left a cap record"
    grep -q "shutting down" "$WORK/sig-$sig.log" || fail "SIG$sig: no shutdown line"
done
ok "SIGTERM INT QUIT USR1 USR2 ALRM VTALRM PROF XCPU IO PWR RTMIN RTMAX: each restored the cap and exited 0"

# --- SIGHUP reloads the model and keeps the caps ---
model() {
    cat >"$WORK/model.json" <<EOM
{"format":"pfi-model","version":1,"kind":"ols","features":["dram_copy_product"],
 "intercept":$1,"coefficients":[0.047],"boost_mhz":1980,"n_train":25,"r2_in":0.67,"rmse_in":0.2}
EOM
}
model 0.93
FAKE_NVML_JOB=0.8,0.9,0.4,0.6,16000 pfid_start "$WORK/hup.log" "${NV[@]}" --phase-hold 0.4 --model "$WORK/model.json"
req POST /v1/jobs '{"id":"j","gpus":[0],"arch":"dense","task":"pt"}'; expect 201 "register"
estimate() { req GET /v1/jobs/j "" no; E=$(jq_py 'd["pfi_estimate"]'); X=$(jq_py 'd["features"].get("dram_copy_product")'); [ "$E" != None ]; }
wait_until 10 estimate || fail "no estimate: $BODY"
# The cap after the first estimate: the reloaded model is applied to the
# uncapped samples before it (the estimate is never from capped telemetry).
req PUT /v1/gpus/0/limit '{"watts":400,"expires_s":600}'; expect 200 "cap before SIGHUP"
python3 -c "import sys; e,x=map(float,sys.argv[1:]); assert abs(e-(0.93+0.047*x))<1e-9,(e,x)" "$E" "$X" || fail "estimate $E before SIGHUP"
model 1.93
kill -HUP "$PFID_PID"
reloaded() { estimate && python3 -c "import sys; e,x=map(float,sys.argv[1:]); assert abs(e-(1.93+0.047*x))<1e-9" "$E" "$X"; }
wait_until 5 reloaded || fail "SIGHUP did not reload the model: estimate $E, x $X"
kill -0 "$PFID_PID" || fail "SIGHUP stopped pfid"
[ "$(dev_limit 0)" = 400000 ] || fail "SIGHUP changed the cap"
echo '{"format":"pfi-model"' >"$WORK/model.json"
kill -HUP "$PFID_PID"
wait_until 5 grep -q "SIGHUP: .*the model in use is kept" "$WORK/hup.log" || fail "bad model on SIGHUP: $(cat "$WORK/hup.log")"
estimate; python3 -c "import sys; e,x=map(float,sys.argv[1:]); assert abs(e-(1.93+0.047*x))<1e-9" "$E" "$X" || fail "bad model replaced the good one"
pfid_stop TERM
[ "$(dev_limit 0)" = 700000 ] || fail "cap not restored after SIGHUP + SIGTERM"
ok "SIGHUP reloads the model (estimate moved by the new intercept), a broken file keeps the old one, caps untouched"

# --- a restore the device refuses ---
pfid_start "$WORK/refuse.log" "${NV[@]}"
req GET /healthz "" no; expect 200 "healthy at start"
req PUT /v1/gpus/1/limit '{"watts":300,"expires_s":600}'; expect 200 "cap GPU 1"
nvml_ctl "fail nvmlDeviceSetPowerManagementLimit:1"
req DELETE /v1/gpus/1/limit; expect 502 "restore refused by the driver"
req GET /healthz "" no; expect 503 "/healthz while a restore fails"
grep -q "restore failed: GPU 1 cannot be put back to 700 W (cap 300 W)" <<<"$BODY" || fail "healthz reason: $BODY"
pfid_stop TERM
[ "$RC" = 3 ] || fail "exit $RC after a failed restore, expected 3"
grep -q "GPU 1: restoring 700 W at shutdown failed: .*the cap of 300 W" "$WORK/refuse.log" || fail "no log line naming GPU and watts: $(cat "$WORK/refuse.log")"
[ "$(caps)" = 1 ] || fail "record of the unrestored cap dropped"
[ "$(dev_limit 1)" = 300000 ] || fail "fake driver state: $(dev_limit 1)"
ok "a refused restore: 503 with the reason, exit 3, the GPU and watts logged, record kept"
nvml_ctl ""
pfid_start "$WORK/after.log" "${NV[@]}"
[ "$(dev_limit 1)" = 700000 ] || fail "next start did not restore GPU 1"
req GET /healthz "" no; expect 200 "healthy once restored"

# --- a GPU that cannot be read ---
nvml_ctl "fail *:1=15"
lost() { req GET /healthz "" no; [ "$CODE" = 503 ] && grep -q "backend down: GPU 1" <<<"$BODY"; }
wait_until 5 lost || fail "lost GPU not on /healthz: $CODE $BODY"
nvml_ctl ""

healthy() { req GET /healthz "" no; [ "$CODE" = 200 ]; }
wait_until 5 healthy || fail "not healthy again: $CODE $BODY"
pfid_stop TERM
ok "a GPU that cannot be read: 503 backend down, 200 once it reads again"

# --- a store that cannot be written (a file-size limit: EFBIG) ---
(ulimit -f 100; exec "$PFID_BIN" --listen 127.0.0.1:0 --token-file "$TOKEN_FILE" "${NV[@]}" --interval 0.05 --db "$WORK/small.db" 2>"$WORK/store.log") &
PFID_PID=$!
PIDS+=("$PFID_PID")
wait_until 10 grep -q "listening on" "$WORK/store.log" || fail "pfid with a small file limit did not start: $(cat "$WORK/store.log")"
PORT=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$WORK/store.log" | sed 's/.*://')
store_bad() { req GET /healthz "" no; [ "$CODE" = 503 ] && grep -q "store failing" <<<"$BODY"; }
wait_until 20 store_bad || fail "a failing store not on /healthz: $CODE $BODY"
kill -0 "$PFID_PID" || fail "pfid died when the store filled"
pfid_stop TERM
[ "$RC" = 0 ] || fail "exit $RC"
ok "a store that cannot be written: 503 store failing, pfid keeps running"
echo PASS
