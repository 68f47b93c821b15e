#!/usr/bin/env bash
# pfi sweep end to end on the sim backend: the PFI it reports is the GPU
# model's for the job within its CI, its files are what pfi index and pfi
# trace read; --dry-run's plan; bad input refused before anything runs.
. "$(dirname "$0")/sweep_lib.sh"
sim_jobs "$WORK/jobs.csv"
SIM=(--backend sim --backend-opts "gpus=2,jobs=$WORK/jobs.csv")
OUT=$WORK/sweep

"$PFI_BIN" sweep "${FAST[@]}" "${SIM[@]}" --out "$OUT" --json -- "${FAKE[@]}" >"$WORK/sweep.json" 2>"$WORK/sweep.err" \
    || fail "sweep: $(cat "$WORK/sweep.err")"
check_pfi "$WORK/sweep.json"
state_inactive "$OUT"
grep -q "GPU 1 restored to 700 W" "$WORK/sweep.err" || fail "no restore line: $(cat "$WORK/sweep.err")"
ok "sim sweep: PFI is the model's within the CI"

# sweeps.csv is pfi index's input, with the same PFI; telemetry.csv has the
# uncapped run's telemetry (the model's 695.1 W per GPU at 700 W); the traces
# are pfi trace's.
"$PFI_BIN" index --json "$OUT/sweeps.csv" >"$WORK/index.json" || fail "pfi index refused sweeps.csv"
python3 - "$WORK/index.json" "$WORK/sweep.json" "$OUT/telemetry.csv" <<'PY' || fail "outputs"
import csv, json, sys
i, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
# sweeps.csv holds power and throughput to 10 significant digits (%.10g):
# the PFI pfi index computes from it is the sweep's to about 1e-9 (1.5e-9 seen)
assert abs(i["groups"][0]["pfi"] - s["pfi"]) < 1e-7, (i, s["pfi"])
t = list(csv.DictReader(open(sys.argv[3])))
assert len(t) == 1 and abs(float(t[0]["DCGM_FI_DEV_POWER_USAGE"]) - 695.1) < 0.05, t
PY
"$PFI_BIN" trace --phase-hold 1 "$OUT/trace-700.csv" >"$WORK/trace.csv" 2>/dev/null || fail "pfi trace on trace-700.csv"
grep -q '^trace-700,.*,2,,700,1390.2,' "$WORK/trace.csv" || fail "trace-700: $(cat "$WORK/trace.csv")"
grep -q "'tokens_per_second'" "$OUT/run-400.log" || fail "run log"
ok "outputs read by pfi index and pfi trace"

# --throughput-port: the reports come over HTTP as the contrib callback
# sends them (COMMAND's PFID_URL points at the sweep), not from the log.
"$PFI_BIN" sweep "${FAST[@]}" "${SIM[@]}" --throughput-port 0 --out "$WORK/port" --json \
    -- "${FAKE[@]}" --report >"$WORK/port.json" 2>"$WORK/port.err" || fail "port sweep: $(cat "$WORK/port.err")"
check_pfi "$WORK/port.json"
grep -q "tokens_per_second" "$WORK/port/run-400.log" && fail "the port run logged throughput"
bad_port=$("$PFI_BIN" sweep "${FAST[@]}" "${SIM[@]}" --throughput-port 0 --throughput-regex hf --out "$WORK/pp" -- true 2>&1 || true)
grep -q "exclude each other" <<<"$bad_port" || fail "port + regex: $bad_port"
ok "--throughput-port: the callback's reports"

# --dry-run: the plan with its total, nothing run, no state written.
"$PFI_BIN" sweep --caps 200,300,400 --gpus 0-1 --duration 30m --cooldown 60s "${SIM[@]}" \
    --out "$WORK/dry" --dry-run -- "${FAKE[@]}" >"$WORK/dry.txt" || fail "dry run"
grep -q "^total: 1:32:00 (3 runs" "$WORK/dry.txt" || fail "dry-run total: $(cat "$WORK/dry.txt")"
grep -q "GPU 1: limit in force 700 W" "$WORK/dry.txt" || fail "dry-run limits: $(cat "$WORK/dry.txt")"
[ -e "$WORK/dry" ] && fail "--dry-run created its folder"
ok "--dry-run"

# Bad input: a clear error, nothing measured.
bad() { # WANT_RC PATTERN ARGS...
    local want=$1 pat=$2
    shift 2
    set +e
    "$PFI_BIN" sweep "$@" >"$WORK/bad.out" 2>"$WORK/bad.err"
    local rc=$?
    set -e
    [ "$rc" = "$want" ] || fail "rc $rc, expected $want for $*: $(cat "$WORK/bad.err")"
    grep -q -- "$pat" "$WORK/bad.err" || fail "no '$pat' in: $(cat "$WORK/bad.err")"
    ok "refused: $pat"
}
B=(--duration 2.5s --cooldown 0 --interval 0.5 --phase-hold 1 --release-timeout 0 --throughput-timeout 1 "${SIM[@]}")
bad 1 "GPU 2 does not exist (2 GPUs: 0-1)" --caps 400,700 --gpus 0-2 "${B[@]}" --out "$WORK/b1" -- "${FAKE[@]}"
bad 2 "GPU 1 is listed twice" --caps 400,700 --gpus 0-1,1 "${B[@]}" --out "$WORK/b2" -- "${FAKE[@]}"
bad 1 "cap 100 W is outside GPU 0's limit constraints \[200, 700\] W" --caps 100,700 --gpus 0-1 "${B[@]}" --out "$WORK/b3" -- "${FAKE[@]}"
bad 1 "command 'no-such-trainer' not found" --caps 400,700 --gpus 0-1 "${B[@]}" --out "$WORK/b4" -- no-such-trainer
bad 1 "exited with status 3" --caps 400,700 --gpus 0-1 "${B[@]}" --out "$WORK/b5" -- "${FAKE[@]}" --exit-after 0.5
[ -e "$WORK/b5/sweeps.csv" ] && fail "a sweep that stopped wrote sweeps.csv"
state_inactive "$WORK/b5"
bad 1 "no throughput line in the command's output within 1 s" --caps 400,700 --gpus 0-1 "${B[@]}" --out "$WORK/b6" -- "${FAKE[@]}" --silent
state_inactive "$WORK/b6"
bad 2 "bad --caps" --caps 400,x --gpus 0 "${B[@]}" --out "$WORK/b7" -- true
bad 2 "cap 400 W is listed twice" --caps 400,400 --gpus 0 "${B[@]}" --out "$WORK/b8" -- true
bad 1 "throughput regex" --caps 400,700 --gpus 0 --throughput-regex '(' "${B[@]}" --out "$WORK/b9" -- true
