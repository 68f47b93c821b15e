#!/usr/bin/env bash
# The VEN against the test VTN (tests/vtn/vtn.py, which checks what it serves
# and receives against openadr3-3.1.0.yaml): OAuth2 client credentials, a
# token that runs out (401, refreshed), paged GET /events (120 events: three
# pages of 50), units, a refused event, a bad secret that never shows in the
# output.
. "$(dirname "$0")/pfid_lib.sh"
: "${PFI_SHARED_DIR:?}"
SPEC=$PFI_SHARED_DIR/data/openadr3/openadr3-3.1.0.yaml
VTN=$PFI_SOURCE_DIR/tests/vtn/vtn.py

SECRET=vtn-secret-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$SECRET" >"$WORK/secret"
chmod 600 "$WORK/secret"

# 118 price events, one capacity limit in KW (two intervals), one in KWH (refused).
python3 - "$WORK/events.json" <<'PY'
import json, sys
meta = {"createdDateTime": "2025-01-01T00:00:00Z", "modificationDateTime": "2025-01-01T00:00:00Z",
        "objectType": "EVENT", "programID": "prog-1"}
ev = []
for i in range(118):
    ev.append(dict(meta, id="price-%d" % i, intervalPeriod={"start": "2025-01-01T00:00:00Z", "duration": "PT1H"},
                   payloadDescriptors=[{"objectType": "EVENT_PAYLOAD_DESCRIPTOR", "payloadType": "PRICE", "units": "KWH", "currency": "USD"}],
                   intervals=[{"id": 0, "payloads": [{"type": "PRICE", "values": [0.1]}]}]))
def limit(id, units):
    return dict(meta, id=id, priority=1, intervalPeriod={"start": "2030-01-01T00:00:00Z", "duration": "PT30M"},
                payloadDescriptors=[{"objectType": "EVENT_PAYLOAD_DESCRIPTOR", "payloadType": "IMPORT_CAPACITY_LIMIT", "units": units}],
                reportDescriptors=[{"payloadType": "READING", "readingType": "DIRECT_READ", "units": "KW"}],
                intervals=[{"id": 0, "payloads": [{"type": "IMPORT_CAPACITY_LIMIT", "values": [70]}]},
                           {"id": 1, "payloads": [{"type": "IMPORT_CAPACITY_LIMIT", "values": [60]}]}])
ev.insert(60, limit("cap-kw", "KW"))
ev.insert(90, limit("cap-kwh", "KWH"))
json.dump(ev, open(sys.argv[1], "w"))
PY

python3 "$VTN" --spec "$SPEC" --events "$WORK/events.json" --reports "$WORK/reports.jsonl" \
    --log "$WORK/vtn.log" --port-file "$WORK/vtn.port" --client-secret "$SECRET" \
    --token-uses 2 2>"$WORK/vtn.err" &
PIDS+=($!)
wait_until 20 test -s "$WORK/vtn.port" || { cat "$WORK/vtn.err" >&2; fail "the VTN did not start"; }
VURL=http://127.0.0.1:$(cat "$WORK/vtn.port")
ARGS=(--vtn "$VURL" --program dc-flex --vtn-client-id ven-1 --vtn-client-secret-file "$WORK/secret")

"$PFI_BIN" control events "${ARGS[@]}" --json >"$WORK/ev.json" 2>"$WORK/ev.err" || { cat "$WORK/ev.err" >&2; fail "events"; }
python3 - "$WORK/ev.json" <<'PY' || fail "events output"
import json, sys
d = json.load(open(sys.argv[1]))["events"]
assert len(d) == 120, len(d)
kw = [e for e in d if e["id"] == "cap-kw"][0]
assert kw["status"] == "ok" and kw["report_asked"], kw
lim = kw["limits"]
assert [l["limit_w"] for l in lim] == [70000, 60000], lim
assert lim[0]["start"] == 1893456000 and lim[1]["start"] == 1893456000 + 1800, lim
assert lim[0]["priority"] == 1
kwh = [e for e in d if e["id"] == "cap-kwh"][0]
assert kwh["status"] == "refused" and "'KWH'" in kwh["error"], kwh
PY
ok "120 events over three pages; KW limits read with the timing rules; KWH refused"

python3 - "$WORK/vtn.log" <<'PY' || fail "VTN log"
import json, sys
log = [json.loads(l) for l in open(sys.argv[1])]
ev = [r for r in log if r["path"] == "/events"]
skips = [r["query"].get("skip") for r in ev if r["status"] == 200]
assert skips == ["0", "50", "100"], skips
assert all(r["query"].get("limit") == "50" and r["query"].get("programID") == "prog-1" for r in ev), ev
assert any(r["status"] == 401 for r in log), "the token never ran out"
assert sum(1 for r in log if r["path"] == "/auth/token" and r["status"] == 200) >= 2
assert not any(r["status"] in (400, 500) for r in log), [r for r in log if r["status"] in (400, 500)]
PY
ok "paging skip=0,50,100 limit=50; 401 refreshed the token; every body and event valid"

# A wrong secret: a clear error, exit 1, and the secret never printed.
printf 'wrong-secret-%s\n' "$SECRET" >"$WORK/bad"
chmod 600 "$WORK/bad"
set +e
"$PFI_BIN" control events --vtn "$VURL" --program dc-flex --vtn-client-id ven-1 \
    --vtn-client-secret-file "$WORK/bad" >"$WORK/bad.out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "a refused secret exits $rc"
grep -q "401" "$WORK/bad.out" || fail "no clear message: $(cat "$WORK/bad.out")"
if grep -q "$SECRET" "$WORK/bad.out" "$WORK/ev.err"; then fail "the secret was printed"; fi
ok "a refused secret: exit 1, said, not printed"

chmod 644 "$WORK/secret"
set +e
"$PFI_BIN" control events "${ARGS[@]}" >/dev/null 2>"$WORK/perm.err"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "group or others" "$WORK/perm.err" || fail "a readable secret file was used"
ok "a group-readable secret file refused"
