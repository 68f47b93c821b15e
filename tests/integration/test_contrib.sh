#!/usr/bin/env bash
# contrib/: the Prometheus configuration and rules load, the rules' unit
# tests pass (promtool test rules), the Grafana dashboard is JSON whose
# queries name metrics the agents or the controller export.
set -euo pipefail
: "${PFI_SOURCE_DIR:?}"
C=$PFI_SOURCE_DIR/contrib
command -v promtool >/dev/null || { echo "FAIL: promtool not installed" >&2; exit 1; }
promtool check config "$C/prometheus/prometheus.yml" >/dev/null
promtool check rules "$C/prometheus/pfi-rules.yml" >/dev/null
(cd "$C/prometheus" && promtool test rules pfi-rules.test.yml)
echo "ok: prometheus.yml, pfi-rules.yml and their unit tests"
python3 - "$C/grafana/pfi-control.json" "$PFI_SOURCE_DIR" <<'PY'
import json, re, sys, pathlib
d = json.load(open(sys.argv[1]))
src = "".join(p.read_text() for p in pathlib.Path(sys.argv[2], "src").rglob("*.c"))
exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
assert len(exprs) >= 6, exprs
for e in exprs:
    for m in re.findall(r"pfi_[a-z_]+", e):
        base = re.sub(r"_(sum|count|bucket)$", "", m)
        assert base in src or base.replace("pfi_gpu_", "") in src, "%s: no such metric %s" % (e, m)
print("ok: the dashboard's %d queries name exported metrics" % len(exprs))
PY
for f in "$C/kubernetes/pfi-control-deployment.yaml"; do
    python3 -c "import sys, yaml; list(yaml.safe_load_all(open(sys.argv[1])))" "$f"
done
echo "ok: Kubernetes manifests parse"
