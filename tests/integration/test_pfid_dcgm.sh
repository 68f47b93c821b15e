#!/usr/bin/env bash
# pfid on the dcgm backend (a dcgm-exporter page, here the hand-written
# fixture read as a file:// URL): GPUs and their readings come through, the
# exporter's awkward labels do not leak into pfid's exposition, and limit
# calls answer 501 because dcgm-exporter cannot set limits. The fixture's
# power series carry a timestamp of 2025-11-29: as written they are stale
# (null power); the copy served here has them dated now.
. "$(dirname "$0")/pfid_lib.sh"
: "${PFI_SOURCE_DIR:?}"
ORIG=$PFI_SOURCE_DIR/tests/data/dcgm-exporter-metrics.txt
FIX=$WORK/metrics.txt
sed "s/ 1764410400123\$/ $(date +%s)000/" "$ORIG" >"$FIX"
pfid_start "$WORK/pfid.log" --backend dcgm --dcgm-url "file://$FIX" --db "$WORK/pfid.db" --interval 0.5
req GET /v1/gpus "" no; expect 200 "GET /v1/gpus"
[ "$(jq_py 'len(d["gpus"])')" -ge 3 ] || fail "GPUs: $BODY"
[ "$(jq_py 'd["gpus"][0]["sample"]["power_watts"]')" = 690.517 ] || fail "GPU 0 power: $BODY"
[ "$(jq_py 'd["gpus"][1]["sample"]["power_watts"]')" = 395.25 ] || fail "GPU 1 power: $BODY"
[ "$(jq_py '0 <= d["gpus"][0]["sample_age_s"] < 30')" = True ] || fail "GPU 0 sample age: $BODY"
ok "dcgm-exporter readings: 690.517 W, 395.25 W, and the page's age"
req PUT /v1/gpus/0/limit '{"watts":400,"expires_s":60}'; expect 501 "dcgm cannot set limits"
req PUT /v1/node/limit '{"watts":400,"expires_s":60}'; expect 501 "dcgm cannot hold a node limit"
[ "$(sqlite3 "$WORK/pfid.db" 'SELECT count(*) FROM caps')" = 0 ] || fail "a cap that cannot happen was recorded"
req POST /v1/jobs '{"id":"dense-pt","gpus":[0]}'; expect 201 "jobs work on a read-only backend"
req GET /metrics "" no; expect 200 "GET /metrics"
printf '%s\n' "$BODY" | promtool check metrics || fail "promtool check metrics"
ok "promtool check metrics (dcgm)"
pfid_stop TERM
[ "$RC" = 0 ] || fail "exit status $RC"
# A real MIG page (../shared/data/dcgm-exporter, issue 512's H100) with the
# GPU's power repeated in each instance's series, as dcgm-exporter does: one
# GPU, its power once. The exporter's page then stops changing: past
# stale_after collect intervals the GPU reads as stale (503), and is
# fresh again when the page changes (dcgm.c: stale_after x collect_ms).
: "${PFI_SHARED_DIR:?}"
MIG=$WORK/mig.prom
LAB='gpu="0",UUID="GPU-58e8f5ea-13cc-013a-d88f-2bcf5ae8bc77",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="1g.10gb",GPU_I_ID='
page() {
    { cat "$PFI_SHARED_DIR/data/dcgm-exporter/issue512_h100_mig_metrics_excerpt.prom"
      for i in 7 8 9; do echo "DCGM_FI_DEV_POWER_USAGE{$LAB\"$i\"} $1"; done; } >"$MIG.tmp"
    mv "$MIG.tmp" "$MIG"
}
page 250.5
pfid_start "$WORK/mig.log" --backend dcgm --db "$WORK/mig.db" --interval 0.2 \
    --dcgm-url "url=file://$MIG,cache_ms=0,collect_ms=1000,stale_after=2"
req GET /v1/gpus "" no
[ "$(jq_py 'len(d["gpus"])')" = 1 ] || fail "MIG GPUs: $BODY"
[ "$(jq_py 'd["gpus"][0]["sample"]["power_watts"]')" = 250.5 ] || fail "MIG power: $BODY"
[ "$(jq_py 'd["gpus"][0]["name"]')" = "NVIDIA H100 80GB HBM3" ] || fail "MIG name: $BODY"
ok "MIG page: one GPU, its power 250.5 W taken once"
# The same page a collect later: older, still fresh (and in /metrics). The
# page is rewritten first, so that its age starts from now rather than from
# before pfid started: on a busy machine the start and the checks above took
# the 2 s of freshness (stale_after x collect_ms) and the GPU read stale.
page 250.75
aged() { req GET /v1/gpus "" no; [ "$(jq_py 'd["gpus"][0]["up"] and d["gpus"][0]["sample_age_s"] >= 0.4')" = True ]; }
wait_until 5 aged || fail "sample_age_s: $BODY"
req GET /metrics "" no
grep -q '^pfi_gpu_sample_age_seconds{gpu="0"} ' <<<"$BODY" || fail "no sample age metric"
printf '%s\n' "$BODY" | promtool check metrics || fail "promtool check metrics (MIG)"
stale() { req GET /healthz "" no; [ "$CODE" = 503 ] && grep -q "stale" <<<"$BODY"; }
wait_until 5 stale || fail "a frozen page not stale: $CODE $BODY"
req GET /v1/gpus "" no
[ "$(jq_py 'd["gpus"][0]["up"]')" = False ] || fail "a stale GPU up: $BODY"
page 251.25
fresh() { req GET /healthz "" no; [ "$CODE" = 200 ]; }
wait_until 5 fresh || fail "a changed page still stale: $BODY"
req GET /v1/gpus "" no
[ "$(jq_py 'd["gpus"][0]["sample"]["power_watts"]')" = 251.25 ] || fail "new page: $BODY"
pfid_stop TERM
ok "a page unchanged for 2 collect intervals (2 s): stale, 503 with the reason; fresh again when it changes"

# IPv6 loopback, where the host has it (no warning: still loopback).
if python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1",0))' 2>/dev/null; then
    "$PFID_BIN" --token-file "$TOKEN_FILE" --backend dcgm --dcgm-url "file://$FIX" \
        --db "$WORK/pfid6.db" --listen '[::1]:0' 2>"$WORK/pfid6.log" &
    PFID_PID=$!
    PIDS+=("$PFID_PID")
    wait_until 10 grep -q 'listening on http://\[::1\]:' "$WORK/pfid6.log" || fail "no IPv6 listen: $(cat "$WORK/pfid6.log")"
    P6=$(grep -o 'listening on http://\[::1\]:[0-9]*' "$WORK/pfid6.log" | sed 's/.*://')
    curl -s -g --max-time 5 "http://[::1]:$P6/healthz" | grep -q ok || fail "IPv6 healthz"
    grep -q "warning" "$WORK/pfid6.log" && fail "warning on loopback"
    pfid_stop TERM
    ok "IPv6 loopback"
fi
# As written, the fixture's power is a year old: stale, so null, never a
# reading pfid would account a cap against.
pfid_start "$WORK/pfid-old.log" --backend dcgm --dcgm-url "file://$ORIG" --db "$WORK/pfid-old.db" --interval 0.5
req GET /v1/gpus "" no; expect 200 "GET /v1/gpus (stale power)"
[ "$(jq_py '[g["sample"]["power_watts"] for g in d["gpus"]]')" = "[None, None, None]" ] ||
    fail "stale power: $BODY"
[ "$(jq_py 'd["gpus"][0]["sample"]["sm_clock_hertz"]')" = 1755000000.0 ] || fail "fresh clock: $BODY"
ok "stale power series are null"
pfid_stop TERM
echo PASS
