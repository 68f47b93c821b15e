#!/usr/bin/env bash
# contrib/kubernetes: every manifest goes through `kubectl apply
# --dry-run=client` against a discovery-only API server (k8s_discovery.py:
# kubectl maps apiVersion and kind, and each object's scope, as on a
# cluster; schema validation needs the cluster's OpenAPI, which is not
# here, so --validate=false), and the wiring kubectl does not check holds:
# every volumeMount names a volume, pfid's --kubelet-socket lies in the
# read-only hostPath mount of the kubelet's pod-resources directory, the
# $(NODE_NAME) in its --pods-url comes from the downward API, and its
# ServiceAccount is bound to a role that may get and list pods, nothing more.
. "$(dirname "$0")/pfid_lib.sh"
: "${PFI_SOURCE_DIR:?}"
command -v kubectl >/dev/null || { echo "skip: no kubectl (Debian's kubernetes-client)"; exit 77; }
PY=python3
/usr/bin/python3 -c 'import yaml' 2>/dev/null && PY=/usr/bin/python3
$PY -c 'import yaml' 2>/dev/null || { echo "skip: no python3-yaml"; exit 77; }
K=$PFI_SOURCE_DIR/contrib/kubernetes

python3 "$PFI_SOURCE_DIR/tests/integration/k8s_discovery.py" "$WORK/api.port" "$WORK/api.log" &
PIDS+=($!)
wait_until 10 test -s "$WORK/api.port" || fail "the discovery server did not start"
cat >"$WORK/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: t, cluster: {server: "http://127.0.0.1:$(cat "$WORK/api.port")"}}]
contexts: [{name: t, context: {cluster: t}}]
current-context: t
EOF
export KUBECONFIG=$WORK/kubeconfig
n=0
for f in "$K"/*.yaml; do
    kubectl apply --dry-run=client --validate=false -f "$f" >"$WORK/out" 2>&1 ||
        fail "kubectl apply --dry-run=client $f: $(cat "$WORK/out")"
    n=$((n + $(grep -c "(dry run)" "$WORK/out")))
done
[ "$n" -ge 9 ] || fail "only $n objects applied"
ok "kubectl apply --dry-run=client: $n objects in $(ls "$K"/*.yaml | wc -l) manifests"
# The check has teeth: a misspelt kind is refused.
printf 'apiVersion: apps/v1\nkind: DaemonSett\nmetadata: {name: x, namespace: pfi}\n' >"$WORK/bad.yaml"
if kubectl apply --dry-run=client --validate=false -f "$WORK/bad.yaml" >/dev/null 2>&1; then
    fail "a misspelt kind passed"
fi
ok "a misspelt kind is refused"

$PY - "$K" <<'PY' || fail "manifest wiring"
import glob, re, sys, yaml
docs = [d for f in sorted(glob.glob(sys.argv[1] + "/*.yaml")) for d in yaml.safe_load_all(open(f)) if d]
by = lambda kind: [d for d in docs if d["kind"] == kind]
for d in by("DaemonSet") + by("Deployment"):
    spec = d["spec"]["template"]["spec"]
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    for c in spec["containers"]:
        assert all(isinstance(a, str) for a in c.get("args", [])), (d["metadata"]["name"], c["args"])
        for m in c.get("volumeMounts", []):
            assert m["name"] in vols, "%s: mount %s names no volume" % (c["name"], m["name"])
ds = [d for d in by("DaemonSet") if d["metadata"]["name"] == "pfid"][0]
spec = ds["spec"]["template"]["spec"]
c = spec["containers"][0]
args = dict(a[2:].split("=", 1) for a in c["args"] if "=" in a)
sock = args["kubelet-socket"]
mounts = [m for m in c["volumeMounts"] if sock.startswith(m["mountPath"].rstrip("/") + "/")]
assert len(mounts) == 1 and mounts[0].get("readOnly"), mounts
vol = [v for v in spec["volumes"] if v["name"] == mounts[0]["name"]][0]
assert vol["hostPath"]["path"] == "/var/lib/kubelet/pod-resources", vol
assert sock == "/var/lib/kubelet/pod-resources/kubelet.sock", sock
for var in re.findall(r"\$\((\w+)\)", " ".join(c["args"])):
    env = [e for e in c.get("env", []) if e["name"] == var]
    assert env and env[0]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName", var
assert "fieldSelector=spec.nodeName=$(NODE_NAME)" in args["pods-url"], args["pods-url"]
sa = spec["serviceAccountName"]
ns = ds["metadata"]["namespace"]
assert [s for s in by("ServiceAccount") if s["metadata"]["name"] == sa and s["metadata"]["namespace"] == ns]
binds = [b for b in by("ClusterRoleBinding")
         if {"kind": "ServiceAccount", "name": sa, "namespace": ns} in b["subjects"]]
assert len(binds) == 1, binds
role = [r for r in by("ClusterRole") if r["metadata"]["name"] == binds[0]["roleRef"]["name"]][0]
assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}], role
print("ok: mounts, the socket's read-only hostPath, NODE_NAME from the downward API, RBAC get/list pods only")
PY
