#!/usr/bin/env bash
# One writer per store and per GPU (docs/pfid.md, "Cap safety"): a second pfid on
# the same store, on the same GPUs through another store (and another
# --lock-dir and --state-dir: the lock is per GPU UUID), or on a taken port
# exits 1 with a clear message and changes nothing: the first one's caps stay
# on the device, its cap records stay in the store as they were.
. "$(dirname "$0")/pfid_lib.sh"

fake_nvml 2
DB=$WORK/pfid.db
LOCKS=$WORK/locks
NV=(--backend nvml --lock-dir "$LOCKS" --state-dir "$WORK/state" --interval 0.2)
caps_rows() { sqlite3 "$DB" 'SELECT gpu, watts, set_at, expires_at FROM caps ORDER BY gpu'; }

pfid_start "$WORK/first.log" "${NV[@]}" --db "$DB"
FIRST=$PFID_PID
FIRST_PORT=$PORT
req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; expect 200 "first pfid caps GPU 0"
BEFORE=$(caps_rows)
[ -n "$BEFORE" ] || fail "no cap record"

# second LOG ARGS...: runs a second pfid that must refuse to start; sets OUT.
second() {
    local log=$1
    shift
    set +e
    timeout 10 "$PFID_BIN" --token-file "$TOKEN_FILE" "$@" 2>"$log"
    local rc=$?
    set -e
    [ $rc = 1 ] || fail "second pfid ($*): exit $rc, expected 1: $(cat "$log")"
    OUT=$(cat "$log")
}
intact() {
    [ "$(dev_limit 0)" = 300000 ] || fail "$1: GPU 0 is at $(dev_limit 0) mW, the first pfid's cap is gone"
    [ "$(caps_rows)" = "$BEFORE" ] || fail "$1: cap records changed: $(caps_rows) (was $BEFORE)"
    PORT=$FIRST_PORT
    req GET /v1/gpus "" no; expect 200 "$1: first pfid still answers"
    [ "$(jq_py 'd["gpus"][0]["cap"]["watts"]')" = 300.0 ] || fail "$1: first pfid lost its cap: $BODY"
    kill -0 "$FIRST" || fail "$1: first pfid died"
}

second "$WORK/same-store.log" "${NV[@]}" --db "$DB" --listen 127.0.0.1:0
grep -q "in use by another pfid" <<<"$OUT" || fail "same store: message: $OUT"
grep -q "nothing was changed" <<<"$OUT" || fail "same store: message: $OUT"
intact "same store"
ok "a second pfid on the same store exits 1: $(head -n1 <<<"$OUT")"

ln -s "$DB" "$WORK/alias.db"
second "$WORK/alias.log" "${NV[@]}" --db "$WORK/alias.db" --listen 127.0.0.1:0
grep -q "in use by another pfid" <<<"$OUT" || fail "symlinked store: message: $OUT"
intact "symlinked store"
ok "the same store through a symlink is the same lock"

second "$WORK/same-gpus.log" "${NV[@]}" --db "$WORK/other.db" --listen 127.0.0.1:0
grep -q "GPU 0 (GPU-fa6e.*) is managed by another pfid (pid $FIRST)" <<<"$OUT" || fail "same GPUs: message: $OUT"
intact "same GPUs, another store"
[ "$(sqlite3 "$WORK/other.db" 'SELECT count(*) FROM sqlite_master')" = 0 ] || fail "the refused pfid created tables"
ok "a second pfid on the same GPUs through another store exits 1, naming the holder"

# Another store and another lock directory: the GPU's lock depends on no
# flag (issue 27 item 5). It is refused before its (default) state directory
# is touched.
second "$WORK/all-other.log" --backend nvml --interval 0.2 --db "$WORK/other2.db" \
    --lock-dir "$WORK/locks2" --listen 127.0.0.1:0
grep -q "GPU 0 (GPU-fa6e[-0-9a-f]*) is managed by another pfid (pid $FIRST)" <<<"$OUT" || fail "other flags: message: $OUT"
intact "another --db and --lock-dir"
ok "a second pfid with another store and lock directory exits 1, naming the GPU's UUID and the holder's pid"

second "$WORK/port.log" "${NV[@]}" --db "$DB" --listen "127.0.0.1:$FIRST_PORT"
grep -q "cannot listen on 127.0.0.1:$FIRST_PORT" <<<"$OUT" || fail "port taken: message: $OUT"
intact "port taken"
ok "a pfid whose port is taken exits 1 before touching anything"

# Read-only pfids never change a GPU: they need the store's lock, not the GPUs'.
pfid_start "$WORK/ro.log" "${NV[@]}" --db "$WORK/ro.db" --read-only
RO=$PFID_PID
req GET /v1/gpus "" no; expect 200 "read-only pfid beside the first"
kill -TERM "$RO"; wait "$RO" || fail "read-only pfid exit status $?"
intact "read-only neighbour"
ok "a --read-only pfid on the same GPUs may run beside the writer"

PFID_PID=$FIRST
pfid_stop TERM
[ "$RC" = 0 ] || fail "first pfid exit $RC"
[ "$(dev_limit 0)" = 700000 ] || fail "the first pfid did not restore at its end"
pfid_start "$WORK/after.log" "${NV[@]}" --db "$DB"
ok "the lock goes with its holder: a new pfid starts on the store"
pfid_stop TERM
echo PASS
