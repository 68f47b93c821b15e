#!/usr/bin/env bash
# pfid logs cap changes, not renewals (issue 27 item 8: one line per GPU per
# renewal, 4,712 lines in 30 min on one agent), and says where a cap returns
# to: the prior limit, not "the default limit" (--help, the systemd unit).
# Five caps of 400 W on GPU 0 (a controller renewing), then 450 W, then a
# release: three lines (the first cap, the new value, the restore).
. "$(dirname "$0")/pfid_lib.sh"
: "${PFI_SOURCE_DIR:?}"
pfid_start "$WORK/pfid.log" --backend sim --sim-gpus 2 --db "$WORK/pfid.db" --interval 0.2
for i in 1 2 3 4 5; do
    req PUT /v1/gpus/0/limit '{"watts":400,"expires_s":60}'; expect 200 "cap 400 W ($i)"
done
req PUT /v1/gpus/1/limit '{"watts":400,"expires_s":60}'; expect 200 "cap GPU 1"
req PUT /v1/gpus/0/limit '{"watts":450,"expires_s":60}'; expect 200 "cap 450 W"
req PUT /v1/gpus/0/limit '{"watts":450,"expires_s":60}'; expect 200 "renew 450 W"
req DELETE /v1/gpus/0/limit; expect 200 "release"
n=$(grep -c "GPU 0: capped at" "$WORK/pfid.log" || true)
[ "$n" = 2 ] || fail "GPU 0: $n 'capped at' lines for 2 changes and 5 renewals: $(grep 'GPU 0' "$WORK/pfid.log")"
grep -q "GPU 0: capped at 400.0 W" "$WORK/pfid.log" && grep -q "GPU 0: capped at 450.0 W" "$WORK/pfid.log" ||
    fail "a change was not logged"
grep -q "GPU 1: capped at 400.0 W" "$WORK/pfid.log" || fail "GPU 1's first cap was not logged"
grep -q "GPU 0: prior limit 700 W restored" "$WORK/pfid.log" || fail "the restore was not logged"
ok "changes logged ($n lines for GPU 0's caps), renewals silent"

for f in <("$PFID_BIN" --help) "$PFI_SOURCE_DIR/contrib/systemd/pfid.service"; do
    if grep -qi "default limit" "$f"; then fail "'the default limit' still said: $(grep -i 'default limit' "$f")"; fi
done
"$PFID_BIN" --help | tr '\n' ' ' | grep -q "restored to the prior limit" || fail "--help does not name the prior limit"
grep -q "restores every cap to the prior limit" "$PFI_SOURCE_DIR/contrib/systemd/pfid.service" ||
    fail "the unit does not name the prior limit"
ok "--help and the unit: caps return to the prior limit"
echo PASS
