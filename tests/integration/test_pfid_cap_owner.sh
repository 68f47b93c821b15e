#!/usr/bin/env bash
# Whose cap it is, and how high it may be (issue 27 items 2 and 9), against
# the fake NVML: a cap above the GPU's prior limit (the site's own) is a 400
# naming it, whatever the GPU's maximum; prior_w is in /v1/gpus and
# /metrics for every GPU. A cap has an owner (Pfi-Owner) and an epoch
# (Pfi-Epoch): another owner's live cap is a 409 naming the holder unless
# the caller's epoch is higher (a takeover, logged); an epoch below the
# highest seen is a 409 (a deposed controller, fenced), also after a restart
# and after the store is lost; refusals are counted by reason and logged
# once per owner.
. "$(dirname "$0")/pfid_lib.sh"

fake_nvml 2
DB=$WORK/pfid.db
NV=(--backend nvml --lock-dir "$WORK/locks" --state-dir "$WORK/state" --db "$DB" --interval 0.2)
metric() { req GET /metrics "" no; awk -v m="$1" '$1 == m { print $2 }' <<<"$BODY"; }
CAP='{"watts":400,"expires_s":600}'

"$PFID_BIN" --help >"$WORK/help.txt"
grep -q '"Pfi-Owner: ID" and "Pfi-Epoch: E"' "$WORK/help.txt" || fail "--help does not document the headers"

# --- item 2: the prior limit is the ceiling of every cap ---
printf '0 600000\n1 700000\n' >"$FAKE_NVML_STATE"
pfid_start "$WORK/pfid.log" "${NV[@]}"
req GET /v1/gpus "" no
[ "$(jq_py '(d["gpus"][0]["prior_w"], d["gpus"][1]["prior_w"])')" = "(600.0, 700.0)" ] || fail "prior_w of uncapped GPUs: $BODY"
[ "$(metric 'pfi_gpu_prior_watts{gpu="0"}')" = 600 ] || fail "no pfi_gpu_prior_watts for GPU 0"
req PUT /v1/gpus/0/limit '{"watts":650,"expires_s":600}'; expect 400 "650 W on a GPU whose prior is 600 W"
grep -q "above GPU 0's prior limit 600 W" <<<"$BODY" || fail "the refusal does not name the prior: $BODY"
[ "$(dev_limit 0)" = 600000 ] || fail "the refused cap changed the device: $(dev_limit 0)"
req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; expect 200 "300 W"
req PUT /v1/gpus/0/limit '{"watts":605,"expires_s":600}'; expect 400 "605 W while capped (the prior stays the ceiling)"
[ "$(dev_limit 0)" = 300000 ] || fail "the refused raise changed the cap: $(dev_limit 0)"
req PUT /v1/gpus/0/limit '{"watts":600,"expires_s":600}'; expect 200 "exactly the prior"
req GET /v1/gpus "" no
[ "$(jq_py 'd["gpus"][0]["prior_w"]')" = 600.0 ] || fail "prior_w of a capped GPU: $BODY"
[ "$(metric 'pfi_cap_refused_total{reason="ceiling"}')" = 2 ] || fail "ceiling refusals not counted"
req DELETE /v1/gpus/0/limit; expect 200 "release GPU 0"
ok "a cap above the prior limit (600 W) is a 400 naming it; prior_w in /v1/gpus and /metrics"

# --- item 9: owners and epochs ---
reqo ctl-a 1 PUT /v1/gpus/1/limit "$CAP"; expect 200 "ctl-a at epoch 1 caps GPU 1"
req GET /v1/gpus "" no
[ "$(jq_py '(d["gpus"][1]["owner"], d["gpus"][1]["epoch"], d["gpus"][1]["max_epoch"])')" = "('ctl-a', 1, 1)" ] || fail "owner in /v1/gpus: $BODY"
reqo - - PUT /v1/gpus/1/limit "$CAP"; expect 409 "anonymous at epoch 0 (below 1)"
reqo ctl-b 1 PUT /v1/gpus/1/limit '{"watts":350,"expires_s":600}'; expect 409 "ctl-b at the same epoch"
[ "$(jq_py '(d["owner"], d["epoch"])')" = "('ctl-a', 1)" ] || fail "409 body does not name the holder: $BODY"
grep -q "held by ctl-a" <<<"$(jq_py 'd["error"]')" || fail "409 error: $BODY"
[ "$(dev_limit 1)" = 400000 ] || fail "the refused cap changed the device"
reqo ctl-b 1 DELETE /v1/gpus/1/limit; expect 409 "ctl-b's DELETE of ctl-a's cap"
[ "$(dev_limit 1)" = 400000 ] || fail "the refused DELETE released the cap"
reqo ctl-a 1 PUT /v1/gpus/1/limit '{"watts":420,"expires_s":600}'; expect 200 "the holder renews"
for i in 1 2 3; do reqo ctl-b 1 PUT /v1/gpus/1/limit "$CAP"; done
[ "$(grep -c "may not change it" "$WORK/pfid.log")" = 1 ] || fail "refusals of ctl-b logged $(grep -c "may not change it" "$WORK/pfid.log") times, expected once"
reqo ctl-b 2 PUT /v1/gpus/1/limit '{"watts":350,"expires_s":600}'; expect 200 "ctl-b at epoch 2 takes over"
grep -q "ctl-b at epoch 2 takes over the cap held by ctl-a at epoch 1" "$WORK/pfid.log" || fail "takeover not logged"
[ "$(dev_limit 1)" = 350000 ] || fail "takeover cap not applied"
reqo ctl-a 1 PUT /v1/gpus/1/limit "$CAP"; expect 409 "deposed ctl-a at epoch 1"
[ "$(jq_py '(d["owner"], d["epoch"])')" = "('ctl-b', 2)" ] || fail "fenced 409 body: $BODY"
reqo ctl-a 1 DELETE /v1/gpus/1/limit; expect 409 "deposed ctl-a's DELETE"
reqo 'bad owner' 3 PUT /v1/gpus/1/limit "$CAP"; expect 400 "an owner with a space"
reqo ctl-c -1 PUT /v1/gpus/1/limit "$CAP"; expect 400 "a negative epoch"
reqo ctl-c 2x PUT /v1/gpus/1/limit "$CAP"; expect 400 "a malformed epoch"
req GET /metrics "" no
grep -q '^pfi_gpu_cap_epoch{gpu="1"} 2$' <<<"$BODY" || fail "pfi_gpu_cap_epoch: $(grep cap_epoch <<<"$BODY")"
grep -q '^pfi_gpu_cap_owner_info{gpu="1",owner="ctl-b"} 1$' <<<"$BODY" || fail "pfi_gpu_cap_owner_info: $(grep owner_info <<<"$BODY")"
[ "$(metric 'pfi_cap_refused_total{reason="owner"}')" = 5 ] || fail "owner refusals: $(grep refused <<<"$BODY")"
[ "$(metric 'pfi_cap_refused_total{reason="epoch"}')" = 3 ] || fail "epoch refusals: $(grep refused <<<"$BODY")"
ok "another owner's live cap: 409 naming it; a higher epoch takes over (logged); a lower one is fenced"

# The highest epoch outlives the process, and the store.
pfid_stop TERM
[ "$RC" = 0 ] || fail "exit $RC"
pfid_start "$WORK/restart.log" "${NV[@]}"
reqo ctl-a 1 PUT /v1/gpus/1/limit "$CAP"; expect 409 "ctl-a at epoch 1 after a restart"
pfid_stop KILL
rm -f "$DB" "$DB-wal" "$DB-shm"
pfid_start "$WORK/nostore.log" "${NV[@]}"
reqo ctl-a 1 PUT /v1/gpus/1/limit "$CAP"; expect 409 "ctl-a at epoch 1 after the store was lost"
reqo ctl-c 2 PUT /v1/gpus/1/limit "$CAP"; expect 200 "another owner at the highest epoch, no live cap"
reqo ctl-c 2 DELETE /v1/gpus/1/limit; expect 200 "its own DELETE"
[ "$(dev_limit 1)" = 700000 ] || fail "not restored: $(dev_limit 1)"
pfid_stop TERM
ok "the highest epoch survives a restart and a lost store"
echo PASS
