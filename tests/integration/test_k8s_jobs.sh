#!/usr/bin/env bash
# Kubernetes jobs register themselves: two pfid (sim backend, 4 GPUs each),
# each reading a kubelet stand-in that speaks the real PodResources v1 gRPC
# proto on a Unix socket and serves the node's PodList (labels, annotations)
# with a bearer token. Two pods of one JobSet on two nodes become one job
# "team:llama" on both (JobSet's label wins over each pod's own batch Job
# name), a batch Job's pod is its own job with its annotations' terms, and
# `pfi control run` gives the JobSet one cap on all four of its GPUs. Then:
# a pod moves to the other node (its old GPUs' caps are restored at once, the
# job grows on the new node and gets one cap again); a failing kubelet
# changes nothing; a pod that ends ends its job; a job restored from the store
# whose pod is gone is ended at start.
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"
. "$(dirname "$0")/k8s_lib.sh"

k8s_python
JS='"jobset.sigs.k8s.io/jobset-name":"llama"'
L0="{$JS,\"batch.kubernetes.io/job-name\":\"llama-w-0\",\"pfi.io/class\":\"dense-pt\"}"
L1="{$JS,\"batch.kubernetes.io/job-name\":\"llama-w-1\",\"pfi.io/class\":\"dense-pt\"}"
EVAL=$(pod team eval-7x2kq '{"batch.kubernetes.io/job-name":"eval"}' \
    '{"pfi.io/sla-floor":"0.9","pfi.io/exempt":"true"}' "$(uuid 2)" "$(uuid 3)")
W0=$(pod team llama-w-0-0-abcde "$L0" '{"pfi.io/sla-floor":"0.8"}' "$(uuid 0)" "$(uuid 1)")
W1=$(pod team llama-w-1-0-fghij "$L1" '{"pfi.io/sla-floor":"0.8"}' 0 1)
k8s_state 0 "{\"pods\":[$W0,$EVAL]}"
k8s_state 1 "{\"pods\":[$W1]}"
k8s_start 0
k8s_start 1
for i in 0 1; do
    cat >"$WORK/jobs$i.csv" <<CSV
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,warmup_s,startup_s
0,a,0.8,0.9,0.4,0.6,16000,0.2,0.2
1,a,0.8,0.9,0.4,0.6,16000,0.2,0.2
2,b,0.3,0.5,0.6,0.1,6000,0.2,0.2
3,b,0.3,0.5,0.6,0.1,6000,0.2,0.2
CSV
    k8s_node_start $i 4 "$WORK/jobs$i.csv"
done

# --- registration: one id on both nodes, terms from annotations and labels ---
[ "$(jobs_of 0 | sort)" = "team:eval 2,3 True 0.9 None None
team:llama 0,1 False 0.8 dense pt" ] || fail "node 0's jobs: $(jobs_of 0)"
[ "$(jobs_of 1)" = "team:llama 0,1 False 0.8 dense pt" ] || fail "node 1's jobs: $(jobs_of 1)"
ok "node 0: team:llama on GPUs 0-1 (by UUID), team:eval exempt on 2-3; node 1: team:llama on 0-1 (by index)"
grep -q "List" "$WORK/kubelet0.log" || fail "the kubelet stand-in saw no List"
grep -q '"GET /api/v1/pods?fieldSelector=spec.nodeName=node0' "$WORK/kubelet0.log" ||
    fail "no PodList GET: $(cat "$WORK/kubelet0.log")"
ok "pfid read the PodResources List (gRPC) and the PodList (with the token)"

# --- the controller: one cap for the JobSet across both nodes ---
ctl_start "$WORK/ctl.log" --db "$WORK/ctl.db" --period 0.5 --policy pfi \
    --agents "${NODES[0]},${NODES[1]}" --agent-timeout-s 0.5
wait_until 15 python3 -c "import sys; sys.exit(0 if $(sum_power) > 3000 else 1)" || fail "no load: $(gpu_state)"
sleep 1
U=$(sum_power)
LIMIT=$(python3 -c "print(round(0.7 * $U))")
creq POST /v1/targets "{\"id\":\"dr-k8s\",\"gpu_power_w\":$LIMIT,\"start\":$(date +%s),\"duration_s\":600}"
expect 201 "a target at 70% of $U W"
capped4() { [ "$(gpu_state | awk '$2 <= 1 && $5 == 1' | wc -l)" = 4 ]; }
wait_until 10 capped4 || fail "the JobSet's GPUs not all capped: $(gpu_state)"
sleep 1.5
CAPS=$(span_caps)
one_cap $CAPS || fail "the JobSet's four GPUs have different caps: $CAPS"
python3 -c "import sys; sys.exit(0 if ${CAPS%% *} < 700 else 1)" || fail "no cut: $CAPS"
ok "one cap on the JobSet's 4 GPUs across 2 nodes (${CAPS%% *} W)"
creq GET /v1/status "" no
[ "$(jq_py '[j["gpus"] for j in d["jobs"] if j["id"] == "team:llama"]')" = "[4]" ] ||
    fail "the controller's team:llama: $BODY"
ok "the controller sees team:llama as one job of 4 GPUs"
[ "$(gpu_state | awk '$1 == 0 && $2 >= 2 && $5 == 1' | wc -l)" = 0 ] || fail "exempt eval capped: $(gpu_state)"
ok "the exempt job (pfi.io/exempt) is not capped"

# --- the pod moves from node 0 to node 1's GPUs 2-3 ---
# The controller is stopped first (its caps stay until they expire): what
# uncaps node 0's GPUs is pfid seeing the pod go, not the next period.
kill -KILL "$CTL_PID"
wait "$CTL_PID" 2>/dev/null || true
W0B=$(pod team llama-w-0-0-klmno "$L0" '{"pfi.io/sla-floor":"0.8"}' "$(uuid 2)" "$(uuid 3)")
k8s_state 0 "{\"pods\":[$EVAL]}"
k8s_state 1 "{\"pods\":[$W1,$W0B]}"
freed() { [ "$(gpu_state | awk '$1 == 0 && $2 <= 1 && ($5 != 0 || $4 != 700)' | wc -l)" = 0 ]; }
wait_until 3 freed || fail "node 0's GPUs 0-1 still capped after the pod left: $(gpu_state)"
ok "the pod left node 0: its GPUs 0-1 back at 700 W at once, with no controller running"
grep -q "k8s: job team:llama ended on this node (no pod left)" "$WORK/node0.log" || fail "no end logged"
[ "$(jobs_of 0)" = "team:eval 2,3 True 0.9 None None" ] || fail "node 0's jobs after the move: $(jobs_of 0)"
wait_until 3 bash -c "[ \"\$(curl -s ${NODES[1]}/v1/jobs | python3 -c 'import json,sys; print([j[\"gpus\"] for j in json.load(sys.stdin)[\"jobs\"]])')\" = '[[0, 1, 2, 3]]' ]" ||
    fail "node 1's team:llama did not grow: $(jobs_of 1)"
ok "team:llama now on node 1's GPUs 0-3"
[ "$(gpu_state | awk '$1 == 1 && $2 <= 1 && $5 == 1' | wc -l)" = 2 ] ||
    fail "node 1's GPUs 0-1 (still the job's) lost their cap: $(gpu_state)"
ok "the GPUs the job keeps keep their cap"
ctl_start "$WORK/ctl2.log" --db "$WORK/ctl.db" --period 0.5 --policy pfi \
    --agents "${NODES[0]},${NODES[1]}" --agent-timeout-s 0.5
one4() {
    local c
    c=$(gpu_state | awk '$1 == 1 && $5 == 1 {print $4}' | sort -u)
    [ "$(gpu_state | awk '$1 == 1 && $5 == 1' | wc -l)" = 4 ] && [ "$(echo "$c" | wc -l)" = 1 ]
}
wait_until 10 one4 || fail "node 1's four GPUs of team:llama have not one cap: $(gpu_state)"
ok "one cap again on the moved JobSet's 4 GPUs ($(gpu_state | awk '$1 == 1 {print $4}' | sort -u) W)"
creq DELETE /v1/targets/dr-k8s; expect 200 "the target deleted"
kill -KILL "$CTL_PID"

# --- a failing kubelet changes nothing ---
# The error first, then the pods gone: pfid reads PodResources, then the
# PodList, so a read across one change of both would see the old pods from
# the first and none from the second (seen under load: the job ended).
k8s_state 1 "{\"pods\":[$W1,$W0B], \"grpc_error\": true}"
sleep 0.5
k8s_state 1 "{\"pods\":[], \"grpc_error\": true}"
sleep 1
[ "$(jobs_of 1 | cut -d' ' -f1,2)" = "team:llama 0,1,2,3" ] || fail "jobs changed on a kubelet error: $(jobs_of 1)"
[ "$(grep -c 'gRPC status 14: kubelet restarting; the jobs stay' "$WORK/node1.log")" = 1 ] ||
    fail "the kubelet's error not logged once: $(grep k8s "$WORK/node1.log")"
ok "UNAVAILABLE from the kubelet: jobs kept, logged once"

# --- a pod that ends ends its job; the jobs' rows say so ---
k8s_state 1 "{\"pods\":[$W1]}"
wait_until 3 bash -c "[ \"\$(curl -s ${NODES[1]}/v1/jobs | python3 -c 'import json,sys; print([j[\"gpus\"] for j in json.load(sys.stdin)[\"jobs\"]])')\" = '[[0, 1]]' ]" ||
    fail "after the kubelet came back: $(jobs_of 1)"
k8s_state 1 '{"pods":[]}'
wait_until 3 bash -c "[ -z \"\$(curl -s ${NODES[1]}/v1/jobs | python3 -c 'import json,sys; print(*[j[\"id\"] for j in json.load(sys.stdin)[\"jobs\"]])')\" ]" ||
    fail "node 1's jobs after its pods ended: $(jobs_of 1)"
ok "the pods ended: node 1 has no job"

# --- restart: a stored job whose pod is gone is ended at start ---
PFID_PID=${NODE_PID[0]}
pfid_stop TERM
k8s_state 0 '{"pods":[]}'
k8s_node_start 0 4 "$WORK/jobs0.csv"
grep -q "job team:eval restored from the store" "$WORK/node0.log" || fail "eval not restored: $(cat "$WORK/node0.log")"
[ -z "$(jobs_of 0)" ] || fail "a stale k8s job survived the restart: $(jobs_of 0)"
[ "$(sqlite3 "$WORK/node0.db" "SELECT count(*) FROM jobs WHERE ended_at > 0")" -ge 2 ] ||
    fail "ended jobs not in the store"
ok "restart: team:eval from the store ended (its pod is gone)"

# --- a finished pod the kubelet still lists (phase Succeeded) is no job ---
k8s_state 0 "{\"pods\":[${EVAL%\}},\"phase\":\"Succeeded\"}]}"
sleep 1
[ -z "$(jobs_of 0)" ] || fail "a Succeeded pod is a job: $(jobs_of 0)"
k8s_state 0 "{\"pods\":[$EVAL]}"
wait_until 3 bash -c "curl -s ${NODES[0]}/v1/jobs | grep -q team:eval" || fail "eval Running again not registered"
ok "a pod in phase Succeeded is no job; Running again, it is"
