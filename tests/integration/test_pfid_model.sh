#!/usr/bin/env bash
# End to end: `pfi fit --out` fits the DRAM-copy predictor on the embedded
# dataset, pfid loads it and estimates the PFI of two simulated jobs live. The
# estimate must be the model's own formula applied to the job's features, and
# the memory-bound job (more DRAM copy) must come out more flexible, as the
# paper finds (Sec. 5: the DRAM copy product rises with PFI).
. "$(dirname "$0")/pfid_lib.sh"
: "${PFI_BIN:?}" "${PFI_SOURCE_DIR:?}"
D=$PFI_SOURCE_DIR/data/paper-h200
"$PFI_BIN" fit --features dram_copy_product --holdout "$D/heldout-sweeps.csv" \
    --out "$WORK/model.json" "$D/sweeps.csv" "$D/telemetry.csv" >/dev/null || fail "pfi fit"
cat >"$WORK/jobs.csv" <<'EOF2'
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu
0,compute,0.85,0.9,0.25,0.6,16000
1,memory,0.3,0.5,0.7,0.05,6000
EOF2
pfid_start "$WORK/pfid.log" --backend sim --sim-gpus 2 --sim-jobs "$WORK/jobs.csv" \
    --db "$WORK/pfid.db" --interval 0.2 --phase-hold 1 --model "$WORK/model.json"
req POST /v1/jobs '{"id":"compute","gpus":[0],"arch":"dense","task":"pt"}'; expect 201 "register compute"
req POST /v1/jobs '{"id":"memory","gpus":[1],"arch":"moe","task":"ft"}'; expect 201 "register memory"
both() {
    req GET /v1/jobs "" no
    [ "$(jq_py 'all(j["pfi_estimate"] is not None for j in d["jobs"])')" = True ]
}
wait_until 15 both || fail "no estimates: $BODY"
python3 - "$BODY" "$WORK/model.json" <<'PY' || fail "estimates"
import json, sys
jobs = {j["id"]: j for j in json.loads(sys.argv[1])["jobs"]}
m = json.load(open(sys.argv[2]))
for j in jobs.values():
    x = j["features"]["dram_copy_product"]
    want = m["intercept"] + m["coefficients"][0] * x
    assert abs(j["pfi_estimate"] - want) < 1e-9, (j["id"], j["pfi_estimate"], want)
    print("ok: %s: dram_copy_product %.2f -> PFI estimate %.3f" % (j["id"], x, j["pfi_estimate"]))
assert jobs["memory"]["pfi_estimate"] > jobs["compute"]["pfi_estimate"]
PY
ok "the memory-bound job is estimated more flexible"
echo PASS
