#!/usr/bin/env bash
# Two sweeps sharing one --out folder never run at once (sweep.lock): the
# second is refused before it reads the folder's state, with an error naming
# the first's PID, even on other GPUs (the sim backend takes no GPU lock, so
# only the folder lock stands between them); without it the second would
# take the first's active state for a crash and restore its GPUs, then
# overwrite its state. --dry-run is refused too and creates nothing. The
# lock dies with its holder: after a SIGKILL, whose training command lives
# on (it must not inherit the lock), the next start goes ahead.
. "$(dirname "$0")/sweep_lib.sh"
sim_jobs "$WORK/jobs.csv"
SIM=(--backend sim --backend-opts "gpus=2,jobs=$WORK/jobs.csv")
OUT=$WORK/shared
ONE=(--caps 400,700 --duration 2.5s --cooldown 0 --interval 0.5 --phase-hold 1 --release-timeout 0
     --throughput-timeout 2 --lock-dir "$WORK/locks" "${SIM[@]}" --out "$OUT")

"$PFI_BIN" sweep "${ONE[@]}" --gpus 0 --json -- "${FAKE[@]}" --gpus 1 >"$WORK/a.json" 2>"$WORK/a.err" &
A=$!
PIDS+=("$A")
wait_until 10 grep -q "cap 400 W (1/2)" "$WORK/a.err" || fail "the first sweep did not start: $(cat "$WORK/a.err")"
cp "$OUT/sweep-state.json" "$WORK/a-state.json"
refused() { # refused WHAT ARGS...: rc 1, the error names A's PID
    local what=$1
    shift
    set +e
    "$PFI_BIN" sweep "$@" >"$WORK/b.out" 2>"$WORK/b.err"
    local rc=$?
    set -e
    [ "$rc" = 1 ] || fail "$what: rc $rc: $(cat "$WORK/b.err")"
    grep -q "pfi sweep: $OUT is in use by another pfi sweep (PID $A)" "$WORK/b.err" ||
        fail "$what: $(cat "$WORK/b.err")"
    grep -q "restoring" "$WORK/b.err" && fail "$what: it restored the first sweep's GPUs"
    ok "$what refused, naming PID $A"
}
refused "a second sweep (other GPU)" "${ONE[@]}" --gpus 1 -- "${FAKE[@]}" --gpus 1
refused "a second sweep (same GPU)" "${ONE[@]}" --gpus 0 -- "${FAKE[@]}" --gpus 1
refused "a --dry-run" "${ONE[@]}" --gpus 1 --dry-run -- "${FAKE[@]}" --gpus 1
cmp -s "$OUT/sweep-state.json" "$WORK/a-state.json" || grep -q "cap 700 W (2/2)" "$WORK/a.err" ||
    fail "the refused sweeps changed the first one's state"
set +e; wait "$A"; rc=$?; set -e
[ "$rc" = 0 ] || fail "the first sweep: rc $rc: $(cat "$WORK/a.err")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["runs"]) == 2 and d["pfi"] is not None, d' \
    "$WORK/a.json" || fail "the first sweep's results: $(cat "$WORK/a.json")"
ok "the first sweep completed undisturbed"

# Once it ended, the folder is free (a dry run leaves no lock file behind
# where there was none).
"$PFI_BIN" sweep "${ONE[@]}" --gpus 1 --dry-run -- "${FAKE[@]}" --gpus 1 >/dev/null 2>"$WORK/c.err" ||
    fail "after the first sweep ended: $(cat "$WORK/c.err")"
"$PFI_BIN" sweep "${ONE[@]/$OUT/$WORK/fresh}" --gpus 1 --dry-run -- "${FAKE[@]}" >/dev/null 2>&1 || fail "fresh dry run"
[ -e "$WORK/fresh" ] && fail "--dry-run created a folder"
ok "free again after the end"

# SIGKILL: the lock goes with the process, not with its training command.
"$PFI_BIN" sweep "${ONE[@]}" --gpus 0 -- "${FAKE[@]}" --gpus 1 >/dev/null 2>"$WORK/k.err" &
K=$!
PIDS+=("$K")
wait_until 10 grep -q "cap 400 W (1/2)" "$WORK/k.err" || fail "the sweep to kill did not start"
CHILD=$(pgrep -P "$K" | head -n1)
[ -n "$CHILD" ] || fail "no training command"
kill -KILL "$K"
set +e; wait "$K"; set -e
kill -0 "$CHILD" 2>/dev/null || fail "the training command did not outlive its sweep (the test needs it)"
set +e
"$PFI_BIN" sweep "${ONE[@]}" --gpus 0 --dry-run -- "${FAKE[@]}" --gpus 1 >"$WORK/d.out" 2>"$WORK/d.err"
rc=$?
set -e
kill -TERM -- "-$CHILD" 2>/dev/null || true
[ "$rc" = 0 ] || fail "after a SIGKILL (its command alive): rc $rc: $(cat "$WORK/d.err")"
grep -q "an earlier sweep in $OUT did not finish" "$WORK/d.out" || fail "no crash note: $(cat "$WORK/d.out")"
ok "a SIGKILLed sweep leaves no lock, even with its command alive"
echo PASS
