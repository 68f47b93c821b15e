#!/usr/bin/env bash
# What real fleets do to caps (docs/pfid.md, "Cap safety"), against the fake NVML:
# a site limit below the default is what a restore puts back; a limit the
# driver reverts (a reload with persistence mode off) is re-applied and
# counted, logged once; an out-of-band limiter below the cap is reported as
# externally limited, not as a failed cap; a set the driver refuses on a GPU
# that never moved leaves no cap behind; a dcgm page without limit fields
# answers 501.
. "$(dirname "$0")/pfid_lib.sh"

: "${PFI_SHARED_DIR:?}"
fake_nvml 2
DB=$WORK/pfid.db
NV=(--backend nvml --lock-dir "$WORK/locks" --state-dir "$WORK/state" --db "$DB" --interval 0.2)
at() { [ "$(dev_limit "$1")" = "$2" ]; }
drift_is() { [ "$(metric pfi_agent_cap_drift_total)" = "$1" ]; }
metric() { req GET /metrics "" no; awk -v m="$1" '$1 == m { print $2 }' <<<"$BODY"; }

# --- item 8: the site runs GPU 0 at 600 W; that is what comes back ---
printf '0 600000\n1 700000\n' >"$FAKE_NVML_STATE"
FAKE_NVML_PERSISTENCE=0 pfid_start "$WORK/prior.log" "${NV[@]}"
grep -q "warning: persistence mode is off on GPU 0,1" "$WORK/prior.log" || fail "no persistence warning: $(cat "$WORK/prior.log")"
req GET /v1/gpus "" no
[ "$(jq_py 'd["gpus"][0]["persistence_mode"]')" = False ] || fail "persistence_mode: $BODY"
ok "persistence mode off: warned at start, shown in /v1/gpus"
req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; expect 200 "cap a 600 W site GPU at 300 W"
[ "$(jq_py 'd["prior_w"]')" = 600.0 ] || fail "prior_w: $BODY"
req PUT /v1/gpus/0/limit '{"watts":350,"expires_s":600}'; expect 200 "second cap"
[ "$(jq_py 'd["prior_w"]')" = 600.0 ] || fail "a second cap took the first as prior: $BODY"
req DELETE /v1/gpus/0/limit; expect 200 "DELETE"
[ "$(dev_limit 0)" = 600000 ] || fail "DELETE restored $(dev_limit 0) mW, the site's limit was 600000"
req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":1}'; expect 200 "cap for 1 s"
wait_until 5 at 0 600000 || fail "expiry restored $(dev_limit 0) mW"
req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":1}'; expect 200 "cap for 1 s, then SIGKILL"
pfid_stop KILL
sleep 1.1
pfid_start "$WORK/prior2.log" "${NV[@]}"
[ "$(dev_limit 0)" = 600000 ] || fail "restart restored $(dev_limit 0) mW"
req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; expect 200 "cap, then SIGTERM"
pfid_stop TERM
[ "$(dev_limit 0)" = 600000 ] || fail "SIGTERM restored $(dev_limit 0) mW"
ok "the prior limit (600 W) comes back on DELETE, expiry, restart and SIGTERM"

# --- item 7: the driver reverts a held cap ---
pfid_start "$WORK/drift.log" "${NV[@]}"
req PUT /v1/gpus/1/limit '{"watts":300,"expires_s":600}'; expect 200 "cap GPU 1"
[ "$(metric pfi_agent_cap_drift_total)" = 0 ] || fail "drift before any"
nvml_ctl "revert 1"
# The fake applies the revert at pfid's next NVML call, and pfid re-applies
# the cap at the sample after: the count says both happened.
wait_until 5 drift_is 1 || fail "drift_total $(metric pfi_agent_cap_drift_total)"
wait_until 5 at 1 300000 || fail "reverted cap not re-applied: $(dev_limit 1)"
nvml_ctl "revert 1"
wait_until 5 at 1 300000 || fail "second revert not re-applied"
wait_until 5 drift_is 2 || fail "drift_total $(metric pfi_agent_cap_drift_total), expected 2"
[ "$(grep -c "not the cap of 300 W" "$WORK/drift.log")" = 2 ] || fail "drift log lines: $(grep "not the cap" "$WORK/drift.log")"
ok "a reverted cap is re-applied within a sample, counted (2 episodes), logged once each"
nvml_ctl "revert 1" "fail nvmlDeviceSetPowerManagementLimit:1"
notheld() { req GET /healthz "" no; [ "$CODE" = 503 ] && grep -q "cap not held: GPU 1" <<<"$BODY"; }
wait_until 5 notheld || fail "a cap that cannot be re-applied not on /healthz: $CODE $BODY"
sleep 1 # five more samples: still one line for the episode
[ "$(grep -c "re-applying failed" "$WORK/drift.log")" = 1 ] || fail "log lines while failing: $(grep -c "re-applying failed" "$WORK/drift.log")"
[ "$(metric pfi_agent_cap_drift_total)" = 3 ] || fail "one episode counted more than once: $(metric pfi_agent_cap_drift_total)"
nvml_ctl ""
wait_until 5 at 1 300000 || fail "not re-applied once the driver works"
healthy() { req GET /healthz "" no; [ "$CODE" = 200 ]; }
wait_until 5 healthy || fail "not healthy again: $BODY"
ok "a re-apply the driver refuses: 503, one log line for the episode, re-applied when it works"

# --- item 9: an out-of-band limiter below the cap ---
nvml_ctl "external 1 250000"
ext() { req GET /v1/gpus "" no; [ "$(jq_py 'd["gpus"][1]["limits"]["externally_limited"]')" = True ]; }
wait_until 5 ext || fail "externally_limited not shown: $BODY"
[ "$(jq_py 'd["gpus"][1]["limits"]["enforced_w"]')" = 250.0 ] || fail "enforced_w: $BODY"
[ "$(jq_py 'd["gpus"][1]["cap"]["restore_failed"] or d["gpus"][1]["cap"]["drifting"]')" = False ] || fail "external limit taken for a failed cap: $BODY"
[ "$(jq_py 'd["gpus"][0]["limits"]["externally_limited"]')" = False ] || fail "GPU 0 externally limited?"
req GET /metrics "" no
grep -q '^pfi_gpu_externally_limited{gpu="1"} 1$' <<<"$BODY" || fail "no metric"
grep -q '^pfi_gpu_externally_limited{gpu="0"} 0$' <<<"$BODY" || fail "GPU 0 metric"
req PUT /v1/gpus/1/limit '{"watts":400,"expires_s":600}'; expect 200 "cap above the external limit is set, not a failure"
[ "$(jq_py 'd["externally_limited"]')" = True ] && [ "$(jq_py 'd["limit_w"]')" = 400.0 ] || fail "cap response: $BODY"
[ "$(metric pfi_agent_cap_drift_total)" = 3 ] || fail "external limit counted as drift"
ok "an out-of-band limit below the cap: externally_limited in JSON and /metrics, the cap holds"
nvml_ctl ""
pfid_stop TERM
[ "$RC" = 0 ] || fail "exit $RC"

# --- item 6: a set the driver refuses on a GPU that never moved ---
FAKE_NVML_FAIL=nvmlDeviceSetPowerManagementLimit pfid_start "$WORK/refused.log" "${NV[@]}"
req PUT /v1/gpus/1/limit '{"watts":450,"expires_s":600}'; expect 502 "set refused by the driver"
[ "$(sqlite3 "$DB" 'SELECT count(*) FROM caps')" = 0 ] || fail "a cap that never happened is recorded"
req GET /metrics "" no
grep -q '^pfi_gpu_cap_watts' <<<"$BODY" && fail "a cap that never happened is exported: $(grep cap_watts <<<"$BODY")"
req GET /healthz "" no; expect 200 "nothing to restore, healthy"
sleep 0.5
[ "$(metric pfi_agent_cap_restore_errors_total)" = 0 ] || fail "restore retried for a GPU that never left its limit"
pfid_stop TERM
[ "$RC" = 0 ] || fail "exit $RC"
ok "a refused set on an unmoved GPU: 502, no record, no cap exported, no retries"

# --- item 6: dcgm-exporter without the limit fields: 501 as documented ---
pfid_start "$WORK/dcgm.log" --backend dcgm --db "$WORK/dcgm.db" \
    --dcgm-url "file://$PFI_SHARED_DIR/data/dcgm-exporter/datadog_dcgm_fixture_T4_excerpt.prom"
req PUT /v1/gpus/0/limit '{"watts":60,"expires_s":60}'; expect 501 "dcgm page without limit fields"
pfid_stop TERM
echo PASS
