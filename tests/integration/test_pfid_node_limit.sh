#!/usr/bin/env bash
# The node ceiling on the sim backend (issue 28 item 5): PUT /v1/node/limit
# fenced by Pfi-Owner/Pfi-Epoch like a cap; pfid holds the GPUs' summed
# power under it by itself: a job that starts uncapped on two idle GPUs
# puts the node over for one sampler tick at most (checked on every tick in
# the store), then each GPU holds an even share (2000 W over 4 GPUs: 500 W);
# a controller cap below its share makes the others' shares larger, and its
# release returns the GPU to its share, not to its prior; a lower epoch or
# another owner is a 409 naming the holder; expiry (on the cap clock) and
# DELETE put every GPU back at its prior; a restart keeps the ceiling and
# its highest epoch (--state-dir) and holds it from the first sample.
# GET /v1/node names the node (--node-name), /v1/gpus each GPU's
# node_share_w; /metrics has
# pfi_node_limit_watts and pfi_node_limit_enforcing.
. "$(dirname "$0")/pfid_lib.sh"

CLOCK=$WORK/clock
echo 0 >"$CLOCK"
export PFID_TEST_CLOCK=$CLOCK
HDR=gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,start_s
cat >"$WORK/jobs.csv" <<CSV
$HDR
0,a,0.85,0.9,0.3,0.55,16000,0
1,a,0.85,0.9,0.3,0.55,16000,0
2,b,0.85,0.9,0.3,0.55,16000,4
3,b,0.85,0.9,0.3,0.55,16000,4
CSV
sed 's/,4$/,0/' "$WORK/jobs.csv" >"$WORK/jobs-now.csv"
DB=$WORK/pfid.db
SIM=(--backend sim --sim-gpus 4 --db "$DB" --state-dir "$WORK/state" --interval 0.2 --node-name rack1-n0)
LIMIT=2000
metric() { req GET /metrics "" no; awk -v m="$1" '$1 == m { print $2 }' <<<"$BODY"; }
# limits: the GPUs' enforced limits, whole W, space-separated.
limits() { req GET /v1/gpus "" no; jq_py '" ".join("%.0f" % g["limits"]["enforced_w"] for g in d["gpus"])'; }
node_is() { req GET /v1/node "" no; [ "$(jq_py "$1")" = "$2" ]; }

T0=$(date +%s.%N)
pfid_start "$WORK/pfid.log" "${SIM[@]}" --sim-jobs "$WORK/jobs.csv"
req GET /v1/node "" no
[ "$(jq_py 'd["node"], d["limit"]')" = "rack1-n0 None" ] || fail "GET /v1/node before a limit: $BODY"
[ "$(metric pfi_node_limit_enforcing)" = 0 ] && [ -z "$(metric pfi_node_limit_watts)" ] ||
    fail "metrics before a limit: $(grep pfi_node_limit <<<"$BODY")"
ok "GET /v1/node: rack1-n0, no limit; pfi_node_limit_enforcing 0, no pfi_node_limit_watts"

reqo - - PUT /v1/node/limit '{"watts":2000}'; expect 400 "a limit without expires_s"
req PUT /v1/node/limit "{\"watts\":$LIMIT,\"expires_s\":600}" no; expect 401 "PUT /v1/node/limit without the token"
reqo ctl-a 3 PUT /v1/node/limit "{\"watts\":$LIMIT,\"expires_s\":600}"; expect 200 "ctl-a at epoch 3 sets $LIMIT W"
[ "$(jq_py 'd["limit"]["watts"], d["limit"]["owner"], d["limit"]["epoch"], d["limit"]["enforcing"]')" = "2000.0 ctl-a 3 False" ] ||
    fail "PUT's answer: $BODY"
[ "$(metric pfi_node_limit_watts)" = 2000 ] || fail "pfi_node_limit_watts: $(metric pfi_node_limit_watts)"

# --- job b starts uncapped on GPUs 2 and 3: over for one tick at most ---
wait_until 15 node_is 'd["limit"]["enforcing"]' True || fail "job b started, the ceiling never enforced: $BODY"
sleep 1
R=$(held_after "$DB" "$T0" $LIMIT) || fail "over the ceiling after the first tick over (over ticks, first, last, max after): $R"
read -r NOVER FIRST LAST MAXA <<<"$R"
[ "$NOVER" = 1 ] || fail "job b never put the node over: $R"
ok "job b started uncapped: $NOVER tick over $LIMIT W, then at most $MAXA W on every tick to $LAST"
[ "$(limits)" = "500 500 500 500" ] || fail "even shares: $(limits)"
req GET /v1/gpus "" no
[ "$(jq_py '[g["node_share_w"] for g in d["gpus"]]')" = "[500.0, 500.0, 500.0, 500.0]" ] || fail "node_share_w: $BODY"
[ "$(metric pfi_node_limit_enforcing)" = 1 ] || fail "pfi_node_limit_enforcing while held"
ok "each GPU at its even share, 500 W; pfi_node_limit_enforcing 1"

# --- fenced like a cap ---
reqo ctl-a 2 PUT /v1/node/limit '{"watts":4000,"expires_s":600}'; expect 409 "ctl-a at epoch 2 (below 3)"
[ "$(jq_py 'd["owner"], d["epoch"]')" = "ctl-a 3" ] || fail "the 409 names the holder: $BODY"
reqo ctl-b 3 PUT /v1/node/limit '{"watts":4000,"expires_s":600}'; expect 409 "ctl-b at the same epoch"
reqo ctl-b 3 DELETE /v1/node/limit; expect 409 "ctl-b's DELETE at the same epoch"
[ "$(limits)" = "500 500 500 500" ] || fail "a refused call changed the shares: $(limits)"
[ "$(metric 'pfi_cap_refused_total{reason="epoch"}')" -ge 1 ] || fail "refusals not counted"

# --- a controller cap under a share: the others take what it leaves ---
reqo ctl-a 3 PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; expect 200 "cap GPU 0 at 300 W"
wait_until 3 bash -c "[ \"\$(curl -s http://127.0.0.1:$PORT/v1/gpus | python3 -c 'import json,sys; print(\" \".join(\"%.0f\" % g[\"limits\"][\"enforced_w\"] for g in json.load(sys.stdin)[\"gpus\"]))')\" = '300 567 567 567' ]" ||
    fail "GPU 0 capped at 300 W: the others should take 567 W: $(limits)"
ok "GPU 0 capped at 300 W: the others' shares 567 W (water-filled, sum 2000 W)"
reqo ctl-a 3 DELETE /v1/gpus/0/limit; expect 200 "release GPU 0's cap"
wait_until 3 bash -c "curl -s http://127.0.0.1:$PORT/v1/gpus | python3 -c 'import json,sys; sys.exit(0 if [round(g[\"limits\"][\"enforced_w\"]) for g in json.load(sys.stdin)[\"gpus\"]] == [500] * 4 else 1)'" ||
    fail "GPU 0's cap released: back to its share: $(limits)"
ok "GPU 0's cap released: back to its 500 W share, not to its prior"

# --- a restart keeps the ceiling, and holds it from the first sample ---
pfid_stop TERM
[ "$RC" = 0 ] || fail "pfid exit $RC"
T1=$(date +%s.%N)
pfid_start "$WORK/pfid2.log" "${SIM[@]}" --sim-jobs "$WORK/jobs-now.csv"
req GET /v1/node "" no
[ "$(jq_py 'd["limit"]["watts"], d["limit"]["owner"], d["limit"]["epoch"], d["limit"]["enforcing"]')" = "2000.0 ctl-a 3 True" ] ||
    fail "after a restart: $BODY"
sleep 1
held_throughout "$DB" "$T1" $LIMIT "after the restart"
ok "restarted: the limit is back (ctl-a, epoch 3), held from the first sample (no tick over, at most $MAXA W)"
reqo ctl-a 2 PUT /v1/node/limit '{"watts":4000,"expires_s":600}'; expect 409 "epoch 2 after the restart"

# --- expiry on the cap clock puts the priors back ---
reqo ctl-a 3 PUT /v1/node/limit "{\"watts\":$LIMIT,\"expires_s\":30}"; expect 200 "a 30 s limit"
echo 31 >"$CLOCK"
wait_until 3 node_is 'd["limit"]' None || fail "the limit did not expire: $BODY"
wait_until 3 bash -c "[ \"\$(curl -s http://127.0.0.1:$PORT/v1/gpus | python3 -c 'import json,sys; print(\" \".join(\"%.0f\" % g[\"limits\"][\"enforced_w\"] for g in json.load(sys.stdin)[\"gpus\"]))')\" = '700 700 700 700' ]" ||
    fail "expired: the priors are not back: $(limits)"
grep -q "node limit of 2000 W expired" "$WORK/pfid2.log" || fail "expiry not logged"
[ "$(metric pfi_node_limit_enforcing)" = 0 ] && [ -z "$(metric pfi_node_limit_watts)" ] || fail "metrics after expiry"
req GET /v1/gpus "" no
[ "$(jq_py '[g["node_share_w"] for g in d["gpus"]]')" = "[None, None, None, None]" ] || fail "node_share_w after expiry: $BODY"
ok "expired: every GPU back at 700 W, limit null"

# --- DELETE ---
reqo ctl-a 3 PUT /v1/node/limit "{\"watts\":$LIMIT,\"expires_s\":600}"; expect 200 "set again"
wait_until 3 node_is 'd["limit"]["enforcing"]' True || fail "not enforcing again: $BODY"
reqo ctl-a 4 DELETE /v1/node/limit; expect 200 "DELETE at epoch 4"
[ "$(jq_py 'd["limit"]')" = None ] || fail "DELETE's answer: $BODY"
[ "$(limits)" = "700 700 700 700" ] || fail "after DELETE: $(limits)"
reqo ctl-a 3 PUT /v1/node/limit "{\"watts\":$LIMIT,\"expires_s\":600}"; expect 409 "epoch 3 after a DELETE at 4"
ok "DELETE: every GPU back at 700 W at once; its epoch 4 fences epoch 3"
pfid_stop TERM
[ "$RC" = 0 ] || fail "pfid exit $RC"
