#!/usr/bin/env bash
# The grid's request end to end on loopback: 4 pfid (sim backend, 8 GPUs
# each; two jobs span two nodes each), a real Prometheus scraping them and
# the controller, and the test VTN (tests/vtn/vtn.py, which checks its events
# and every body it receives against openadr3-3.1.0.yaml). The VTN serves an
# IMPORT_CAPACITY_LIMIT event in kW with two intervals (70% then 60% of the
# site's uncapped power, a 2 kW non-GPU load counted). Asserted from
# Prometheus' own data: the site under each interval's limit from 3 periods
# after its start to its end; after the event every GPU back at its prior
# limit; the VTN received a valid report per interval; an event that
# disappears from the VTN is cancelled (its caps released).
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"
command -v prometheus >/dev/null || fail "prometheus not installed (scripts/install-deps.sh)"
: "${PFI_SHARED_DIR:?}"

PERIOD=1
OTHER=2000
for i in 0 1 2 3; do
    cat >"$WORK/jobs$i.csv" <<CSV
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,warmup_s,startup_s
0,s,0.8,0.9,0.4,0.6,16000,0.2,0.2
1,s,0.8,0.9,0.4,0.6,16000,0.2,0.2
2,s,0.8,0.9,0.4,0.6,16000,0.2,0.2
3,s,0.8,0.9,0.4,0.6,16000,0.2,0.2
4,l,0.5,0.7,0.5,0.3,9000,0.2,0.2
5,l,0.5,0.7,0.5,0.3,9000,0.2,0.2
6,m,0.3,0.5,0.6,0.1,6000,0.2,0.2
7,m,0.3,0.5,0.6,0.1,6000,0.2,0.2
CSV
    node_start $i 8 "$WORK/jobs$i.csv"
done
register 0 span-01 '[0,1,2,3]'
register 1 span-01 '[0,1,2,3]'
register 2 span-23 '[0,1,2,3]'
register 3 span-23 '[0,1,2,3]'
for i in 0 1 2 3; do register $i "dense-$i" '[4,5]'; register $i "moe-$i" '[6,7]'; done

# --- the VTN, with an empty event list for now ---
vtn_start

# The site meter: Prometheus' GPU total plus the 2 kW other load (a real
# site would query its meter's series). Until Prometheus answers, the stated
# --other-load-w is used.
PROM_PORT=$(free_port)
PROM=http://127.0.0.1:$PROM_PORT
ctl_start "$WORK/ctl.log" --db "$WORK/ctl.db" --period $PERIOD --policy pfi --other-load-w $OTHER \
    --prometheus "$PROM" --site-meter "sum(pfi_gpu_power_watts{job=\"pfid\"}) + $OTHER" \
    --agents "${NODES[0]},${NODES[1]},${NODES[2]},${NODES[3]}" --agent-timeout-s 0.5 \
    --vtn "$VURL" --program dc-flex --vtn-client-id ven-1 --vtn-client-secret-file "$WORK/secret" \
    --vtn-poll-s 1

# --- Prometheus scrapes the agents and the controller every second ---
cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: pfid
    static_configs:
      - targets: ['${NODES[0]#http://}', '${NODES[1]#http://}', '${NODES[2]#http://}', '${NODES[3]#http://}']
  - job_name: pfi-control
    static_configs:
      - targets: ['${CTL_URL#http://}']
EOF
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
    --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
full() {
    python3 -c "import sys; sys.exit(0 if float('$(scalar 'sum(pfi_gpu_power_watts{job="pfid"})')') > 14000 and float('$(scalar 'count(pfi_gpu_power_watts{job="pfid"})')') == 32 else 1)"
}
wait_until 40 full || fail "Prometheus never saw 32 GPUs at full power: $(tail -3 "$WORK/prometheus.log")"
sleep 2
U=$(scalar 'sum(pfi_gpu_power_watts{job="pfid"})')
SITE=$(python3 -c "print($U + $OTHER)")
echo "uncapped: GPUs $U W, site $SITE W"
creq GET /v1/status "" no
[ "$(jq_py 'd["other_load_source"]')" = meter ] || fail "the site meter is not used: $BODY"
python3 -c "import sys; sys.exit(0 if abs($(jq_py 'd["other_load_w"]') - $OTHER) < 1500 else 1)" ||
    fail "other load from the meter: $(jq_py 'd["other_load_w"]') W, expected about $OTHER"
ok "the site meter gives the other load: $(jq_py 'd["other_load_w"]') W"

# --- the event: two 10 s intervals at 70% and 60% of the site, in kW ---
T0=$(( $(date +%s) + 3 ))
python3 - "$WORK/events.json" "$T0" "$SITE" <<'PY'
import datetime, json, os, sys
path, t0, site = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
start = datetime.datetime.fromtimestamp(t0, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
meta = {"createdDateTime": "2025-01-01T00:00:00Z", "modificationDateTime": "2025-01-01T00:00:00Z",
        "objectType": "EVENT", "programID": "prog-1"}
ev = dict(meta, id="dr-event", priority=0, eventName="hold the import",
          intervalPeriod={"start": start, "duration": "PT10S"},
          payloadDescriptors=[{"objectType": "EVENT_PAYLOAD_DESCRIPTOR", "payloadType": "IMPORT_CAPACITY_LIMIT", "units": "KW"}],
          reportDescriptors=[{"payloadType": "READING", "readingType": "DIRECT_READ", "units": "KW",
                              "startInterval": -1, "numIntervals": -1, "historical": True, "frequency": -1, "repeat": 1}],
          intervals=[{"id": 0, "payloads": [{"type": "IMPORT_CAPACITY_LIMIT", "values": [round(0.7 * site / 1000, 3)]}]},
                     {"id": 1, "payloads": [{"type": "IMPORT_CAPACITY_LIMIT", "values": [round(0.6 * site / 1000, 3)]}]}])
json.dump([ev], open(path + ".tmp", "w"))
os.replace(path + ".tmp", path)
PY
L1=$(python3 -c "print(round(0.7 * $SITE / 1000, 3) * 1000)")
L2=$(python3 -c "print(round(0.6 * $SITE / 1000, 3) * 1000)")
sleep $((T0 + 20 + 4 - $(date +%s)))

# --- from Prometheus' own samples: under each limit from 3 periods in ---
curl -s --max-time 10 "$PROM/api/v1/query_range" --data-urlencode "query=sum(pfi_gpu_power_watts{job=\"pfid\"}) + $OTHER" \
    --data-urlencode "start=$((T0 - 2))" --data-urlencode "end=$((T0 + 22))" --data-urlencode "step=0.5" >"$WORK/range.json"
python3 - "$WORK/range.json" "$T0" "$L1" "$L2" "$PERIOD" <<'PY' || fail "site power over a limit (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
t0, l1, l2, p = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
vals = [(float(t), float(v)) for t, v in d["data"]["result"][0]["values"]]
lag = 3 * p + 1.0  # 3 periods, plus one scrape
bad, n, top = [], {1: 0, 2: 0}, {1: 0, 2: 0}
for t, v in vals:
    for k, lo, hi, lim in ((1, t0, t0 + 10, l1), (2, t0 + 10, t0 + 20, l2)):
        if lo + lag <= t < hi:
            n[k] += 1
            top[k] = max(top[k], v)
            if v > lim + 1: bad.append((round(t - t0, 1), v, lim))
print("samples", n, "limits", l1, l2, "highest", top)
assert n[1] >= 8 and n[2] >= 8, n
assert not bad, bad
PY
ok "site power (Prometheus) under $L1 W then $L2 W from 3 periods into each interval"

back() { [ "$(scalar 'count(pfi_gpu_power_limit_watts{job="pfid"} == 700)')" = 32 ] &&
         [ "$(scalar 'count(pfi_gpu_cap_watts{job="pfid"})')" = nan ]; }
wait_until 10 back || fail "after the event not every GPU is back at 700 W"
ok "after the event all 32 GPUs are back at their prior limit (700 W), uncapped"

wait_until 10 bash -c "[ \$(cat '$WORK/reports.jsonl' 2>/dev/null | wc -l) -ge 2 ]" || fail "the VTN got too few reports"
python3 - "$WORK/reports.jsonl" "$WORK/vtn.log" <<'PY' || fail "reports"
import json, sys
reps = [json.loads(l) for l in open(sys.argv[1])]
log = [json.loads(l) for l in open(sys.argv[2])]
assert not any(r["status"] in (400, 500) for r in log), [r for r in log if r["status"] in (400, 500)]
ivs = {}
for r in reps:
    assert r["eventID"] == "dr-event" and r["programID"] == "prog-1", r
    assert r["payloadDescriptors"][0]["units"] == "KW"
    for iv in r["resources"][0]["intervals"]:
        ivs[iv["id"]] = iv["payloads"][0]["values"][0]
assert sorted(ivs) == [0, 1], ivs
print("reported kW", ivs)
assert 0 < ivs[1] < ivs[0], ivs
PY
ok "the VTN received one valid report per interval"

# --- an event that disappears is cancelled ---
python3 - "$WORK/events.json" "$(date +%s)" "$SITE" <<'PY'
import datetime, json, os, sys
path, t1, site = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
start = datetime.datetime.fromtimestamp(t1, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
ev = {"id": "long", "programID": "prog-1", "objectType": "EVENT", "createdDateTime": "2025-01-01T00:00:00Z",
      "modificationDateTime": "2025-01-01T00:00:00Z", "intervalPeriod": {"start": start, "duration": "PT10M"},
      "payloadDescriptors": [{"objectType": "EVENT_PAYLOAD_DESCRIPTOR", "payloadType": "IMPORT_CAPACITY_LIMIT", "units": "KW"}],
      "intervals": [{"id": 0, "payloads": [{"type": "IMPORT_CAPACITY_LIMIT", "values": [round(0.6 * site / 1000, 3)]}]}]}
json.dump([ev], open(path + ".tmp", "w"))
os.replace(path + ".tmp", path)
PY
capped() { [ "$(scalar 'count(pfi_gpu_cap_watts{job="pfid"})')" = 32 ]; }
wait_until 10 capped || fail "the long event was not applied"
echo '[]' >"$WORK/events.json.tmp" && mv "$WORK/events.json.tmp" "$WORK/events.json"
wait_until 10 back || fail "the cancelled event's caps were not released"
grep -q "VTN event long is gone: cancelled" "$WORK/ctl.log" || fail "no cancellation logged"
ok "an event removed from the VTN is cancelled: caps released"
if grep -q "$SECRET" "$WORK/ctl.log" "$WORK/ctl.db"* 2>/dev/null; then fail "the VTN secret leaked"; fi
ok "the VTN secret is in no log or store"
