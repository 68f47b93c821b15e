#!/usr/bin/env bash
# A real Prometheus server scrapes pfid (sim backend) and answers queries for
# its GPU and job series: the exposition is not only lint-clean (promtool)
# but ingested, labels and all.
. "$(dirname "$0")/pfid_lib.sh"

command -v prometheus >/dev/null || fail "prometheus not installed (scripts/install-deps.sh)"
cat >"$WORK/jobs.csv" <<'EOF'
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu
0,dense,0.8,0.9,0.4,0.6,16000
EOF
pfid_start "$WORK/pfid.log" --backend sim --sim-gpus 2 --sim-jobs "$WORK/jobs.csv" \
    --db "$WORK/pfid.db" --interval 0.5 --phase-hold 1
req POST /v1/jobs '{"id":"job-\"q\"","gpus":[0]}'; expect 400 "a job id with quotes is refused"
req POST /v1/jobs '{"id":"llama:70b","gpus":[0],"arch":"dense","task":"pt"}'; expect 201 "register"
req POST /v1/jobs/llama:70b/throughput '{"tokens_per_s":16000}'; expect 200 "report"

PROM_PORT=$(free_port)
cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: pfid
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
promtool check config "$WORK/prometheus.yml" >/dev/null || fail "promtool check config"
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
    --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)

# query EXPR: sets BODY to the API's answer.
query() {
    BODY=$(curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1") || BODY=
}
has_result() {
    query "$1"
    [ "$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["status"]=="success" and len(d["data"]["result"])>0)' "$BODY" 2>/dev/null)" = True ]
}
wait_until 40 has_result 'pfi_gpu_power_watts{job="pfid",gpu="0"}' || fail "Prometheus has no pfi_gpu_power_watts: $BODY; $(tail -5 "$WORK/prometheus.log")"
ok "Prometheus scraped pfi_gpu_power_watts"
V=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["data"]["result"][0]["value"][1])' "$BODY")
python3 -c "import sys; sys.exit(0 if 600 < $V <= 700 else 1)" || fail "GPU 0 power $V W in Prometheus"
ok "GPU 0 power in Prometheus: $V W"
# pfid labels jobs job_id: "job" belongs to Prometheus (the scrape job).
has_result 'pfi_job_throughput_reports_total{job="pfid",job_id="llama:70b"} == 1' || fail "job series: $BODY"
ok "job series queryable with its label"
has_result 'up{job="pfid"} == 1' || fail "target not up: $BODY"
query 'count(count by (__name__) ({job="pfid",__name__=~"pfi_.*"}))'
N=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["data"]["result"][0]["value"][1])' "$BODY")
[ "$N" -ge 30 ] || fail "only $N pfi_* families ingested"
ok "$N pfi_* metric families ingested"
echo PASS
