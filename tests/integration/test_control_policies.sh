#!/usr/bin/env bash
# The same OpenADR event answered three times, once per policy, on three
# identical loopback clusters at once (one VTN serving all three controllers,
# one Prometheus scraping everything): each cluster is 2 pfid (sim backend,
# 8 GPUs each, the DRAM-copy predictor fitted on the embedded dataset) running
# four embedded-dataset jobs (data/paper-h200 groups' calibrated GPU-model
# parameters, `pfi model --job GROUP --json`), two of them spanning both
# nodes (control_lib.sh's sim_fleet). The jobs send real throughput: pfid
# --sim-tokens reports the GPU model's tokens/s at each GPU's limit, as a
# training loop's callback would.
#
# Asserted from Prometheus' own data: on every cluster the GPU power is under
# each interval's limit from 3 periods (plus a scrape) after its start to its
# end; the throughput kept over the event (the jobs' reported tokens/s over
# their uncapped total) is highest with learn, then pfi, then equal. The
# expected order, from the GPU model on these jobs at 70% (the oracle's split
# as reference): equal 0.772, pfi 0.846, best split 0.891.
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"
command -v prometheus >/dev/null || fail "prometheus not installed (scripts/install-deps.sh)"
: "${PFI_SHARED_DIR:?}" "${PFI_SOURCE_DIR:?}"

PERIOD=1

# --- three identical clusters, for equal, pfi and learn; the jobs: 4 GPUs each ---
POLICIES=(equal pfi learn)
sim_fleet 3

vtn_start

CTLS=()
for c in 0 1 2; do
    ctl_start "$WORK/ctl-${POLICIES[$c]}.log" --db "$WORK/ctl-${POLICIES[$c]}.db" --period $PERIOD \
        --policy "${POLICIES[$c]}" --learn-rounds 6 --agents "${NODES[$((2 * c))]},${NODES[$((2 * c + 1))]}" \
        --agent-timeout-s 0.5 --vtn "$VURL" --program dc-flex --vtn-client-id ven-1 \
        --vtn-client-secret-file "$WORK/secret" --vtn-poll-s 1
    CTLS[$c]=$CTL_URL
done

PROM_PORT=$(free_port)
PROM=http://127.0.0.1:$PROM_PORT
{
    printf 'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n'
    for c in 0 1 2; do
        printf '  - job_name: pfid-%s\n    static_configs:\n      - targets: [%s, %s]\n' "${POLICIES[$c]}" \
            "'${NODES[$((2 * c))]#http://}'" "'${NODES[$((2 * c + 1))]#http://}'"
        printf '  - job_name: ctl-%s\n    static_configs:\n      - targets: [%s]\n' "${POLICIES[$c]}" "'${CTLS[$c]#http://}'"
    done
} >"$WORK/prometheus.yml"
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
    --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
# Ready: Prometheus sees 48 GPUs and 18 job series with throughput, every
# controller knows every job uncapped (its status lists 4 jobs with tokens/s).
ready() {
    [ "$(scalar 'count(pfi_gpu_power_watts)')" = 48 ] &&
    [ "$(scalar 'count(pfi_job_throughput_tokens_per_second > 0)')" = 18 ] || return 1
    local c
    for c in 0 1 2; do
        curl -s --max-time 2 "${CTLS[$c]}/v1/status" | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if len(d["jobs"]) == 4 and all((j["tokens_per_s"] or 0) > 0 and j["uncapped_tput"] for j in d["jobs"]) else 1)' || return 1
    done
}
wait_until 40 ready || fail "the clusters never came up with throughput"
sleep 2
for c in 0 1 2; do
    U[$c]=$(scalar "sum(pfi_gpu_power_watts{job=\"pfid-${POLICIES[$c]}\"})")
    TU[$c]=$(scalar "sum(pfi_job_throughput_tokens_per_second{job=\"pfid-${POLICIES[$c]}\"})")
    echo "uncapped ${POLICIES[$c]}: ${U[$c]} W, ${TU[$c]} tokens/s"
done
python3 -c "import sys; u=[${U[0]},${U[1]},${U[2]}]; t=[${TU[0]},${TU[1]},${TU[2]}]; sys.exit(0 if max(u)-min(u) < 0.01*max(u) and max(t)-min(t) < 0.01*max(t) else 1)" ||
    fail "the three clusters are not identical uncapped"
ok "three identical clusters, uncapped ${U[0]} W and ${TU[0]} tokens/s each"

# --- the event: two 20 s intervals at 70% then 80% of a cluster's power, in kW ---
T0=$(( $(date +%s) + 2 ))
SITE=${U[0]}
python3 - "$WORK/events.json" "$T0" "$SITE" <<'PY'
import datetime, json, os, sys
path, t0, site = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
start = datetime.datetime.fromtimestamp(t0, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
ev = {"id": "dr-event", "programID": "prog-1", "objectType": "EVENT", "priority": 0,
      "createdDateTime": "2025-01-01T00:00:00Z", "modificationDateTime": "2025-01-01T00:00:00Z",
      "intervalPeriod": {"start": start, "duration": "PT20S"},
      "payloadDescriptors": [{"objectType": "EVENT_PAYLOAD_DESCRIPTOR", "payloadType": "IMPORT_CAPACITY_LIMIT", "units": "KW"}],
      "intervals": [{"id": 0, "payloads": [{"type": "IMPORT_CAPACITY_LIMIT", "values": [round(0.7 * site / 1000, 3)]}]},
                    {"id": 1, "payloads": [{"type": "IMPORT_CAPACITY_LIMIT", "values": [round(0.8 * site / 1000, 3)]}]}]}
json.dump([ev], open(path + ".tmp", "w"))
os.replace(path + ".tmp", path)
PY
L1=$(python3 -c "print(round(0.7 * $SITE / 1000, 3) * 1000)")
L2=$(python3 -c "print(round(0.8 * $SITE / 1000, 3) * 1000)")
sleep $((T0 + 40 + 2 - $(date +%s)))

for c in 0 1 2; do
    for q in power tput; do
        if [ $q = power ]; then e="sum(pfi_gpu_power_watts{job=\"pfid-${POLICIES[$c]}\"})"
        else e="sum(pfi_job_throughput_tokens_per_second{job=\"pfid-${POLICIES[$c]}\"})"; fi
        curl -s --max-time 10 "$PROM/api/v1/query_range" --data-urlencode "query=$e" \
            --data-urlencode "start=$((T0 - 2))" --data-urlencode "end=$((T0 + 40))" \
            --data-urlencode "step=0.5" >"$WORK/range-$q-$c.json"
    done
done
python3 - "$WORK" "$T0" "$L1" "$L2" "$PERIOD" "${TU[0]}" "${TU[1]}" "${TU[2]}" <<'PY' || fail "see above"
import json, sys
w, t0, l1, l2, p = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
tu = [float(x) for x in sys.argv[6:9]]
lag = 3 * p + 1.0  # 3 periods, plus one scrape
def series(q, c):
    d = json.load(open("%s/range-%s-%d.json" % (w, q, c)))
    return [(float(t), float(v)) for t, v in d["data"]["result"][0]["values"]]
kept = []
for c, pol in enumerate(("equal", "pfi", "learn")):
    bad, n, top = [], {1: 0, 2: 0}, {1: 0, 2: 0}
    for t, v in series("power", c):
        for k, lo, hi, lim in ((1, t0, t0 + 20, l1), (2, t0 + 20, t0 + 40, l2)):
            if lo + lag <= t < hi:
                n[k] += 1
                top[k] = max(top[k], v)
                if v > lim + 1: bad.append((round(t - t0, 1), v, lim))
    assert n[1] >= 16 and n[2] >= 16, (pol, n)
    assert not bad, (pol, "over the limit", bad)
    tp = [v for t, v in series("tput", c) if t0 + lag <= t < t0 + 40]
    kept.append(sum(tp) / len(tp) / tu[c])
    print("%-5s highest power %.0f / %.0f W, %.0f / %.0f W; throughput kept %.4f" % (pol, top[1], l1, top[2], l2, kept[-1]))
assert kept[2] > kept[1] > kept[0], ("throughput kept: learn > pfi > equal expected", kept)
PY
ok "every cluster under $L1 W then $L2 W from 3 periods into each interval (Prometheus)"
ok "throughput kept (Prometheus): learn > pfi > equal"

back() { [ "$(scalar 'count(pfi_gpu_power_limit_watts == 700)')" = 48 ] &&
         [ "$(scalar 'count(pfi_gpu_cap_watts)')" = nan ]; }
wait_until 15 back || fail "after the event not every GPU is back at 700 W"
ok "after the event all 48 GPUs are back at their prior limit (700 W)"
