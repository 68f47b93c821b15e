#!/usr/bin/env bash
# Active/standby controllers on etcd (issue 33): a 3-member etcd on loopback,
# two controllers (A reaches etcd through a TCP forwarder the test can cut,
# B the members directly, member 2 first), three sim agents. For each fault
# -- the leader cut off from etcd but not from the agents, SIGSTOP then
# SIGCONT of the leader, kill -9 of the leader, etcd losing a member -- it
# shows: a new leader within 3 periods, the site under its target at every
# sample of every agent, every cap on the agents carrying the new leader's
# owner and epoch (none of the deposed leader's accepted after), and no
# target lost. pfid's fence itself: a lower epoch gets 409 naming the holder.
# A clean stop of the leader hands over at once (its lease revoked).
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"

command -v etcd >/dev/null || { echo "skip: etcd-server not installed (scripts/install-deps.sh)"; exit 77; }
# Periods of 1.4 s, a lease of 2 s: etcd grants no shorter lease and expires
# them on a 0.5 s sweep, so a takeover takes 2.2-3.1 s (measured in both
# builds); 3 periods is 4.2 s, room for a loaded CI machine.
PERIOD=1.4
WITHIN=$(python3 -c "print(3 * $PERIOD)")
LIMIT=2400

# --- bad options: refused before anything starts, saying why ---
bad_run() { # RC MESSAGE ARGS...: pfi control run ARGS exits RC, saying MESSAGE
    local want=$1 msg=$2 rc=0
    shift 2
    "$PFI_BIN" control run --db "$WORK/bad.db" --token-file "$TOKEN_FILE" --agents http://127.0.0.1:9 \
        --listen 127.0.0.1:0 "$@" >"$WORK/bad.out" 2>&1 || rc=$?
    [ "$rc" = "$want" ] && grep -qF -- "$msg" "$WORK/bad.out" ||
        fail "pfi control run $*: exit $rc, expected $want and '$msg': $(cat "$WORK/bad.out")"
}
bad_run 2 "--etcd and --ha-name go together" --etcd http://127.0.0.1:9
bad_run 2 "--ha-name: 1-64 characters" --etcd http://127.0.0.1:9 --ha-name a/b
bad_run 1 "'ftp://x' is not an http:// or https:// URL" --etcd ftp://x --ha-name s
bad_run 1 "give at least 4.9" --etcd http://127.0.0.1:9 --ha-name s --ha-ttl-s 2
ok "bad --etcd, --ha-name, --ha-ttl-s refused, saying why"

# --- etcd: three members, fast elections (a lost member is noticed in 0.5 s) ---
CP=() PP=()
for i in 0 1 2; do CP[$i]=$(free_port); PP[$i]=$(free_port); done
CLUSTER="e0=http://127.0.0.1:${PP[0]},e1=http://127.0.0.1:${PP[1]},e2=http://127.0.0.1:${PP[2]}"
ETCD_PID=()
for i in 0 1 2; do
    etcd --name "e$i" --data-dir "$WORK/etcd$i" --listen-client-urls "http://127.0.0.1:${CP[$i]}" \
        --advertise-client-urls "http://127.0.0.1:${CP[$i]}" --listen-peer-urls "http://127.0.0.1:${PP[$i]}" \
        --initial-advertise-peer-urls "http://127.0.0.1:${PP[$i]}" --initial-cluster "$CLUSTER" \
        --initial-cluster-state new --heartbeat-interval 50 --election-timeout 500 \
        >"$WORK/etcd$i.log" 2>&1 &
    ETCD_PID[$i]=$!
    PIDS+=($!)
done
for i in 0 1 2; do
    wait_until 20 bash -c "curl -sf http://127.0.0.1:${CP[$i]}/health | grep -q true" ||
        fail "etcd member $i not healthy: $(tail -5 "$WORK/etcd$i.log")"
done
ok "etcd: 3 members on loopback"

# A's path to etcd: a forwarder to member 0 that the test kills to cut it.
proxy_start() {
    python3 "$PFI_SOURCE_DIR/tests/integration/tcp_proxy.py" --port "${PX:-0}" --to "${CP[0]}" \
        --port-file "$WORK/proxy.port" 2>>"$WORK/proxy.err" &
    PROXY_PID=$!
    PIDS+=($!)
    wait_until 10 test -s "$WORK/proxy.port" || fail "the proxy did not start: $(cat "$WORK/proxy.err")"
    PX=$(cat "$WORK/proxy.port")
}
proxy_start

# --- three agents, one 2-GPU job each ---
for i in 0 1 2; do
    cat >"$WORK/jobs$i.csv" <<CSV
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,warmup_s,startup_s
0,j$i,0.8,0.9,0.4,0.6,16000,0.2,0.2
1,j$i,0.8,0.9,0.4,0.6,16000,0.2,0.2
CSV
    node_start $i 2 "$WORK/jobs$i.csv"
    register $i "j$i" '[0,1]'
done
AGENTS=$(IFS=,; echo "${NODES[*]}")
# their tokens/s at the caps in force (so the leader learns points, which it
# shares): one table for all, per GPU, linear between caps
python3 - "$WORK/reporter.json" "${NODES[@]}" <<'PY'
import json, sys
json.dump({"tables": {"t": [[200, 6000], [450, 12500], [700, 16000]]},
           "nodes": [{"url": u, "jobs": [{"id": "j%d" % i, "table": "t", "gpus": [0, 1]}]}
                     for i, u in enumerate(sys.argv[2:])]}, open(sys.argv[1], "w"))
PY
python3 "$PFI_SOURCE_DIR/tests/integration/sim_reporter.py" --spec "$WORK/reporter.json" \
    --token-file "$TOKEN_FILE" --interval 0.5 2>"$WORK/reporter.log" &
PIDS+=($!)

# ctl NAME ETCD [ARGS]: a controller (URL in URL_NAME, PID in PID_NAME).
ctl() {
    local name=$1 etcd=$2
    shift 2
    ctl_start "$WORK/ctl$name.$(date +%s%N).log" --db "$WORK/ctl$name.db" --agents "$AGENTS" \
        --agent-token-file "$TOKEN_FILE" --period $PERIOD --agent-timeout-s 0.4 \
        --etcd "$etcd" --ha-name site1 --ha-ttl-s 2 "$@"
    printf -v "URL_$name" %s "$CTL_URL"
    printf -v "PID_$name" %s "$CTL_PID"
}
# ha URL: "role epoch owner" of a controller, "down" when it does not answer.
ha() {
    curl -s --max-time 1 "$1/v1/status" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); h=d["ha"]; print(h["role"], h["epoch"], d["owner"])' 2>/dev/null ||
        echo down
}
# leader_within T0 S URL: URL's controller reports itself leader within S
# seconds of T0 (Unix s); prints the time it took.
leader_within() {
    local t0=$1 limit=$2 url=$3
    while :; do
        set -- $(ha "$url")
        if [ "$1" = leader ]; then
            python3 -c "import sys,time; d = time.time() - $t0; print('%.2f' % d); sys.exit(d > $limit)"
            return
        fi
        python3 -c "import sys,time; sys.exit(0 if time.time() - $t0 < $limit else 1)" || return 1
        sleep 0.1
    done
}
# caps_all OWNER EPOCH: every GPU of every agent capped by OWNER at EPOCH.
caps_all() {
    local i
    for i in "${!NODES[@]}"; do
        curl -s --max-time 2 "${NODES[$i]}/v1/gpus"
    done | python3 -c "
import json, sys
dec = json.JSONDecoder(); s = sys.stdin.read().strip(); bad = []; n = 0
while s:
    d, k = dec.raw_decode(s); s = s[k:].strip()
    for g in d['gpus']:
        c = g['cap']; n += 1
        if not c or c['owner'] != '$1' or c['epoch'] != $2: bad.append((g['gpu'], c and c['owner'], c and c['epoch']))
sys.exit(0 if n == 6 and not bad else print(bad) or 1)"
}
has_targets() { # URL ID...: the controller lists every ID
    local url=$1
    shift
    curl -s "$url/v1/targets" | python3 -c "
import json, sys
ids = {t['id'] for t in json.load(sys.stdin)['targets']}
sys.exit(0 if set(sys.argv[1:]) <= ids else print(ids) or 1)" "$@"
}

ctl A "http://127.0.0.1:$PX"
wait_until 10 bash -c "curl -s $URL_A/v1/status | grep -q '\"role\": *\"leader\"'" || fail "A did not lead: $(ha "$URL_A")"
ctl B "http://127.0.0.1:${CP[2]},http://127.0.0.1:${CP[0]},http://127.0.0.1:${CP[1]}"
set -- $(ha "$URL_A"); EPOCH=$2; OWNER_A=$3
set -- $(ha "$URL_B"); OWNER_B=$3
[ "$1" = follower ] || fail "B is not a follower: $*"
ok "A leads at epoch $EPOCH, B follows"

# a target: a follower refuses it (naming the leader), the leader takes it
PORT_SAVE=$PORT
CTL_URL=$URL_B creq POST /v1/targets "{\"id\":\"dr\",\"gpu_power_w\":$LIMIT,\"start\":$(date +%s),\"duration_s\":900}"
expect 503 "POST a target to the follower"
echo "$BODY" | grep -q "$OWNER_A" || fail "the refusal does not name the leader: $BODY"
CTL_URL=$URL_A creq POST /v1/targets "{\"id\":\"dr\",\"gpu_power_w\":$LIMIT,\"start\":$(date +%s),\"duration_s\":900}"
expect 201 "POST a target of $LIMIT W to the leader"
wait_until 10 caps_all "$OWNER_A" "$EPOCH" || fail "A's caps not on every GPU: $(gpu_state)"
sleep 2
under_after 1 || fail "over before any fault"
wait_until 5 has_targets "$URL_B" dr || fail "B does not have the target"
ok "caps of $OWNER_A at epoch $EPOCH on all 6 GPUs, site under $LIMIT W; B has the target"

# The sampler: every agent's GPUs every 0.25 s, "t total" per line, all test long.
python3 - "$WORK/samples" "${NODES[@]}" <<'PY' &
import json, sys, time, urllib.request
out = open(sys.argv[1], "a", buffering=1)
while True:
    tot, ok = 0.0, True
    for u in sys.argv[2:]:
        try:
            d = json.load(urllib.request.urlopen(u + "/v1/gpus", timeout=1))
            tot += sum(g["sample"]["power_watts"] for g in d["gpus"])
        except Exception:
            ok = False
    if ok:
        out.write("%.3f %.1f\n" % (time.time(), tot))
    time.sleep(0.25)
PY
PIDS+=($!)
under_throughout() { # WHAT: every sample so far under LIMIT (+1 W)
    python3 - "$WORK/samples" "$LIMIT" "$1" <<'PY' || fail "$1: the site went over"
import sys
s = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
over = [x for x in s if x[1] > float(sys.argv[2]) + 1]
print("ok: %s: %d samples, max %.1f W <= %s W" % (sys.argv[3], len(s), max(x[1] for x in s), sys.argv[2]))
sys.exit(1 if over or len(s) < 4 else 0)
PY
}

# --- fault 1: A cut off from etcd, not from the agents ---
T0=$(python3 -c 'import time; print(time.time())')
kill -KILL "$PROXY_PID"
DT=$(leader_within "$T0" "$WITHIN" "$URL_B") || fail "cut: B did not lead within 3 periods: $(ha "$URL_B")"
set -- $(ha "$URL_B"); E2=$2
[ "$E2" -gt "$EPOCH" ] || fail "cut: B's epoch $E2 not above $EPOCH"
LEFT=$(grep -ho 'stepping down from epoch [0-9]*, [-0-9.]* s before' "$WORK"/ctlA.*.log | tail -1 | awk '{print $6}')
python3 -c "import sys; sys.exit(0 if float('${LEFT:-nan}') > 0 else 1)" ||
    fail "cut: A did not step down before its lease ended: $(cat "$WORK"/ctlA.*.log)"
wait_until 5 caps_all "$OWNER_B" "$E2" || fail "cut: caps not B's at epoch $E2"
sleep 1.5
caps_all "$OWNER_B" "$E2" || fail "cut: a cap of the deposed A was accepted"
has_targets "$URL_B" dr || fail "cut: target lost"
under_throughout "cut"
ok "cut from etcd: A stepped down ${LEFT} s before its lease ended; B leads at epoch $E2 after $DT s; caps all B's; target kept"
proxy_start # healed: A follows
wait_until 5 bash -c "curl -s $URL_A/v1/status | grep -q '\"role\": *\"follower\"'" || fail "A is not a follower after the heal"

# --- fault 2: SIGSTOP of the leader (B), SIGCONT after A took over ---
T0=$(python3 -c 'import time; print(time.time())')
kill -STOP "$PID_B"
DT=$(leader_within "$T0" "$WITHIN" "$URL_A") || { kill -CONT "$PID_B"; fail "stop: A did not lead within 3 periods: $(ha "$URL_A")"; }
set -- $(ha "$URL_A"); E3=$2
wait_until 5 caps_all "$OWNER_A" "$E3" || { kill -CONT "$PID_B"; fail "stop: caps not A's at epoch $E3"; }
kill -CONT "$PID_B"
sleep 2.5
set -- $(ha "$URL_B")
[ "$1" = follower ] || fail "stop: B did not wake deposed: $*"
caps_all "$OWNER_A" "$E3" || fail "stop: B changed a cap after waking"
has_targets "$URL_A" dr || fail "stop: target lost"
under_throughout "stop"
ok "SIGSTOP: A leads at epoch $E3 after $DT s; B woke a follower and changed no cap"

# pfid's fence: B's old epoch is refused, naming the holder
PORT=${NODES[0]##*:}
CODE=$(curl -s -o "$WORK/resp" -w '%{http_code}' -X PUT -H "Authorization: Bearer $TOKEN" \
    -H "Pfi-Owner: $OWNER_B" -H "Pfi-Epoch: $E2" -H 'Content-Type: application/json' \
    --data '{"watts":690,"expires_s":60}' "${NODES[0]}/v1/gpus/0/limit")
BODY=$(cat "$WORK/resp")
[ "$CODE" = 409 ] || fail "a cap at the deposed epoch $E2: HTTP $CODE ($BODY)"
[ "$(jq_py 'd["owner"], d["epoch"]')" = "$OWNER_A $E3" ] || fail "the 409 does not name A at $E3: $BODY"
caps_all "$OWNER_A" "$E3" || fail "the refused cap changed something"
ok "pfid refuses epoch $E2 below $E3: 409 naming $OWNER_A"

# --- fault 3: kill -9 of the leader (A) ---
CTL_URL=$URL_A creq POST /v1/targets "{\"id\":\"dr2\",\"gpu_power_w\":$((LIMIT + 200)),\"start\":$(date +%s),\"duration_s\":900}"
expect 201 "POST a second target to A"
sleep 1.5 # a period: the leader writes it to etcd
T0=$(python3 -c 'import time; print(time.time())')
kill -KILL "$PID_A"
DT=$(leader_within "$T0" "$WITHIN" "$URL_B") || fail "kill: B did not lead within 3 periods: $(ha "$URL_B")"
set -- $(ha "$URL_B"); E4=$2
wait_until 5 caps_all "$OWNER_B" "$E4" || fail "kill: caps not B's at epoch $E4"
has_targets "$URL_B" dr dr2 || fail "kill: a target lost"
grep -q "acting at epoch $E4: 2 target(s), 6 cap(s) held" "$WORK"/ctlB.*.log ||
    fail "kill: B did not take A's 6 caps and 2 targets from etcd: $(grep acting "$WORK"/ctlB.*.log)"
under_throughout "kill"
ok "kill -9: B leads at epoch $E4 after $DT s; caps all B's; both targets kept"
ctl A "http://127.0.0.1:$PX" # back, on its own store: a follower
wait_until 5 bash -c "curl -s $URL_A/v1/status | grep -q '\"role\": *\"follower\"'" || fail "A restarted is not a follower"

# --- fault 4: etcd loses member 2, B's first endpoint, made etcd's leader
# first (the worst member to lose: a raft election, leases on hold) ---
ALL="http://127.0.0.1:${CP[0]},http://127.0.0.1:${CP[1]},http://127.0.0.1:${CP[2]}"
ETCDCTL_API=3 etcdctl --endpoints "$ALL" endpoint status -w json >"$WORK/etcd-status.json"
read -r RAFT_LEADER M2 < <(python3 - "$WORK/etcd-status.json" "${CP[2]}" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
lead = st[0]["Status"]["leader"]
ep = {s["Status"]["header"]["member_id"]: s["Endpoint"] for s in st}
m2 = [s["Status"]["header"]["member_id"] for s in st if s["Endpoint"].endswith(":" + sys.argv[2])][0]
print(ep[lead], "%x" % m2)
PY
)
if [ "$RAFT_LEADER" != "http://127.0.0.1:${CP[2]}" ]; then
    ETCDCTL_API=3 etcdctl --endpoints "$RAFT_LEADER" move-leader "$M2" >/dev/null ||
        fail "etcdctl move-leader $M2 failed"
fi
sleep 1
T0=$(python3 -c 'import time; print(time.time())')
kill -KILL "${ETCD_PID[2]}"
DT=$(leader_within "$T0" "$WITHIN" "$URL_B") || DT=$(leader_within "$T0" "$WITHIN" "$URL_A") ||
    fail "member lost: no leader within 3 periods: A $(ha "$URL_A"), B $(ha "$URL_B")"
sleep 2
LEAD=$URL_B
[ "$(ha "$URL_B" | cut -d' ' -f1)" = leader ] || LEAD=$URL_A
set -- $(ha "$LEAD"); E5=$2; OWNER=$3
CTL_URL=$LEAD creq POST /v1/targets "{\"id\":\"dr3\",\"gpu_power_w\":$((LIMIT + 100)),\"start\":$(date +%s),\"duration_s\":900}"
expect 201 "POST a third target with 2 members left"
wait_until 5 caps_all "$OWNER" "$E5" || fail "member lost: caps not the leader's"
FOLLOW=$URL_A
[ "$LEAD" = "$URL_A" ] && FOLLOW=$URL_B
wait_until 5 has_targets "$FOLLOW" dr dr2 dr3 || fail "member lost: the follower lacks a target"
under_throughout "member lost"
ok "etcd lost its leader member: a leader (epoch $E5) within $DT s; writes go on; no target lost"

# what HA costs: the leader's etcd writes over 3 periods of an event
counter() { curl -s "$LEAD/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
T1=$(counter pfi_control_ha_etcd_txns_total) K1=$(counter pfi_control_ha_etcd_puts_total)
sleep "$WITHIN"
T2=$(counter pfi_control_ha_etcd_txns_total) K2=$(counter pfi_control_ha_etcd_puts_total)
python3 -c "print('ok: etcd writes per period: %.2f transactions, %.2f keys (3 jobs learning, 6 GPUs)' % (($T2 - $T1) / 3, ($K2 - $K1) / 3))"
# Read whole (grep -q would close the pipe on curl under pipefail), and
# again for a while: a leader starved of CPU past its renewals (1.1 s here)
# steps down and takes the lead back, a period as a follower.
shows() { # URL LEADER(1|0): its metrics say so, at epoch E5
    local m
    m=$(curl -s "$1/metrics")
    echo "$m" | grep -q "^pfi_control_ha_leader $2\$" && echo "$m" | grep -q "^pfi_control_ha_epoch $E5\$"
}
says_leader() { # the leader's pfi control status line
    local out
    out=$("$PFI_BIN" control status --url "$LEAD")
    echo "$out" | grep -q "^ha  *leader, epoch $E5, leader $OWNER,"
}
wait_until 5 shows "$LEAD" 1 || fail "the leader's pfi_control_ha_leader/epoch: $(curl -s "$LEAD/metrics" | grep ha_)"
wait_until 5 shows "$FOLLOW" 0 || fail "the follower's pfi_control_ha_leader/epoch: $(curl -s "$FOLLOW/metrics" | grep ha_)"
wait_until 5 says_leader || fail "pfi control status: $("$PFI_BIN" control status --url "$LEAD")"
ok "metrics and pfi control status show the role and epoch"

# --- a clean stop of the leader: it revokes its lease, the follower leads
# at once (well inside the 2 s lease), and it exits 0 (ASan: no leak) ---
LPID=$PID_B
[ "$LEAD" = "$URL_A" ] && LPID=$PID_A
T0=$(python3 -c 'import time; print(time.time())')
kill -TERM "$LPID"
DT=$(leader_within "$T0" 1.5 "$FOLLOW") || fail "SIGTERM: the follower did not lead within 1.5 s: $(ha "$FOLLOW")"
RC=0
wait "$LPID" || RC=$?
[ "$RC" = 0 ] || fail "the leader's SIGTERM exit: $RC"
has_targets "$FOLLOW" dr dr2 dr3 || fail "SIGTERM: a target lost"
ok "SIGTERM of the leader: lease revoked, the follower leads after $DT s; exit 0"

# --- the leader's wall clock stepped an hour ahead (tests/clock-shim): its
# renewals wait on the monotonic clock, so it keeps its lease and epoch ---
FPID=$PID_B
[ "$FOLLOW" = "$URL_A" ] && FPID=$PID_A
kill -TERM "$FPID"
wait "$FPID" || true
STEP=$WORK/clock-step
echo 0 >"$STEP"
[ -f "$PFI_CLOCK_SHIM" ] || fail "the clock shim $PFI_CLOCK_SHIM is not built"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
LD_PRELOAD=$PFI_CLOCK_SHIM CLOCK_STEP_FILE=$STEP ctl C "http://127.0.0.1:${CP[0]},http://127.0.0.1:${CP[1]}"
wait_until 5 bash -c "curl -s $URL_C/v1/status | grep -q '\"role\": *\"leader\"'" || fail "C did not lead: $(ha "$URL_C")"
set -- $(ha "$URL_C"); EC=$2
echo 3600 >"$STEP"
sleep 3 # past the 2 s lease
KEY_REV=$(ETCDCTL_API=3 etcdctl --endpoints "http://127.0.0.1:${CP[0]}" get /pfi/site1/leader -w json |
    python3 -c 'import json,sys; k=json.load(sys.stdin).get("kvs", []); print(k[0]["create_revision"] if k else "none")')
[ "$KEY_REV" = "$EC" ] || fail "clock step: the leader key's revision is $KEY_REV, not C's epoch $EC (its lease lapsed)"
c_leads() { [ "$(ha "$URL_C" | cut -d' ' -f1-2)" = "leader $EC" ]; }
wait_until 3 c_leads || fail "clock step: C is $(ha "$URL_C")"
read -r AHEAD P1 < <(curl -s "$URL_C/v1/status" | python3 -c 'import json,sys,time; d=json.load(sys.stdin); print(int(d["t"] - time.time()), d["counters"]["periods"])')
[ "$AHEAD" -gt 3000 ] || fail "clock step: C's clock is $AHEAD s ahead, not an hour (is $PFI_CLOCK_SHIM built?)"
# two more periods (2.4 s) within 6 s: a loop that waits on the stepped
# wall clock would run none for an hour; a fixed 2.5 s window missed one
# tick on a loaded machine
c_periods() { curl -s "$URL_C/v1/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["counters"]["periods"])'; }
c_ran() { [ "$(c_periods)" -ge $((P1 + 2)) ]; }
wait_until 6 c_ran || fail "clock step: C's loop stalled ($P1 -> $(c_periods) periods in 6 s)"
ok "the leader's wall clock an hour ahead: still leader at epoch $EC, its key on a live lease, its periods running"
