#!/usr/bin/env bash
# Jobs from dcgm-exporter's own pod labels (pfid --backend dcgm
# --k8s-from-dcgm), on the real MIG page of ../shared/data/dcgm-exporter
# (issue 512's H100: pods on GPU 0's instances 7 and 9, instance 8 idle).
# Without --share-gpus the second pod's job is refused (GPU busy) and said
# once; with it both pods are jobs on GPU 0; with --pods-url (a PodList file)
# a pod's group label and annotations name its job and terms; a pod that
# leaves the page ends its job.
. "$(dirname "$0")/pfid_lib.sh"
: "${PFI_SHARED_DIR:?}"
MIG=$WORK/mig.prom
NS=model-playground-stg
EMB=text-embedding-predictor-00008-deployment-57946f6c67-vdtjl
TTS=tts-predictor-00011-deployment-5554f75554-8j8pl
LAB='gpu="0",UUID="GPU-58e8f5ea-13cc-013a-d88f-2bcf5ae8bc77",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="1g.10gb",GPU_I_ID='
# page [PATTERN]: the real page (without the lines matching PATTERN) and
# the GPU's power per instance, written atomically.
page() {
    { grep -v "${1:-^\$^}" "$PFI_SHARED_DIR/data/dcgm-exporter/issue512_h100_mig_metrics_excerpt.prom"
      for i in 7 8 9; do echo "DCGM_FI_DEV_POWER_USAGE{$LAB\"$i\"} 250.5"; done; } >"$MIG.tmp"
    mv "$MIG.tmp" "$MIG"
}
ids() { curl -s "http://127.0.0.1:$PORT/v1/jobs" | python3 -c '
import json, sys
for j in json.load(sys.stdin)["jobs"]: print(j["id"], j["gpus"], j["sla_floor"])' | sort; }
page
pfid_start "$WORK/a.log" --backend dcgm --db "$WORK/a.db" --interval 0.2 \
    --dcgm-url "url=file://$MIG,cache_ms=0" --k8s-from-dcgm
[ "$(ids)" = "$NS:$EMB [0] None" ] || fail "jobs without --share-gpus: $(ids)"
sleep 1
[ "$(grep -c "k8s: job $NS:$TTS (pods $NS/$TTS) not registered: GPU 0 is already used" "$WORK/a.log")" = 1 ] ||
    fail "the refused pod not said once: $(grep k8s "$WORK/a.log")"
ok "one job per GPU by default: $NS:$EMB on GPU 0, the other pod refused and said once"
pfid_stop TERM

pfid_start "$WORK/b.log" --backend dcgm --db "$WORK/b.db" --interval 0.2 \
    --dcgm-url "file://$MIG" --k8s-from-dcgm --share-gpus --kubelet-interval 0.2
[ "$(ids)" = "$NS:$EMB [0] None
$NS:$TTS [0] None" ] || fail "jobs with --share-gpus: $(ids)"
ok "--share-gpus: both MIG tenants are jobs on GPU 0"
page "$TTS"
wait_until 3 bash -c "[ \"\$(curl -s http://127.0.0.1:$PORT/v1/jobs | grep -c tts-predictor)\" = 0 ]" ||
    fail "the pod left the page, its job stayed: $(ids)"
[ "$(ids)" = "$NS:$EMB [0] None" ] || fail "after the pod left: $(ids)"
ok "a pod gone from the page ends its job"
pfid_stop TERM

# The PodList names the job (its KServe service label) and its floor.
cat >"$WORK/pods.json" <<JSON
{"kind":"PodList","apiVersion":"v1","items":[
 {"metadata":{"name":"$EMB","namespace":"$NS","labels":{"serving.kserve.io/inferenceservice":"text-embedding"},
  "annotations":{"pfi.io/sla-floor":"0.95"}},"status":{"phase":"Running"}}]}
JSON
page
pfid_start "$WORK/c.log" --backend dcgm --db "$WORK/c.db" --interval 0.2 \
    --dcgm-url "file://$MIG" --k8s-from-dcgm --pods-url "file://$WORK/pods.json" \
    --k8s-group-labels serving.kserve.io/inferenceservice
[ "$(ids)" = "$NS:text-embedding [0] 0.95" ] || fail "jobs from the pod list: $(ids)"
ok "with the pod list: $NS:text-embedding (its label), SLA floor 0.95 (its annotation); the unlisted pod waits"
pfid_stop TERM
[ "$RC" = 0 ] || fail "exit status $RC"
