#!/usr/bin/env bash
# pfi sweep on the NVML path against the fake libnvidia-ml.so.1, whose
# limits persist across processes (FAKE_NVML_STATE) as a real driver's do:
# a full sweep gives the model's PFI within its CI; SIGINT mid-sweep puts the
# limits back and --resume completes the sweep; after a SIGKILL the limit
# stays set until the next start restores it; bad input and a GPU held by
# another program change no limit. (The resumed sweeps check the PFI: it is
# the model's within the CI.)
. "$(dirname "$0")/sweep_lib.sh"
: "${PFI_FAKE_NVML_DIR:?PFI_FAKE_NVML_DIR not set (fake-nvml not built)}"
export PFI_NVML_LIB=$PFI_FAKE_NVML_DIR/libnvidia-ml.so.1
export FAKE_NVML_GPUS=2
export FAKE_NVML_JOB=0.8,0.9,0.4,0.6,16000
export FAKE_NVML_STATE=$WORK/nvml-state
NV=(--backend nvml)

# The device's limit of GPU g in W as the fake driver holds it (700 when
# never set).
dev_limit() { awk -v g="$1" '$1 == g { v = $2 } END { print (v == "" ? 700 : v / 1000) }' "$FAKE_NVML_STATE" 2>/dev/null || echo 700; }
limits_are() { [ "$(dev_limit 0)" = "$1" ] && [ "$(dev_limit 1)" = "$1" ]; }

# A limit an administrator set (650 W, written as the driver keeps it) is
# what comes back, not the default.
printf '0 650000\n1 650000\n' >"$FAKE_NVML_STATE"
"$PFI_BIN" sweep --caps 400,700 --gpus 0-1 --duration 1 --interval 0.5 --throughput-timeout 2 --cooldown 0 \
    --release-timeout 0 --lock-dir "$WORK/locks" "${NV[@]}" --out "$WORK/prior" -- "${FAKE[@]}" >/dev/null 2>"$WORK/prior.err" || true
grep -q "GPU 0 restored to 650 W" "$WORK/prior.err" || fail "no restore to 650 W: $(cat "$WORK/prior.err")"
limits_are 650 || fail "prior limit not restored: $(dev_limit 0), $(dev_limit 1)"
printf '0 700000\n1 700000\n' >"$FAKE_NVML_STATE"
ok "the limit in force before the sweep (650 W) is what is restored"

# SIGINT during the second cap: limits back, state inactive, exit 130.
OUT=$WORK/int
"$PFI_BIN" sweep "${FAST[@]}" "${NV[@]}" --out "$OUT" -- "${FAKE[@]}" >"$WORK/int.out" 2>"$WORK/int.err" &
SW=$!
PIDS+=("$SW")
wait_until 10 pgrep -P "$SW" >/dev/null || fail "no training command"
wait_until 15 grep -q "cap 550 W (2/3)" "$WORK/int.err" || fail "second cap never started: $(cat "$WORK/int.err")"
[ "$(dev_limit 0)" = 550 ] || fail "GPU 0 not at 550 W during the run: $(dev_limit 0)"
CHILD=$(pgrep -P "$SW" | head -n1)
kill -INT "$SW"
set +e; wait "$SW"; rc=$?; set -e
[ "$rc" = 130 ] || fail "interrupted sweep exit $rc: $(cat "$WORK/int.err")"
limits_are 700 || fail "limits after SIGINT: $(dev_limit 0), $(dev_limit 1)"
state_inactive "$OUT"
kill -0 "$CHILD" 2>/dev/null && fail "the training command survived the interrupt"
ok "SIGINT: limits restored, command stopped"
"$PFI_BIN" sweep "${FAST[@]}" "${NV[@]}" --out "$OUT" --resume --json -- "${FAKE[@]}" >"$WORK/res.json" 2>"$WORK/res.err" \
    || fail "resume: $(cat "$WORK/res.err")"
grep -q "cap 400 W measured earlier, kept" "$WORK/res.err" || fail "resume re-ran cap 400: $(cat "$WORK/res.err")"
check_pfi "$WORK/res.json"
limits_are 700 || fail "limits after resume"
ok "--resume completes the sweep"

# SIGKILL during a run: the limit stays (nothing can run at a SIGKILL) until
# the next start in the same folder restores it first.
OUT=$WORK/crash
"$PFI_BIN" sweep "${FAST[@]}" "${NV[@]}" --out "$OUT" -- "${FAKE[@]}" >/dev/null 2>"$WORK/crash.err" &
SW=$!
PIDS+=("$SW")
wait_until 15 grep -q "cap 400 W (1/3)" "$WORK/crash.err" || fail "first cap never started"
CHILD=$(pgrep -P "$SW" | head -n1)
kill -KILL "$SW"
set +e; wait "$SW"; set -e
# the crashed sweep's command runs on in its own process group: stop it by its id
[ -n "$CHILD" ] && kill -TERM -- "-$CHILD" 2>/dev/null || true
[ "$(dev_limit 0)" = 400 ] || fail "expected the crashed sweep's 400 W: $(dev_limit 0)"
"$PFI_BIN" sweep "${FAST[@]}" "${NV[@]}" --out "$OUT" --dry-run -- "${FAKE[@]}" >/dev/null 2>&1
[ "$(dev_limit 0)" = 400 ] || fail "--dry-run changed a limit"
"$PFI_BIN" sweep "${FAST[@]}" "${NV[@]}" --out "$OUT" --resume --json -- "${FAKE[@]}" >"$WORK/rec.json" 2>"$WORK/rec.err" \
    || fail "recovery run: $(cat "$WORK/rec.err")"
grep -q "an earlier sweep did not finish; restoring" "$WORK/rec.err" || fail "no recovery: $(cat "$WORK/rec.err")"
grep -q "GPU 1 restored to 700 W" "$WORK/rec.err" || fail "no restore line"
limits_are 700 || fail "limits after recovery"
check_pfi "$WORK/rec.json"
ok "crash: the next start restores the limits, then sweeps"

# Bad input on the NVML path leaves every limit as it was.
set +e
"$PFI_BIN" sweep "${FAST[@]}" "${NV[@]}" --out "$WORK/b2" -- "${FAKE[@]}" --exit-after 0.3 2>"$WORK/b2.err"; r2=$?
"$PFI_BIN" sweep "${FAST[@]}" "${NV[@]}" --out "$WORK/b3" -- "${FAKE[@]}" --silent 2>"$WORK/b3.err"; r3=$?
set -e
[ "$r2" = 1 ] && grep -q "exited with status 3" "$WORK/b2.err" || fail "exit at once: $r2 $(cat "$WORK/b2.err")"
[ "$r3" = 1 ] && grep -q "no throughput line" "$WORK/b3.err" || fail "no throughput: $r3 $(cat "$WORK/b3.err")"
limits_are 700 || fail "a refused sweep left a limit: $(dev_limit 0), $(dev_limit 1)"
ok "bad input: refused, no limit left behind"

# A GPU whose lock another program (a pfid) holds is refused before any
# limit is touched.
mkdir -p "$WORK/locks"
LOCK=$WORK/locks/gpu-GPU-fa6e0000-0000-4000-8000-000000000001.lock
python3 -c 'import fcntl, sys, time
f = open(sys.argv[1], "w"); fcntl.flock(f, fcntl.LOCK_EX); f.write("4242\n"); f.flush()
open(sys.argv[1] + ".held", "w").close(); time.sleep(30)' "$LOCK" &
PIDS+=("$!")
wait_until 5 test -e "$LOCK.held" || fail "the lock holder did not start"
set +e
"$PFI_BIN" sweep "${FAST[@]}" "${NV[@]}" --out "$WORK/b4" -- "${FAKE[@]}" 2>"$WORK/b4.err"; r4=$?
set -e
[ "$r4" = 1 ] && grep -q "GPU 1 (GPU-fa6e0000-0000-4000-8000-000000000001) is managed by another program (pid 4242)" "$WORK/b4.err" \
    || fail "lock: $r4 $(cat "$WORK/b4.err")"
limits_are 700 || fail "a locked GPU's sweep touched a limit"
ok "a GPU held by another program is refused"
