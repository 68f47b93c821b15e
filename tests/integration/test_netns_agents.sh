#!/usr/bin/env bash
# Agents as separate hosts (netns_lib.sh): 8 pfid (sim backend, 2 GPUs and a
# job each), each in its own network namespace with its own address on a
# test bridge, and `pfi control run --agents` in the root namespace reaching
# them over it. A host's link cut (ip link set down inside its namespace)
# makes that agent dead in the controller's /v1/status while its pfid runs
# on, holding the node ceiling it was given (seen from inside the
# namespace); healing it brings the agent back. Root is needed (exit 77 otherwise);
# as root a failing `ip netns` is a failure, not a skip.
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"
. "$(dirname "$0")/netns_lib.sh"

N=8
netns_setup $N
cat >"$WORK/jobs.csv" <<CSV
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,warmup_s,startup_s
0,a,0.8,0.9,0.4,0.6,16000,0.2,0.2
1,a,0.8,0.9,0.4,0.6,16000,0.2,0.2
CSV
AGENTS=
for i in $(seq 0 $((N - 1))); do
    netns_pfid_start "h$i" "$WORK/node$i.log" --backend sim --sim-gpus 2 --sim-jobs "$WORK/jobs.csv" \
        --db "$WORK/node$i.db" --interval 0.2 --phase-hold 0.4
    [ "${LISTEN_URL%:*}" = "http://$(netns_addr "h$i")" ] || fail "h$i listens on $LISTEN_URL"
    NODES[$i]=$LISTEN_URL
    NODE_PID[$i]=$PFID_PID
    REQ_HOST=$(netns_addr "h$i") register "$i" "job-$i" '[0,1]'
    AGENTS+=${AGENTS:+,}$LISTEN_URL
done
ok "$N pfid on their own hosts, $NETNS_SUBNET.10-$((10 + N - 1)) on bridge pb$NETNS_TAG"

ctl_start "$WORK/ctl.log" --db "$WORK/ctl.db" --period 0.3 --policy pfi --agents "$AGENTS" \
    --agent-timeout-s 0.5

# up_is I: agent I's "up" in the controller's status (True/False), and how
# many are up.
up_is() {
    creq GET /v1/status "" no
    [ "$(jq_py "[a['up'] for a in d['agents'] if a['url'] == '${NODES[$1]}'][0], d['agents_up']")" = "$2 $3" ]
}
wait_until 10 up_is 3 True $N || fail "the controller does not reach all $N agents: $BODY"
ok "the controller reaches all $N agents over the bridge"

# h3 holds a node ceiling of 1000 W (its job draws about 1390 W): pfid keeps
# it on its own while the link is cut.
PORT=${NODES[3]##*:} REQ_HOST=$(netns_addr h3) reqo ctl-test 1 PUT /v1/node/limit '{"watts":1000,"expires_s":600}'
expect 200 "h3: a node ceiling of 1000 W"
netns_cut h3
wait_until 5 bash -c "[ \"\$(curl -s --max-time 0.5 -o /dev/null -w '%{http_code}' ${NODES[3]}/healthz)\" = 000 ]" ||
    fail "h3 still answers with its link down"
wait_until 5 up_is 3 False $((N - 1)) || fail "h3 cut, but the controller's status: $BODY"
kill -0 "${NODE_PID[3]}" || fail "h3's pfid exited"
held3() { # from inside h3's namespace, where it still answers
    netns_exec h3 curl -s --max-time 1 "${NODES[3]}/v1/node" | python3 -c '
import json, sys
l = json.load(sys.stdin)["limit"]
sys.exit(0 if l["enforcing"] and l["power_w"] <= 1001 else 1)'
}
wait_until 5 held3 || fail "h3's ceiling not held while cut: $(netns_exec h3 curl -s "${NODES[3]}/v1/node")"
ok "h3's link cut: dead in /v1/status ($(jq_py '[a["error"] for a in d["agents"] if not a["up"]][0]')), its pfid holding its 1000 W ceiling on its own"

netns_heal h3
wait_until 10 up_is 3 True $N || fail "h3 healed, but the controller's status: $BODY"
ok "h3's link healed: all $N agents up again"
