#!/usr/bin/env bash
# Never above the site's own limit (issue 27 item 2): on GPUs whose limit in
# force before pfid was 600 W (pfid --sim-limit 600), the controller plans
# with 600 W as each GPU's maximum: under a target the pfi policy would
# raise the caps above 600 W on a 700 W maximum (a target 5% above the
# draw: every job at its maximum, the GPUs would draw more); none is
# ever pushed, and the site stays under the target.
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"

for i in 0 1; do
    cat >"$WORK/jobs$i.csv" <<CSV
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,warmup_s,startup_s
0,a,0.95,0.95,0.2,0.7,16000,0.2,0.2
1,a,0.95,0.95,0.2,0.7,16000,0.2,0.2
2,b,0.2,0.4,0.7,0.1,6000,0.2,0.2
3,b,0.2,0.4,0.7,0.1,6000,0.2,0.2
CSV
    pfid_start "$WORK/node$i.log" --backend sim --sim-gpus 4 --sim-jobs "$WORK/jobs$i.csv" \
        --sim-limit 600 --db "$WORK/node$i.db" --interval 0.2 --phase-hold 0.4
    NODES[$i]=http://127.0.0.1:$PORT
    NODE_PID[$i]=$PFID_PID
    register $i "stiff-$i" '[0,1]'
    register $i "flex-$i" '[2,3]'
done
sleep 2
U=$(sum_power)
[ "$(gpu_state | awk '$4 > 600.5' | wc -l)" = 0 ] || fail "a GPU above 600 W before any cap: $(gpu_state)"
PERIOD=0.5
ctl_start "$WORK/ctl.log" --db "$WORK/ctl.db" --agents "${NODES[0]},${NODES[1]}" --period $PERIOD --policy pfi
sleep 2
LIMIT=$(python3 -c "print(round(1.05 * $U))")
echo "uncapped GPU power $U W (limits 600 W); target $LIMIT W"
creq POST /v1/targets "{\"id\":\"dr\",\"gpu_power_w\":$LIMIT,\"start\":$(date +%s),\"duration_s\":600}"
expect 201 "POST a target 5% above the draw"
sleep $(python3 -c "print(4 * $PERIOD)")
END=$(($(date +%s) + 5))
while [ "$(date +%s)" -lt "$END" ]; do
    HI=$(gpu_state | awk 'BEGIN {m = 0} $4 > m {m = $4} END {print m}')
    python3 -c "import sys; sys.exit(0 if $HI <= 600.5 else 1)" || fail "a GPU at $HI W, above its 600 W prior: $(gpu_state)"
    sleep 0.3
done
under_after 2 || fail "over the target"
python3 - "$WORK/ctl.db" <<'PY' || fail "a cap above 600 W was pushed"
import sqlite3, sys
hi = sqlite3.connect(sys.argv[1]).execute("SELECT max(watts) FROM pushes").fetchone()[0]
print("highest cap pushed: %s W" % hi)
assert hi is not None and hi <= 600, hi
PY
CAPPED=$(gpu_state | awk '$5 == 1' | wc -l)
[ "$CAPPED" -ge 4 ] || fail "the event capped $CAPPED GPUs: $(gpu_state)"
ok "no cap above the GPUs' 600 W prior pushed ($CAPPED GPUs capped); under $LIMIT W"
creq DELETE /v1/targets/dr
