# Helpers for pfi sweep's integration tests (sourced: no test_ prefix).
# The job: the GPU model's dense job, 2 GPUs; the fake training program
# prints the model's tokens/s at the cap the sweep set, 0.3% noise.
. "$(dirname "$0")/pfid_lib.sh"
: "${PFI_BIN:?PFI_BIN not set (run through ctest)}"
JOBSPEC=compute=0.8,sm=0.9,dram=0.4,tensor=0.6,tput=16000
FAKE=("$PFI_SOURCE_DIR/tests/fake-train/fake_train.py" --pfi "$PFI_BIN" --job "$JOBSPEC" --gpus 2 --noise 0.003 --every 0.05)
CAPS=400,550,700
# short runs: 2.5 s per cap, 0.5 s samples, 1 s phase hold
FAST=(--caps "$CAPS" --gpus 0-1 --duration 2.5s --cooldown 0 --interval 0.5 --phase-hold 1
      --release-timeout 0 --throughput-timeout 2 --lock-dir "$WORK/locks")

# model_pfi: the ratio-definition PFI of the model's points (computed here
# from `pfi model`, independently of pfi's index code).
model_pfi() {
    "$PFI_BIN" model --job "$JOBSPEC" --cap "$CAPS" --gpus 2 --json | python3 -c '
import json, sys
p = json.load(sys.stdin)["points"]
top = max(p, key=lambda x: x["cap_w"])
r = [(1 - x["power_total_w"] / top["power_total_w"]) / (1 - x["tput_total"] / top["tput_total"])
     for x in p if x is not top]
print("%.9f" % (sum(r) / len(r)))'
}

# check_pfi JSON: the sweep's PFI equals the model's within its 95% CI (and
# within 3%), every cap measured.
check_pfi() {
    python3 - "$1" "$(model_pfi)" <<'PY' || fail "PFI: $(cat "$1")"
import json, sys
d = json.load(open(sys.argv[1]))
want = float(sys.argv[2])
assert all(r["power_w"] is not None for r in d["runs"]) and len(d["runs"]) == 3, d["runs"]
lo, hi = d["ci95"]
assert lo <= want <= hi, ("model PFI outside the CI", want, lo, hi, d["pfi"])
assert abs(d["pfi"] - want) < 0.03 * want, (d["pfi"], want)
print("PFI %.4f, CI [%.4f, %.4f], model %.4f" % (d["pfi"], lo, hi, want))
PY
}

# state_inactive DIR: the state file says no cap is held.
state_inactive() {
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["active"] is False' "$1/sweep-state.json" \
        || fail "state still active: $(cat "$1/sweep-state.json")"
}

# sim_jobs FILE: the job on GPUs 0 and 1 as a sim-backend jobs file.
sim_jobs() {
    printf '%s\n' gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu \
        0,dense,0.8,0.9,0.4,0.6,16000 1,dense,0.8,0.9,0.4,0.6,16000 >"$1"
}
