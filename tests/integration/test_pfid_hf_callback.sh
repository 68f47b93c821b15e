#!/usr/bin/env bash
# contrib/hf_trainer/pfid_callback.py against a running pfid: registration,
# tokens/s reports (the node's share), job end; and training that goes on
# when pfid refuses or is down. Runs without transformers installed.
. "$(dirname "$0")/pfid_lib.sh"
: "${PFI_SOURCE_DIR:?}"
pfid_start "$WORK/pfid.log" --backend sim --sim-gpus 4 --db "$WORK/pfid.db" --interval 1

cat >"$WORK/drive.py" <<'PY'
import logging, os, sys, time, types
from pfid_callback import PfidCallback
logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
url, token_file, mode = sys.argv[1], sys.argv[2], sys.argv[3]
# 2 processes in the job, both GPUs on this node: tokens/step =
# seq 1024 x batch 4 x accumulation 2 x world 2 = 16384; share 2/2 = 1.
args = types.SimpleNamespace(world_size=2, per_device_train_batch_size=4,
                             gradient_accumulation_steps=2)
state = types.SimpleNamespace(global_step=0, is_local_process_zero=True)
cb = PfidCallback(url=url, token_file=token_file if mode != "notoken" else None,
                  job_id="hf-test" if mode != "late" else "hf-late", gpus=[0, 1], arch="dense",
                  task="ft", seq_len=1024, every_steps=10, retry_s=0.2, retry_max_s=0.4)
cb.on_train_begin(args, state, None)
t0 = time.monotonic()
for step in range(1, 51 if mode != "late" else 201):
    time.sleep(0.02)
    state.global_step = step
    cb.on_step_end(args, state, None)
elapsed = time.monotonic() - t0
print("expected_tps %.1f" % (50 * 16384 / elapsed))
if mode == "keep":
    sys.exit(0)
cb.on_train_end(args, state, None)
PY
export PYTHONPATH=$PFI_SOURCE_DIR/contrib/hf_trainer
python3 "$WORK/drive.py" "http://127.0.0.1:$PORT" "$TOKEN_FILE" keep >"$WORK/out1" 2>"$WORK/err1" || fail "callback raised: $(cat "$WORK/err1")"
req GET /v1/jobs/hf-test "" no; expect 200 "job registered by the callback"
[ "$(jq_py 'd["gpus"]')" = "[0, 1]" ] && [ "$(jq_py 'd["task"]')" = ft ] || fail "registration: $BODY"
[ "$(jq_py 'd["reports"]')" = 5 ] || fail "5 reports expected (every 10 of 50 steps): $BODY"
EXP=$(awk '{print $2}' "$WORK/out1")
# Each report covers 10 steps of 16384 tokens over their own wall time: it
# is at most the whole-run average plus the sleep granularity.
python3 -c "
import sys; v=float(sys.argv[1]); e=float(sys.argv[2])
assert 0.3*e < v < 1.5*e, (v, e)" "$(jq_py 'd["tokens_per_s"]')" "$EXP" || fail "tokens/s $(jq_py 'd["tokens_per_s"]') vs run average $EXP"
ok "5 reports, last $(jq_py 'd["tokens_per_s"]') tok/s (run average $EXP)"
# A restarted trainer with the same job id keeps the registration and ends it.
python3 "$WORK/drive.py" "http://127.0.0.1:$PORT" "$TOKEN_FILE" end >/dev/null 2>"$WORK/err2" || fail "callback raised: $(cat "$WORK/err2")"
req GET /v1/jobs/hf-test "" no; expect 404 "job ended by on_train_end"
[ "$(sqlite3 "$WORK/pfid.db" "SELECT count(*) FROM throughput WHERE job='hf-test'")" = 10 ] || fail "10 reports stored"
# No token: pfid answers 401, the callback warns once and training goes on.
python3 "$WORK/drive.py" "http://127.0.0.1:$PORT" "$TOKEN_FILE" notoken >/dev/null 2>"$WORK/err3" || fail "callback raised without token"
grep -q "registration failed (401)" "$WORK/err3" || fail "no warning: $(cat "$WORK/err3")"
[ "$(grep -c 'failed' "$WORK/err3")" = 1 ] || fail "warned more than once"
ok "refused registration: one warning, no exception"
pfid_stop TERM
python3 "$WORK/drive.py" "http://127.0.0.1:$PORT" "$TOKEN_FILE" end >/dev/null 2>"$WORK/err4" || fail "callback raised with pfid down"
grep -q "registration failed (None)" "$WORK/err4" || fail "no warning with pfid down: $(cat "$WORK/err4")"
ok "pfid down: training goes on"

# pfid comes up after training started: the callback registers then (retry
# with backoff), and reports from there on.
P=$(free_port)
python3 "$WORK/drive.py" "http://127.0.0.1:$P" "$TOKEN_FILE" late >/dev/null 2>"$WORK/err5" &
DRIVE=$!
PIDS+=("$DRIVE")
sleep 1
"$PFID_BIN" --listen "127.0.0.1:$P" --token-file "$TOKEN_FILE" --backend sim --sim-gpus 4 \
    --db "$WORK/late.db" --interval 1 2>"$WORK/late.log" &
PFID_PID=$!
PIDS+=("$PFID_PID")
PORT=$P
wait "$DRIVE" || fail "callback raised: $(cat "$WORK/err5")"
grep -q "registration failed (None)" "$WORK/err5" || fail "no warning while pfid was down: $(cat "$WORK/err5")"
grep -q "registration succeeded" "$WORK/err5" || fail "never registered: $(cat "$WORK/err5")"
[ "$(sqlite3 "$WORK/late.db" "SELECT count(*) FROM jobs WHERE id='hf-late'")" = 1 ] || fail "late job not in the store"
N=$(sqlite3 "$WORK/late.db" "SELECT count(*) FROM throughput WHERE job='hf-late'")
[ "$N" -ge 3 ] || fail "only $N reports after the late registration"
pfid_stop TERM
ok "pfid up after training started: registered by a retry, $N reports"
echo PASS
