#!/usr/bin/env bash
# The controller reading the cluster from a real Prometheus (--cluster-from
# prometheus) instead of polling the agents: 4 pfid (sim backend, 4 GPUs
# each; a job spanning nodes 0 and 1), Prometheus scraping them every 0.5 s,
# the controller given no agent list (it finds them in the instance label).
# Asserted from the agents' own readings: under a GPU target at 70% within 3
# periods plus a scrape, and after; one cap for the job across its nodes;
# the registrations read from Prometheus (pfi_job_exempt,
# pfi_job_sla_floor_ratio): moe-3 registered exempt keeps its GPUs at their
# 700 W maximum, uncapped, throughout; dense-3 registered with an SLA floor
# of 0.9 is held at it (its twin dense-2, with none, is cut deeper);
# SIGKILL of an agent (Prometheus' up == 0: counted at its maximum, still
# under); SIGKILL and restart of the controller (it resumes the caps of the
# agents it had found); Prometheus killed (the caps stay, none released);
# the target deleted: every GPU back at its prior limit.
# PFI_RECORD_DIR=DIR also saves Prometheus' answer to each query the
# controller asks (how tests/data/prometheus/ was recorded).
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"
command -v prometheus >/dev/null || fail "prometheus not installed (scripts/install-deps.sh)"
: "${PFI_SOURCE_DIR:?}"
# what Prometheus answers to the registration queries over several nodes
(cd "$PFI_SOURCE_DIR/tests/data/prometheus" && promtool test rules registration.test.yml >/dev/null) ||
    fail "promtool test rules tests/data/prometheus/registration.test.yml"
ok "the exempt and SLA floor queries: any node's exempt, the highest floor (promtool)"

PERIOD=1
four_nodes
# node 3's jobs registered again: moe-3 exempt, dense-3 with an SLA floor
PORT=${NODES[3]##*:}
for j in moe-3 dense-3; do req DELETE /v1/jobs/$j; expect 200 "end $j on node 3"; done
req POST /v1/jobs '{"id":"moe-3","gpus":[2,3],"arch":"dense","task":"pt","exempt":true}'
expect 201 "register moe-3 on node 3, exempt"
req POST /v1/jobs '{"id":"dense-3","gpus":[0,1],"arch":"dense","task":"pt","sla_floor":0.9}'
expect 201 "register dense-3 on node 3, sla_floor 0.9"
# moe-3's GPUs: at their 700 W maximum and uncapped
exempt_free() {
    [ "$(gpu_state | awk '$1 == 3 && ($2 == 2 || $2 == 3) && $4 == 700 && $5 == 0' | wc -l)" = 2 ] ||
        { echo "moe-3's GPUs: $(gpu_state | awk '$1 == 3 && $2 >= 2')" >&2; return 1; }
}

PROM_PORT=$(free_port)
PROM=http://127.0.0.1:$PROM_PORT
cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 500ms
scrape_configs:
  - job_name: pfid
    static_configs:
      - targets: ['${NODES[0]#http://}', '${NODES[1]#http://}', '${NODES[2]#http://}', '${NODES[3]#http://}']
EOF
prom_start() {
    prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
        --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >>"$WORK/prometheus.log" 2>&1 &
    PROM_PID=$!
    PIDS+=("$PROM_PID")
}
prom_start
query() { curl -s --max-time 5 "$PROM/api/v1/query" --data-urlencode "query=$1"; }
scalar() { query "$1" | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "nan")' 2>/dev/null || echo nan; }
seen_all() { [ "$(scalar 'count(pfi_job_info{job="pfid"})')" = 8 ] && [ "$(scalar 'count(pfi_gpu_power_watts{job="pfid"})')" = 16 ] &&
    [ "$(scalar 'sum(pfi_job_exempt{job="pfid"})')" = 1 ] && [ "$(scalar 'count(pfi_job_sla_floor_ratio{job="pfid"})')" = 1 ]; }
wait_until 40 seen_all || fail "Prometheus never saw the 8 job series and 16 GPUs: $(tail -3 "$WORK/prometheus.log")"
wait_until 15 python3 -c "import sys; sys.exit(0 if $(sum_power) > 8000 else 1)" || fail "the jobs never reached full power"

ctl_start "$WORK/ctl.log" --db "$WORK/ctl.db" --period $PERIOD --policy pfi \
    --cluster-from prometheus --prometheus "$PROM" --agent-timeout-s 2
sleep 2
U=$(sum_power)
LIMIT=$(python3 -c "print(round(0.7 * $U))")
echo "uncapped GPU power $U W; target $LIMIT W"

creq GET /v1/status "" no
python3 - "$WORK/resp" "${NODES[@]}" <<'PY' || fail "the agents found in Prometheus: $BODY"
import json, sys
d = json.load(open(sys.argv[1]))
urls = sorted(a["url"] for a in d["agents"])
assert urls == sorted(sys.argv[2:]), (urls, sys.argv[2:])
assert d["agents_up"] == 4 and all(a["gpus"] == 4 for a in d["agents"]), d["agents"]
jobs = {j["id"]: j for j in d["jobs"]}
# moe-3, exempt, is not planned (its GPUs count at their measured power)
assert sorted(jobs) == sorted(["span", "dense-2", "dense-3"] + ["moe-%d" % i for i in range(3)]), sorted(jobs)
assert jobs["span"]["gpus"] == 4 and jobs["moe-0"]["gpus"] == 2, jobs
assert jobs["span"]["power_w"] > 600, jobs["span"]  # both nodes' share of it
PY
ok "the 4 agents, their 16 GPUs and the 6 jobs planned (span on 4 GPUs of 2 nodes; not moe-3, exempt) read from Prometheus"

# --- span's spread, from the sd query (the sum of its nodes' sd^2) ---
# The test plays span's trainer on its two nodes (uncapped, steady). Node 0
# reports 1000, 1030, 970 (SD 30), node 1 once (no SD yet): the spread is
# unknown (null), not node 0's 30. Then node 1 reports 2040, 1960 (SD 40):
# sqrt(30^2 + 40^2) = 50. The controller's figures (GET /v1/status) must be
# what the agents' own listings (GET /v1/jobs) give, and those the hand ones.
span_report() { # span_report NODE TOKENS_PER_S...
    local i=$1 t save=$PORT
    shift
    PORT=${NODES[$i]##*:}
    for t in "$@"; do
        req POST /v1/jobs/span/throughput "{\"tokens_per_s\":$t}"
        [ "$CODE" = 200 ] || fail "span's report $t on node $i: HTTP $CODE $BODY"
    done
    PORT=$save
}
span_agrees() { # span_agrees TOKENS_PER_S SD|None
    creq GET /v1/status "" no
    printf '%s' "$BODY" >"$WORK/span_status.json"
    local i
    for i in 0 1; do curl -s --max-time 2 "${NODES[$i]}/v1/jobs" >"$WORK/span_jobs$i.json"; done
    python3 - "$1" "$2" "$WORK/span_status.json" "$WORK/span_jobs0.json" "$WORK/span_jobs1.json" <<'PY'
import json, math, sys
want_t, want_sd = float(sys.argv[1]), None if sys.argv[2] == "None" else float(sys.argv[2])
span = lambda f: next(j for j in json.load(open(f))["jobs"] if j["id"] == "span")
ctl, nodes = span(sys.argv[3]), [span(f) for f in sys.argv[4:]]
sds = [j["tokens_sd"] for j in nodes]
agents_t = sum(j["tokens_per_s"] for j in nodes)
agents_sd = None if None in sds else math.sqrt(sum(s * s for s in sds))
same = lambda a, b: a is b or (a is not None and b is not None and abs(a - b) <= 1e-9 * abs(b))
print("controller: %s tokens/s, SD %s; agents: %s tokens/s, SDs %s -> %s"
      % (ctl["tokens_per_s"], ctl["tokens_sd"], agents_t, sds, agents_sd))
sys.exit(0 if same(agents_t, want_t) and same(agents_sd, want_sd) and
         same(ctl["tokens_per_s"], agents_t) and same(ctl["tokens_sd"], agents_sd) else 1)
PY
}
span_report 0 1000 1030 970
span_report 1 2000
wait_until 10 span_agrees 2970 None || fail "span, one node without a spread: $(span_agrees 2970 None)"
ok "span with one node's SD unknown: the controller's spread unknown, as the agents' listings"
span_report 1 2040 1960
wait_until 10 span_agrees 2930 50 || fail "span's spread: $(span_agrees 2930 50)"
ok "span's spread from the sd query: sqrt(30^2 + 40^2) = 50, as the agents' listings give"

if [ -n "${PFI_RECORD_DIR:-}" ]; then
    mkdir -p "$PFI_RECORD_DIR"
    i=0
    while IFS= read -r q; do
        query "$q" >"$PFI_RECORD_DIR/q$i.json"
        i=$((i + 1))
    done <"$PFI_RECORD_DIR/queries.txt"
fi

END=$(python3 -c "import time; print(int(time.time()) + 90)")
creq POST /v1/targets "{\"id\":\"dr-1\",\"gpu_power_w\":$LIMIT,\"start\":$(date +%s),\"duration_s\":90}"
expect 201 "POST a target at 70%"
sleep $(python3 -c "print(3 * $PERIOD + 0.5)")
under_after 3 || fail "over the target after 3 periods"
ok "under $LIMIT W from 3 periods (and a scrape) after the step, for 3 s"

CAPS=$(span_caps)
one_cap $CAPS || fail "the job across nodes 0 and 1 has different caps: $CAPS"
[ "$(gpu_state | awk '$5 == 1' | wc -l)" = 14 ] || fail "not every GPU but moe-3's capped: $(gpu_state)"
exempt_free || fail "the exempt job's GPUs capped"
ok "every GPU but the exempt moe-3's capped, one cap for the job spanning two nodes (${CAPS%% *} W); moe-3's at 700 W"

# --- dense-3 held at its floor; dense-2 (the same sim job, no floor) below ---
creq GET /v1/status "" no
python3 - "$WORK/resp" "$(caps_of 3 0) $(caps_of 3 1) $(caps_of 2 0)" <<'PY' || fail "dense-3's SLA floor: $BODY"
import json, sys
jobs = {j["id"]: j for j in json.load(open(sys.argv[1]))["jobs"]}
d3, d2 = jobs["dense-3"], jobs["dense-2"]
c30, c31, c20 = (float(x) for x in sys.argv[2].split())
share = d3["expected_tput"] / d3["uncapped_tput"]
print("dense-3: cap %s W, at floor %s, planned share %.3f; dense-2: cap %s W, share %.3f"
      % (d3["cap_w"], d3["at_floor"], share, d2["cap_w"], d2["expected_tput"] / d2["uncapped_tput"]))
assert d3["at_floor"] and share >= 0.9 - 1e-6, d3
# the agents' caps are read a moment after the status: dense-2's may have moved a step
assert c30 == c31 >= d3["cap_w"] and c30 > c20, (c30, c31, d3, c20, d2)
PY
ok "dense-3 held at its 0.9 floor (its GPUs at the cap planned for it), dense-2 cut deeper"

# --- SIGKILL of an agent: Prometheus says up == 0; counted at 4 x 700 W ---
agent_death 3 4 "$WORK/jobs3.csv" $(python3 -c "print(4 * $PERIOD + 1)")
exempt_free || fail "the exempt job's GPUs capped after node 3 came back"

# --- SIGKILL and restart of the controller mid-event: the caps stay ---
kill -KILL "$CTL_PID"
wait "$CTL_PID" 2>/dev/null || true
ctl_start "$WORK/ctl2.log" --db "$WORK/ctl.db" --period $PERIOD --policy pfi \
    --cluster-from prometheus --prometheus "$PROM" --agent-timeout-s 2
grep -q "resumed: 14 cap(s) held" "$WORK/ctl2.log" || fail "no resume of 14 caps: $(cat "$WORK/ctl2.log")"
sleep $(python3 -c "print(3 * $PERIOD)")
under_after 2 || fail "over after the controller's restart"
[ "$(gpu_state | awk '$5 == 1' | wc -l)" = 14 ] || fail "caps lost over the restart: $(gpu_state)"
exempt_free || fail "the exempt job's GPUs capped after the controller's restart"
ok "controller restarted: its 14 caps resumed on the agents found again, still under, moe-3 uncapped"

# --- Prometheus dies: nothing is released ---
kill -KILL "$PROM_PID"
wait "$PROM_PID" 2>/dev/null || true
sleep $(python3 -c "print(3 * $PERIOD)")
[ "$(gpu_state | awk '$5 == 1' | wc -l)" = 14 ] || fail "caps released while Prometheus is down: $(gpu_state)"
under_after 2 || fail "over while Prometheus is down"
exempt_free || fail "the exempt job's GPUs capped while Prometheus is down"
creq GET /v1/status "" no
[ "$(jq_py 'd["agents_up"]')" = 0 ] || fail "agents still up without Prometheus: $BODY"
jq_py 'd["agents"][0]["error"]' | grep -q '^Prometheus: ' || fail "no Prometheus error in the status: $BODY"
ok "Prometheus killed: the 14 caps stay, still under, the status says why"
prom_start
wait_until 20 seen_all || fail "Prometheus did not come back"
sleep 2
creq GET /v1/status "" no
[ "$(jq_py 'd["agents_up"]')" = 4 ] || fail "agents not back with Prometheus: $BODY"
ok "Prometheus back: 4 agents up"

# --- the target deleted: every GPU back at its prior limit ---
creq DELETE /v1/targets/dr-1; expect 200 "DELETE dr-1"
back() { [ "$(gpu_state | awk '$4 != 700 || $5 != 0' | wc -l)" = 0 ]; }
wait_until 8 back || fail "not every GPU back at 700 W: $(gpu_state)"
ok "target deleted: all 16 GPUs back at 700 W (their prior limit), uncapped"
