#!/usr/bin/env bash
# Cap records that a store cannot lose or keep stale (issue 27 items 1 and 4),
# against the fake NVML with --state-dir:
#  - a release the full store cannot record is a 500 naming the cause, is
#    retried, keeps /healthz at 503 meanwhile, and a restart never re-applies
#    the released cap;
#  - a crashed pfid's cap survives a store moved aside, emptied to 0 bytes or
#    missing its -wal: it is re-applied from the state file with its prior;
#  - a GPU found below its recorded prior with no cap record gets the prior
#    back, or is reported as externally limited, never taken as the prior;
#  - a recorded expiry beyond the one-week maximum is clamped to a week
#    (issue 30 item 8: clamping to two weeks fails here).
. "$(dirname "$0")/pfid_lib.sh"

fake_nvml 2
DB=$WORK/pfid.db
STATE=$WORK/state
NV=(--backend nvml --lock-dir "$WORK/locks" --state-dir "$STATE" --db "$DB" --interval 0.05)
caps_rows() { sqlite3 "$DB" 'SELECT count(*) FROM caps'; }
healthy() { req GET /healthz "" no; [ "$CODE" = 200 ]; }
store_bad() { req GET /healthz "" no; [ "$CODE" = 503 ] && grep -q "store failing" <<<"$BODY"; }
printf '0 600000\n1 700000\n' >"$FAKE_NVML_STATE"

# --- item 1: the store is full when the cap is released ---
pfid_start "$WORK/full.log" "${NV[@]}"
req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; expect 200 "cap GPU 0"
# Every file of pfid may now hold 4 KiB: the store's WAL cannot grow (EFBIG),
# a state file (about 400 bytes) still can.
prlimit --pid "$PFID_PID" --fsize=4096:unlimited
wait_until 20 store_bad || fail "the store did not fill: $CODE $BODY"
req DELETE /v1/gpus/0/limit; expect 500 "DELETE while the store is full"
grep -q "the release could not be recorded" <<<"$BODY" || fail "500 does not name the cause: $BODY"
[ "$(dev_limit 0)" = 600000 ] || fail "the prior is not back on the device: $(dev_limit 0)"
req GET /healthz "" no
[ "$CODE" = 503 ] && grep -q "stale cap record: GPU 0" <<<"$BODY" || fail "/healthz with a stale row: $CODE $BODY"
req GET /v1/gpus "" no
[ "$(jq_py '(d["gpus"][0]["cap"], d["gpus"][0]["release_pending"])')" = "(None, True)" ] || fail "/v1/gpus: $BODY"
prlimit --pid "$PFID_PID" --fsize=unlimited:unlimited
wait_until 10 healthy || fail "the release was not retried once the store had room: $BODY"
[ "$(caps_rows)" = 0 ] || fail "the stale row is still in the store"
grep -q "GPU 0: the release of its cap is recorded now" "$WORK/full.log" || fail "retry not logged"
ok "a release the full store cannot record: 500 naming it, 503 meanwhile, retried when it can"

req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; expect 200 "cap GPU 0 again"
prlimit --pid "$PFID_PID" --fsize=4096:unlimited
wait_until 20 store_bad || fail "the store did not fill"
req DELETE /v1/gpus/0/limit; expect 500 "DELETE while the store is full"
pfid_stop KILL
[ "$(caps_rows)" = 1 ] || fail "expected the stale row in the store, found $(caps_rows)"
pfid_start "$WORK/after-full.log" "${NV[@]}"
[ "$(dev_limit 0)" = 600000 ] || fail "the restart re-applied the released cap: $(dev_limit 0) mW"
grep -q "GPU 0: the store's cap record (300 W) is stale" "$WORK/after-full.log" || fail "stale row not logged: $(cat "$WORK/after-full.log")"
[ "$(caps_rows)" = 0 ] || fail "the stale row was not dropped"
wait_until 5 healthy || fail "not healthy after the restart: $BODY"
pfid_stop TERM
ok "a restart never re-applies a released cap whose store row stayed"

# --- item 4: the store loses the record of a crashed pfid's cap ---
# lose WHAT: caps GPU 0 at 300 W, kills pfid, damages the store as WHAT says,
# restarts: the cap must still be held, with the 600 W prior.
lose() {
    local what=$1
    pfid_start "$WORK/lose-$what.log" "${NV[@]}"
    req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; expect 200 "cap GPU 0 ($what)"
    pfid_stop KILL
    case $what in
    aside) mv "$DB" "$DB.aside"; rm -f "$DB-wal" "$DB-shm" ;;
    empty) : >"$DB"; rm -f "$DB-wal" "$DB-shm" ;;
    wal) rm -f "$DB-wal" "$DB-shm" ;;
    esac
    pfid_start "$WORK/relost-$what.log" "${NV[@]}"
    [ "$(dev_limit 0)" = 300000 ] || fail "$what: GPU 0 at $(dev_limit 0) mW after the restart"
    req GET /v1/gpus "" no
    [ "$(jq_py '(d["gpus"][0]["cap"]["watts"], d["gpus"][0]["cap"]["prior_w"])')" = "(300.0, 600.0)" ] ||
        fail "$what: the cap was forgotten: $BODY"
    grep -q "recovered from the state file" "$WORK/relost-$what.log" || fail "$what: not logged"
    [ "$(caps_rows)" = 1 ] || fail "$what: the store was not given the record back"
    req DELETE /v1/gpus/0/limit; expect 200 "release ($what)"
    [ "$(dev_limit 0)" = 600000 ] || fail "$what: the prior did not come back: $(dev_limit 0)"
    pfid_stop TERM
    ok "a crashed pfid's cap survives a store $what"
}
lose aside
lose empty
lose wal

# Below the recorded prior with no cap record at all (pfid is not running).
sed -i 's/^0 .*/0 300000/' "$FAKE_NVML_STATE"
pfid_start "$WORK/below.log" "${NV[@]}"
[ "$(dev_limit 0)" = 600000 ] || fail "a GPU below its prior with no record stayed at $(dev_limit 0) mW"
grep -q "GPU 0: found at 300 W, below its recorded prior limit 600 W" "$WORK/below.log" || fail "not logged: $(cat "$WORK/below.log")"
pfid_stop TERM
sed -i 's/^0 .*/0 300000/' "$FAKE_NVML_STATE"
nvml_ctl "fail nvmlDeviceSetPowerManagementLimit:0"
pfid_start "$WORK/below-stuck.log" "${NV[@]}"
req GET /healthz "" no
[ "$CODE" = 503 ] && grep -q "externally limited: GPU 0" <<<"$BODY" || fail "/healthz: $CODE $BODY"
req GET /v1/gpus "" no
[ "$(jq_py '(d["gpus"][0]["limits"]["externally_limited"], d["gpus"][0]["prior_w"])')" = "(True, 600.0)" ] || fail "/v1/gpus: $BODY"
nvml_ctl ""
req PUT /v1/gpus/0/limit '{"watts":250,"expires_s":600}'; expect 200 "cap the externally limited GPU"
[ "$(jq_py 'd["prior_w"]')" = 600.0 ] || fail "300 W was taken as the prior: $BODY"
req DELETE /v1/gpus/0/limit; expect 200 "release"
[ "$(dev_limit 0)" = 600000 ] || fail "the recorded prior did not come back: $(dev_limit 0)"
wait_until 5 healthy || fail "not healthy once the prior is back: $BODY"
pfid_stop TERM
ok "below the recorded prior without a record: restored, or externally limited and never the prior"

# --- issue 30 item 8: a store row beyond the one-week maximum is clamped ---
rm -rf "$STATE"
NOW=$(date +%s)
sqlite3 "$DB" "INSERT INTO caps VALUES(1, 300, $NOW, $NOW + 864000, 700)"
pfid_start "$WORK/clamp.log" "${NV[@]}"
[ "$(dev_limit 1)" = 300000 ] || fail "the recorded cap was not re-applied"
req GET /v1/gpus "" no
LEFT=$(jq_py "round(d['gpus'][1]['cap']['expires_at'] - $NOW)")
[ "$LEFT" -le 604810 ] && [ "$LEFT" -ge 604000 ] || fail "a 10-day record expires in $LEFT s, not clamped to a week"
grep -q "beyond the 604800 s maximum; clamped" "$WORK/clamp.log" || fail "clamp not logged"
pfid_stop TERM
ok "a recorded 10-day cap is clamped to the one-week maximum ($LEFT s)"
echo PASS
