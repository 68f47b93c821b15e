#!/usr/bin/env bash
# The node ceiling through the nvml backend on the fake libnvidia-ml.so.1
# (whose limits persist as a driver's do): a job that starts uncapped on two
# idle GPUs (FAKE_NVML_CTL "job G") puts the node over 2000 W for one
# sampler tick at most (every tick checked in the store), then the driver
# holds 500 W on each GPU, each share recorded with the prior in the GPU's
# state file; a SIGKILL leaves the shares on the cards: the next start puts
# the priors back, finds the ceiling in --state-dir and holds it from its
# first sample; a lower epoch is still refused; on expiry (the cap clock)
# every card is back at 700 W and the share records are gone.
. "$(dirname "$0")/pfid_lib.sh"

fake_nvml 4
export FAKE_NVML_JOB=0.85,0.9,0.3,0.55,16000 FAKE_NVML_JOB_GPUS=0,1
CLOCK=$WORK/clock
echo 0 >"$CLOCK"
export PFID_TEST_CLOCK=$CLOCK
DB=$WORK/pfid.db
NV=(--backend nvml --lock-dir "$WORK/locks" --state-dir "$WORK/state" --db "$DB" --interval 0.2)
LIMIT=2000
dev_limits() { local g; for g in 0 1 2 3; do printf '%s ' "$(dev_limit $g)"; done; }
node_is() { req GET /v1/node "" no; [ "$(jq_py "$1")" = "$2" ]; }

pfid_start "$WORK/pfid.log" "${NV[@]}"
reqo ctl-a 2 PUT /v1/node/limit "{\"watts\":$LIMIT,\"expires_s\":600}"; expect 200 "ctl-a at epoch 2 sets $LIMIT W"
sleep 0.6
req GET /v1/node "" no
[ "$(jq_py 'd["limit"]["enforcing"]')" = False ] || fail "two busy GPUs under the ceiling, yet enforcing: $BODY"
T0=$(date +%s.%N)
nvml_ctl "job 2" "job 3"
wait_until 10 node_is 'd["limit"]["enforcing"]' True || fail "the job started, the ceiling never enforced: $BODY"
sleep 1
R=$(held_after "$DB" "$T0" $LIMIT) || fail "over the ceiling after the first tick over (over ticks, first, last, max after): $R"
read -r NOVER FIRST LAST MAXA <<<"$R"
[ "$NOVER" = 1 ] || fail "the job never put the node over: $R"
ok "a job started uncapped on GPUs 2-3: $NOVER tick over $LIMIT W, then at most $MAXA W"
[ "$(dev_limits)" = "500000 500000 500000 500000 " ] || fail "the driver's limits: $(dev_limits)"
for f in "$WORK"/state/gpu-*.json; do
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d.get('node_w') == 500 and d['prior_w'] == 700 else 1)" "$f" ||
        fail "the share is not recorded with the prior: $(cat "$f")"
done
ok "the driver holds 500 W on each card; each share recorded with its 700 W prior"

# --- a crash leaves the shares on the cards ---
kill -KILL "$PFID_PID"
wait "$PFID_PID" 2>/dev/null || true
[ "$(dev_limits)" = "500000 500000 500000 500000 " ] || fail "after SIGKILL: $(dev_limits)"
T1=$(date +%s.%N)
pfid_start "$WORK/pfid2.log" "${NV[@]}"
grep -q "GPU 2: the node ceiling's share of 500 W was left on it by the last run; prior limit 700 W restored" "$WORK/pfid2.log" ||
    fail "the share left by the crash not undone: $(cat "$WORK/pfid2.log")"
grep -q "node limit of 2000 W recovered" "$WORK/pfid2.log" || fail "the ceiling not recovered"
sleep 1
held_throughout "$DB" "$T1" $LIMIT "after the restart"
[ "$(dev_limits)" = "500000 500000 500000 500000 " ] || fail "after the restart: $(dev_limits)"
ok "restarted after SIGKILL: shares undone, the ceiling recovered and held from the first sample (at most $MAXA W)"
reqo ctl-a 1 PUT /v1/node/limit '{"watts":4000,"expires_s":600}'; expect 409 "epoch 1 after the restart"

# --- expiry ---
reqo ctl-a 2 PUT /v1/node/limit "{\"watts\":$LIMIT,\"expires_s\":30}"; expect 200 "a 30 s limit"
echo 31 >"$CLOCK"
wait_until 3 node_is 'd["limit"]' None || fail "the limit did not expire: $BODY"
wait_until 3 bash -c "[ \"\$(for g in 0 1 2 3; do awk -v g=\$g '\$1 == g { print \$2 }' $FAKE_NVML_STATE; done | tr '\n' ' ')\" = '700000 700000 700000 700000 ' ]" ||
    fail "expired: the priors are not back: $(dev_limits)"
sleep 0.5
for f in "$WORK"/state/gpu-*.json; do
    python3 -c "import json,sys; sys.exit(0 if 'node_w' not in json.load(open(sys.argv[1])) else 1)" "$f" ||
        fail "a share record stays after expiry: $(cat "$f")"
done
ok "expired: every card back at 700 W, no share records left"
pfid_stop TERM
[ "$RC" = 0 ] || fail "pfid exit $RC"
