# Helpers for the Kubernetes tests (sourced; needs pfid_lib.sh): a kubelet
# stand-in per node (podresources_server.py: the real PodResources gRPC proto
# on a Unix socket, and the node's PodList over HTTP), fed from
# $WORK/kNODE.json.

# k8s_python: a Python with grpc and protobuf (Debian's python3-grpcio and
# python3-protobuf live in /usr/bin/python3's path, not a pyenv's); exits
# 77 (skip) when there is none, or no protoc, or pfid was built without
# protobuf-c.
k8s_python() {
    local py
    for py in /usr/bin/python3 python3; do
        if "$py" -c 'import grpc, google.protobuf' 2>/dev/null; then K8S_PY=$py; break; fi
    done
    [ -n "${K8S_PY:-}" ] || { echo "skip: no python3-grpcio/python3-protobuf"; exit 77; }
    command -v protoc >/dev/null || { echo "skip: no protoc (protobuf-compiler)"; exit 77; }
    [ -f "${PFI_BUILD_DIR:?}/proto/podresources.pb-c.c" ] ||
        { echo "skip: pfid built without protobuf-c"; exit 77; }
    protoc --python_out="$WORK" --proto_path="$PFI_SOURCE_DIR/src/io/proto" podresources.proto
    K8S_TOKEN=sa-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
    printf '%s\n' "$K8S_TOKEN" >"$WORK/sa-token"
}

# k8s_state NODE JSON: what node NODE's kubelet shows (written atomically).
k8s_state() {
    printf '%s\n' "$2" >"$WORK/k$1.json.tmp"
    mv "$WORK/k$1.json.tmp" "$WORK/k$1.json"
}

# k8s_start NODE: starts node NODE's kubelet stand-in; sets K8S_SOCK[NODE]
# and K8S_PODS[NODE] (the PodList URL).
K8S_SOCK=()
K8S_PODS=()
k8s_start() {
    local i=$1
    K8S_SOCK[$i]=$WORK/kubelet$i.sock
    "$K8S_PY" "$PFI_SOURCE_DIR/tests/integration/podresources_server.py" --socket "${K8S_SOCK[$i]}" \
        --state "$WORK/k$i.json" --pb-dir "$WORK" --port-file "$WORK/k$i.port" \
        --token "$K8S_TOKEN" --log "$WORK/kubelet$i.log" 2>"$WORK/kubelet$i.err" &
    PIDS+=($!)
    wait_until 30 test -s "$WORK/k$i.port" || fail "kubelet $i did not start: $(cat "$WORK/kubelet$i.err")"
    K8S_PODS[$i]="http://127.0.0.1:$(cat "$WORK/k$i.port")/api/v1/pods?fieldSelector=spec.nodeName=node$i"
}

# k8s_node_start I GPUS JOBS_CSV ARGS...: pfid number I (sim backend) reading
# its kubelet stand-in every 0.2 s; the rest of the arguments go to pfid.
k8s_node_start() {
    local i=$1 gpus=$2 jobs=$3
    shift 3
    mkdir -p "$WORK/locks$i"
    pfid_start "$WORK/node$i.log" --backend sim --sim-gpus "$gpus" --sim-jobs "$jobs" \
        --db "$WORK/node$i.db" --interval 0.2 --phase-hold 0.4 --lock-dir "$WORK/locks$i" \
        --kubelet-socket "${K8S_SOCK[$i]}" --kubelet-interval 0.2 --pods-url "${K8S_PODS[$i]}" \
        --pods-token-file "$WORK/sa-token" "$@"
    NODES[$i]=http://127.0.0.1:$PORT
    NODE_PID[$i]=$PFID_PID
}

# jobs_of I: node I's jobs, one line each: "id gpu,gpu,... exempt sla arch task".
jobs_of() {
    curl -s --max-time 2 "${NODES[$1]}/v1/jobs" | python3 -c "
import json, sys
for j in json.load(sys.stdin)['jobs']:
    print(j['id'], ','.join(map(str, j['gpus'])), j['exempt'], j['sla_floor'], j['arch'], j['task'])"
}

# pod NS NAME LABELS_JSON ANNOTATIONS_JSON DEVICE...: one pod's JSON.
pod() {
    local ns=$1 name=$2 labels=$3 ann=$4 devs
    shift 4
    devs=$(printf '"%s",' "$@")
    printf '{"namespace":"%s","name":"%s","labels":%s,"annotations":%s,"containers":[{"name":"trainer","devices":[{"resource_name":"nvidia.com/gpu","device_ids":[%s]}]}]}' \
        "$ns" "$name" "$labels" "$ann" "${devs%,}"
}

# uuid G: the sim backend's UUID of GPU G.
uuid() { printf 'GPU-5155d000-0000-4000-8000-%012u' "$1"; }
