# Helpers for the controller's integration tests (sourced; needs pfid_lib.sh).
# NODES[i] is node i's pfid URL, NODE_PID[i] its PID; CTL_URL and CTL_PID the
# controller's.

: "${PFI_BIN:?}"
NODES=()
NODE_PID=()

# node_start I GPUS JOBS_CSV [PFID ARGS...]: starts pfid number I with the
# sim backend.
node_start() {
    local i=$1 gpus=$2 jobs=$3
    shift 3
    pfid_start "$WORK/node$i.log" --backend sim --sim-gpus "$gpus" --sim-jobs "$jobs" \
        --db "$WORK/node$i.db" --interval 0.2 --phase-hold 0.4 "$@"
    NODES[$i]=http://127.0.0.1:$PORT
    NODE_PID[$i]=$PFID_PID
}

# dataset_jobs OUT K=GROUP:G0-G1 ...: a sim jobs file placing the embedded
# dataset's groups, each as its calibrated GPU-model job (`pfi model --job
# GROUP --json`, all of pfi_job_model: the sim then runs what the CLI's
# table says), job K on GPUs G0..G1; each group's table is kept in
# $WORK/model-K.json.
dataset_jobs() {
    local out=$1 spec k
    shift
    for spec in "$@"; do
        k=${spec%%=*}
        [ -s "$WORK/model-$k.json" ] && continue
        local g=${spec#*=}
        "$PFI_BIN" model --job "${g%:*}" --cap "$(seq -s, 200 5 700)" --json >"$WORK/model-$k.json" ||
            fail "pfi model --job ${g%:*}"
    done
    python3 - "$WORK" "$out" "$@" <<'PY' || fail "sim jobs file $out"
import json, sys
w, out, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
cols = ["compute_frac", "sm_activity", "dram_activity", "tensor_ratio", "tput_per_gpu", "clock_spread",
        "floor_mhz", "extra_w"]
with open(out, "w") as f:
    f.write("gpu,job," + ",".join(cols) + ",warmup_s,startup_s\n")
    for s in specs:
        k, rest = s.split("=", 1)
        lo, hi = map(int, rest.rsplit(":", 1)[1].split("-"))
        m = json.load(open("%s/model-%s.json" % (w, k)))["job"]
        for g in range(lo, hi + 1):
            f.write("%d,%s,%s,0.2,0.2\n" % (g, k, ",".join(repr(m[c]) for c in cols)))
PY
}

# sim_fleet CLUSTERS: the sim fleet test_control_flexibility and
# test_control_policies share: per cluster 2 pfid (sim backend, 8 GPUs,
# --sim-tokens: each job reports the GPU model's tokens/s at the caps in
# force, as its training loop would; the DRAM-copy predictor fitted on the
# embedded dataset, $WORK/model.json) running four embedded-dataset jobs,
# two of them spanning both nodes: node 2c has A on GPUs 0-3, B 4-5, C 6-7;
# node 2c+1 B 0-1, C 2-3, D 4-7. Sets NODES, NODE_PID; the groups' tables
# are $WORK/model-{A,B,C,D}.json.
sim_fleet() {
    local c a b D=$PFI_SOURCE_DIR/data/paper-h200
    "$PFI_BIN" fit --features dram_copy_product --holdout "$D/heldout-sweeps.csv" \
        --out "$WORK/model.json" "$D/sweeps.csv" "$D/telemetry.csv" >/dev/null || fail "pfi fit"
    local A='A=Dense FT H200x16 (Llama-3.1-70B)' B='B=Dense FT H200x8 (Llama-3.1-70B, no compile)'
    local C='C=Dense PT H200x8 (Mistral-Small-24B-Base-2501)' DD='D=MoE PT H200x8 (gpt-oss-20b, EP1, no compile)'
    dataset_jobs "$WORK/jobs0.csv" "$A:0-3" "$B:4-5" "$C:6-7"
    dataset_jobs "$WORK/jobs1.csv" "$B:0-1" "$C:2-3" "$DD:4-7"
    for c in $(seq 0 $(($1 - 1))); do
        a=$((2 * c)) b=$((2 * c + 1))
        node_start $a 8 "$WORK/jobs0.csv" --sim-tokens --model "$WORK/model.json"
        node_start $b 8 "$WORK/jobs1.csv" --sim-tokens --model "$WORK/model.json"
        register $a A '[0,1,2,3]'; register $a B '[4,5]'; register $a C '[6,7]'
        register $b B '[0,1]'; register $b C '[2,3]'; register $b D '[4,5,6,7]'
    done
}

# node_restart I GPUS JOBS_CSV: the same on the same store and port.
node_restart() {
    local i=$1 gpus=$2 jobs=$3 port=${NODES[$1]##*:}
    pfid_start "$WORK/node$i.restart.log" --backend sim --sim-gpus "$gpus" --sim-jobs "$jobs" \
        --db "$WORK/node$i.db" --interval 0.2 --phase-hold 0.4 --listen "127.0.0.1:$port"
    NODE_PID[$i]=$PFID_PID
}

# register I ID GPUS_JSON: registers a job on node I.
register() {
    PORT=${NODES[$1]##*:}
    req POST /v1/jobs "{\"id\":\"$2\",\"gpus\":$3,\"arch\":\"dense\",\"task\":\"pt\"}"
    expect 201 "register $2 on node $1"
}

# ctl_start LOG ARGS...: starts the controller; sets CTL_URL, CTL_PID.
ctl_start() {
    local log=$1
    shift
    "$PFI_BIN" control run --listen 127.0.0.1:0 --token-file "$TOKEN_FILE" "$@" 2>"$log" &
    CTL_PID=$!
    PIDS+=("$CTL_PID")
    await_listening "$log" "$CTL_PID" "the controller"
    CTL_URL=$LISTEN_URL
}

# creq METHOD PATH [BODY] [AUTH]: req against the controller.
creq() {
    local save=$PORT
    PORT=${CTL_URL##*:}
    req "$@"
    PORT=$save
}

# gpu_state: one line per GPU of every live node: "node gpu power enforced capped".
gpu_state() {
    local i
    for i in "${!NODES[@]}"; do
        kill -0 "${NODE_PID[$i]}" 2>/dev/null || continue
        curl -s --max-time 2 "${NODES[$i]}/v1/gpus" | python3 -c "
import json, sys
for g in json.load(sys.stdin)['gpus']:
    print($i, g['gpu'], g['sample']['power_watts'], g['limits']['enforced_w'], 1 if g['cap'] else 0)"
    done
}

# sum_power: the GPUs' power on every live node, W (their own readings).
sum_power() { gpu_state | awk '{s += $3} END {printf "%.1f", s}'; }

# under_after SECONDS: sum_power stays <= $LIMIT (+1 W) for SECONDS.
under_after() {
    local end=$(($(date +%s) + $1))
    while [ "$(date +%s)" -lt "$end" ]; do
        local p; p=$(sum_power)
        python3 -c "import sys; sys.exit(0 if $p <= $LIMIT + 1 else 1)" || { echo "over: $p > $LIMIT" >&2; return 1; }
        sleep 0.2
    done
}

# caps_of NODE GPU: the enforced limit of that GPU.
caps_of() { gpu_state | awk -v n="$1" -v g="$2" '$1 == n && $2 == g {print $4}'; }

# span_caps: the enforced limits of GPUs 0 and 1 on nodes 0 and 1 (the job
# spanning two nodes), from one snapshot of the nodes: read one GPU at a
# time, a period's new caps could land between two reads. one_cap A B C D:
# the four are one value.
span_caps() { gpu_state | awk '$1 <= 1 && $2 <= 1 {print $4}' | tr '\n' ' '; }
one_cap() { [ $# = 4 ] && [ "$1" = "$2" ] && [ "$1" = "$3" ] && [ "$1" = "$4" ]; }

# agent_death I GPUS JOBS_CSV SETTLE_S: SIGKILLs node I mid-event; after
# SETTLE_S the live GPUs plus its GPUS x 700 W maximum must be under $LIMIT
# and the controller must count it down; then restarts it on its store and
# checks it rejoins with the site still under.
agent_death() {
    local i=$1 gpus=$2 jobs=$3 settle=$4 live max=$(($2 * 700))
    kill -KILL "${NODE_PID[$i]}"
    wait "${NODE_PID[$i]}" 2>/dev/null || true
    sleep "$settle"
    live=$(sum_power)
    python3 -c "import sys; sys.exit(0 if $live + $max <= $LIMIT + 1 else 1)" ||
        fail "with node $i dead: live $live W + $max W counted > $LIMIT W"
    creq GET /v1/status "" no
    [ "$(jq_py 'd["agents_up"]')" = $((${#NODES[@]} - 1)) ] || fail "agents_up: $BODY"
    ok "node $i killed: live $live W + its $max W maximum under $LIMIT W"
    node_restart "$i" "$gpus" "$jobs"
    wait_until 5 bash -c "curl -sf ${NODES[$i]}/healthz" || fail "node $i did not come back"
    sleep "$settle"
    under_after 2 || fail "over after node $i came back"
    creq GET /v1/status "" no
    [ "$(jq_py 'd["agents_up"]')" = ${#NODES[@]} ] || fail "node $i did not rejoin: $BODY"
    ok "node $i back (its pfid re-applied its caps from its store): rejoined, still under"
}

# vtn_start: the test VTN (tests/vtn/vtn.py) serving $WORK/events.json (an
# empty list for now; rewrite it atomically to change what it serves; while
# $WORK/list.json exists the list is that file, raw),
# writing $WORK/reports.jsonl and $WORK/vtn.log. Sets SECRET (its client
# secret, also in $WORK/secret) and VURL.
vtn_start() {
    SECRET=s3cret-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
    printf '%s\n' "$SECRET" >"$WORK/secret"
    chmod 600 "$WORK/secret"
    echo '[]' >"$WORK/events.json"
    python3 "$PFI_SOURCE_DIR/tests/vtn/vtn.py" --spec "$PFI_SHARED_DIR/data/openadr3/openadr3-3.1.0.yaml" \
        --events "$WORK/events.json" --reports "$WORK/reports.jsonl" --log "$WORK/vtn.log" \
        --port-file "$WORK/vtn.port" --client-secret "$SECRET" --list-file "$WORK/list.json" \
        2>"$WORK/vtn.err" &
    PIDS+=($!)
    wait_until 20 test -s "$WORK/vtn.port" || fail "the VTN did not start: $(cat "$WORK/vtn.err")"
    VURL=http://127.0.0.1:$(cat "$WORK/vtn.port")
}

# query EXPR / scalar EXPR: an instant query to Prometheus at $PROM; scalar
# prints the first result's value, or nan.
query() { curl -s --max-time 5 "$PROM/api/v1/query" --data-urlencode "query=$1"; }
scalar() { query "$1" | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "nan")' 2>/dev/null || echo nan; }

# four_nodes: the cluster test_control_loop and test_control_prometheus share:
# four pfid with 4 sim GPUs each; "span" runs on GPUs 0-1 of nodes 0 and 1,
# dense-2 and dense-3 on GPUs 0-1 of nodes 2 and 3, and every node has its
# own moe-I on GPUs 2-3.
four_nodes() {
    local i
    for i in 0 1 2 3; do
        cat >"$WORK/jobs$i.csv" <<CSV
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,warmup_s,startup_s
0,a,0.8,0.9,0.4,0.6,16000,0.2,0.2
1,a,0.8,0.9,0.4,0.6,16000,0.2,0.2
2,b,0.3,0.5,0.6,0.1,6000,0.2,0.2
3,b,0.3,0.5,0.6,0.1,6000,0.2,0.2
CSV
        node_start $i 4 "$WORK/jobs$i.csv"
    done
    register 0 span '[0,1]'
    register 1 span '[0,1]'
    register 2 dense-2 '[0,1]'
    register 3 dense-3 '[0,1]'
    for i in 0 1 2 3; do register $i "moe-$i" '[2,3]'; done
}
