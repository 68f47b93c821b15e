#!/usr/bin/env bash
# Percent-escapes in a request path are refused, not decoded (issue 27 item
# 8): libmicrohttpd decoded them before routing, so "PUT /v1/gpus/0%2flimit"
# capped GPU 0 and "%00" cut a path short. pfid and pfi control both answer
# 400 for an escape (%2f, %2F, %00, %73 for a plain 's') or a raw control
# byte, and nothing changes; the plain paths still work.
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"
pfid_start "$WORK/pfid.log" --backend sim --sim-gpus 2 --db "$WORK/pfid.db" --interval 0.2
CAP='{"watts":400,"expires_s":60}'
for p in "/v1/gpus/0%2flimit" "/v1/gpus/0%2Flimit" "/v1/gpus%2f0/limit" "/v1/gpus/0/limit%00x" \
         "/v1/gpus/0/limi%74"; do
    req PUT "$p" "$CAP"; expect 400 "PUT $p"
    grep -q "percent-escapes" <<<"$BODY" || fail "no reason given: $BODY"
done
req GET "/v1/job%73" "" no; expect 400 "GET /v1/job%73"
req GET "/metrics%00" "" no; expect 400 "GET /metrics%00"
req GET /v1/gpus "" no
[ "$(jq_py 'all(g["cap"] is None for g in d["gpus"])')" = True ] || fail "an escaped path capped a GPU: $BODY"
ok "no GPU capped through an escaped path"
req PUT /v1/gpus/0/limit "$CAP"; expect 200 "the plain path caps"
req DELETE /v1/gpus/0/limit; expect 200 "and releases"
req GET "/v1/jobs?x=%2f" "" no; expect 200 "an escape in the query (not the path) is not refused"

NODES=("http://127.0.0.1:$PORT")
ctl_start "$WORK/ctl.log" --db "$WORK/ctl.db" --agents "${NODES[0]}" --period 0.5
for p in "/v1/targets/a%2fb" "/v1/targets/x%00"; do
    creq DELETE "$p"; [ "$CODE" = 400 ] || fail "controller DELETE $p: HTTP $CODE ($BODY)"
    ok "controller DELETE $p -> 400"
done
creq GET "/v1/statu%73" "" no; [ "$CODE" = 400 ] || fail "controller GET /v1/statu%73: HTTP $CODE"
ok "controller GET /v1/statu%73 -> 400"
creq GET /v1/status "" no; [ "$CODE" = 200 ] || fail "controller GET /v1/status: HTTP $CODE"
ok "controller plain path -> 200"
echo PASS
