#!/usr/bin/env bash
# The store is not trusted blindly (docs/pfid.md, "Crash recovery and the store"):
# a bad jobs row is skipped and logged and its id freed, the other jobs come
# back; a stored cap expiring in 9e18 s is clamped to the week; a damaged, a
# foreign and a non-SQLite file are refused at start with a clear message
# and left byte for byte as they were.
. "$(dirname "$0")/pfid_lib.sh"

DB=$WORK/pfid.db
SIM=(--backend sim --sim-gpus 4 --interval 0.2)
sum() { sha256sum "$1" | cut -d' ' -f1; }

pfid_start "$WORK/one.log" "${SIM[@]}" --db "$DB"
req POST /v1/jobs '{"id":"a","gpus":[0]}'; expect 201 "register a"
req POST /v1/jobs '{"id":"b","gpus":[1]}'; expect 201 "register b"
req PUT /v1/gpus/2/limit '{"watts":300,"expires_s":600}'; expect 200 "cap GPU 2"
pfid_stop KILL
sqlite3 "$DB" "UPDATE jobs SET gpus='zero' WHERE id='a'; UPDATE caps SET expires_at=9e18 WHERE gpu=2;"

pfid_start "$WORK/two.log" "${SIM[@]}" --db "$DB"
grep -q "store: a jobs row for a is unusable (bad GPU list); skipped" "$WORK/two.log" || fail "bad row not logged: $(cat "$WORK/two.log")"
grep -q "job b restored from the store" "$WORK/two.log" || fail "one bad row dropped the other jobs"
req GET /v1/jobs "" no
[ "$(jq_py '[j["id"] for j in d["jobs"]]')" = "['b']" ] || fail "jobs: $BODY"
req POST /v1/jobs '{"id":"a","gpus":[0]}'; expect 201 "the bad row's id registers again"
req DELETE /v1/jobs/b; expect 200 "DELETE b"
ok "a bad jobs row: skipped, logged, its id free; the other jobs restored"
grep -q "GPU 2: the recorded cap expires in 9e+18 s, beyond the 604800 s maximum; clamped" "$WORK/two.log" || fail "expiry clamp not logged: $(cat "$WORK/two.log")"
req GET /v1/gpus "" no
python3 -c "
import json,sys,time
c=json.loads(sys.argv[1])['gpus'][2]['cap']
assert c['expires_at'] <= time.time() + 604800 and c['expires_at'] - c['set_at'] <= 604800 + 1e-6, c
" "$BODY" || fail "cap expiry not clamped: $BODY"
E=$(sqlite3 "$DB" 'SELECT expires_at - set_at FROM caps WHERE gpu=2')
python3 -c "import sys; assert float(sys.argv[1]) <= 604800 + 1e-6" "$E" || fail "clamped expiry not written back: $E"
ok "a stored expiry of 9e18 s clamped to the week, in memory and in the store"
pfid_stop TERM
[ "$RC" = 0 ] || fail "exit $RC"

# refused FILE WHAT PATTERN: pfid must exit 1 naming the cause, and the
# file must be unchanged.
refused() {
    local before after rc
    before=$(sum "$1")
    set +e
    timeout 10 "$PFID_BIN" --token-file "$TOKEN_FILE" "${SIM[@]}" --db "$1" --listen 127.0.0.1:0 2>"$WORK/refused.log"
    rc=$?
    set -e
    [ $rc = 1 ] || fail "$2: exit $rc: $(cat "$WORK/refused.log")"
    grep -q "$3" "$WORK/refused.log" || fail "$2: message: $(cat "$WORK/refused.log")"
    after=$(sum "$1")
    [ "$before" = "$after" ] || fail "$2: the file was modified"
    ok "$2 refused, untouched: $(grep -o "$3.*" "$WORK/refused.log" | head -n1 | cut -c1-100)"
}

# A page of the store overwritten (a disk or a copy gone wrong).
cp "$DB" "$WORK/damaged.db"
ROOT=$(sqlite3 "$WORK/damaged.db" "SELECT rootpage FROM sqlite_master WHERE name='jobs'")
PS=$(sqlite3 "$WORK/damaged.db" 'PRAGMA page_size')
python3 -c "
import sys
p, off, ps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(p, 'r+b') as f:
    f.seek((off - 1) * ps); f.write(bytes((i * 37 + 11) % 256 for i in range(ps)))
" "$WORK/damaged.db" "$ROOT" "$PS"
refused "$WORK/damaged.db" "a store with an overwritten page" "damaged"

sqlite3 "$WORK/foreign.db" "CREATE TABLE notes(x); INSERT INTO notes VALUES('keep me');"
refused "$WORK/foreign.db" "another application's SQLite file" "not a pfid database"
sqlite3 "$WORK/other-app.db" "PRAGMA application_id=1234; CREATE TABLE t(x);"
refused "$WORK/other-app.db" "a file with another application_id" "not a pfid database"
printf 'this is not a database, it is %s\n' "$(seq 1 200 | tr '\n' ' ')" >"$WORK/text.db"
refused "$WORK/text.db" "a text file" "left untouched"
echo PASS
