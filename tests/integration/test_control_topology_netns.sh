#!/usr/bin/env bash
# The power tree across hosts (issue 28, item 7): 8 sim pfid, each in its
# own network namespace with its own address on a test bridge
# (netns_lib.sh), each named node-I (--node-name), and `pfi control run
# --topology` in the root namespace placing them by the names they report
# (GET /v1/node). A 3-level tree:
#
#   site
#     feed-a: rack-1 (node-0, node-1; rated under its uncapped power),
#             rack-2 (node-2, node-3)
#     feed-b: rack-3 (node-4, node-5), rack-4 (node-6, node-7)
#
# Every power is sampled at the agents (their GPUs' own readings, GET
# /v1/gpus), never taken from the controller:
#   1. the oversubscribed rack-1 is held under its rating every sample from
#      the third period on, with no event;
#   2. a target on feed-b and a site target at once: both hold;
#   3. node-1's link cut: the controller counts it at its GPUs' maximum in
#      rack-1, feed-a and the site and cuts only their jobs deeper; the other
#      domains still hold;
#   4. the node ceiling holds rack-1 while node-1 cannot be reached: its GPU
#      caps released from inside its host (what a lost cap or a job starting
#      uncapped leaves), pfid keeps its GPUs under the ceiling it was given,
#      so rack-1 (node-0 read over the bridge, node-1 from inside its host)
#      stays under its rating.
# Root is needed (exit 77 otherwise; in CI root is there).
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"
. "$(dirname "$0")/netns_lib.sh"

N=8
PERIOD=0.3
# The site's own limit on every GPU (pfid's prior): a dead node counts at
# 2 x 500 W, so rack-1 can be rated under its uncapped power and still fit
# one node at its floor beside a dead one at its maximum.
PRIOR=500
MAXN=$((2 * PRIOR))
netns_setup $N
# every node: one 2-GPU job
cat >"$WORK/jobs.csv" <<CSV
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,warmup_s,startup_s
0,a,0.8,0.9,0.4,0.6,16000,0.2,0.2
1,a,0.8,0.9,0.4,0.6,16000,0.2,0.2
CSV
for i in $(seq 0 $((N - 1))); do
    netns_pfid_start "h$i" "$WORK/node$i.log" --backend sim --sim-gpus 2 --sim-jobs "$WORK/jobs.csv" \
        --db "$WORK/node$i.db" --interval 0.2 --phase-hold 0.4 --node-name "node-$i" \
        --sim-limit $PRIOR
    NODES[$i]=$LISTEN_URL
    NODE_PID[$i]=$PFID_PID
    REQ_HOST=$(netns_addr "h$i") register "$i" "job-$i" '[0,1]'
done

# node_power I: node I's GPUs' power from its own readings (over the bridge).
node_power() {
    curl -s --max-time 1 "${NODES[$1]}/v1/gpus" |
        python3 -c 'import json,sys; print(sum(g["sample"]["power_watts"] for g in json.load(sys.stdin)["gpus"]))'
}
# power_of I...: the sum over those nodes.
power_of() {
    local s=0 i
    for i in "$@"; do s=$(python3 -c "print($s + $(node_power "$i"))"); done
    echo "$s"
}
# held SECONDS LIMIT NODE...: every 0.2 s for SECONDS the nodes' power <= LIMIT (+1 W).
held() {
    local secs=$1 lim=$2 end p
    shift 2
    end=$(($(date +%s) + secs))
    while [ "$(date +%s)" -lt "$end" ]; do
        p=$(power_of "$@")
        python3 -c "import sys; sys.exit(0 if $p <= $lim + 1 else 1)" || {
            echo "over: nodes $* at $p W > $lim W" >&2
            return 1
        }
        sleep 0.2
    done
}

sleep 1.5 # the sim's jobs past their warm-up: uncapped power
U=$(node_power 0)
python3 -c "import sys; sys.exit(0 if 0.8 * $MAXN < $U <= $MAXN + 1 else 1)" ||
    fail "a node draws $U W uncapped (its limit $MAXN W)"
# rack-1 rated at 80% of its two nodes' uncapped power (oversubscribed), the
# rest well above theirs; feed-b's target 70% of its 4 nodes, the site's 80%
# of all 8 less what rack-1's rating already takes.
R1=$(python3 -c "print(round(0.8 * 2 * $U))")
U=$(python3 -c "print(round($U))")
FB=$(python3 -c "print(round(0.7 * 4 * $U))")
SITE=$(python3 -c "print(round($R1 + 2 * $U * 0.75 + $FB))")
nodes_json() { python3 -c "import json,sys; print(json.dumps(['node-%s' % i for i in sys.argv[1:]]))" "$@"; }
cat >"$WORK/site.json" <<JSON
{"name": "site", "children": [
  {"name": "feed-a", "limit_w": $((8 * U)), "children": [
    {"name": "rack-1", "limit_w": $R1, "nodes": $(nodes_json 0 1)},
    {"name": "rack-2", "limit_w": $((4 * U)), "nodes": $(nodes_json 2 3)}]},
  {"name": "feed-b", "limit_w": $((8 * U)), "children": [
    {"name": "rack-3", "limit_w": $((4 * U)), "nodes": $(nodes_json 4 5)},
    {"name": "rack-4", "limit_w": $((4 * U)), "nodes": $(nodes_json 6 7)}]}]}
JSON
AGENTS=$(IFS=,; echo "${NODES[*]}")
ctl_start "$WORK/ctl.log" --db "$WORK/ctl.db" --period $PERIOD --policy pfi --agents "$AGENTS" \
    --agent-timeout-s 0.25 --topology "$WORK/site.json" --cap-margin-s 30
ok "$N pfid on their own hosts ($NETNS_SUBNET.x), a node draws $U W uncapped; rack-1 rated $R1 W"

# 1. rack-1 held with no event; the others untouched.
placed() {
    creq GET /v1/status "" no
    [ "$(jq_py "[x['agents'] for x in d['domains'] if x['name'] == 'rack-1'][0], d['controlling']")" = "2 True" ]
}
wait_until 10 placed || fail "rack-1's nodes not placed, or no control: $BODY"
[ "$(jq_py "[a['domain'] for a in d['agents']]")" = \
    "['rack-1', 'rack-1', 'rack-2', 'rack-2', 'rack-3', 'rack-3', 'rack-4', 'rack-4']" ] ||
    fail "the agents' domains: $BODY"
sleep 1
held 3 "$R1" 0 1 || fail "rack-1 over its rating"
creq GET /v1/status "" no
[ "$(jq_py "d['active']")" = False ] || fail "an event in force: $BODY"
P2=$(power_of 2 3)
python3 -c "import sys; sys.exit(0 if $P2 > 1.8 * $U else 1)" || fail "rack-2 cut ($P2 W) though under its rating"
ok "rack-1 held under its $R1 W every sample (no event), rack-2 uncapped at $P2 W"

# 2. a target on feed-b and one on the site, at once.
NOW=$(date +%s)
creq POST /v1/targets "{\"id\":\"fb\",\"site_power_w\":$FB,\"start\":$NOW,\"duration_s\":600,\"domain\":\"feed-b\"}"
expect 201 "the feed-b target"
creq POST /v1/targets "{\"id\":\"site\",\"site_power_w\":$SITE,\"start\":$NOW,\"duration_s\":600}"
expect 201 "the site target"
creq POST /v1/targets "{\"site_power_w\":1,\"start\":$NOW,\"duration_s\":600,\"domain\":\"feed-c\"}"
expect 400 "a target on a domain not in the tree"
sleep 1.5
held 3 "$FB" 4 5 6 7 || fail "feed-b over its target"
held 2 "$SITE" 0 1 2 3 4 5 6 7 || fail "the site over its target"
held 1 "$R1" 0 1 || fail "rack-1 over its rating under the targets"
creq GET /v1/status "" no
[ "$(jq_py "[x['target'] for x in d['domains'] if x['name'] == 'feed-b'][0]")" = fb ] ||
    fail "feed-b's target not in the status: $BODY"
ok "feed-b under its $FB W target and the site under its $SITE W target at once"

# 3. node-1's link cut: counted at its maximum ($MAXN W) in rack-1, feed-a
# and the site only; node-0 cut deeper, the other domains still hold.
netns_cut h1
dead() {
    creq GET /v1/status "" no
    [ "$(jq_py "[x['dead_agents'] for x in d['domains'] if x['name'] in ('rack-1', 'feed-a', 'site', 'feed-b')]")" = "[1, 1, 1, 0]" ]
}
wait_until 5 dead || fail "node-1 cut, but the domains' dead agents: $BODY"
sleep 1
P0=$(node_power 0)
python3 -c "import sys; sys.exit(0 if $P0 + $MAXN <= $R1 + 1 else 1)" ||
    fail "node-0 at $P0 W: with node-1 counted at $MAXN W rack-1 is over $R1 W"
held 2 "$FB" 4 5 6 7 || fail "feed-b over its target with node-1 cut"
ok "node-1 cut: counted at $MAXN W in rack-1, feed-a and the site; node-0 down to $P0 W; feed-b holds"

# 4. the ceiling holds node-1 on its own: its caps released from inside
# its host (the controller cannot reach it), its GPUs stay under the ceiling.
OWNER=$(jq_py "d['owner']")
CEIL=$(netns_exec h1 curl -s --max-time 1 "${NODES[1]}/v1/node" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["limit"]["watts"])') ||
    fail "node-1 holds no ceiling"
for g in 0 1; do
    netns_exec h1 curl -s --max-time 1 -o /dev/null -X DELETE -H "Authorization: Bearer $(cat "$TOKEN_FILE")" \
        -H "Pfi-Owner: $OWNER" "${NODES[1]}/v1/gpus/$g/limit"
done
inside_power() {
    netns_exec h1 curl -s --max-time 1 "${NODES[1]}/v1/gpus" |
        python3 -c 'import json,sys; print(sum(g["sample"]["power_watts"] for g in json.load(sys.stdin)["gpus"]))'
}
sleep 0.6 # a sample interval and more
end=$(($(date +%s) + 3))
while [ "$(date +%s)" -lt "$end" ]; do
    p1=$(inside_power) p0=$(node_power 0)
    python3 -c "import sys; sys.exit(0 if $p1 <= $CEIL + 1 and $p0 + $p1 <= $R1 + 1 else 1)" ||
        fail "node-1 at $p1 W (ceiling $CEIL W), rack-1 at $p0 + $p1 W > $R1 W"
    sleep 0.2
done
netns_exec h1 curl -s --max-time 1 "${NODES[1]}/v1/node" | grep -q '"enforcing":true' ||
    fail "node-1's ceiling not enforcing"
ok "node-1 unreachable, its caps gone: its pfid holds it under its $CEIL W ceiling, rack-1 under $R1 W"

netns_heal h1
wait_until 5 bash -c "curl -sf --max-time 0.5 ${NODES[1]}/healthz >/dev/null" || fail "node-1 not back"
sleep 1
held 2 "$R1" 0 1 || fail "rack-1 over its rating after node-1 came back"
ok "node-1 back: rack-1 still held"
