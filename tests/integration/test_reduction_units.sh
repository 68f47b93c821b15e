#!/usr/bin/env bash
# One unit for power reductions: `allocate --reduction` and `simulate
# --reductions` both take a fraction in [0, 1) (0.3) or a percent with its
# sign (30%), and mean the same by each. A bare 30 (once 30% in simulate,
# an error in allocate) is a usage error in both, never 0.3% or 3000%.
set -u
cd "$PFI_SOURCE_DIR"
fail=0
err() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
S=data/paper-h200/sweeps.csv
T=data/paper-h200/telemetry.csv

"$PFI_BIN" allocate --policy equal --reduction 0.3 --json "$S" > "$tmp/a-frac.json" || err "allocate 0.3"
"$PFI_BIN" allocate --policy equal --reduction 30% --json "$S" > "$tmp/a-pct.json" || err "allocate 30%"
cmp -s "$tmp/a-frac.json" "$tmp/a-pct.json" || err "allocate: 0.3 and 30% differ"
python3 - "$tmp/a-frac.json" "$S" <<'PY' || err "allocate 0.3 is not a 30% cut"
import csv, json, sys
d = json.load(open(sys.argv[1]))
top = {}  # each group's uncapped power: the run at its largest cap
for r in csv.DictReader(open(sys.argv[2])):
    c, p = float(r["cap_w"]), float(r["power_w"])
    if r["group"] not in top or c > top[r["group"]][0]:
        top[r["group"]] = (c, p)
pmax = sum(p for _, p in top.values())
assert abs(d["budget_w"] - 0.7 * pmax) < 1e-6 * pmax, (d["budget_w"], 0.7 * pmax)
PY
sim() { "$PFI_BIN" simulate --workloads 4 --jobs 10 --no-learn --json --reductions "$1" "$S" "$T"; }
sim 0.1,0.3 > "$tmp/s-frac.json" 2>/dev/null || err "simulate 0.1,0.3"
sim 10%,30% > "$tmp/s-pct.json" 2>/dev/null || err "simulate 10%,30%"
cmp -s "$tmp/s-frac.json" "$tmp/s-pct.json" || err "simulate: 0.1,0.3 and 10%,30% differ"
python3 - "$tmp/s-frac.json" <<'PY' || err "simulate reductions are not 0.1 and 0.3"
import json, sys
d = json.load(open(sys.argv[1]))
def walk(x):
    if isinstance(x, dict):
        if "reduction" in x:
            yield x["reduction"]
        for v in x.values():
            yield from walk(v)
    elif isinstance(x, list):
        for v in x:
            yield from walk(v)
assert sorted(set(walk(d))) == [0.1, 0.3], sorted(set(walk(d)))
PY

for bad in 30 1 -0.1 100% 30%% 0x1p-2; do
  "$PFI_BIN" allocate --policy equal --reduction "$bad" "$S" > /dev/null 2>&1; rc=$?
  [ $rc = 2 ] || err "allocate --reduction $bad: exit $rc, expected 2"
  sim "$bad" > /dev/null 2>&1; rc=$?
  [ $rc = 2 ] || err "simulate --reductions $bad: exit $rc, expected 2"
done
[ $fail = 0 ] && echo ok
exit $fail
