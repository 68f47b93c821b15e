#!/usr/bin/env bash
# End to end: `pfi fit --out` fits the DRAM-copy predictor on the embedded
# dataset, pfid loads it and estimates the PFI of two simulated jobs live. The
# estimate must be the model's own formula applied to the job's features, and
# the memory-bound job (more DRAM copy) must come out more flexible, as the
# paper finds (Sec. 5: the DRAM copy product rises with PFI). pfid's live
# features are checked against what the jobs file says the jobs are: each
# job's parameters through the GPU model at the uncapped limit (`pfi model`,
# i.e. pfi_gpumodel_eval at the 700 W TDP), not against pfid's own output,
# so a feature read from the wrong field (the memory-copy utilisation taken
# from the GPU utilisation, say) fails here.
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
req POST /v1/jobs '{"id":"memory","gpus":[1],"arch":"moe","task":"ft","class":"moe-ft.a"}'; expect 201 "register memory"
req POST /v1/jobs '{"id":"odd","gpus":[1],"class":"a b"}'; expect 400 "a class with a space"
req GET /v1/jobs/memory; expect 200 "memory's registration"
[ "$(jq_py 'd["class"]')" = moe-ft.a ] || fail "class not kept: $BODY"
req GET /v1/jobs/compute
[ "$(jq_py 'd["class"]')" = None ] || fail "a class where none was given: $BODY"
ok "the registration's class is kept and listed"
both() {
    req GET /v1/jobs "" no
    [ "$(jq_py 'all(j["pfi_estimate"] is not None for j in d["jobs"])')" = True ]
}
wait_until 15 both || fail "no estimates: $BODY"
for j in compute memory; do
    spec=$(awk -F, -v j=$j '$2 == j {printf "compute=%s,sm=%s,dram=%s,tensor=%s,tput=%s", $3, $4, $5, $6, $7}' "$WORK/jobs.csv")
    "$PFI_BIN" model --job "$spec" --json >"$WORK/model-$j.json" || fail "pfi model --job $spec"
done
python3 - "$BODY" "$WORK" <<'PY' || fail "live features against the GPU model"
import json, sys
jobs = {j["id"]: j for j in json.loads(sys.argv[1])["jobs"]}
for name, j in jobs.items():
    pt = json.load(open("%s/model-%s.json" % (sys.argv[2], name)))["points"][0]
    assert pt["cap_w"] == 700.0, pt
    want = {
        "sm_active": pt["sm_active"],
        "tensor_active": pt["tensor_active"],
        "dram_active": pt["dram_active"],
        "mem_copy_util": pt["mem_copy_util_pct"],
        "gpu_util": pt["gpu_util_pct"],
        "sm_clock": pt["sm_clock_mhz"],
        "dram_copy_product": pt["dram_active"] * pt["mem_copy_util_pct"],
    }
    f = j["features"]
    for k, v in want.items():
        assert k in f, (name, k, sorted(f))
        # pfi model prints 10 significant digits
        assert abs(f[k] - v) <= 1e-8 * max(1.0, abs(v)), (name, k, f[k], v)
    print("ok: %s: live features match the GPU model (copy %.3f%%, util %.3f%%)"
          % (name, f["mem_copy_util"], f["gpu_util"]))
PY
python3 - "$BODY" "$WORK/model.json" <<'PY' || fail "estimates"
import json, sys
jobs = {j["id"]: j for j in json.loads(sys.argv[1])["jobs"]}
m = json.load(open(sys.argv[2]))
for j in jobs.values():
    x = j["features"]["dram_copy_product"]
    want = m["intercept"] + m["coefficients"][0] * x
    assert abs(j["pfi_estimate"] - want) < 1e-9, (j["id"], j["pfi_estimate"], want)
    print("ok: %s: dram_copy_product %.2f -> PFI estimate %.3f" % (j["id"], x, j["pfi_estimate"]))
    # its SD: the model's prediction SE, rmse_in sqrt(n / (n - p - 1)) sqrt(1 + 1/n)
    n, p = m["n_train"], len(m["coefficients"])
    sd = m["rmse_in"] * (n / (n - p - 1)) ** 0.5 * (1 + 1 / n) ** 0.5
    assert abs(j["pfi_sd"] - sd) < 1e-9, (j["id"], j["pfi_sd"], sd)
assert jobs["memory"]["pfi_estimate"] > jobs["compute"]["pfi_estimate"]
PY
ok "the memory-bound job is estimated more flexible"
echo PASS
